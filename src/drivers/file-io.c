// SPDX-License-Identifier: MIT
/*
 * The file driver's I/O: every bio becomes one SQE on a kernel io_uring
 * (the queue file-queue.c picks for it), and its CQE ends the bio.
 *
 * Kernel results pass through unchanged.  The only things done again are
 * the named fallbacks (see zero_first_mode() and file_complete()) and the
 * rest of a read or write the kernel did only part of, as io_uring itself
 * does for regular files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/file.h"

/* sqe->cmd_op of Linux's BLOCK_URING_CMD_DISCARD, _IO(0x12, 0). */
#define BLOCK_URING_CMD_DISCARD ((0x12U << 8) | 0)

/* A read or write the kernel did part of: the rest, as a trimmed iovec. */
struct rw_rest {
	uint64_t done;
	uint32_t nr;
	struct iovec iov[];
};

/* ---- data windows ---- */

/* Segments of the bio's data window from byte `skip` on. */
static uint32_t window_segments(const struct blkring_bio *bio, uint64_t skip)
{
	uint64_t off = bio->vec_skip + skip, left = bio->size - skip;
	uint32_t i = 0, n = 0;

	while (off >= bio->vec[i].iov_len)
		off -= bio->vec[i++].iov_len;
	for (; left; i++, n++) {
		uint64_t len = bio->vec[i].iov_len - off;

		left -= len < left ? len : left;
		off = 0;
	}
	return n;
}

static void window_fill(const struct blkring_bio *bio, uint64_t skip, struct iovec *iov)
{
	uint64_t off = bio->vec_skip + skip, left = bio->size - skip;
	uint32_t i = 0;

	while (off >= bio->vec[i].iov_len)
		off -= bio->vec[i++].iov_len;
	for (; left; i++, iov++) {
		uint64_t len = bio->vec[i].iov_len - off;

		iov->iov_base = (char *)bio->vec[i].iov_base + off;
		iov->iov_len = len < left ? len : left;
		left -= iov->iov_len;
		off = 0;
	}
}

/* The bio's window from `done` on, when it is not the iovec array as given. */
static int rw_rest_set(struct blkring_bio *bio, uint64_t done)
{
	uint32_t nr = window_segments(bio, done);
	struct rw_rest *rest = realloc(bio->driver_data, sizeof(*rest) + nr * sizeof(rest->iov[0]));

	if (!rest)
		return -ENOMEM;
	rest->done = done;
	rest->nr = nr;
	window_fill(bio, done, rest->iov);
	bio->driver_data = rest;
	return 0;
}

/* The iovec array is the window exactly: no copy needed. */
static bool window_is_vec(const struct blkring_bio *bio)
{
	uint64_t total = 0;

	if (bio->vec_skip)
		return false;
	for (uint32_t i = 0; i < bio->nr_vecs; i++)
		total += bio->vec[i].iov_len;
	return total == bio->size;
}

/* ---- SQEs ---- */

static int rw_flags(const struct blkring_bio *bio)
{
	int flags = 0;

	if (bio->flags & BIO_FUA)
		flags |= RWF_DSYNC;
	if (bio->flags & BIO_NOWAIT)
		flags |= RWF_NOWAIT;
	return flags;
}

static void prep_rw(const struct file_queue *q, struct io_uring_sqe *sqe,
                    const struct blkring_bio *bio)
{
	bool write = bio->op == REQ_OP_WRITE;
	const struct rw_rest *rest = bio->driver_data;
	uint64_t off = bio->sector << SECTOR_SHIFT;

	if (unlikely(rest)) {
		io_uring_prep_rw(write ? IORING_OP_WRITEV : IORING_OP_READV, sqe, 0, rest->iov,
		                 rest->nr, off + rest->done);
	} else if (likely(bio->nr_vecs == 1)) {
		void *buf = (char *)bio->vec[0].iov_base + bio->vec_skip;

		if ((bio->flags & BIO_FIXED_BUF) && q->fixed_bufs) {
			io_uring_prep_rw(write ? IORING_OP_WRITE_FIXED : IORING_OP_READ_FIXED, sqe,
			                 0, buf, (unsigned)bio->size, off);
			sqe->buf_index = bio->buf_index;
		} else {
			io_uring_prep_rw(write ? IORING_OP_WRITE : IORING_OP_READ, sqe, 0, buf,
			                 (unsigned)bio->size, off);
		}
	} else {
		io_uring_prep_rw(write ? IORING_OP_WRITEV : IORING_OP_READV, sqe, 0, bio->vec,
		                 bio->nr_vecs, off);
	}
	sqe->rw_flags = rw_flags(bio);
}

static void prep_discard_cmd(struct io_uring_sqe *sqe, uint64_t off, uint64_t len)
{
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, 0, NULL, 0, 0);
	sqe->cmd_op = BLOCK_URING_CMD_DISCARD;
	sqe->addr = off;
	sqe->addr3 = len;
}

static int zero_falloc_mode(enum file_zero_mode mode)
{
	switch (mode) {
	case ZERO_WRITE_ZEROES:
		return FALLOC_FL_WRITE_ZEROES;
	case ZERO_RANGE:
		return FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	case ZERO_ALLOC:
		return FALLOC_FL_KEEP_SIZE;
	default:
		return FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	}
}

void file_prep(struct file_queue *q, struct io_uring_sqe *sqe, struct blkring_bio *bio)
{
	uint64_t off = bio->sector << SECTOR_SHIFT;

	switch (bio->op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		prep_rw(q, sqe, bio);
		break;
	case REQ_OP_FLUSH:
		io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC);
		break;
	case REQ_OP_DISCARD:
		if (q->fd->bdev)
			prep_discard_cmd(sqe, off, bio->size);
		else
			io_uring_prep_fallocate(sqe, 0, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			                        off, bio->size);
		break;
	case REQ_OP_WRITE_ZEROES:
		io_uring_prep_fallocate(
		    sqe, 0, zero_falloc_mode((enum file_zero_mode)(uintptr_t)bio->driver_data), off,
		    bio->size);
		break;
	}
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data(sqe, bio);
}

/*
 * Whether BLOCK_URING_CMD_DISCARD works here (Linux 6.12+): an empty range
 * passes every check before the range's and then fails with -EINVAL
 * (-EBADF on a read-only open); a kernel without the command answers
 * -EOPNOTSUPP.  Nothing is discarded.
 */
bool file_probe_discard_cmd(struct file_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	struct io_uring_cqe *cqe;
	int res;

	prep_discard_cmd(sqe, 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	if (io_uring_submit_and_wait(&q->ring, 1) < 1 || io_uring_peek_cqe(&q->ring, &cqe))
		return false;
	res = cqe->res;
	io_uring_cqe_seen(&q->ring, cqe);
	return res == -EINVAL || res == -EBADF;
}

/* ---- starting bios ---- */

/*
 * Write zeroes, by flags and file kind.  Block devices (blkdev_fallocate):
 * NOUNMAP: ZERO_RANGE, i.e. blkdev_issue_zeroout(NOUNMAP), which keeps the
 * range allocated (with NOFALLBACK as well: the device has the offload, or
 * the block layer answered -EOPNOTSUPP already); otherwise PUNCH_HOLE, i.e.
 * blkdev_issue_zeroout(NOFALLBACK), which may unmap.  Either, answering
 * -EOPNOTSUPP without NOFALLBACK, falls back to BLKZEROOUT, which writes
 * zero pages when it must; zero_falloc=0 goes there at once.
 * Regular files: PUNCH_HOLE|KEEP_SIZE unless NOUNMAP; NOUNMAP tries
 * FALLOC_FL_WRITE_ZEROES (Linux 6.17+: zeroes through the device's offload
 * and leaves the range written), then ZERO_RANGE (unwritten extents), then
 * a punch followed by an allocation (tmpfs), remembering what failed.
 */
static enum file_zero_mode zero_first_mode(struct file_dev *fd, const struct blkring_bio *bio)
{
	bool nounmap = bio->flags & BIO_NOUNMAP;

	if (fd->bdev) {
		if (!fd->zero_falloc)
			return ZERO_IOCTL;
		return nounmap ? ZERO_RANGE : ZERO_PUNCH;
	}
	if (!nounmap)
		return ZERO_PUNCH;
	return (enum file_zero_mode)atomic_load_explicit(&fd->nounmap_mode, memory_order_relaxed);
}

/*
 * A blocking discard on a block device is the kernel's own, ioctl(BLKDISCARD)
 * in the caller's thread: the synchronous baseline then pays what Linux's
 * does (the mapping's invalidate lock, held for the whole call).
 */
static bool runs_inline(struct file_dev *fd, const struct blkring_bio *bio, bool here)
{
	return here && bio->op == REQ_OP_DISCARD && (bio->flags & BIO_SYNC) && fd->bdev;
}

static bool goes_blocking(struct file_dev *fd, const struct blkring_bio *bio)
{
	if (bio->op == REQ_OP_DISCARD)
		return fd->bdev && !atomic_load_explicit(&fd->discard_cmd, memory_order_relaxed);
	return bio->op == REQ_OP_WRITE_ZEROES &&
	       (enum file_zero_mode)(uintptr_t)bio->driver_data == ZERO_IOCTL;
}

/* Starts a bio that holds a tag; a negative errno when it could not be.
 * here: on its submitter's thread, whose ring queue and blocking call it
 * may use; a bio started by whoever freed a tag goes to the shared queue
 * (its fields stay as they are: its ring's owner may be polling it). */
static int dispatch(struct file_dev *fd, struct blkring_bio *bio, bool here)
{
	bio->driver_data = NULL;
	if (unlikely(bio->op > REQ_OP_FLUSH)) {
		if (bio->op == REQ_OP_WRITE_ZEROES)
			bio->driver_data = (void *)(uintptr_t)zero_first_mode(fd, bio);
		if (runs_inline(fd, bio, here)) {
			file_blocking_run(fd, bio);
			return 0;
		}
		if (goes_blocking(fd, bio)) {
			file_blocking_queue(fd, bio);
			return 0;
		}
	} else if (unlikely(bio->nr_vecs > 1 && !window_is_vec(bio))) {
		int ret = rw_rest_set(bio, 0);

		if (ret)
			return ret;
	}
	file_queue_bio(file_queue_of(fd, bio, here ? bio->ioc : NULL), bio);
	return 0;
}

int file_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct file_dev *fd = dev->private;
	struct blkring_hctx *hctx = blkring__map_queue(dev, bio);
	int ret;

	bio->hctx = hctx;
	ret = blkring__hctx_get_tag(hctx, bio);
	if (unlikely(ret <= 0))
		return ret; /* waiting for a tag (0), or NOWAIT without one */
	ret = dispatch(fd, bio, true);
	if (unlikely(ret))
		file_end(fd, bio, ret);
	return 0;
}

/*
 * A bio that waited for a tag is started by whoever freed one, on any
 * thread: not necessarily its ring's owner, so it goes to the shared queue,
 * nor its blocking caller, so a BIO_SYNC discard does not run its ioctl
 * here.
 */
void file_end(struct file_dev *fd, struct blkring_bio *bio, int status)
{
	while (bio) {
		struct blkring_bio *next;

		if (unlikely(bio->driver_data) && bio->op <= REQ_OP_WRITE)
			free(bio->driver_data);
		next = blkring__hctx_put_tag(bio->hctx);
		blkring__bio_endio(bio, status);
		bio = next;
		if (!next)
			break;
		status = dispatch(fd, next, false);
		if (!status)
			break;
	}
}

/* ---- completing ---- */

static void rw_complete(struct file_queue *q, struct blkring_bio *bio, int res)
{
	struct rw_rest *rest = bio->driver_data;
	uint64_t done = (rest ? rest->done : 0) + (uint64_t)(res > 0 ? res : 0);
	int ret;

	if (likely(res < 0 || done == bio->size)) {
		file_end(q->fd, bio, res < 0 ? res : 0);
		return;
	}
	/* No progress: the file ended before the device did. */
	if (!res) {
		file_end(q->fd, bio, -EIO);
		return;
	}
	ret = rw_rest_set(bio, done);
	if (ret)
		file_end(q->fd, bio, ret);
	else
		file_queue_bio(q, bio);
}

static void set_zero_mode(struct blkring_bio *bio, enum file_zero_mode mode)
{
	bio->driver_data = (void *)(uintptr_t)mode;
}

/* The next way to zero after `mode` answered -EOPNOTSUPP, or -1 for none. */
static int zero_next_mode(struct file_dev *fd, const struct blkring_bio *bio,
                          enum file_zero_mode mode)
{
	uint8_t expect = (uint8_t)mode;

	if (fd->bdev)
		return (bio->flags & BIO_NOFALLBACK) ? -1 : ZERO_IOCTL;
	if (mode != ZERO_WRITE_ZEROES && mode != ZERO_RANGE)
		return -1;
	/* The file cannot do it: later bios start one mode further. */
	atomic_compare_exchange_strong_explicit(&fd->nounmap_mode, &expect, (uint8_t)(mode + 1),
	                                        memory_order_relaxed, memory_order_relaxed);
	return mode + 1;
}

static void zero_complete(struct file_queue *q, struct blkring_bio *bio, int res)
{
	enum file_zero_mode mode = (enum file_zero_mode)(uintptr_t)bio->driver_data;
	int next;

	if (res == -EOPNOTSUPP && (next = zero_next_mode(q->fd, bio, mode)) >= 0) {
		set_zero_mode(bio, (enum file_zero_mode)next);
		if (next == ZERO_IOCTL)
			file_blocking_queue(q->fd, bio);
		else
			file_queue_bio(q, bio);
		return;
	}
	if (!res && mode == ZERO_PUNCH_ALLOC) {
		set_zero_mode(bio, ZERO_ALLOC);
		file_queue_bio(q, bio);
		return;
	}
	file_end(q->fd, bio, res);
}

void file_complete(struct file_queue *q, struct blkring_bio *bio, int res)
{
	switch (bio->op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		rw_complete(q, bio, res);
		return;
	case REQ_OP_WRITE_ZEROES:
		zero_complete(q, bio, res);
		return;
	case REQ_OP_DISCARD:
		/* The device discards but takes no non-blocking bios (zram):
		 * BLKDISCARD from now on. */
		if (res == -EOPNOTSUPP && q->fd->bdev) {
			atomic_store_explicit(&q->fd->discard_cmd, false, memory_order_relaxed);
			file_blocking_queue(q->fd, bio);
			return;
		}
		break;
	}
	file_end(q->fd, bio, res < 0 ? res : 0);
}

/* ---- polling ---- */

/* Reaps the polled bio's ring queue; a bio that went elsewhere (it waited
 * for a tag) is ended by the shared queue's reaper. */
int file_poll(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct blkring_ioc_queue *link;
	struct file_ring_queue *rq;

	if (!bio || !bio->ioc || !(link = blkring__ioc_find(bio->ioc, dev)))
		return 0;
	rq = container_of(link, struct file_ring_queue, link);
	return rq->poll.has_ring ? (int)file_queue_poll(&rq->poll) : 0;
}
