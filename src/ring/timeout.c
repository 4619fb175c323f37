// SPDX-License-Identifier: MIT
/*
 * Timeouts (io_uring/timeout.c's role): TIMEOUT completes -ETIME when its
 * time passes, or 0 once `count` other CQEs came first; TIMEOUT_REMOVE
 * removes one (-ECANCELED) or gives it a new time; LINK_TIMEOUT bounds the
 * request it is linked after.  There is no timer thread: the owner (or the
 * SQ thread) fires them when it enters the ring, a wait enters again
 * rather than sleep while one is due (an entry may arm one, or complete a
 * count, after it fired them), and sleeps end at the earliest deadline, so
 * a CQE comes at its time whenever the owner waits.
 *
 * A linked timeout that fires cancels its request where the ring still
 * holds it (queued for the worker pool, its bio waiting for a tag or held
 * by a suspended volume): the request gets -ECANCELED, the timeout -ETIME.
 * A request already on its device cannot be called back (block I/O has no
 * cancel): the timeout completes -EALREADY and the request completes as it
 * will.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "ring.h"

#define TIMEOUT_CLOCKS (BLKRING_TIMEOUT_BOOTTIME | BLKRING_TIMEOUT_REALTIME)

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The monotonic deadline of the timespec at uts (any alignment: it is
 * copied, as io_uring copies it in), relative or on the flags' clock. */
static int deadline_of(uint64_t uts, unsigned flags, uint64_t *deadline)
{
	struct __kernel_timespec copy, *ts = uts ? &copy : NULL;
	clockid_t clk = flags & BLKRING_TIMEOUT_REALTIME   ? CLOCK_REALTIME
	                : flags & BLKRING_TIMEOUT_BOOTTIME ? CLOCK_BOOTTIME
	                                                   : CLOCK_MONOTONIC;
	uint64_t t, now = blkring__now_ns();

	if (!ts)
		return -EFAULT;
	memcpy(&copy, (const void *)(uintptr_t)uts, sizeof(copy));
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000LL ||
	    (uint64_t)ts->tv_sec > UINT64_MAX / 2000000000ULL)
		return -EINVAL;
	if ((flags & TIMEOUT_CLOCKS) == TIMEOUT_CLOCKS)
		return -EINVAL;
	t = (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
	if (!(flags & BLKRING_TIMEOUT_ABS)) {
		*deadline = now + t;
		return 0;
	}
	if (clk == CLOCK_MONOTONIC) {
		*deadline = t ? t : 1; /* 0 is blkring__timeouts_next()'s "none" */
		return 0;
	}
	now = clock_ns(clk);
	*deadline = blkring__now_ns() + (t > now ? t - now : 0);
	return 0;
}

static void tm_add(struct blkring__ctx *ctx, struct blkring_req *req)
{
	req->tm.prev = NULL;
	req->tm.next = ctx->timeouts;
	if (ctx->timeouts)
		ctx->timeouts->tm.prev = req;
	ctx->timeouts = req;
	req->tm.armed = true;
}

static void tm_del(struct blkring__ctx *ctx, struct blkring_req *req)
{
	if (req->tm.prev)
		req->tm.prev->tm.next = req->tm.next;
	else
		ctx->timeouts = req->tm.next;
	if (req->tm.next)
		req->tm.next->tm.prev = req->tm.prev;
	req->tm.armed = false;
}

/* ---- TIMEOUT and LINK_TIMEOUT ---- */

int blkring__timeout_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                          const struct blkring_sqe *sqe)
{
	unsigned flags = sqe->timeout_flags;

	if (sqe->len != 1 || (flags & ~(BLKRING_TIMEOUT_ABS | TIMEOUT_CLOCKS)) || sqe->buf_index ||
	    sqe->file_index || sqe->ioprio)
		return -EINVAL;
	if (req->opcode == BLKRING_OP_LINK_TIMEOUT && sqe->off)
		return -EINVAL;
	req->tm.counted = sqe->off != 0;
	req->tm.target = (uint32_t)sqe->off; /* made absolute when armed */
	req->tm.guarded = NULL;
	req->tm.armed = false;
	(void)ctx;
	return deadline_of(sqe->addr, flags, &req->tm.deadline);
}

int blkring__timeout_issue(struct blkring_req *req, unsigned issue_flags)
{
	struct blkring__ctx *ctx = req->ctx;

	(void)issue_flags;
	req->tm.target += ctx->cached_cq_tail;
	tm_add(ctx, req);
	return 0;
}

/* Reached on its own (first of a chain, or after its request ended):
 * io_uring's answer for a linked timeout with nothing to bound. */
int blkring__link_timeout_issue(struct blkring_req *req, unsigned issue_flags)
{
	(void)req;
	(void)issue_flags;
	return -EINVAL;
}

/* The request req is about to start: its linked timeout starts with it. */
void blkring__ltimeout_arm(struct blkring__ctx *ctx, struct blkring_req *req)
{
	struct blkring_req *t = req->link;

	if (t->flags & REQ_F_FAIL)
		return;
	t->tm.guarded = req;
	tm_add(ctx, t);
}

/* The guarded request ended first: the timeout completes -ECANCELED (or
 * with its own prep error); returns what follows it in the chain. */
struct blkring_req *blkring__ltimeout_done(struct blkring__ctx *ctx, struct blkring_req *t)
{
	struct blkring_req *next = t->link;

	if (t->tm.armed)
		tm_del(ctx, t);
	t->link = NULL;
	blkring__req_post(ctx, t, t->flags & REQ_F_FAIL ? t->result : -ECANCELED);
	return next;
}

/* A linked timeout fires: cancel its request where the ring holds it. */
static void ltimeout_fire(struct blkring__ctx *ctx, struct blkring_req *t)
{
	struct blkring_req *req = t->tm.guarded;
	int res = -EALREADY;

	WRITE_ONCE(req->link, t->link); /* req's device thread may be ending it */
	t->link = NULL;
	if (blkring__req_take_back(ctx, req)) {
		blkring__req_post(ctx, req, -ECANCELED);
		res = -ETIME;
	}
	blkring__req_post(ctx, t, res);
}

static bool due(const struct blkring__ctx *ctx, const struct blkring_req *t, uint64_t now)
{
	return now >= t->tm.deadline ||
	       (t->tm.counted && (int32_t)(ctx->cached_cq_tail - t->tm.target) >= 0);
}

void blkring__timeouts_run(struct blkring__ctx *ctx)
{
	uint64_t now = blkring__now_ns();
	struct blkring_req *t = ctx->timeouts, *next;

	for (; t; t = next) {
		next = t->tm.next;
		if (!due(ctx, t, now))
			continue;
		tm_del(ctx, t);
		if (t->tm.guarded)
			ltimeout_fire(ctx, t);
		else
			blkring__req_post(ctx, t, now >= t->tm.deadline ? -ETIME : 0);
		next = ctx->timeouts; /* posting may have changed the list */
	}
}

bool blkring__timeouts_due(const struct blkring__ctx *ctx)
{
	uint64_t now = blkring__now_ns();

	for (const struct blkring_req *t = ctx->timeouts; t; t = t->tm.next)
		if (due(ctx, t, now))
			return true;
	return false;
}

uint64_t blkring__timeouts_next(struct blkring__ctx *ctx)
{
	uint64_t first = 0;

	for (struct blkring_req *t = ctx->timeouts; t; t = t->tm.next)
		if (!first || t->tm.deadline < first)
			first = t->tm.deadline;
	return first;
}

/* Ring exit: plain timeouts end -ECANCELED; a linked one waits for its
 * request, which ends it. */
void blkring__timeouts_cancel(struct blkring__ctx *ctx)
{
	struct blkring_req *t = ctx->timeouts, *next;

	for (; t; t = next) {
		next = t->tm.next;
		if (t->tm.guarded)
			continue;
		tm_del(ctx, t);
		blkring__req_post(ctx, t, -ECANCELED);
	}
}

void blkring__timeout_take(struct blkring__ctx *ctx, struct blkring_req *t)
{
	tm_del(ctx, t);
}

/* ---- TIMEOUT_REMOVE ---- */

int blkring__timeout_remove_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                                 const struct blkring_sqe *sqe)
{
	unsigned flags = sqe->timeout_flags;

	(void)ctx;
	if (sqe->len || sqe->buf_index || sqe->file_index || sqe->ioprio ||
	    (flags & ~(BLKRING_TIMEOUT_UPDATE | BLKRING_TIMEOUT_ABS | TIMEOUT_CLOCKS)))
		return -EINVAL;
	req->tm.key = sqe->addr;
	req->tm.counted = flags & BLKRING_TIMEOUT_UPDATE;
	if (!req->tm.counted)
		return (flags || sqe->off) ? -EINVAL : 0;
	return deadline_of(sqe->addr2, flags, &req->tm.update);
}

int blkring__timeout_remove_issue(struct blkring_req *req, unsigned issue_flags)
{
	struct blkring__ctx *ctx = req->ctx;
	struct blkring_req *t = ctx->timeouts;
	bool update = req->tm.counted;

	(void)issue_flags;
	while (t && (t->tm.guarded || t->user_data != req->tm.key))
		t = t->tm.next;
	if (!t)
		return -ENOENT;
	if (update) {
		t->tm.deadline = req->tm.update;
	} else {
		tm_del(ctx, t);
		blkring__req_post(ctx, t, -ECANCELED);
	}
	blkring__req_post(ctx, req, 0);
	return 0;
}
