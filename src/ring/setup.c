// SPDX-License-Identifier: MIT
/*
 * Ring setup and teardown: parameter checks, the shared ring memory, the
 * request cache, the worker pool and the SQ thread; exit waits for what is
 * in flight.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "ring.h"

_Thread_local char blkring__thread_anchor __attribute__((tls_model("initial-exec")));

/* Each ring's bios carry its own hint, spreading rings over hardware queues. */
static _Atomic uint32_t next_queue_hint;

#define BLKRING_SETUP_SUPPORTED                                                      \
	(BLKRING_SETUP_IOPOLL | BLKRING_SETUP_CQSIZE | BLKRING_SETUP_SINGLE_ISSUER | \
	 BLKRING_SETUP_SQPOLL | BLKRING_SETUP_SQ_AFF | BLKRING_SETUP_DEFER_TASKRUN | \
	 BLKRING_SETUP_TW_PRIO | BLKRING_SETUP_TW_ISSUE)
/* Requests made at setup; more come in chunks if ever needed. */
#define BLKRING_REQ_PREALLOC_MAX 4096U

static uint32_t roundup_pow2(uint32_t n)
{
	return n <= 1 ? 1 : 1U << (32 - __builtin_clz(n - 1));
}

static bool cpu_exists(uint32_t cpu)
{
	return cpu < CPU_SETSIZE && (long)cpu < sysconf(_SC_NPROCESSORS_CONF);
}

static int params_check_flags(const struct blkring_params *p)
{
	if (p->flags & ~BLKRING_SETUP_SUPPORTED)
		return blkring__error(-EINVAL, "ring setup: unknown flags 0x%x",
		                      p->flags & ~BLKRING_SETUP_SUPPORTED);
	/* Linux's rules: the SQ thread would run the owner's task work. */
	if ((p->flags & BLKRING_SETUP_SQPOLL) && (p->flags & BLKRING_SETUP_DEFER_TASKRUN))
		return blkring__error(-EINVAL,
		                      "ring setup: DEFER_TASKRUN cannot be combined with SQPOLL");
	if ((p->flags & BLKRING_SETUP_SQ_AFF) && !(p->flags & BLKRING_SETUP_SQPOLL))
		return blkring__error(-EINVAL, "ring setup: SQ_AFF needs SQPOLL");
	if ((p->flags & BLKRING_SETUP_SQ_AFF) && !cpu_exists(p->sq_thread_cpu))
		return blkring__error(-EINVAL, "ring setup: sq_thread_cpu %u: expected 0 to %ld",
		                      p->sq_thread_cpu, sysconf(_SC_NPROCESSORS_CONF) - 1);
	for (unsigned i = 0; i < ARRAY_SIZE(p->resv); i++)
		if (p->resv[i])
			return blkring__error(-EINVAL, "ring setup: params.resv[%u] must be zero",
			                      i);
	return 0;
}

/* Checks the caller's parameters and writes back the sizes chosen. */
static int params_check(unsigned entries, struct blkring_params *p)
{
	uint32_t sq, cq;
	int ret = params_check_flags(p);

	if (ret)
		return ret;
	if (!entries || entries > BLKRING_MAX_ENTRIES)
		return blkring__error(-EINVAL, "ring setup: entries %u: expected 1 to %u", entries,
		                      BLKRING_MAX_ENTRIES);
	sq = roundup_pow2(entries);
	cq = 2 * sq;
	if (p->flags & BLKRING_SETUP_CQSIZE) {
		if (!p->cq_entries || p->cq_entries > BLKRING_MAX_CQ_ENTRIES)
			return blkring__error(-EINVAL,
			                      "ring setup: cq_entries %u: expected 1 to %u",
			                      p->cq_entries, BLKRING_MAX_CQ_ENTRIES);
		cq = roundup_pow2(p->cq_entries);
		if (cq < sq)
			return blkring__error(
			    -EINVAL, "ring setup: cq_entries %u is smaller than the SQ (%u)",
			    p->cq_entries, sq);
	}
	if (p->wq_max_workers > BLKRING_MAX_WORKERS)
		return blkring__error(-EINVAL, "ring setup: wq_max_workers %u: expected 0 to %u",
		                      p->wq_max_workers, BLKRING_MAX_WORKERS);
	p->sq_entries = sq;
	p->cq_entries = cq;
	return 0;
}

static int rings_alloc(struct blkring__ctx *ctx, uint32_t sq, uint32_t cq)
{
	size_t size = sizeof(struct blkring__rings) + sq * sizeof(struct blkring_sqe) +
	              cq * sizeof(struct blkring_cqe);
	void *mem;

	if (posix_memalign(&mem, 4096, size))
		return -ENOMEM;
	memset(mem, 0, size);
	ctx->rings = mem;
	ctx->sqes = (struct blkring_sqe *)(ctx->rings + 1);
	ctx->cqes = (struct blkring_cqe *)(ctx->sqes + sq);
	ctx->sq_entries = sq;
	ctx->sq_mask = sq - 1;
	ctx->cq_entries = cq;
	ctx->cq_mask = cq - 1;
	ctx->cq_room_end = cq;
	return 0;
}

static void ring_publish(struct blkring *ring, struct blkring__ctx *ctx)
{
	struct blkring__rings *r = ctx->rings;

	memset(ring, 0, sizeof(*ring));
	ring->sq.khead = &r->sq_head;
	ring->sq.ktail = &r->sq_tail;
	ring->sq.kflags = &r->sq_flags;
	ring->sq.ring_mask = ctx->sq_mask;
	ring->sq.ring_entries = ctx->sq_entries;
	ring->sq.sqes = ctx->sqes;
	ring->cq.khead = &r->cq_head;
	ring->cq.ktail = &r->cq_tail;
	ring->cq.koverflow = &r->cq_overflow;
	ring->cq.kflags = &r->cq_flags;
	ring->cq.ring_mask = ctx->cq_mask;
	ring->cq.ring_entries = ctx->cq_entries;
	ring->cq.cqes = ctx->cqes;
	ring->flags = ctx->flags;
	ring->ctx = ctx;
}

static void ctx_free(struct blkring__ctx *ctx)
{
	blkring__ev_exit(ctx);
	blkring__ioc_exit(&ctx->ioc);
	blkring__req_cache_exit(ctx);
	free(ctx->rings);
	free(ctx);
}

static bool ioc_work_pending(struct blkring_ioc *ioc)
{
	return blkring__tw_pending(container_of(ioc, struct blkring__ctx, ioc));
}

static int ctx_init(struct blkring__ctx *ctx, const struct blkring_params *p)
{
	unsigned workers = p->wq_max_workers ? p->wq_max_workers : BLKRING_DEFAULT_WORKERS;
	unsigned nr_reqs = p->sq_entries + p->cq_entries;
	int ret;

	blkring__ioc_init(&ctx->ioc);
	ctx->ioc.one_thread = p->flags & BLKRING_SETUP_DEFER_TASKRUN;
	ctx->ioc.work_pending = ioc_work_pending;
	ctx->ioc.irq_work = blkring__tw_irq_work;
	ret = rings_alloc(ctx, p->sq_entries, p->cq_entries);
	if (ret)
		return ret;
	if (nr_reqs > BLKRING_REQ_PREALLOC_MAX)
		nr_reqs = BLKRING_REQ_PREALLOC_MAX;
	ret = blkring__req_cache_init(ctx, nr_reqs);
	if (ret)
		return ret;
	ret = blkring__io_wq_init(&ctx->wq, workers, blkring__req_run_blocking);
	if (ret)
		return ret;
	blkring__tw_init(&ctx->tw);
	atomic_init(&ctx->ev_fd, -1);
	atomic_init(&ctx->owner, blkring__current());
	ctx->flags = p->flags;
	ctx->queue_hint = atomic_fetch_add_explicit(&next_queue_hint, 1, memory_order_relaxed);
	return 0;
}

int blkring_queue_init_params(unsigned entries, struct blkring *ring, struct blkring_params *p)
{
	struct blkring__ctx *ctx;
	int ret = params_check(entries, p);

	if (ret)
		return ret;
	ctx = aligned_alloc(CACHELINE, (sizeof(*ctx) + CACHELINE - 1) & ~(size_t)(CACHELINE - 1));
	if (!ctx)
		return -ENOMEM;
	memset(ctx, 0, sizeof(*ctx));
	ret = ctx_init(ctx, p);
	if (ret) {
		ctx_free(ctx);
		return ret;
	}
	if (p->flags & BLKRING_SETUP_SQPOLL) {
		ret = blkring__sq_start(ctx, p);
		if (ret) {
			blkring__io_wq_exit(&ctx->wq);
			ctx_free(ctx);
			return ret;
		}
	}
	ring_publish(ring, ctx);
	return 0;
}

int blkring_queue_init(unsigned entries, struct blkring *ring, unsigned flags)
{
	struct blkring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return blkring_queue_init_params(entries, ring, &p);
}

static void exit_cancel_queued_work(struct blkring__ctx *ctx)
{
	struct blkring__wq_work *work, *next;

	for (work = blkring__io_wq_cancel_queued(&ctx->wq); work; work = next) {
		next = work->next;
		blkring__req_post(ctx, container_of(work, struct blkring_req, work), -ECANCELED);
	}
}

/* Requests that already started cannot be called back: wait for them,
 * polling those that complete only when polled. */
static void exit_wait_inflight(struct blkring__ctx *ctx)
{
	for (;;) {
		blkring__tw_run(ctx); /* deferred task work too */
		blkring__enter(ctx);
		if (blkring__iopoll_pending(ctx))
			blkring__iopoll(ctx);
		if (ctx->nr_seq == ctx->nr_done)
			return;
		if (!blkring__iopoll_pending(ctx))
			blkring__tw_wait(ctx, NULL);
	}
}

/*
 * Whoever calls exit becomes the owner: the ring must no longer be in use
 * anywhere else.  Nothing that has not started starts; the rest is waited
 * for, so no completion reaches the ring after this returns.
 */
void blkring_queue_exit(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;

	if (!ctx)
		return;
	if (ctx->sq)
		blkring__sq_stop(ctx);
	atomic_store_explicit(&ctx->owner, blkring__current(), memory_order_relaxed);
	ctx->exiting = true;
	blkring__cancel_deferred(ctx);
	blkring__timeouts_cancel(ctx);
	exit_cancel_queued_work(ctx);
	exit_wait_inflight(ctx);
	blkring__io_wq_exit(&ctx->wq);
	blkring__devices_drop(ctx);
	blkring__overflow_free(ctx);
	ctx_free(ctx);
	memset(ring, 0, sizeof(*ring));
}

int blkring_ring_stats(struct blkring *ring, struct blkring_ring_stats *stats)
{
	struct blkring__ctx *ctx = ring->ctx;
	struct blkring__stats *s;

	if (!ctx)
		return -EINVAL;
	s = &ctx->stats;
	memset(stats, 0, sizeof(*stats));
	stats->issued = atomic_load_explicit(&s->issued, memory_order_relaxed);
	stats->punted = atomic_load_explicit(&s->punted, memory_order_relaxed);
	stats->async = atomic_load_explicit(&s->async, memory_order_relaxed);
	stats->tw_run = atomic_load_explicit(&s->tw_run, memory_order_relaxed);
	stats->tw_wakes = atomic_load_explicit(&s->tw_wakes, memory_order_relaxed);
	stats->sleeps = atomic_load_explicit(&s->sleeps, memory_order_relaxed);
	stats->overflowed = atomic_load_explicit(&s->overflowed, memory_order_relaxed);
	stats->tw_wait_nr = atomic_load_explicit(&s->tw_wait_nr, memory_order_relaxed);
	stats->tw_wait_ns = atomic_load_explicit(&s->tw_wait_ns, memory_order_relaxed);
	stats->workers = blkring__io_wq_workers(&ctx->wq);
	return 0;
}
