// SPDX-License-Identifier: MIT
/*
 * Entering the ring (io_uring_enter's role, without a syscall): run task
 * work, start what became ready, flush overflowed CQEs, then submit or wait.
 * Only the owner thread enters; another thread gets -EEXIST.  On an SQPOLL
 * ring the SQ thread is the owner and the application's submit and wait go
 * to sqpoll.c.  With DEFER_TASKRUN task work runs only in a wait.
 */
#include <errno.h>
#include <time.h>

#include "ring.h"

/* flush: whether the drivers' queues push what they hold now, or the
 * submission that follows pushes it with its batch, in one go. */
static inline void enter(struct blkring__ctx *ctx, bool flush)
{
	if (likely(!(ctx->flags & BLKRING_SETUP_DEFER_TASKRUN)) && blkring__tw_pending(ctx))
		blkring__tw_run(ctx);
	if (unlikely(ctx->ioc.queues))
		blkring__ioc_reap(&ctx->ioc);
	/* Before issue_pending: what a timeout ends may start a next link. */
	if (unlikely(ctx->timeouts))
		blkring__timeouts_run(ctx);
	blkring__issue_pending(ctx);
	if (unlikely(flush && ctx->ioc.flush_pending))
		blkring__flush_queues(ctx);
	if (unlikely(ctx->ovf_head))
		blkring__overflow_flush(ctx);
}

void blkring__enter(struct blkring__ctx *ctx)
{
	enter(ctx, true);
}

/* Publishes the application's SQ tail and submits what it holds. */
static inline int submit(struct blkring *ring, struct blkring__ctx *ctx)
{
	bool more;

	atomic_store_explicit(ring->sq.ktail, ring->sq.sqe_tail, memory_order_release);
	more = ring->sq.sqe_tail != ctx->cached_sq_head;
	enter(ctx, !more);
	if (!more)
		return 0;
	/* New completions would queue behind ones that have no room. */
	if (unlikely(ctx->ovf_head)) {
		blkring__flush_queues(ctx);
		return -EBUSY;
	}
	return blkring__submit_sqes(ctx);
}

/* A ring that issues as task work or signals an eventfd has work after the
 * submission; kept apart so that the others' submit ends in a tail call. */
static __attribute__((noinline)) int submit_then_notify(struct blkring *ring,
                                                        struct blkring__ctx *ctx)
{
	uint32_t tail = ctx->cached_cq_tail;
	int ret = submit(ring, ctx);

	/* Issues queued as task work run on the way out, as io_uring's on
	 * return to user space (a deferring ring keeps them for its next wait). */
	if (unlikely(ctx->flags & BLKRING_SETUP_TW_ISSUE) &&
	    !(ctx->flags & BLKRING_SETUP_DEFER_TASKRUN))
		blkring__enter(ctx);
	blkring__ev_posted(ctx, tail);
	return ret;
}

int blkring_submit(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;

	if (unlikely(!blkring__is_owner(ctx)))
		return ctx->sq ? blkring__sq_submit(ring) : -EEXIST;
	if (unlikely(ctx->flags & BLKRING_SETUP_TW_ISSUE) ||
	    unlikely(atomic_load_explicit(&ctx->ev_fd, memory_order_relaxed) >= 0))
		return submit_then_notify(ring, ctx);
	return submit(ring, ctx);
}

static bool deadline_from(const struct timespec *ts, struct timespec *deadline)
{
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return false;
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += ts->tv_sec;
	deadline->tv_nsec += ts->tv_nsec;
	if (deadline->tv_nsec >= 1000000000L) {
		deadline->tv_nsec -= 1000000000L;
		deadline->tv_sec++;
	}
	return true;
}

/* Runs what entering does, a deferring ring's task work when it waits, and
 * a polling pass. */
static void enter_wait(struct blkring__ctx *ctx, unsigned wait_nr)
{
	if (unlikely(ctx->flags & BLKRING_SETUP_DEFER_TASKRUN) && wait_nr)
		blkring__tw_run(ctx);
	blkring__enter(ctx);
	if (unlikely(blkring__iopoll_pending(ctx)))
		blkring__iopoll(ctx);
}

/* A sleep ends at the earliest armed timeout too: it fires when the owner wakes. */
static const struct timespec *sleep_bound(struct blkring__ctx *ctx, const struct timespec *deadline,
                                          struct timespec *first)
{
	uint64_t ns = ctx->timeouts ? blkring__timeouts_next(ctx) : 0;

	if (!ns)
		return deadline;
	first->tv_sec = (time_t)(ns / 1000000000ULL);
	first->tv_nsec = (long)(ns % 1000000000ULL);
	if (deadline && (deadline->tv_sec < first->tv_sec || (deadline->tv_sec == first->tv_sec &&
	                                                      deadline->tv_nsec <= first->tv_nsec)))
		return deadline;
	return first;
}

/* Sleeps for task work: with DEFER_TASKRUN, until enough for `missing` CQEs. */
static int wait_sleep(struct blkring__ctx *ctx, unsigned missing, const struct timespec *deadline)
{
	/* Polled I/O completes only if we poll: spin, never sleep. */
	if (unlikely(blkring__iopoll_pending(ctx)))
		return blkring__iopoll_spin(deadline);
	if (unlikely(ctx->flags & BLKRING_SETUP_DEFER_TASKRUN))
		return blkring__tw_wait_nr(ctx, missing, deadline);
	return blkring__tw_wait(ctx, deadline);
}

/*
 * Waits until wait_nr CQEs are ready (0: only looks), sleeping on the
 * task-work list: every completion that can arrive while the owner sleeps
 * comes from another thread, as task work.  A signal handler that runs
 * during the sleep ends the wait with -EINTR, as io_uring_enter's; with
 * sigmask, the sleeps run under that mask, set atomically with each.
 */
static int get_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr, unsigned wait_nr,
                   const struct timespec *ts, const sigset_t *sigmask)
{
	struct blkring__ctx *ctx = ring->ctx;
	struct timespec deadline, first;
	const struct timespec *bound;
	unsigned ready;
	int ret;

	*cqe_ptr = NULL;
	if (unlikely(!blkring__is_owner(ctx)) && !ctx->sq)
		return -EEXIST;
	if (ts && !deadline_from(ts, &deadline))
		return -EINVAL;
	if (unlikely(ctx->sq))
		return blkring__sq_get_cqe(ring, cqe_ptr, wait_nr, ts ? &deadline : NULL, sigmask);
	for (;;) {
		enter_wait(ctx, wait_nr);
		*cqe_ptr = blkring__cq_first(ring);
		ready = blkring_cq_ready(ring);
		if (*cqe_ptr && ready >= wait_nr)
			return 0;
		if (!wait_nr)
			return -EAGAIN;
		/* What the entry started may have armed a timeout that is due
		 * (its time past, its count complete): it fires, not sleeps. */
		if (unlikely(ctx->timeouts) && blkring__timeouts_due(ctx))
			continue;
		ctx->wait_sigmask = sigmask;
		bound = sleep_bound(ctx, ts ? &deadline : NULL, &first);
		ret = wait_sleep(ctx, wait_nr - ready, bound);
		ctx->wait_sigmask = NULL;
		if (ret == -ETIME && bound == &first)
			continue; /* a timeout's time: it fires as the loop enters */
		if (ret < 0) {
			enter_wait(ctx, wait_nr);
			*cqe_ptr = blkring__cq_first(ring);
			return ret;
		}
	}
}

int blkring__get_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr, unsigned wait_nr,
                     const struct timespec *ts)
{
	return get_cqe(ring, cqe_ptr, wait_nr, ts, NULL);
}

int blkring_wait_cqes(struct blkring *ring, struct blkring_cqe **cqe_ptr, unsigned wait_nr,
                      struct __kernel_timespec *ts, sigset_t *sigmask)
{
	struct timespec t;

	if (ts) {
		t.tv_sec = (time_t)ts->tv_sec;
		t.tv_nsec = (long)ts->tv_nsec;
	}
	return get_cqe(ring, cqe_ptr, wait_nr, ts ? &t : NULL, sigmask);
}

int blkring_wait_cqe_timeout(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                             struct __kernel_timespec *ts)
{
	return blkring_wait_cqes(ring, cqe_ptr, 1, ts, NULL);
}

int blkring_submit_and_wait_timeout(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                                    unsigned wait_nr, struct __kernel_timespec *ts,
                                    sigset_t *sigmask)
{
	int submitted = blkring_submit(ring);
	int ret;

	*cqe_ptr = NULL;
	if (submitted < 0)
		return submitted;
	ret = blkring_wait_cqes(ring, cqe_ptr, wait_nr, ts, sigmask);
	return ret < 0 && ret != -EAGAIN ? ret : submitted;
}

int blkring_submit_and_wait(struct blkring *ring, unsigned wait_nr)
{
	struct blkring_cqe *cqe;
	int submitted = blkring_submit(ring);
	int ret;

	if (submitted < 0 || !wait_nr)
		return submitted;
	ret = blkring__get_cqe(ring, &cqe, wait_nr, NULL);
	return ret < 0 ? ret : submitted;
}

unsigned blkring_peek_batch_cqe(struct blkring *ring, struct blkring_cqe **cqes, unsigned count)
{
	unsigned ready = blkring_cq_ready(ring);
	uint32_t head;

	if (!ready && blkring__is_owner(ring->ctx)) {
		blkring__enter(ring->ctx);
		if (unlikely(blkring__iopoll_pending(ring->ctx)))
			blkring__iopoll(ring->ctx);
		ready = blkring_cq_ready(ring);
	}
	if (ready > count)
		ready = count;
	head = atomic_load_explicit(ring->cq.khead, memory_order_relaxed);
	for (unsigned i = 0; i < ready; i++)
		cqes[i] = &ring->cq.cqes[(head + i) & ring->cq.ring_mask];
	return ready;
}
