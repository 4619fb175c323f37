// SPDX-License-Identifier: MIT
/*
 * Blocking calls for code that does not want a ring (Linux's
 * block/blk-lib.c and the pread/pwrite/fsync paths): build a bio on the
 * stack, submit it, sleep on a futex until its end_io runs.
 */
#include <errno.h>

#include "blkdev.h"
#include "lib/futex.h"

struct sync_wait {
	_Atomic uint32_t done;
	int status;
};

static void sync_end_io(struct blkring_bio *bio)
{
	struct sync_wait *w = bio->private;

	w->status = bio->status;
	atomic_store_explicit(&w->done, 1, memory_order_release);
	futex_wake(&w->done, 1);
}

static int sync_wait(struct sync_wait *w)
{
	while (!atomic_load_explicit(&w->done, memory_order_acquire))
		futex_wait(&w->done, 0, NULL);
	return w->status;
}

static int submit_and_wait(struct blkring_bio *bio)
{
	struct sync_wait w = {.done = 0};
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

/* The synchronous baseline of the ring commands: same checks, same bios. */
static int sync_cmd(struct blkring_dev *dev, const struct blkring_sqe *sqe)
{
	struct sync_wait w = {.done = 0};
	struct blkring_bio bio;
	int ret;

	if (!dev)
		return -EINVAL;
	blkring__bio_init(&bio, dev, REQ_OP_DISCARD, 0, 0);
	bio.flags = BIO_SYNC;
	bio.end_io = sync_end_io;
	bio.private = &w;
	ret = blkring__blkdev_uring_cmd(dev, sqe, &bio, 0);
	return ret ? ret : sync_wait(&w);
}

int blkring_dev_discard(struct blkring_dev *dev, uint64_t offset, uint64_t nbytes)
{
	struct blkring_sqe sqe;

	blkring_prep_cmd_discard(&sqe, 0, offset, nbytes);
	return sync_cmd(dev, &sqe);
}

int blkring_dev_write_zeroes(struct blkring_dev *dev, uint64_t offset, uint64_t nbytes,
                             unsigned flags)
{
	struct blkring_sqe sqe;

	blkring_prep_cmd_write_zeroes(&sqe, 0, offset, nbytes, flags);
	return sync_cmd(dev, &sqe);
}
