/* SPDX-License-Identifier: MIT */
/*
 * Reads and writes, inline: the opcode table (ops.c) and the submission
 * fast path (issue.c) share them, so the common I/O takes no indirect call.
 */
#ifndef BLKRING_RING_RW_H
#define BLKRING_RING_RW_H

#include <errno.h>

#include "ring.h"

#define BLKRING_RWF_VALID \
	(BLKRING_RWF_HIPRI | BLKRING_RWF_DSYNC | BLKRING_RWF_SYNC | BLKRING_RWF_NOWAIT)

static inline int blkring__prep_dev(struct blkring__ctx *ctx, struct blkring_req *req,
                                    const struct blkring_sqe *sqe)
{
	uint32_t idx = (uint32_t)sqe->fd;

	if (unlikely(idx >= ctx->nr_devs || !ctx->devs[idx]))
		return -EBADF;
	req->dev = ctx->devs[idx];
	return 0;
}

/* Bios issued on the owner's thread carry the ring's context, for the
 * drivers' per-ring queues; a worker's go without. */
static inline struct blkring_ioc *blkring__issue_ioc(struct blkring_req *req, unsigned issue_flags)
{
	return (issue_flags & BLKRING_ISSUE_NONBLOCK) ? &req->ctx->ioc : NULL;
}

/* Ties a request's bio to the ring: its completion comes back to req. */
static inline void blkring__req_bio_bind(struct blkring__ctx *ctx, struct blkring_req *req,
                                         struct blkring_bio *bio, struct blkring_ioc *ioc)
{
	bio->ioc = ioc;
	bio->queue_hint = ctx->queue_hint;
	bio->end_io = blkring__req_bio_end_io;
	bio->private = req;
}

/* Shared by every opcode that ends in a bio. */
static inline int blkring__submit_req_bio(struct blkring_req *req, struct blkring_bio *bio,
                                          struct blkring_ioc *ioc)
{
	blkring__req_bio_bind(req->ctx, req, bio, ioc);
	return blkring__submit_bio(bio);
}

/*
 * A read or write as the SQE has it, passed in registers: the request and
 * the SQE might alias for all the compiler knows.  Offset, length and
 * buffer are the block layer's to check (-EINVAL).
 */
struct blkring__rw {
	struct blkring_dev *dev;
	uint64_t off, addr;
	uint32_t len, rw_flags;
};

static inline void blkring__rw_load(struct blkring__rw *rw, const struct blkring_sqe *sqe)
{
	rw->off = sqe->off;
	rw->addr = sqe->addr;
	rw->len = sqe->len;
	rw->rw_flags = sqe->rw_flags;
}

/* The device index and the flags; finds the device. */
static inline int blkring__rw_check(struct blkring__ctx *ctx, struct blkring_req *req, uint32_t idx,
                                    struct blkring__rw *rw)
{
	if (unlikely(idx >= ctx->nr_devs || !(rw->dev = ctx->devs[idx])))
		return -EBADF;
	/* A buffer (or iovec array) at NULL: the kernel's copy would fault. */
	if (unlikely(!rw->addr && rw->len))
		return -EFAULT;
	/* Linux answers unknown RWF_* bits with -EOPNOTSUPP. */
	if (unlikely(rw->rw_flags & ~BLKRING_RWF_VALID))
		return -EOPNOTSUPP;
	if (unlikely(rw->rw_flags & BLKRING_RWF_NOWAIT))
		req->flags |= REQ_F_NOWAIT;
	/* As io_uring: a polled I/O needs a ring that polls. */
	if (unlikely((rw->rw_flags & BLKRING_RWF_HIPRI) && !(ctx->flags & BLKRING_SETUP_IOPOLL)))
		return -EINVAL;
	return 0;
}

/* What an issue from the worker pool starts from. */
static inline void blkring__rw_keep(struct blkring_req *req, const struct blkring__rw *rw)
{
	req->dev = rw->dev;
	req->off = rw->off;
	req->addr = rw->addr;
	req->len = rw->len;
	req->rw_flags = rw->rw_flags;
}

static inline int blkring__rw_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                                   const struct blkring_sqe *sqe)
{
	struct blkring__rw rw;
	int ret;

	blkring__rw_load(&rw, sqe);
	ret = blkring__rw_check(ctx, req, (uint32_t)sqe->fd, &rw);
	if (likely(!ret))
		blkring__rw_keep(req, &rw);
	return ret;
}

static inline void blkring__rw_set_flags(uint32_t rw_flags, struct blkring_bio *bio, bool write)
{
	if (write && (rw_flags & (BLKRING_RWF_DSYNC | BLKRING_RWF_SYNC)))
		bio->flags |= BIO_FUA;
	if (rw_flags & BLKRING_RWF_NOWAIT)
		bio->flags |= BIO_NOWAIT;
}

/* The request's read or write bio, all but its buffer; its CQE will say
 * the whole length moved. */
static inline struct blkring_bio *blkring__rw_bio(struct blkring_req *req, unsigned op,
                                                  const struct blkring__rw *rw)
{
	struct blkring_bio *bio = &req->bio;

	blkring__bio_init(bio, rw->dev, op, rw->off, rw->len);
	if (unlikely(rw->rw_flags))
		blkring__rw_set_flags(rw->rw_flags, bio, op == REQ_OP_WRITE);
	req->result = (int32_t)rw->len;
	return bio;
}

/* What prep kept in the request (blkring__rw_keep()), for an issue after it. */
static inline struct blkring__rw blkring__rw_kept(const struct blkring_req *req)
{
	return (struct blkring__rw){req->dev, req->off, req->addr, req->len, req->rw_flags};
}

static inline struct blkring_bio *blkring__rw_bio_kept(struct blkring_req *req, unsigned op)
{
	struct blkring__rw rw = blkring__rw_kept(req);

	return blkring__rw_bio(req, op, &rw);
}

static inline int blkring__rw_submit(struct blkring__ctx *ctx, struct blkring_req *req, unsigned op,
                                     const struct blkring__rw *rw, struct blkring_ioc *ioc)
{
	struct blkring_bio *bio = blkring__rw_bio(req, op, rw);

	blkring__bio_set_buf(bio, (void *)(uintptr_t)rw->addr, rw->len);
	blkring__req_bio_bind(ctx, req, bio, ioc);
	if (unlikely(ctx->flags & BLKRING_SETUP_IOPOLL))
		return blkring__iopoll_submit(ctx, req, bio);
	return blkring__submit_bio(bio);
}

/* Issue (or re-issue) from what prep kept. */
static inline int blkring__rw_issue(struct blkring_req *req, unsigned op, struct blkring_ioc *ioc)
{
	struct blkring__rw rw = blkring__rw_kept(req);

	return blkring__rw_submit(req->ctx, req, op, &rw, ioc);
}

#endif
