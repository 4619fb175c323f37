// SPDX-License-Identifier: MIT
/*
 * The file driver's I/O: every bio becomes one SQE on the kernel's
 * io_uring (the file registered as fixed file 0), and its CQE ends the bio.
 * The device has one kernel ring; any thread submits under its lock, and a
 * reaper thread waits for completions, so the driver serves every kind of
 * submitter: rings, blocking calls, volume legs.
 *
 * Kernel results pass through unchanged.  The only things done again are
 * the named fallbacks (see zero_first_mode() and complete()) and the rest
 * of a read or write the kernel did only part of, as io_uring itself does
 * for regular files.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/file.h"

/* user_data that is no bio. */
#define UD_STOP 1ULL /* the reaper's last CQE */

/* sqe->cmd_op of Linux's BLOCK_URING_CMD_DISCARD, _IO(0x12, 0). */
#define BLOCK_URING_CMD_DISCARD ((0x12U << 8) | 0)

/* A read or write the kernel did part of: the rest, as a trimmed iovec. */
struct rw_rest {
	uint64_t done;
	uint32_t nr;
	struct iovec iov[];
};

/* ---- building SQEs ---- */

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

static int rw_flags(const struct blkring_bio *bio)
{
	int flags = 0;

	if (bio->flags & BIO_FUA)
		flags |= RWF_DSYNC;
	if (bio->flags & BIO_NOWAIT)
		flags |= RWF_NOWAIT;
	return flags;
}

static void prep_rw(struct io_uring_sqe *sqe, const struct blkring_bio *bio)
{
	bool write = bio->op == REQ_OP_WRITE;
	const struct rw_rest *rest = bio->driver_data;
	uint64_t off = bio->sector << SECTOR_SHIFT;

	if (rest) {
		io_uring_prep_rw(write ? IORING_OP_WRITEV : IORING_OP_READV, sqe, 0, rest->iov,
		                 rest->nr, off + rest->done);
	} else if (bio->nr_vecs == 1) {
		io_uring_prep_rw(write ? IORING_OP_WRITE : IORING_OP_READ, sqe, 0,
		                 (char *)bio->vec[0].iov_base + bio->vec_skip, (unsigned)bio->size,
		                 off);
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

static void prep_bio(struct file_dev *fd, struct io_uring_sqe *sqe, struct blkring_bio *bio)
{
	uint64_t off = bio->sector << SECTOR_SHIFT;

	switch (bio->op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		prep_rw(sqe, bio);
		break;
	case REQ_OP_FLUSH:
		io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC);
		break;
	case REQ_OP_DISCARD:
		if (fd->bdev)
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

/* ---- submitting ---- */

/* Pushes what the SQ holds to the kernel; only transient errors happen here
 * (the ring never has more in flight than its CQ holds), so it retries. */
static void queue_flush(struct file_queue *q)
{
	while (io_uring_sq_ready(&q->ring)) {
		int ret = io_uring_submit(&q->ring);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			break;
	}
}

static void queue_bio(struct file_dev *fd, struct blkring_bio *bio)
{
	struct file_queue *q = &fd->queue;
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&q->sq_lock);
	while (!(sqe = io_uring_get_sqe(&q->ring)))
		queue_flush(q);
	prep_bio(fd, sqe, bio);
	/* The reaper reads what this thread wrote into the bio: the kernel
	 * orders that for the CPU; this release orders it for the sanitizers,
	 * which cannot see through the kernel. */
	atomic_fetch_add_explicit(&q->handoff, 1, memory_order_release);
	queue_flush(q);
	pthread_mutex_unlock(&q->sq_lock);
}

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

static bool goes_blocking(struct file_dev *fd, const struct blkring_bio *bio)
{
	if (bio->op == REQ_OP_DISCARD)
		return fd->bdev && !atomic_load_explicit(&fd->discard_cmd, memory_order_relaxed);
	return bio->op == REQ_OP_WRITE_ZEROES &&
	       (enum file_zero_mode)(uintptr_t)bio->driver_data == ZERO_IOCTL;
}

/* Starts a bio that holds a tag; a negative errno when it could not be. */
static int dispatch(struct file_dev *fd, struct blkring_bio *bio)
{
	bio->driver_data = NULL;
	if (bio->op == REQ_OP_WRITE_ZEROES)
		bio->driver_data = (void *)(uintptr_t)zero_first_mode(fd, bio);
	if (unlikely(goes_blocking(fd, bio))) {
		file_blocking_queue(fd, bio);
		return 0;
	}
	if (unlikely(bio->nr_vecs > 1 && !window_is_vec(bio))) {
		int ret = rw_rest_set(bio, 0);

		if (ret)
			return ret;
	}
	queue_bio(fd, bio);
	return 0;
}

int file_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct file_dev *fd = dev->private;
	struct blkring_hctx *hctx = blkring__map_queue(dev, bio);
	int ret;

	bio->hctx = hctx;
	ret = blkring__hctx_get_tag(hctx, bio);
	if (ret <= 0)
		return ret; /* waiting for a tag (0), or NOWAIT without one */
	ret = dispatch(fd, bio);
	if (unlikely(ret))
		file_end(fd, bio, ret);
	return 0;
}

void file_end(struct file_dev *fd, struct blkring_bio *bio, int status)
{
	while (bio) {
		struct blkring_bio *next;

		if (bio->op == REQ_OP_READ || bio->op == REQ_OP_WRITE)
			free(bio->driver_data);
		next = blkring__hctx_put_tag(bio->hctx);
		blkring__bio_endio(bio, status);
		bio = next;
		status = next ? dispatch(fd, next) : 0;
		if (!status)
			break;
	}
}

/* ---- completing ---- */

static void rw_complete(struct file_dev *fd, struct blkring_bio *bio, int res)
{
	struct rw_rest *rest = bio->driver_data;
	uint64_t done = (rest ? rest->done : 0) + (uint64_t)(res > 0 ? res : 0);
	int ret;

	if (res < 0 || done == bio->size) {
		file_end(fd, bio, res < 0 ? res : 0);
		return;
	}
	/* No progress: the file ended before the device did. */
	if (!res) {
		file_end(fd, bio, -EIO);
		return;
	}
	ret = rw_rest_set(bio, done);
	if (ret)
		file_end(fd, bio, ret);
	else
		queue_bio(fd, bio);
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

static void zero_complete(struct file_dev *fd, struct blkring_bio *bio, int res)
{
	enum file_zero_mode mode = (enum file_zero_mode)(uintptr_t)bio->driver_data;
	int next;

	if (res == -EOPNOTSUPP && (next = zero_next_mode(fd, bio, mode)) >= 0) {
		set_zero_mode(bio, (enum file_zero_mode)next);
		if (next == ZERO_IOCTL)
			file_blocking_queue(fd, bio);
		else
			queue_bio(fd, bio);
		return;
	}
	if (!res && mode == ZERO_PUNCH_ALLOC) {
		set_zero_mode(bio, ZERO_ALLOC);
		queue_bio(fd, bio);
		return;
	}
	file_end(fd, bio, res);
}

static void complete(struct file_dev *fd, struct blkring_bio *bio, int res)
{
	switch (bio->op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		rw_complete(fd, bio, res);
		return;
	case REQ_OP_WRITE_ZEROES:
		zero_complete(fd, bio, res);
		return;
	case REQ_OP_DISCARD:
		/* The device discards but takes no non-blocking bios (zram):
		 * BLKDISCARD from now on. */
		if (res == -EOPNOTSUPP && fd->bdev) {
			atomic_store_explicit(&fd->discard_cmd, false, memory_order_relaxed);
			file_blocking_queue(fd, bio);
			return;
		}
		break;
	}
	file_end(fd, bio, res < 0 ? res : 0);
}

/* ---- the reaper ---- */

static void *reaper_thread(void *arg)
{
	struct file_dev *fd = arg;
	struct file_queue *q = &fd->queue;
	bool stop = false;

	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		if (io_uring_wait_cqe(&q->ring, &cqe))
			continue; /* interrupted: nothing taken */
		io_uring_for_each_cqe(&q->ring, head, cqe)
		{
			/* Pairs with queue_bio()'s release: the bio's fields. */
			atomic_load_explicit(&q->handoff, memory_order_acquire);
			n++;
			if (cqe->user_data == UD_STOP)
				stop = true;
			else
				complete(fd, io_uring_cqe_get_data(cqe), cqe->res);
		}
		io_uring_cq_advance(&q->ring, n);
	}
	return NULL;
}

static int reaper_start(struct file_dev *fd)
{
	struct file_queue *q = &fd->queue;
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&q->reaper, NULL, reaper_thread, fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	pthread_setname_np(q->reaper, "blkring-file");
	q->has_reaper = true;
	return 0;
}

static void reaper_stop(struct file_queue *q)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&q->sq_lock);
	while (!(sqe = io_uring_get_sqe(&q->ring)))
		queue_flush(q);
	io_uring_prep_nop(sqe);
	sqe->user_data = UD_STOP;
	queue_flush(q);
	pthread_mutex_unlock(&q->sq_lock);
	pthread_join(q->reaper, NULL);
}

/* ---- setup ---- */

/*
 * Whether BLOCK_URING_CMD_DISCARD works here (Linux 6.12+): an empty range
 * passes every check before the range's and then fails with -EINVAL
 * (-EBADF on a read-only open); a kernel without the command answers
 * -EOPNOTSUPP.  Nothing is discarded.
 */
static bool probe_discard_cmd(struct file_queue *q)
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

int file_queue_init(struct file_dev *fd, unsigned depth)
{
	struct file_queue *q = &fd->queue;
	int ret = io_uring_queue_init(depth, &q->ring, 0);

	if (ret)
		return ret;
	q->has_ring = true;
	pthread_mutex_init(&q->sq_lock, NULL);
	atomic_init(&q->handoff, 0);
	ret = io_uring_register_files(&q->ring, &fd->fd, 1);
	if (ret)
		return ret;
	if (fd->bdev && atomic_load(&fd->discard_cmd))
		atomic_store(&fd->discard_cmd, probe_discard_cmd(q));
	return reaper_start(fd);
}

void file_queue_exit(struct file_dev *fd)
{
	struct file_queue *q = &fd->queue;

	if (q->has_reaper)
		reaper_stop(q);
	if (q->has_ring) {
		io_uring_queue_exit(&q->ring);
		pthread_mutex_destroy(&q->sq_lock);
	}
}
