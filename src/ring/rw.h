/* SPDX-License-Identifier: MIT */
/*
 * Reads and writes, inline: the opcode table (ops.c) and the submission
 * fast path (issue.c) share them, so the common I/O takes no indirect call.
 */
#ifndef BLKRING_RING_RW_H
#define BLKRING_RING_RW_H

#include <errno.h>

#include "ring.h"

#define BLKRING_RWF_VALID (BLKRING_RWF_FUA | BLKRING_RWF_NOWAIT)

static inline int blkring__prep_dev(struct blkring__ctx *ctx, struct blkring_req *req,
                                    const struct blkring_sqe *sqe)
{
	uint32_t idx = (uint32_t)sqe->fd;

	if (unlikely(idx >= ctx->nr_devs || !ctx->devs[idx]))
		return -EBADF;
	req->dev = ctx->devs[idx];
	return 0;
}

/* Shared by every opcode that ends in a bio. */
static inline int blkring__submit_req_bio(struct blkring_req *req, struct blkring_bio *bio)
{
	bio->queue_hint = req->ctx->queue_hint;
	bio->end_io = blkring__req_bio_end_io;
	bio->private = req;
	return blkring__submit_bio(bio);
}

/* Offset, length and buffer are the block layer's to check (-EINVAL). */
static inline int blkring__rw_prep_flags(struct blkring_req *req, const struct blkring_sqe *sqe)
{
	uint32_t rw_flags = sqe->rw_flags;

	/* Linux answers unknown RWF_* bits with -EOPNOTSUPP. */
	if (unlikely(rw_flags & ~BLKRING_RWF_VALID))
		return -EOPNOTSUPP;
	req->rw_flags = rw_flags;
	if (unlikely(rw_flags & BLKRING_RWF_NOWAIT))
		req->flags |= REQ_F_NOWAIT;
	req->off = sqe->off;
	return 0;
}

static inline int blkring__rw_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                                   const struct blkring_sqe *sqe)
{
	int ret = blkring__prep_dev(ctx, req, sqe);

	if (unlikely(ret))
		return ret;
	req->addr = sqe->addr;
	req->len = sqe->len;
	return blkring__rw_prep_flags(req, sqe);
}

static inline void blkring__rw_set_flags(struct blkring_req *req, struct blkring_bio *bio,
                                         bool write)
{
	if (unlikely(req->rw_flags)) {
		if (write && (req->rw_flags & BLKRING_RWF_FUA))
			bio->flags |= BIO_FUA;
		if (req->rw_flags & BLKRING_RWF_NOWAIT)
			bio->flags |= BIO_NOWAIT;
	}
}

static inline int blkring__rw_issue(struct blkring_req *req, unsigned op)
{
	struct blkring_bio *bio = &req->bio;

	blkring__bio_init(bio, req->dev, op, req->off, req->len);
	blkring__bio_set_buf(bio, (void *)(uintptr_t)req->addr, req->len);
	blkring__rw_set_flags(req, bio, op == REQ_OP_WRITE);
	req->result = (int32_t)req->len;
	return blkring__submit_req_bio(req, bio);
}

#endif
