// SPDX-License-Identifier: MIT
/*
 * A ring per nbdkit worker thread.  nbdkit calls the plugin synchronously
 * from each worker, and a ring has one owner: each thread makes its own
 * ring on its first request and takes it down when it exits, so a request
 * is submitted, completed and reaped without leaving its thread
 * (docs/BENCH.md has the measurements against one owner ring per
 * connection fed through a queue).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

struct thread_ring {
	struct blkring ring;
	void *bounce; /* for misaligned buffers on devices that want aligned ones */
	size_t bounce_size;
};

static pthread_key_t ring_key;
static bool ring_key_made;
static _Thread_local struct thread_ring *this_ring;

static void thread_ring_free(void *arg)
{
	struct thread_ring *tr = arg;

	blkring_queue_exit(&tr->ring);
	free(tr->bounce);
	free(tr);
	this_ring = NULL;
}

int plug_rings_init(void)
{
	int ret = pthread_key_create(&ring_key, thread_ring_free);

	ring_key_made = ret == 0;
	return -ret;
}

/* After nbdkit's workers exited: only the calling thread may have a ring left. */
void plug_rings_exit(void)
{
	if (this_ring) {
		pthread_setspecific(ring_key, NULL);
		thread_ring_free(this_ring);
	}
	if (ring_key_made)
		pthread_key_delete(ring_key);
	ring_key_made = false;
}

static unsigned ring_flags(void)
{
	return (plug.sqpoll ? BLKRING_SETUP_SQPOLL : 0) | (plug.poll ? BLKRING_SETUP_IOPOLL : 0);
}

static struct thread_ring *thread_ring_new(void)
{
	struct thread_ring *tr = calloc(1, sizeof(*tr));

	if (!tr)
		return NULL;
	if (blkring_queue_init(plug.depth, &tr->ring, ring_flags()) < 0) {
		free(tr);
		return NULL;
	}
	if (blkring_register_devices(&tr->ring, &plug.dev, 1) < 0 ||
	    pthread_setspecific(ring_key, tr)) {
		blkring_queue_exit(&tr->ring);
		free(tr);
		return NULL;
	}
	return tr;
}

static struct thread_ring *thread_ring(void)
{
	if (!this_ring)
		this_ring = thread_ring_new();
	return this_ring;
}

/* Submits one SQE and waits for its CQE; a signal handler (SIGHUP's)
 * interrupts only the wait, and the I/O is still in flight. */
static int ring_run(const struct blkring_sqe *req)
{
	struct thread_ring *tr = thread_ring();
	struct blkring_sqe *sqe;
	struct blkring_cqe *cqe;
	int ret;

	if (!tr)
		return -ENOMEM;
	sqe = blkring_get_sqe(&tr->ring);
	if (!sqe)
		return -EBUSY;
	*sqe = *req;
	ret = blkring_submit(&tr->ring);
	if (ret < 0)
		return ret;
	do
		ret = blkring_wait_cqe(&tr->ring, &cqe);
	while (ret == -EINTR);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	blkring_cqe_seen(&tr->ring, cqe);
	return ret;
}

static int ring_rw(int op, const void *buf, uint32_t count, uint64_t offset, unsigned rw_flags)
{
	struct blkring_sqe sqe;
	int ret;

	blkring_prep_rw(op, &sqe, 0, buf, count, offset);
	sqe.rw_flags = rw_flags;
	ret = ring_run(&sqe);
	if (ret >= 0 && (uint32_t)ret != count)
		return -EIO;
	return ret < 0 ? ret : 0;
}

/* nbdkit's buffers come from malloc: an O_DIRECT leg needs them aligned.
 * *out stays NULL where the buffer can go to the device as it is. */
static int bounce_for(const void *buf, uint32_t count, void **out)
{
	struct thread_ring *tr;
	void *b;

	*out = NULL;
	if (!atomic_load_explicit(&plug.aligned_only, memory_order_relaxed) ||
	    !((uintptr_t)buf & (plug.align - 1)))
		return 0;
	tr = thread_ring();
	if (!tr)
		return -ENOMEM;
	if (tr->bounce_size < count) {
		b = aligned_alloc(4096, (count + 4095) & ~(size_t)4095);
		if (!b)
			return -ENOMEM;
		free(tr->bounce);
		tr->bounce = b;
		tr->bounce_size = count;
	}
	*out = tr->bounce;
	return 0;
}

int plug_read(void *buf, uint32_t count, uint64_t offset)
{
	void *b;
	int ret = bounce_for(buf, count, &b);

	if (ret < 0)
		return ret;
	ret = ring_rw(BLKRING_OP_READ, b ? b : buf, count, offset, 0);
	if (b && !ret)
		memcpy(buf, b, count);
	return ret;
}

int plug_write(const void *buf, uint32_t count, uint64_t offset, bool fua)
{
	void *b;
	int ret = bounce_for(buf, count, &b);

	if (ret < 0)
		return ret;
	if (b)
		memcpy(b, buf, count);
	return ring_rw(BLKRING_OP_WRITE, b ? b : buf, count, offset, fua ? BLKRING_RWF_DSYNC : 0);
}

int plug_flush(void)
{
	struct blkring_sqe sqe;

	blkring_prep_fsync(&sqe, 0, 0);
	return ring_run(&sqe);
}

int plug_discard(uint32_t count, uint64_t offset)
{
	struct blkring_sqe sqe;

	blkring_prep_cmd_discard(&sqe, 0, offset, count);
	return ring_run(&sqe);
}

int plug_write_zeroes(uint32_t count, uint64_t offset, unsigned flags)
{
	struct blkring_sqe sqe;

	blkring_prep_cmd_write_zeroes(&sqe, 0, offset, count, flags);
	return ring_run(&sqe);
}
