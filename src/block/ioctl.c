// SPDX-License-Identifier: MIT
/*
 * Block device commands on rings (Linux's block/ioctl.c blkdev_uring_cmd
 * and blkdev_cmd_discard): discard and write zeroes as
 * BLKRING_OP_URING_CMD, checked in Linux's order with nothing issued when
 * a check fails.
 *
 * The first issue is non-blocking: a range that needs more than one bio
 * answers -EAGAIN before anything is submitted, and the ring re-issues the
 * command from its worker pool, where children are allocated and chained
 * to the request's own bio (one completion, the first error wins).
 */
#include <errno.h>
#include <stdlib.h>

#include "blkdev.h"
#include "lib/futex.h"

#define ZERO_FLAGS (BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK)
/* Zero-page fallback: one shared buffer, a bounded number of writes. */
#define ZERO_BUF_SIZE (1U << 20)
#define ZERO_MAX_INFLIGHT 8

static const char zero_buf[ZERO_BUF_SIZE] __attribute__((aligned(4096)));

/* Prepares the request's bio, keeping what the ring or the blocking call
 * set up for its end. */
static void cmd_bio_prep(struct blkring_bio *bio, struct blkring_dev *dev, unsigned op,
                         uint64_t start, uint64_t len, unsigned flags)
{
	void (*end_io)(struct blkring_bio *) = bio->end_io;
	void *private = bio->private;
	uint32_t hint = bio->queue_hint;
	struct blkring_ioc *ioc = bio->ioc;
	unsigned sync = bio->flags & BIO_SYNC;

	blkring__bio_init(bio, dev, op, start, len);
	bio->end_io = end_io;
	bio->private = private;
	bio->queue_hint = hint;
	bio->ioc = ioc;
	bio->flags = (uint8_t)(flags | sync);
}

/* Discard, or write zeroes the device offloads. */
static int cmd_issue_range(struct blkring_dev *dev, struct blkring_bio *bio, unsigned op,
                           uint64_t start, uint64_t len, unsigned flags, bool nowait)
{
	if (nowait && len > blkring__max_bio_bytes(dev, op))
		return -EAGAIN;
	cmd_bio_prep(bio, dev, op, start, len, flags | (nowait ? BIO_NOWAIT : 0));
	return blkring__submit_bio(bio);
}

struct zero_fill {
	_Atomic uint32_t inflight;
};

static void zero_child_end(struct blkring_bio *child)
{
	struct zero_fill *zf = child->private;

	free(child);
	atomic_fetch_sub_explicit(&zf->inflight, 1, memory_order_release);
	futex_wake(&zf->inflight, 1);
}

static void zero_fill_wait(struct zero_fill *zf, uint32_t below)
{
	uint32_t n;

	while ((n = atomic_load_explicit(&zf->inflight, memory_order_acquire)) >= below)
		futex_wait(&zf->inflight, n, NULL);
}

/*
 * Writes zero pages over the range, at most ZERO_MAX_INFLIGHT at a time,
 * as chained children of the request's bio.  Blocking: it returns only
 * when every child ended, since they point at its stack.
 */
static int zero_fill(struct blkring_dev *dev, struct blkring_bio *bio, uint64_t start, uint64_t len)
{
	uint64_t chunk = blkring__max_bio_bytes(dev, REQ_OP_WRITE);
	struct zero_fill zf = {.inflight = 0};
	int ret = 0;

	if (chunk > ZERO_BUF_SIZE)
		chunk = ZERO_BUF_SIZE;
	cmd_bio_prep(bio, dev, REQ_OP_WRITE, start, len, 0);
	for (uint64_t done = 0; done < len && !__atomic_load_n(&bio->status, __ATOMIC_RELAXED);
	     done += chunk) {
		uint64_t n = len - done < chunk ? len - done : chunk;
		struct blkring_bio *child;

		zero_fill_wait(&zf, ZERO_MAX_INFLIGHT);
		child = blkring__bio_alloc_child(bio, REQ_OP_WRITE, start + done, n);
		if (!child) {
			ret = -ENOMEM;
			break;
		}
		blkring__bio_set_buf(child, (void *)zero_buf, n);
		child->end_io = zero_child_end;
		child->private = &zf;
		atomic_fetch_add_explicit(&zf.inflight, 1, memory_order_relaxed);
		ret = blkring__submit_bio(child);
		if (ret)
			blkring__bio_endio(child, ret);
	}
	zero_fill_wait(&zf, 1);
	blkring__bio_endio(bio, ret); /* the submitter's reference: one end */
	return 0;
}

static int cmd_write_zeroes(struct blkring_dev *dev, struct blkring_bio *bio, uint64_t start,
                            uint64_t len, unsigned cmd_flags, bool nowait)
{
	bool offload = dev->features & BLKRING_FEAT_WRITE_ZEROES;
	int ret;

	if (!offload && (cmd_flags & BLKRING_ZERO_NOFALLBACK))
		return -EOPNOTSUPP;
	if (dev->read_only)
		return -EBADF;
	ret = blkring__validate_byte_range(dev, start, len);
	if (ret)
		return ret;
	if (offload)
		return cmd_issue_range(
		    dev, bio, REQ_OP_WRITE_ZEROES, start, len,
		    ((cmd_flags & BLKRING_ZERO_NOUNMAP) ? BIO_NOUNMAP : 0) |
		        ((cmd_flags & BLKRING_ZERO_NOFALLBACK) ? BIO_NOFALLBACK : 0),
		    nowait);
	/* Writing zero pages waits for its writes: the worker pool's job. */
	if (nowait)
		return -EAGAIN;
	return zero_fill(dev, bio, start, len);
}

static int cmd_discard(struct blkring_dev *dev, struct blkring_bio *bio, uint64_t start,
                       uint64_t len, bool nowait)
{
	int ret;

	if (!(dev->features & BLKRING_FEAT_DISCARD))
		return -EOPNOTSUPP;
	if (dev->read_only)
		return -EBADF;
	ret = blkring__validate_byte_range(dev, start, len);
	if (ret)
		return ret;
	return cmd_issue_range(dev, bio, REQ_OP_DISCARD, start, len, 0, nowait);
}

int blkring__blkdev_uring_cmd(struct blkring_dev *dev, const struct blkring_sqe *sqe,
                              struct blkring_bio *bio, unsigned issue_flags)
{
	uint32_t cmd_op = sqe->cmd_op;
	uint32_t flags_ok = cmd_op == BLKRING_CMD_WRITE_ZEROES ? ZERO_FLAGS : 0;
	bool nowait = issue_flags & BLKRING_ISSUE_NONBLOCK;

	if (sqe->ioprio || sqe->__pad1 || sqe->len || (sqe->cmd_flags & ~flags_ok) ||
	    sqe->file_index || sqe->buf_index || sqe->personality || sqe->__pad2[0])
		return -EINVAL;
	switch (cmd_op) {
	case BLKRING_CMD_DISCARD:
		return cmd_discard(dev, bio, sqe->addr, sqe->addr3, nowait);
	case BLKRING_CMD_WRITE_ZEROES:
		return cmd_write_zeroes(dev, bio, sqe->addr, sqe->addr3, sqe->cmd_flags, nowait);
	}
	return -EINVAL;
}
