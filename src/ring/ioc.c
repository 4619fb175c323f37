// SPDX-License-Identifier: MIT
/*
 * What a ring lends the drivers below it (struct blkring_ioc,
 * block/blkdev.h): their per-ring queues, flushed at the end of each
 * submit batch, reaped whenever the owner enters, and slept on through an
 * eventfd; and the buffers the application registered.
 *
 * Nothing here costs a ring without driver queues more than a test of
 * ioc.queues or ioc.flush_pending where the owner enters or ends a batch.
 *
 * Eventfds come from a process-wide pool and are never closed: a task work
 * producer may signal one after its ring is gone (see tw.c), and must then
 * not hit a descriptor that was reused for something else.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/error.h"
#include "ring.h"

/* Linux's limits for io_uring_register(IORING_REGISTER_BUFFERS). */
#define BLKRING_MAX_BUFFERS 16384U
#define BLKRING_MAX_BUFFER_SIZE (1ULL << 30)

/* ---- the eventfd pool ---- */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int *pool_fds;
static unsigned pool_nr, pool_cap;

static int wake_fd_get(void)
{
	int fd = -1;

	pthread_mutex_lock(&pool_lock);
	if (pool_nr)
		fd = pool_fds[--pool_nr];
	pthread_mutex_unlock(&pool_lock);
	return fd >= 0 ? fd : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/* Kept when the pool cannot grow: a leaked descriptor, never a closed one. */
static void wake_fd_put(int fd)
{
	pthread_mutex_lock(&pool_lock);
	if (pool_nr == pool_cap) {
		unsigned cap = pool_cap ? 2 * pool_cap : 16;
		int *fds = realloc(pool_fds, cap * sizeof(*fds));

		if (fds) {
			pool_fds = fds;
			pool_cap = cap;
		}
	}
	if (pool_nr < pool_cap)
		pool_fds[pool_nr++] = fd;
	pthread_mutex_unlock(&pool_lock);
}

/* ---- the queues ---- */

void blkring__ioc_init(struct blkring_ioc *ioc)
{
	memset(ioc, 0, sizeof(*ioc));
	ioc->wake_fd = -1;
}

/* Its device's last open is gone (only the queue's pin keeps it), and the
 * ring has nothing left there: a closed device takes no new I/O. */
static bool ioc_queue_orphaned(struct blkring_ioc_queue *q)
{
	return unlikely(!atomic_load_explicit(&q->dev->refs, memory_order_relaxed)) &&
	       q->ops->idle(q);
}

/* The driver frees its queue; the pin blkring__ioc_add() took goes after. */
static void ioc_queue_exit(struct blkring_ioc_queue *q)
{
	struct blkring_dev *dev = q->dev;

	q->ops->exit(q);
	blkring__dev_unpin(dev);
}

/* Lets go of orphaned queues: at each flush, and before each sleep, so a
 * ring that stops its I/O there (or an idle SQ thread) lets go as well. */
static void ioc_sweep(struct blkring_ioc *ioc)
{
	struct blkring_ioc_queue **link = &ioc->queues, *q;

	while ((q = *link)) {
		if (ioc_queue_orphaned(q)) {
			*link = q->next;
			ioc_queue_exit(q);
			continue;
		}
		link = &q->next;
	}
}

void blkring__ioc_flush(struct blkring_ioc *ioc)
{
	ioc->flush_pending = false;
	for (struct blkring_ioc_queue *q = ioc->queues; q; q = q->next)
		if (q->ops->flush)
			q->ops->flush(q);
	ioc_sweep(ioc);
}

unsigned blkring__ioc_reap(struct blkring_ioc *ioc)
{
	unsigned nr = 0;

	for (struct blkring_ioc_queue *q = ioc->queues; q; q = q->next)
		if (q->ops->reap)
			nr += q->ops->reap(q);
	return nr;
}

static int pfds_reserve(struct blkring_ioc *ioc)
{
	unsigned n = 1;
	struct pollfd *pfds;

	for (struct blkring_ioc_queue *q = ioc->queues; q; q = q->next)
		n++;
	if (n <= ioc->pfds_cap)
		return 0;
	pfds = realloc(ioc->pfds, n * sizeof(*pfds));
	if (!pfds)
		return -ENOMEM;
	ioc->pfds = pfds;
	ioc->pfds_cap = n;
	return 0;
}

/*
 * A completion that comes after a queue's last look wakes the sleep (its
 * descriptor polls readable, it signals the eventfd, or the queue sleeps
 * itself and is woken inside), one before is seen by the look: no wake-up
 * is lost.  The eventfd may hold a stale count (a producer's signal after a
 * sleep ended): then the sleep ends at once, spuriously, and the count is
 * drained.
 */
int blkring__ioc_prepare_sleep(struct blkring_ioc *ioc)
{
	struct blkring_ioc_queue *cover = NULL;
	unsigned n = 1;

	ioc_sweep(ioc);
	if (ioc->wake_fd < 0)
		ioc->wake_fd = wake_fd_get();
	if (ioc->wake_fd < 0)
		return -EMFILE;
	if (pfds_reserve(ioc))
		return -ENOMEM;
	for (struct blkring_ioc_queue *q = ioc->queues; q; q = q->next) {
		bool wakes = false;
		int fd = q->ops->prepare_sleep(q, &wakes);

		if (fd == -EAGAIN)
			return -EAGAIN;
		if (fd >= 0)
			ioc->pfds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
		if (fd >= 0 && wakes)
			cover = q;
	}
	/* One descriptor fewer to poll where a queue watches the eventfd; none
	 * at all where that queue is the only one and can sleep itself. */
	ioc->pfds[0] =
	    cover ? ioc->pfds[--n] : (struct pollfd){.fd = ioc->wake_fd, .events = POLLIN};
	ioc->sleeper = cover && n == 1 && cover->ops->sleep ? cover : NULL;
	return (int)n;
}

/* After a ppoll() that woke: drains the eventfd if it was among the woken. */
static void ioc_woken(struct blkring_ioc *ioc)
{
	uint64_t count;

	if (ioc->pfds[0].fd == ioc->wake_fd && (ioc->pfds[0].revents & POLLIN) &&
	    read(ioc->wake_fd, &count, sizeof(count)) < 0)
		return; /* emptied by nobody else: nothing to do */
}

int blkring__ioc_sleep(struct blkring_ioc *ioc, unsigned nr, const struct timespec *left,
                       const sigset_t *sigmask)
{
	int ret;

	if (ioc->sleeper && !sigmask)
		return ioc->sleeper->ops->sleep(ioc->sleeper, left);
	ret = ppoll(ioc->pfds, (nfds_t)nr, left, sigmask);
	if (ret > 0)
		ioc_woken(ioc);
	if (ret < 0)
		return errno == EINTR ? -EINTR : 1;
	return ret > 0;
}

void blkring__ioc_drop_queues(struct blkring_ioc *ioc)
{
	struct blkring_ioc_queue *q = ioc->queues, *next;

	ioc->queues = NULL;
	ioc->flush_pending = false;
	for (; q; q = next) {
		next = q->next;
		ioc_queue_exit(q);
	}
}

void blkring__ioc_exit(struct blkring_ioc *ioc)
{
	blkring__ioc_drop_queues(ioc);
	if (ioc->wake_fd >= 0)
		wake_fd_put(ioc->wake_fd);
	ioc->wake_fd = -1;
	free(ioc->pfds);
	ioc->pfds = NULL;
	free((void *)ioc->bufs);
	ioc->bufs = NULL;
}

/* ---- registered buffers ---- */

static int check_buffers(const struct iovec *iovecs, unsigned n)
{
	if (!iovecs || !n || n > BLKRING_MAX_BUFFERS)
		return blkring__error(-EINVAL, "register buffers: %u buffers: expected 1 to %u", n,
		                      BLKRING_MAX_BUFFERS);
	for (unsigned i = 0; i < n; i++)
		if (!iovecs[i].iov_base || !iovecs[i].iov_len ||
		    iovecs[i].iov_len > BLKRING_MAX_BUFFER_SIZE)
			return blkring__error(-EINVAL,
			                      "register buffers: buffer %u: expected a non-NULL "
			                      "address and 1 byte to 1 GiB",
			                      i);
	return 0;
}

static int buffers_register(struct blkring_ioc *ioc, const struct iovec *iovecs, unsigned n)
{
	struct iovec *copy;
	int ret;

	if (ioc->bufs)
		return blkring__error(-EBUSY, "register buffers: the ring already has buffers");
	ret = check_buffers(iovecs, n);
	if (ret)
		return ret;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, iovecs, n * sizeof(*copy));
	ioc->bufs = copy;
	ioc->nr_bufs = n;
	ioc->bufs_gen++;
	return 0;
}

int blkring_register_buffers(struct blkring *ring, const struct iovec *iovecs, unsigned n)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = buffers_register(&ctx->ioc, iovecs, n);
	blkring__register_end(ctx);
	return ret;
}

/* As io_uring's, but only with nothing in flight: a driver's kernel ring
 * may still use them until its I/O is done. */
static int buffers_unregister(struct blkring__ctx *ctx)
{
	if (!ctx->ioc.bufs)
		return -ENXIO;
	blkring__enter(ctx);
	if (ctx->nr_seq != ctx->nr_done)
		return blkring__error(-EBUSY, "unregister buffers: %u requests in flight",
		                      ctx->nr_seq - ctx->nr_done);
	free((void *)ctx->ioc.bufs);
	ctx->ioc.bufs = NULL;
	ctx->ioc.nr_bufs = 0;
	ctx->ioc.bufs_gen++;
	return 0;
}

int blkring_unregister_buffers(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = buffers_unregister(ctx);
	blkring__register_end(ctx);
	return ret;
}
