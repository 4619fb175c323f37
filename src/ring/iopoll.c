// SPDX-License-Identifier: MIT
/*
 * Polled I/O (BLKRING_SETUP_IOPOLL, io_uring's IOPOLL).  Reads and writes
 * go to the devices' poll queues as BIO_POLLED bios and complete only when
 * someone polls those queues; no completion thread is involved.  The ring
 * keeps its polled requests in flight on a list, and the owner, whenever it
 * looks for completions, polls the ones not yet done and posts the ones
 * that are (Linux's io_do_iopoll).
 *
 * A bio ends on whichever thread polled its queue: the owner, or the owner
 * of another ring polling the same queue.  So a polled bio's end does not
 * post anything: it stores the result and sets req->iopoll_done (release),
 * its last touch of the request; the owner reaps it after reading the flag
 * (acquire).  Reaping takes every done request, not only a done prefix,
 * so one slow queue does not hold back the CQEs of the others.
 *
 * Everything else on an IOPOLL ring (flushes, commands, NOP) completes as on
 * any ring, through task work; the waiting owner runs task work on every
 * polling pass, and sleeps only when no polled request is in flight.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "ring.h"

static void iopoll_end_io(struct blkring_bio *bio)
{
	struct blkring_req *req = container_of(bio, struct blkring_req, bio);

	if (unlikely(bio->status))
		req->result = bio->status;
	atomic_store_explicit(&req->iopoll_done, 1, memory_order_release);
}

static void iopoll_list_add(struct blkring__ctx *ctx, struct blkring_req *req)
{
	req->next = NULL;
	if (ctx->iopoll_tail)
		ctx->iopoll_tail->next = req;
	else
		ctx->iopoll_head = req;
	ctx->iopoll_tail = req;
}

/* A request a worker issued joins the owner's list through task work. */
static void iopoll_add_tw(struct blkring_tw_node *tw)
{
	struct blkring_req *req = container_of(tw, struct blkring_req, tw);

	tw->func = blkring__req_tw_complete;
	iopoll_list_add(req->ctx, req);
}

/*
 * Submits a read or write whose bio the caller built (end_io and private
 * are replaced).  Returns what blkring__submit_bio() returns: on an error
 * nothing was issued and the caller completes the request as usual.
 */
int blkring__iopoll_submit(struct blkring__ctx *ctx, struct blkring_req *req,
                           struct blkring_bio *bio)
{
	int ret;

	bio->flags |= BIO_POLLED | BIO_POLL_TRACKED;
	bio->queue_hint = ctx->queue_hint;
	bio->end_io = iopoll_end_io;
	bio->private = req;
	atomic_store_explicit(&req->iopoll_done, 0, memory_order_relaxed);
	ret = blkring__submit_bio(bio);
	if (unlikely(ret))
		return ret;
	if (likely(blkring__is_owner(ctx))) {
		iopoll_list_add(ctx, req);
		return 0;
	}
	req->tw.func = iopoll_add_tw;
	/* It posts no CQE, and the owner must poll after it: wake a lazy wait. */
	blkring__tw_add(ctx, &req->tw, true);
	return 0;
}

static inline bool req_done(struct blkring_req *req)
{
	return atomic_load_explicit(&req->iopoll_done, memory_order_acquire);
}

/*
 * Polls each request not yet done.  Polling a queue reaps everything ready
 * on it, so a request whose queue (its cookie) was just polled is skipped:
 * with many requests over few queues each queue is polled about once.
 */
static void iopoll_poll(struct blkring__ctx *ctx)
{
	struct blkring_hctx *last = NULL;

	for (struct blkring_req *req = ctx->iopoll_head; req; req = req->next) {
		if (req_done(req) || (req->bio.hctx && req->bio.hctx == last))
			continue;
		last = req->bio.hctx;
		blkring__poll_bio(&req->bio);
	}
}

/* Posts every done request; returns how many. */
static unsigned iopoll_reap(struct blkring__ctx *ctx)
{
	struct blkring_req **pp = &ctx->iopoll_head, *prev = NULL, *req;
	unsigned nr = 0;

	while ((req = *pp)) {
		if (!req_done(req)) {
			prev = req;
			pp = &req->next;
			continue;
		}
		*pp = req->next;
		if (ctx->iopoll_tail == req)
			ctx->iopoll_tail = prev;
		blkring__req_post_fast(ctx, req, req->result);
		nr++;
	}
	return nr;
}

/* One polling pass (owner only): returns the CQEs it posted.  The links
 * those completions made ready start here, before the caller decides
 * whether to sleep. */
unsigned blkring__iopoll(struct blkring__ctx *ctx)
{
	unsigned nr;

	iopoll_poll(ctx);
	nr = iopoll_reap(ctx);
	if (nr)
		blkring__issue_pending(ctx);
	return nr;
}

/*
 * What a waiter does between passes that found nothing, instead of
 * sleeping: give up the CPU to any thread that wants it, then check the
 * deadline (absolute, monotonic; NULL for none): -ETIME once it passed.
 * A kernel poller stops when need_resched() says another task wants its
 * CPU; nothing tells a userspace spinner that, and a poller preempted
 * while it holds a queue's busy flag stalls every other poller of that
 * queue until it runs again.  With a CPU to itself, sched_yield() returns
 * at once.
 */
int blkring__iopoll_spin(const struct timespec *deadline)
{
	struct timespec now;

	sched_yield();
	if (!deadline)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > deadline->tv_sec ||
	    (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
		return -ETIME;
	return 0;
}
