// SPDX-License-Identifier: MIT
/*
 * The opcodes.  prep runs at submission and copies everything it needs out
 * of the SQE (the application may reuse the slot as soon as submit
 * returns); issue builds the request's bio and hands it to the block layer,
 * and runs again from the beginning when a worker re-issues it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "rw.h"

/* ---- NOP ---- */

static int nop_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                    const struct blkring_sqe *sqe)
{
	(void)ctx;
	(void)req;
	(void)sqe;
	return 0;
}

static int nop_issue(struct blkring_req *req, unsigned issue_flags)
{
	(void)issue_flags;
	blkring__req_complete(req, 0);
	return 0;
}

/* ---- READ, WRITE, READV, WRITEV ---- */

/* Copies the iovec array: the application may free it after submit. */
static int rwv_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                    const struct blkring_sqe *sqe)
{
	const struct iovec *uiov = (const struct iovec *)(uintptr_t)sqe->addr;
	uint32_t nr = sqe->len;
	uint64_t total = 0;
	int ret;

	ret = blkring__rw_prep(ctx, req, sqe);
	if (unlikely(ret))
		return ret;
	if (unlikely(nr > BLKRING_MAX_IOVECS))
		return -EINVAL;
	req->iov = req->fast_iov;
	if (unlikely(nr > BLKRING_FAST_IOVECS)) {
		req->iov = malloc(nr * sizeof(*uiov));
		if (!req->iov)
			return -ENOMEM;
		req->flags |= REQ_F_IOV_HEAP;
	}
	if (nr)
		memcpy(req->iov, uiov, nr * sizeof(*uiov));
	for (uint32_t i = 0; i < nr; i++) {
		if (unlikely(!req->iov[i].iov_base && req->iov[i].iov_len))
			return -EFAULT;
		/* The CQE's res must hold the byte count; no sum may wrap. */
		if (unlikely(__builtin_add_overflow(total, req->iov[i].iov_len, &total) ||
		             total > INT32_MAX))
			return -EINVAL;
	}
	req->nr_vecs = nr;
	req->len = (uint32_t)total;
	return 0;
}

static int read_issue(struct blkring_req *req, unsigned issue_flags)
{
	return blkring__rw_issue(req, REQ_OP_READ, blkring__issue_ioc(req, issue_flags));
}

static int write_issue(struct blkring_req *req, unsigned issue_flags)
{
	return blkring__rw_issue(req, REQ_OP_WRITE, blkring__issue_ioc(req, issue_flags));
}

/* A read or write whose bio is built: polled on an IOPOLL ring. */
static int rw_submit_built(struct blkring_req *req, struct blkring_bio *bio, unsigned issue_flags)
{
	struct blkring_ioc *ioc = blkring__issue_ioc(req, issue_flags);

	if (unlikely(req->ctx->flags & BLKRING_SETUP_IOPOLL)) {
		bio->ioc = ioc;
		return blkring__iopoll_submit(req->ctx, req, bio);
	}
	return blkring__submit_req_bio(req, bio, ioc);
}

static int rwv_issue(struct blkring_req *req, unsigned op, unsigned issue_flags)
{
	struct blkring_bio *bio = blkring__rw_bio_kept(req, op);

	bio->vec = req->iov;
	bio->nr_vecs = req->nr_vecs;
	bio->vec_skip = 0;
	return rw_submit_built(req, bio, issue_flags);
}

static int readv_issue(struct blkring_req *req, unsigned issue_flags)
{
	return rwv_issue(req, REQ_OP_READ, issue_flags);
}

static int writev_issue(struct blkring_req *req, unsigned issue_flags)
{
	return rwv_issue(req, REQ_OP_WRITE, issue_flags);
}

/* ---- READ_FIXED, WRITE_FIXED: a registered buffer ---- */

/* io_uring's checks: the index names a registered buffer and the range
 * lies within it, else -EFAULT. */
static int fixed_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                      const struct blkring_sqe *sqe)
{
	const struct iovec *buf;
	uintptr_t base;
	int ret = blkring__rw_prep(ctx, req, sqe);

	if (unlikely(ret))
		return ret;
	if (unlikely(sqe->buf_index >= ctx->ioc.nr_bufs))
		return -EFAULT;
	buf = &ctx->ioc.bufs[sqe->buf_index];
	base = (uintptr_t)buf->iov_base;
	if (unlikely(req->addr < base || req->addr - base > buf->iov_len ||
	             req->len > buf->iov_len - (req->addr - base)))
		return -EFAULT;
	req->buf_index = sqe->buf_index;
	return 0;
}

/* Other drivers see a plain read or write; the file driver hands the
 * kernel the buffer's index. */
static int fixed_issue(struct blkring_req *req, unsigned op, unsigned issue_flags)
{
	struct blkring_bio *bio = blkring__rw_bio_kept(req, op);

	blkring__bio_set_buf(bio, (void *)(uintptr_t)req->addr, req->len);
	bio->flags |= BIO_FIXED_BUF;
	bio->buf_index = req->buf_index;
	return rw_submit_built(req, bio, issue_flags);
}

static int read_fixed_issue(struct blkring_req *req, unsigned issue_flags)
{
	return fixed_issue(req, REQ_OP_READ, issue_flags);
}

static int write_fixed_issue(struct blkring_req *req, unsigned issue_flags)
{
	return fixed_issue(req, REQ_OP_WRITE, issue_flags);
}

/* ---- FSYNC: a device flush ---- */

static int fsync_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                      const struct blkring_sqe *sqe)
{
	int ret = blkring__prep_dev(ctx, req, sqe);

	if (unlikely(ret))
		return ret;
	/* The range fields mean nothing to a device flush. */
	if ((sqe->fsync_flags & ~BLKRING_FSYNC_DATASYNC) || sqe->addr)
		return -EINVAL;
	return 0;
}

static int fsync_issue(struct blkring_req *req, unsigned issue_flags)
{
	struct blkring_bio *bio = &req->bio;

	blkring__bio_init(bio, req->dev, REQ_OP_FLUSH, 0, 0);
	req->result = 0;
	return blkring__submit_req_bio(req, bio, blkring__issue_ioc(req, issue_flags));
}

/* ---- URING_CMD: a command the device defines ---- */

static int cmd_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                    const struct blkring_sqe *sqe)
{
	int ret = blkring__prep_dev(ctx, req, sqe);

	if (unlikely(ret))
		return ret;
	memcpy(&req->cmd, sqe, sizeof(req->cmd));
	return 0;
}

/* The block layer checks the SQE; -EAGAIN from the non-blocking first issue
 * brings it back here from a worker, without the flag. */
static int cmd_issue(struct blkring_req *req, unsigned issue_flags)
{
	struct blkring_bio *bio = &req->bio;

	req->result = 0;
	blkring__bio_init(bio, req->dev, REQ_OP_DISCARD, 0, 0);
	blkring__req_bio_bind(req->ctx, req, bio, blkring__issue_ioc(req, issue_flags));
	return blkring__blkdev_uring_cmd(&req->cmd, bio, issue_flags);
}

const struct blkring__op blkring__ops[BLKRING_OP_LAST] = {
    [BLKRING_OP_NOP] = {nop_prep, nop_issue},
    [BLKRING_OP_READV] = {rwv_prep, readv_issue},
    [BLKRING_OP_WRITEV] = {rwv_prep, writev_issue},
    [BLKRING_OP_FSYNC] = {fsync_prep, fsync_issue},
    [BLKRING_OP_READ_FIXED] = {fixed_prep, read_fixed_issue},
    [BLKRING_OP_WRITE_FIXED] = {fixed_prep, write_fixed_issue},
    [BLKRING_OP_TIMEOUT] = {blkring__timeout_prep, blkring__timeout_issue},
    [BLKRING_OP_TIMEOUT_REMOVE] = {blkring__timeout_remove_prep, blkring__timeout_remove_issue},
    [BLKRING_OP_ASYNC_CANCEL] = {blkring__cancel_prep, blkring__cancel_issue},
    [BLKRING_OP_LINK_TIMEOUT] = {blkring__timeout_prep, blkring__link_timeout_issue},
    [BLKRING_OP_READ] = {blkring__rw_prep, read_issue},
    [BLKRING_OP_WRITE] = {blkring__rw_prep, write_issue},
    [BLKRING_OP_URING_CMD] = {cmd_prep, cmd_issue},
};
