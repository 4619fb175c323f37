// SPDX-License-Identifier: MIT
/*
 * Linux's block/blk-lib.c: the discard and write-zeroes primitives that the
 * ring commands (ioctl.c) and the blocking calls share, with the zero-page
 * fallback; and the blocking calls for code that does not want a ring,
 * which build a bio on the stack, submit it and sleep on a futex until its
 * end_io runs.
 */
#include <errno.h>
#include <stdlib.h>

#include "blkdev.h"
#include "lib/futex.h"

/* Zero-page fallback: one shared buffer, a bounded number of writes. */
#define ZERO_BUF_SIZE (1U << 20)
#define ZERO_MAX_INFLIGHT 8

static const char zero_buf[ZERO_BUF_SIZE] __attribute__((aligned(4096)));

/* A blocking call's bio: it ends (often inline, within the submit) before
 * or after its caller sleeps; only a caller asleep needs the syscall. */
enum { SYNC_PENDING, SYNC_DONE, SYNC_SLEEPING };

struct sync_wait {
	_Atomic uint32_t state;
	int status;
};

static void sync_end_io(struct blkring_bio *bio)
{
	struct sync_wait *w = bio->private;

	w->status = bio->status;
	if (atomic_exchange_explicit(&w->state, SYNC_DONE, memory_order_acq_rel) == SYNC_SLEEPING)
		futex_wake(&w->state, 1);
}

static int sync_wait(struct sync_wait *w)
{
	uint32_t v = SYNC_PENDING;

	if (atomic_compare_exchange_strong_explicit(&w->state, &v, SYNC_SLEEPING,
	                                            memory_order_acquire, memory_order_acquire))
		v = SYNC_SLEEPING;
	while (v != SYNC_DONE) {
		futex_wait(&w->state, SYNC_SLEEPING, NULL);
		v = atomic_load_explicit(&w->state, memory_order_acquire);
	}
	return w->status;
}

static int submit_and_wait(struct blkring_bio *bio)
{
	struct sync_wait w = {.state = SYNC_PENDING};
	int ret;

	bio->end_io = sync_end_io;
	bio->private = &w;
	ret = blkring__submit_bio(bio);
	return ret ? ret : sync_wait(&w);
}

static ssize_t sync_rw(struct blkring_dev *dev, unsigned op, void *buf, size_t nbytes,
                       uint64_t offset)
{
	struct blkring_bio bio;
	int ret;

	if (!dev || (!buf && nbytes))
		return -EINVAL;
	blkring__bio_init(&bio, dev, op, offset, nbytes);
	blkring__bio_set_buf(&bio, buf, nbytes);
	ret = submit_and_wait(&bio);
	return ret ? ret : (ssize_t)nbytes;
}

ssize_t blkring_dev_pread(struct blkring_dev *dev, void *buf, size_t nbytes, uint64_t offset)
{
	return sync_rw(dev, REQ_OP_READ, buf, nbytes, offset);
}

ssize_t blkring_dev_pwrite(struct blkring_dev *dev, const void *buf, size_t nbytes, uint64_t offset)
{
	return sync_rw(dev, REQ_OP_WRITE, (void *)buf, nbytes, offset);
}

int blkring_dev_flush(struct blkring_dev *dev)
{
	struct blkring_bio bio;

	if (!dev)
		return -EINVAL;
	blkring__bio_init(&bio, dev, REQ_OP_FLUSH, 0, 0);
	return submit_and_wait(&bio);
}

/* ---- discard and write zeroes (Linux's blkdev_issue_discard and
 * blkdev_issue_zeroout, checked as its blkdev_cmd_* do) ---- */

/* The caller's bio (set up for its end) gets the range it stands for. */
static void bio_set_range(struct blkring_bio *bio, unsigned op, uint64_t start, uint64_t len,
                          unsigned flags)
{
	bio->op = (uint8_t)op;
	bio->status = (start & (SECTOR_SIZE - 1)) ? -EINVAL : 0;
	bio->sector = start >> SECTOR_SHIFT;
	bio->size = len;
	bio->flags |= (uint8_t)flags;
}

/* Discard, or write zeroes the device offloads: one bio, or -EAGAIN when a
 * non-blocking issue would need more. */
static int issue_range(struct blkring_bio *bio, unsigned op, uint64_t start, uint64_t len,
                       unsigned flags)
{
	if ((flags & BIO_NOWAIT) && len > blkring__max_bio_bytes(bio->dev, op))
		return -EAGAIN;
	bio_set_range(bio, op, start, len, flags);
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
	bio_set_range(bio, REQ_OP_WRITE, start, len, 0);
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

int blkring__blkdev_issue_discard(struct blkring_bio *bio, uint64_t start, uint64_t len,
                                  bool nowait)
{
	struct blkring_dev *dev = bio->dev;
	int ret;

	if (!(READ_ONCE(dev->features) & BLKRING_FEAT_DISCARD))
		return -EOPNOTSUPP;
	if (READ_ONCE(dev->read_only))
		return -EBADF;
	ret = blkring__validate_byte_range(dev, start, len);
	if (ret)
		return ret;
	return issue_range(bio, REQ_OP_DISCARD, start, len, nowait ? BIO_NOWAIT : 0);
}

int blkring__blkdev_issue_zeroout(struct blkring_bio *bio, uint64_t start, uint64_t len,
                                  unsigned zero_flags, bool nowait)
{
	struct blkring_dev *dev = bio->dev;
	bool offload = READ_ONCE(dev->features) & BLKRING_FEAT_WRITE_ZEROES;
	int ret;

	if (!offload && (zero_flags & BLKRING_ZERO_NOFALLBACK))
		return -EOPNOTSUPP;
	if (READ_ONCE(dev->read_only))
		return -EBADF;
	ret = blkring__validate_byte_range(dev, start, len);
	if (ret)
		return ret;
	if (offload)
		return issue_range(
		    bio, REQ_OP_WRITE_ZEROES, start, len,
		    ((zero_flags & BLKRING_ZERO_NOUNMAP) ? BIO_NOUNMAP : 0) |
		        ((zero_flags & BLKRING_ZERO_NOFALLBACK) ? BIO_NOFALLBACK : 0) |
		        (nowait ? BIO_NOWAIT : 0));
	/* Writing zero pages waits for its writes: the worker pool's job. */
	if (nowait)
		return -EAGAIN;
	return zero_fill(dev, bio, start, len);
}

/* The synchronous baseline of the ring commands: the same primitives. */
static void sync_bio_init(struct blkring_bio *bio, struct blkring_dev *dev, struct sync_wait *w)
{
	blkring__bio_init(bio, dev, REQ_OP_DISCARD, 0, 0);
	bio->flags = BIO_SYNC;
	bio->end_io = sync_end_io;
	bio->private = w;
}

int blkring_dev_discard(struct blkring_dev *dev, uint64_t offset, uint64_t nbytes)
{
	struct sync_wait w = {.state = SYNC_PENDING};
	struct blkring_bio bio;
	int ret;

	if (!dev)
		return -EINVAL;
	sync_bio_init(&bio, dev, &w);
	ret = blkring__blkdev_issue_discard(&bio, offset, nbytes, false);
	return ret ? ret : sync_wait(&w);
}

int blkring_dev_write_zeroes(struct blkring_dev *dev, uint64_t offset, uint64_t nbytes,
                             unsigned flags)
{
	struct sync_wait w = {.state = SYNC_PENDING};
	struct blkring_bio bio;
	int ret;

	if (!dev)
		return -EINVAL;
	if (flags & ~(BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK))
		return -EINVAL;
	sync_bio_init(&bio, dev, &w);
	ret = blkring__blkdev_issue_zeroout(&bio, offset, nbytes, flags, false);
	return ret ? ret : sync_wait(&w);
}
