// SPDX-License-Identifier: MIT
/*
 * The request cache: requests are carved from chunks allocated at ring
 * setup and kept on a singly linked free list that only the owner touches,
 * so taking and returning one is a pointer swap.  A ring with more requests
 * alive than it was sized for (in flight plus parked on the overflow list)
 * grows by another chunk, off the fast path; chunks live until ring exit.
 */
#include <errno.h>
#include <stdlib.h>

#include "ring.h"

#define BLKRING_REQ_GROW 256U

static int req_chunk_add(struct blkring__ctx *ctx, unsigned nr)
{
	struct blkring__req_chunk *chunk;

	chunk = calloc(1, sizeof(*chunk) + (size_t)nr * sizeof(struct blkring_req));
	if (!chunk)
		return -ENOMEM;
	chunk->next = ctx->chunks;
	chunk->nr = nr;
	ctx->chunks = chunk;
	/* Pushed last to first so the first taken are the first in memory. */
	for (unsigned i = nr; i-- > 0;) {
		struct blkring_req *req = &chunk->reqs[i];

		req->ctx = ctx;
		req->opcode = BLKRING__REQ_FREE;
		req->tw.func = blkring__req_tw_complete;
		req->next = ctx->free_reqs;
		ctx->free_reqs = req;
	}
	return 0;
}

int blkring__req_cache_init(struct blkring__ctx *ctx, unsigned nr)
{
	ctx->free_reqs = NULL;
	ctx->chunks = NULL;
	return req_chunk_add(ctx, nr);
}

struct blkring_req *blkring__req_grow(struct blkring__ctx *ctx)
{
	if (req_chunk_add(ctx, BLKRING_REQ_GROW) < 0)
		return NULL;
	return blkring__req_alloc(ctx);
}

void blkring__req_release_iov(struct blkring_req *req)
{
	free(req->iov);
	req->iov = NULL;
	req->flags &= ~REQ_F_IOV_HEAP;
}

void blkring__req_cache_exit(struct blkring__ctx *ctx)
{
	struct blkring__req_chunk *chunk, *next;

	for (chunk = ctx->chunks; chunk; chunk = next) {
		next = chunk->next;
		free(chunk);
	}
	ctx->chunks = NULL;
	ctx->free_reqs = NULL;
}
