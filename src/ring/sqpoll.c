// SPDX-License-Identifier: MIT
/*
 * SQPOLL: a thread of the ring's own (io_uring's sq thread) consumes SQEs,
 * issues them, runs the ring's task work and posts CQEs.  It is the ring's
 * owner; completions from device threads and workers become its task work.
 * The application's thread (the one that created the ring) keeps the SQ
 * producer and CQ consumer sides: it publishes SQEs (waking the thread if it
 * sleeps), waits for CQEs (sleeping on the CQ tail), and registers devices
 * (with the thread parked).  Any other thread gets -EEXIST.
 *
 * Sleeping, both ways:
 * - The SQ thread spins for sq_thread_idle without work, then sets
 *   BLKRING_SQ_NEED_WAKEUP and sleeps on its task-work list
 *   (blkring__tw_idle).  blkring_submit stores the SQ tail, issues a full
 *   barrier and reads the flag (io_uring_submit's smp_mb), kicking the
 *   thread if it is set; the thread checks the tail after marking itself
 *   asleep, behind its own full barrier, so one of the two sees the other.
 * - The application sleeps on the CQ tail's futex, after publishing the
 *   tail it waits for; the SQ thread looks whenever it commits CQEs (after
 *   each pass, and on a TW_PRIO ring right after the completions) and wakes
 *   it once that tail is reached.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/error.h"
#include "lib/futex.h"
#include "lib/thread.h"
#include "ring.h"

#define SQ_IDLE_DEFAULT_MS 1000U /* Linux's default: HZ */

struct blkring__sq_data {
	pthread_t thread;
	const void *app;    /* the application's thread */
	const void *anchor; /* the SQ thread, once it runs */
	uint64_t idle_ns;
	_Atomic bool stop;
	_Atomic bool park;

	/* Parking: the handshake around a device table change. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool parked;

	/* The SQ thread's: the CQ tail it last looked at, and the wait it woke. */
	uint32_t cq_seen;
	uint64_t cq_woken;

	/* The application's wait: (sequence << 32) | CQ tail it waits for; the
	 * sequence is odd while it waits, so each sleep is told apart. */
	_Atomic uint64_t cq_wait __cacheline_aligned;
	/* A wait with a signal mask sleeps in ppoll() on app_fd (an eventfd,
	 * made at its first such wait), which the SQ thread then signals. */
	_Atomic bool fd_wait;
	int app_fd;
};

static bool sq_is_app(const struct blkring__sq_data *sq)
{
	return sq->app == blkring__current();
}

/* ---- the SQ thread ---- */

void blkring__sq_cq_flush(struct blkring__ctx *ctx)
{
	struct blkring__sq_data *sq = ctx->sq;
	uint32_t tail = ctx->cached_cq_tail;
	uint64_t wait;

	if (tail == sq->cq_seen)
		return;
	sq->cq_seen = tail;
	/* Published with a full barrier before the waiter's word is read, as
	 * the waiter has one between its word and the tail: one sees the other. */
	atomic_exchange_explicit(&ctx->rings->cq_tail, tail, memory_order_seq_cst);
	if (ctx->tw_wait_nr)
		blkring__tw_wait_published(ctx);
	/* The application's eventfd, once the CQEs are there to reap. */
	if (unlikely(atomic_load_explicit(&ctx->ev_fd, memory_order_relaxed) >= 0))
		blkring__ev_signal(ctx, atomic_load_explicit(&ctx->ev_fd, memory_order_acquire));
	wait = atomic_load_explicit(&sq->cq_wait, memory_order_seq_cst);
	if (!((wait >> 32) & 1) || wait == sq->cq_woken || (int32_t)(tail - (uint32_t)wait) < 0)
		return;
	sq->cq_woken = wait;
	if (atomic_load_explicit(&sq->fd_wait, memory_order_seq_cst))
		eventfd_write(sq->app_fd, 1);
	else
		futex_wake(&ctx->rings->cq_tail, 1);
}

/*
 * What the thread must not sleep through, asked after it marked itself
 * asleep: each load is ordered after the mark, as each waker's store is
 * before its kick, so the thread sees the store or the waker the mark.
 */
static bool sq_busy(struct blkring__ctx *ctx)
{
	struct blkring__rings *r = ctx->rings;
	struct blkring__sq_data *sq = ctx->sq;

	return atomic_load_explicit(&r->sq_tail, memory_order_seq_cst) != ctx->cached_sq_head ||
	       atomic_load_explicit(&sq->stop, memory_order_seq_cst) ||
	       atomic_load_explicit(&sq->park, memory_order_seq_cst) ||
	       (ctx->ovf_head &&
	        atomic_load_explicit(&r->cq_head, memory_order_seq_cst) + ctx->cq_entries !=
	            ctx->cached_cq_tail);
}

/* One pass, in io_uring's order: SQEs, task work, polled I/O.  Returns
 * whether it did anything or polled I/O is in flight (which only this
 * thread completes, so it must not sleep: the kernel's sqt_spin). */
static bool sq_pass(struct blkring__ctx *ctx)
{
	uint32_t tail = ctx->cached_cq_tail;
	unsigned nr = 0;

	if (unlikely(ctx->ovf_head))
		blkring__overflow_flush(ctx);
	/* New completions would queue behind ones that have no room. */
	if (!ctx->ovf_head &&
	    atomic_load_explicit(&ctx->rings->sq_tail, memory_order_relaxed) != ctx->cached_sq_head)
		nr = (unsigned)(blkring__submit_sqes(ctx) > 0);
	nr += blkring__tw_run(ctx);
	if (unlikely(ctx->ioc.queues))
		nr += blkring__ioc_reap(&ctx->ioc);
	if (unlikely(ctx->timeouts))
		blkring__timeouts_run(ctx);
	blkring__issue_pending(ctx);
	if (unlikely(ctx->ioc.flush_pending))
		blkring__flush_queues(ctx);
	if (unlikely(blkring__iopoll_pending(ctx)))
		nr += blkring__iopoll(ctx);
	blkring__cq_flush(ctx);
	return nr || tail != ctx->cached_cq_tail || blkring__iopoll_pending(ctx);
}

static void sq_sleep(struct blkring__ctx *ctx)
{
	_Atomic uint32_t *flags = &ctx->rings->sq_flags;

	uint64_t ns = ctx->timeouts ? blkring__timeouts_next(ctx) : 0;
	struct timespec first = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};

	atomic_fetch_or_explicit(flags, BLKRING_SQ_NEED_WAKEUP, memory_order_seq_cst);
	blkring__tw_idle(ctx, sq_busy, ns ? &first : NULL);
	atomic_fetch_and_explicit(flags, ~BLKRING_SQ_NEED_WAKEUP, memory_order_relaxed);
}

static void sq_parked(struct blkring__sq_data *sq)
{
	pthread_mutex_lock(&sq->lock);
	sq->parked = true;
	pthread_cond_broadcast(&sq->cond);
	while (atomic_load_explicit(&sq->park, memory_order_relaxed))
		pthread_cond_wait(&sq->cond, &sq->lock);
	sq->parked = false;
	pthread_mutex_unlock(&sq->lock);
}

/* Without work it yields for idle_ns, then sleeps.  It yields rather than
 * spins: the reaper and the devices' threads may need its CPU (the kernel's
 * thread calls cond_resched()); a pure spin ran 3x slower on 2 CPUs. */
static void *sq_thread(void *arg)
{
	struct blkring__ctx *ctx = arg;
	struct blkring__sq_data *sq = ctx->sq;
	uint64_t idle_since = 0;

	sq->anchor = blkring__current();
	atomic_store_explicit(&ctx->owner, sq->anchor, memory_order_relaxed);
	while (!atomic_load_explicit(&sq->stop, memory_order_acquire)) {
		if (unlikely(atomic_load_explicit(&sq->park, memory_order_acquire))) {
			sq_parked(sq);
			continue;
		}
		if (sq_pass(ctx)) {
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = blkring__now_ns();
		if (blkring__now_ns() - idle_since < sq->idle_ns) {
			sched_yield();
			continue;
		}
		sq_sleep(ctx);
		idle_since = 0;
	}
	return NULL;
}

static int sq_create(struct blkring__ctx *ctx, const struct blkring_params *p)
{
	struct blkring__sq_data *sq = ctx->sq;
	pthread_attr_t attr;
	cpu_set_t cpus;
	int ret;

	pthread_attr_init(&attr);
	if (p->flags & BLKRING_SETUP_SQ_AFF) {
		CPU_ZERO(&cpus);
		CPU_SET(p->sq_thread_cpu, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	ret = blkring__thread_start(&sq->thread, &attr, sq_thread, ctx, "blkring-sq");
	pthread_attr_destroy(&attr);
	if (ret == -EINVAL)
		return blkring__error(-EINVAL,
		                      "ring setup: sq_thread_cpu %u: the CPU is not usable",
		                      p->sq_thread_cpu);
	return ret;
}

/* Starts the SQ thread; until it runs, nobody owns the ring. */
int blkring__sq_start(struct blkring__ctx *ctx, const struct blkring_params *p)
{
	struct blkring__sq_data *sq;
	int ret;

	sq = aligned_alloc(CACHELINE, sizeof(*sq));
	if (!sq)
		return -ENOMEM;
	memset(sq, 0, sizeof(*sq));
	sq->app_fd = -1;
	sq->app = blkring__current();
	sq->idle_ns =
	    (uint64_t)(p->sq_thread_idle ? p->sq_thread_idle : SQ_IDLE_DEFAULT_MS) * 1000000ULL;
	pthread_mutex_init(&sq->lock, NULL);
	pthread_cond_init(&sq->cond, NULL);
	ctx->sq = sq;
	atomic_store_explicit(&ctx->owner, NULL, memory_order_relaxed);
	ret = sq_create(ctx, p);
	if (ret) {
		ctx->sq = NULL;
		pthread_mutex_destroy(&sq->lock);
		pthread_cond_destroy(&sq->cond);
		free(sq);
		atomic_store_explicit(&ctx->owner, blkring__current(), memory_order_relaxed);
	}
	return ret;
}

/* Ring exit: the thread finishes its pass and ends; the caller takes over. */
void blkring__sq_stop(struct blkring__ctx *ctx)
{
	struct blkring__sq_data *sq = ctx->sq;

	atomic_store_explicit(&sq->stop, true, memory_order_seq_cst);
	blkring__tw_kick(ctx);
	pthread_join(sq->thread, NULL);
	if (sq->app_fd >= 0)
		close(sq->app_fd);
	pthread_mutex_destroy(&sq->lock);
	pthread_cond_destroy(&sq->cond);
	free(sq);
	ctx->sq = NULL;
}

/* The application's thread stops the SQ thread between two passes and owns
 * the ring until it unparks. */
int blkring__sq_park(struct blkring__ctx *ctx)
{
	struct blkring__sq_data *sq = ctx->sq;

	if (!sq_is_app(sq))
		return -EEXIST;
	pthread_mutex_lock(&sq->lock);
	atomic_store_explicit(&sq->park, true, memory_order_seq_cst);
	blkring__tw_kick(ctx);
	while (!sq->parked)
		pthread_cond_wait(&sq->cond, &sq->lock);
	pthread_mutex_unlock(&sq->lock);
	atomic_store_explicit(&ctx->owner, blkring__current(), memory_order_relaxed);
	return 0;
}

void blkring__sq_unpark(struct blkring__ctx *ctx)
{
	struct blkring__sq_data *sq = ctx->sq;

	atomic_store_explicit(&ctx->owner, sq->anchor, memory_order_relaxed);
	pthread_mutex_lock(&sq->lock);
	atomic_store_explicit(&sq->park, false, memory_order_relaxed);
	pthread_cond_broadcast(&sq->cond);
	pthread_mutex_unlock(&sq->lock);
}

/* ---- the application's thread ---- */

/* Kicks the SQ thread when the flags say so; the caller's store before it
 * is seq_cst, the full barrier of io_uring_submit's smp_mb. */
static void sq_wake_if(struct blkring__ctx *ctx, uint32_t flags)
{
	if (atomic_load_explicit(&ctx->rings->sq_flags, memory_order_seq_cst) & flags)
		blkring__tw_kick(ctx);
}

int blkring__sq_submit(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;
	uint32_t published;

	if (!sq_is_app(ctx->sq))
		return -EEXIST;
	published = ring->sq.sqe_tail - atomic_load_explicit(ring->sq.ktail, memory_order_relaxed);
	atomic_store_explicit(ring->sq.ktail, ring->sq.sqe_tail, memory_order_seq_cst);
	sq_wake_if(ctx, BLKRING_SQ_NEED_WAKEUP);
	return (int)published;
}

/* The sleep of a wait with a signal mask: ppoll() sets it atomically. */
static int sq_fd_sleep(struct blkring__sq_data *sq, const struct timespec *left,
                       const sigset_t *sigmask)
{
	struct pollfd pfd = {.fd = sq->app_fd, .events = POLLIN};
	eventfd_t count;
	int ret = ppoll(&pfd, 1, left, sigmask);

	if (ret > 0)
		eventfd_read(sq->app_fd, &count);
	return ret < 0 ? -errno : ret == 0 ? -ETIMEDOUT : 0;
}

/* Sleeps until the CQ tail reaches `target`, a wake, or the deadline. */
static int sq_cq_sleep(struct blkring__ctx *ctx, uint32_t target, const struct timespec *deadline,
                       const sigset_t *sigmask)
{
	struct blkring__sq_data *sq = ctx->sq;
	_Atomic uint32_t *cq_tail = &ctx->rings->cq_tail;
	uint64_t seq = atomic_load_explicit(&sq->cq_wait, memory_order_relaxed) >> 32;
	struct timespec left;
	unsigned irqs = blkring__irqs;
	uint32_t tail;
	int ret = 0;

	if (sigmask && sq->app_fd < 0)
		sq->app_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sigmask && sq->app_fd < 0)
		return -errno;
	atomic_store_explicit(&sq->fd_wait, sigmask != NULL, memory_order_seq_cst);
	atomic_store_explicit(&sq->cq_wait, ((seq + 1) << 32) | target, memory_order_seq_cst);
	tail = atomic_load_explicit(cq_tail, memory_order_seq_cst);
	/* An overflowed CQE waits for a pass of the SQ thread to move it into
	 * the room this thread made (the head, ordered before the kick). */
	atomic_fetch_add_explicit(&ctx->rings->cq_head, 0, memory_order_seq_cst);
	sq_wake_if(ctx, BLKRING_SQ_CQ_OVERFLOW);
	if ((int32_t)(tail - target) < 0) {
		if (deadline && !blkring__time_left(deadline, &left))
			ret = -ETIMEDOUT;
		else if (sigmask)
			ret = sq_fd_sleep(sq, deadline ? &left : NULL, sigmask);
		else
			ret = futex_wait(cq_tail, tail, deadline ? &left : NULL);
	}
	atomic_store_explicit(&sq->cq_wait, (seq + 2) << 32, memory_order_relaxed);
	atomic_store_explicit(&sq->fd_wait, false, memory_order_relaxed);
	if (ret == -ETIMEDOUT)
		return -ETIME;
	/* A driver's interrupt (blkring__irqs) is no signal of the application's. */
	return ret == -EINTR && irqs == blkring__irqs ? -EINTR : 0;
}

/* blkring__get_cqe's SQPOLL side: the application only looks and sleeps. */
int blkring__sq_get_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr, unsigned wait_nr,
                        const struct timespec *deadline, const sigset_t *sigmask)
{
	struct blkring__ctx *ctx = ring->ctx;
	uint32_t head = atomic_load_explicit(ring->cq.khead, memory_order_relaxed);
	int ret;

	if (!sq_is_app(ctx->sq))
		return -EEXIST;
	for (;;) {
		*cqe_ptr = blkring__cq_first(ring);
		if (*cqe_ptr && blkring_cq_ready(ring) >= wait_nr)
			return 0;
		if (!wait_nr)
			return -EAGAIN;
		ret = sq_cq_sleep(ctx, head + wait_nr, deadline, sigmask);
		if (ret < 0) {
			*cqe_ptr = blkring__cq_first(ring);
			return ret;
		}
	}
}
