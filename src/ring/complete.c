// SPDX-License-Identifier: MIT
/*
 * Completion: a request's result becomes a CQE, on the owner thread only.
 * A bio can end on any thread (inline in submit, a device's completion
 * thread, a worker); off the owner it becomes task work.  When the CQ is
 * full the request itself, holding its result, waits on the overflow list:
 * nothing is dropped and nothing is allocated.
 */
#include <errno.h>

#include "ring.h"

static void overflow_add(struct blkring__ctx *ctx, struct blkring_req *req, int res)
{
	_Atomic uint32_t *nr = &ctx->rings->cq_overflow;

	if (req->flags & REQ_F_IOV_HEAP)
		blkring__req_release_iov(req);
	req->result = res;
	req->next = NULL;
	if (ctx->ovf_tail) {
		ctx->ovf_tail->next = req;
	} else {
		ctx->ovf_head = req;
		atomic_fetch_or_explicit(&ctx->rings->sq_flags, BLKRING_SQ_CQ_OVERFLOW,
		                         memory_order_release);
	}
	ctx->ovf_tail = req;
	atomic_store_explicit(nr, atomic_load_explicit(nr, memory_order_relaxed) + 1,
	                      memory_order_release);
	blkring__stat_add(&ctx->stats.overflowed, 1);
}

/* Moves overflowed completions into the CQ, oldest first, while it has room. */
void blkring__overflow_flush(struct blkring__ctx *ctx)
{
	struct blkring_req *req;

	while ((req = ctx->ovf_head) && !blkring__cq_full(ctx)) {
		ctx->ovf_head = req->next;
		blkring__cqe_fill(ctx, req->user_data, req->result);
		blkring__req_free(ctx, req);
	}
	if (!ctx->ovf_head) {
		ctx->ovf_tail = NULL;
		atomic_fetch_and_explicit(&ctx->rings->sq_flags, ~BLKRING_SQ_CQ_OVERFLOW,
		                          memory_order_release);
	}
}

/* Ring exit: the overflowed completions go with the CQ. */
void blkring__overflow_free(struct blkring__ctx *ctx)
{
	struct blkring_req *req;

	while ((req = ctx->ovf_head)) {
		ctx->ovf_head = req->next;
		blkring__req_free(ctx, req);
	}
	ctx->ovf_tail = NULL;
}

/* One CQE, in order: once anything overflowed, later ones queue behind it. */
static void req_post_one(struct blkring__ctx *ctx, struct blkring_req *req, int res)
{
	ctx->nr_done++;
	if (unlikely(req->flags & REQ_F_SKIP) && res >= 0) {
		blkring__req_free(ctx, req);
		return;
	}
	if (likely(!ctx->ovf_head && !blkring__cq_full(ctx))) {
		blkring__cqe_fill(ctx, req->user_data, res);
		blkring__req_free(ctx, req);
		return;
	}
	overflow_add(ctx, req, res);
}

/* A failed link ends its chain: the rest complete with -ECANCELED, except
 * members that failed their own prep, which report that. */
static void link_cancel(struct blkring__ctx *ctx, struct blkring_req *req)
{
	while (req) {
		struct blkring_req *next = req->link;

		req->link = NULL;
		req_post_one(ctx, req, req->flags & REQ_F_FAIL ? req->result : -ECANCELED);
		req = next;
	}
}

void blkring__req_post(struct blkring__ctx *ctx, struct blkring_req *req, int res)
{
	struct blkring_req *link = req->link;
	/* Read before the post frees req. */
	bool severs = res < 0 && !(req->sqe_flags & BLKRING_SQE_IO_HARDLINK);

	req_post_one(ctx, req, res);
	if (unlikely(link)) {
		if (unlikely(link->opcode == BLKRING_OP_LINK_TIMEOUT))
			link = blkring__ltimeout_done(ctx, link);
		if (!link)
			return;
		if (severs)
			link_cancel(ctx, link);
		else
			blkring__req_queue_next(ctx, link);
	}
}

void blkring__req_tw_complete(struct blkring_tw_node *tw)
{
	struct blkring_req *req = container_of(tw, struct blkring_req, tw);

	blkring__req_post(req->ctx, req, req->result);
}

/* Any thread: post now on the owner, else hand the result to the owner. */
void blkring__req_complete(struct blkring_req *req, int res)
{
	struct blkring__ctx *ctx = req->ctx;

	if (likely(blkring__is_owner(ctx))) {
		blkring__req_post_fast(ctx, req, res);
		return;
	}
	req->result = res;
	/* The owner may unlink a fired timeout or a cancelled next meanwhile:
	 * the hint may be stale, the field is read whole. */
	blkring__tw_add(ctx, &req->tw, READ_ONCE(req->link) != NULL);
}

/* bio->end_io of every request: req->result holds the bytes on success. */
void blkring__req_bio_end_io(struct blkring_bio *bio)
{
	struct blkring_req *req = container_of(bio, struct blkring_req, bio);

	blkring__req_complete(req, bio->status ? bio->status : req->result);
}
