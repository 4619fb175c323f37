// SPDX-License-Identifier: MIT
/*
 * Submission: SQEs become requests, requests are grouped into units (a
 * lone request, or an IO_LINK chain), and a unit starts at once unless an
 * IO_DRAIN holds it back.  Issue is inline and non-blocking; what cannot
 * go on without blocking (-EAGAIN) or asked for it (ASYNC) goes to the
 * worker pool.
 *
 * Nothing here ever calls issue from a completion: a request can complete
 * inside its own issue (a device completing inline), so completions only
 * queue what becomes ready, and the owner's loops start it.
 *
 * Drain: every consumed SQE has a sequence number and exactly one
 * completion, so "everything before request S completed" is
 * nr_done == S, with no walk over what is in flight.
 */
#include <errno.h>

#include "ring.h"
#include "rw.h"

#define BLKRING_SQE_VALID                                                       \
	(BLKRING_SQE_IO_DRAIN | BLKRING_SQE_IO_LINK | BLKRING_SQE_IO_HARDLINK | \
	 BLKRING_SQE_ASYNC | BLKRING_SQE_CQE_SKIP_SUCCESS)
#define SQE_LINKS (BLKRING_SQE_IO_LINK | BLKRING_SQE_IO_HARDLINK)

static void req_punt(struct blkring__ctx *ctx, struct blkring_req *req)
{
	int ret;

	blkring__stat_add(&ctx->stats.async, 1);
	req->flags |= REQ_F_PUNTED;
	ret = blkring__io_wq_enqueue(&ctx->wq, &req->work);
	if (ret < 0)
		blkring__req_post(ctx, req, ret);
}

/* Reads and writes take no indirect call. */
static inline int req_issue_nonblock(struct blkring_req *req)
{
	switch (req->opcode) {
	case BLKRING_OP_READ:
		return blkring__rw_issue(req, REQ_OP_READ, &req->ctx->ioc);
	case BLKRING_OP_WRITE:
		return blkring__rw_issue(req, REQ_OP_WRITE, &req->ctx->ioc);
	}
	return blkring__ops[req->opcode].issue(req, BLKRING_ISSUE_NONBLOCK);
}

/* Issue answered with an error: -EAGAIN goes to a worker unless the caller
 * asked for it (RWF_NOWAIT); anything else is the result. */
static void req_issue_failed(struct blkring__ctx *ctx, struct blkring_req *req, int ret)
{
	if (ret == -EAGAIN && !(req->flags & REQ_F_NOWAIT)) {
		blkring__stat_add(&ctx->stats.punted, 1);
		req_punt(ctx, req);
		return;
	}
	blkring__req_post(ctx, req, ret);
}

static inline void req_issue_now(struct blkring__ctx *ctx, struct blkring_req *req)
{
	int ret;

	if (unlikely(req->flags & REQ_F_FAIL)) {
		/* As io_uring: a chain that failed prep runs none of its
		 * members, hard links included. */
		req->sqe_flags &= ~BLKRING_SQE_IO_HARDLINK;
		blkring__req_post(ctx, req, req->result);
		return;
	}
	blkring__stat_add(&ctx->stats.issued, 1);
	if (unlikely(req->link) && req->link->opcode == BLKRING_OP_LINK_TIMEOUT)
		blkring__ltimeout_arm(ctx, req);
	/* Timeouts and cancels live in the owner's lists: never in a worker. */
	if (unlikely(req->sqe_flags & BLKRING_SQE_ASYNC) && !blkring__op_owner_only(req->opcode)) {
		req_punt(ctx, req);
		return;
	}
	ret = req_issue_nonblock(req);
	if (unlikely(ret))
		req_issue_failed(ctx, req, ret);
}

/* TW_ISSUE: the issue, run as task work; at exit nothing starts any more. */
static void req_tw_issue(struct blkring_tw_node *tw)
{
	struct blkring_req *req = container_of(tw, struct blkring_req, tw);
	struct blkring__ctx *ctx = req->ctx;

	req->tw.func = blkring__req_tw_complete;
	if (unlikely(ctx->exiting))
		blkring__req_post(ctx, req, -ECANCELED);
	else
		req_issue_now(ctx, req);
}

static inline void req_issue(struct blkring__ctx *ctx, struct blkring_req *req)
{
	if (unlikely(ctx->flags & BLKRING_SETUP_TW_ISSUE)) {
		req->tw.func = req_tw_issue;
		blkring__tw_queue(ctx, &req->tw);
		return;
	}
	req_issue_now(ctx, req);
}

/* A worker: the blocking issue of a punted or ASYNC request. */
void blkring__req_run_blocking(struct blkring__wq_work *work)
{
	struct blkring_req *req = container_of(work, struct blkring_req, work);
	int ret = blkring__ops[req->opcode].issue(req, 0);

	if (ret < 0)
		blkring__req_complete(req, ret);
}

/* The next link of a chain whose previous request succeeded. */
void blkring__req_queue_next(struct blkring__ctx *ctx, struct blkring_req *req)
{
	req->next = NULL;
	if (ctx->ready_tail)
		ctx->ready_tail->next = req;
	else
		ctx->ready_head = req;
	ctx->ready_tail = req;
}

static void defer_unit(struct blkring__ctx *ctx, struct blkring_req *head)
{
	if (head->flags & REQ_F_DRAIN) {
		head->start_after = head->seq;
		ctx->drain_barrier = ctx->nr_seq;
		ctx->drain_active = true;
	} else {
		head->start_after = ctx->drain_barrier;
	}
	head->next = NULL;
	if (ctx->defer_tail)
		ctx->defer_tail->next = head;
	else
		ctx->defer_head = head;
	ctx->defer_tail = head;
}

/* A unit that failed prep drains nothing (io_uring's rule); behind an
 * active drain it waits as any does, so CQEs keep their order. */
static inline void queue_unit(struct blkring__ctx *ctx, struct blkring_req *head)
{
	if (unlikely(head->flags & REQ_F_FAIL))
		head->flags &= ~REQ_F_DRAIN;
	if (likely(!(head->flags & REQ_F_DRAIN) && !ctx->drain_active))
		req_issue(ctx, head);
	else
		defer_unit(ctx, head);
}

/* Starts deferred units whose turn came; true when it started any. */
static bool flush_deferred(struct blkring__ctx *ctx)
{
	struct blkring_req *req;
	bool started = false;

	while ((req = ctx->defer_head) && (int32_t)(ctx->nr_done - req->start_after) >= 0) {
		ctx->defer_head = req->next;
		if (!ctx->defer_head)
			ctx->defer_tail = NULL;
		req_issue(ctx, req);
		started = true;
	}
	if (!ctx->defer_head && (int32_t)(ctx->nr_done - ctx->drain_barrier) >= 0)
		ctx->drain_active = false;
	return started;
}

static void issue_ready(struct blkring__ctx *ctx)
{
	struct blkring_req *req = ctx->ready_head;

	ctx->ready_head = req->next;
	if (!ctx->ready_head)
		ctx->ready_tail = NULL;
	if (unlikely(ctx->exiting))
		blkring__req_post(ctx, req, -ECANCELED);
	else
		req_issue(ctx, req);
}

void blkring__issue_pending_slow(struct blkring__ctx *ctx)
{
	while (ctx->ready_head || ctx->drain_active) {
		if (ctx->ready_head)
			issue_ready(ctx);
		else if (!flush_deferred(ctx))
			break;
	}
}

/* The drivers' per-ring queues push what they hold.  A flush reaps too: a
 * chain's head it ends readies the next link, which starts here, not after
 * the owner went to sleep with nothing in flight to wake it. */
void blkring__flush_queues(struct blkring__ctx *ctx)
{
	while (ctx->ioc.flush_pending) {
		blkring__ioc_flush(&ctx->ioc);
		blkring__issue_pending(ctx);
	}
}

/* Ring exit: deferred units never start. */
void blkring__cancel_deferred(struct blkring__ctx *ctx)
{
	struct blkring_req *req;

	while ((req = ctx->defer_head)) {
		ctx->defer_head = req->next;
		blkring__req_post(ctx, req, -ECANCELED);
	}
	ctx->defer_tail = NULL;
	ctx->drain_active = false;
}

static int req_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                    const struct blkring_sqe *sqe)
{
	const struct blkring__op *op;

	if (unlikely(req->sqe_flags & ~BLKRING_SQE_VALID))
		return -EINVAL;
	switch (req->opcode) {
	case BLKRING_OP_READ:
	case BLKRING_OP_WRITE:
		return blkring__rw_prep(ctx, req, sqe);
	}
	if (unlikely(req->opcode >= BLKRING_OP_LAST))
		return -EINVAL;
	op = &blkring__ops[req->opcode];
	if (unlikely(!op->prep))
		return -EINVAL;
	return op->prep(ctx, req, sqe);
}

/* Adds a request to the chain being built; queues the chain at its end.  A
 * chain with a member that failed prep runs none of its requests. */
static void link_add(struct blkring__ctx *ctx, struct blkring_req *req)
{
	struct blkring_req *head = ctx->link_head;

	ctx->link_tail->link = req;
	ctx->link_tail = req;
	if ((req->flags & REQ_F_FAIL) && !(head->flags & REQ_F_FAIL)) {
		head->flags |= REQ_F_FAIL;
		head->result = -ECANCELED;
	}
	head->flags |= req->flags & REQ_F_DRAIN;
	if (req->sqe_flags & SQE_LINKS)
		return;
	ctx->link_head = NULL;
	queue_unit(ctx, head);
}

/* Any SQE: flags, links, drain, every opcode. */
static void submit_any(struct blkring__ctx *ctx, struct blkring_req *req,
                       const struct blkring_sqe *sqe)
{
	int ret = req_prep(ctx, req, sqe);

	/* As io_uring: a CQE that may not come would leave a drain waiting. */
	if (unlikely(req->sqe_flags & BLKRING_SQE_CQE_SKIP_SUCCESS)) {
		ctx->drain_disabled = true;
		req->flags |= REQ_F_SKIP;
	}
	if (unlikely(req->sqe_flags & BLKRING_SQE_IO_DRAIN) && !ret)
		ret = ctx->drain_disabled ? -EOPNOTSUPP : 0;
	if (unlikely(ret)) {
		req->flags |= REQ_F_FAIL;
		req->result = ret;
	} else if (unlikely(req->sqe_flags & BLKRING_SQE_IO_DRAIN)) {
		req->flags |= REQ_F_DRAIN;
	}
	if (unlikely(ctx->link_head))
		link_add(ctx, req);
	else if (unlikely(req->sqe_flags & SQE_LINKS))
		ctx->link_head = ctx->link_tail = req;
	else
		queue_unit(ctx, req);
}

/* The common SQE: a read or write with no SQE flags, no chain or drain
 * pending; prep and issue in one go. */
static inline bool submit_rw_fast(struct blkring__ctx *ctx, struct blkring_req *req,
                                  const struct blkring_sqe *sqe)
{
	uint8_t opcode = req->opcode;
	struct blkring__rw rw;
	int ret;

	if (req->sqe_flags || ctx->link_head || ctx->drain_active ||
	    (opcode != BLKRING_OP_READ && opcode != BLKRING_OP_WRITE) ||
	    unlikely(ctx->flags & BLKRING_SETUP_TW_ISSUE))
		return false;
	blkring__rw_load(&rw, sqe);
	ret = blkring__rw_check(ctx, req, (uint32_t)sqe->fd, &rw);
	if (unlikely(ret)) {
		blkring__req_post(ctx, req, ret);
		return true;
	}
	blkring__stat_add(&ctx->stats.issued, 1);
	ret = blkring__rw_submit(ctx, req, opcode == BLKRING_OP_READ ? REQ_OP_READ : REQ_OP_WRITE,
	                         &rw, &ctx->ioc);
	if (unlikely(ret)) {
		/* Only now may a worker need to issue it again. */
		blkring__rw_keep(req, &rw);
		req_issue_failed(ctx, req, ret);
	}
	return true;
}

static inline void submit_one(struct blkring__ctx *ctx, struct blkring_req *req,
                              const struct blkring_sqe *sqe)
{
	req->opcode = sqe->opcode;
	/* Devices are always registered: FIXED_FILE says what is true anyway,
	 * and code from liburing sets it on every SQE. */
	req->sqe_flags = sqe->flags & ~BLKRING_SQE_FIXED_FILE;
	req->flags = 0;
	req->link = NULL;
	req->user_data = sqe->user_data;
	ctx->nr_seq++;
	if (likely(submit_rw_fast(ctx, req, sqe)))
		return;
	/* Only chains and drains need to know their place. */
	req->seq = ctx->nr_seq - 1;
	submit_any(ctx, req, sqe);
}

/*
 * Consumes the SQEs the application published.  Returns how many, or
 * -ENOMEM when not even one request could be had.  A chain left open by
 * the last SQE is queued as it stands, as io_uring does.
 */
int blkring__submit_sqes(struct blkring__ctx *ctx)
{
	uint32_t head = ctx->cached_sq_head;
	uint32_t tail = atomic_load_explicit(&ctx->rings->sq_tail, memory_order_acquire);
	uint32_t nr = tail - head, done;

	ctx->ioc.plug.active = true;
	ctx->ioc.plug.want = nr;
	for (done = 0; done < nr; done++) {
		struct blkring_req *req = blkring__req_alloc(ctx);

		if (unlikely(!req))
			break;
		submit_one(ctx, req, &ctx->sqes[head++ & ctx->sq_mask]);
	}
	ctx->cached_sq_head = head;
	atomic_store_explicit(&ctx->rings->sq_head, head, memory_order_release);
	if (unlikely(ctx->link_head)) {
		struct blkring_req *chain = ctx->link_head;

		ctx->link_head = NULL;
		queue_unit(ctx, chain);
	}
	blkring__issue_pending(ctx);
	blkring__plug_finish(&ctx->ioc.plug);
	/* The batch's end: drivers' per-ring queues push what it queued. */
	blkring__flush_queues(ctx);
	if (unlikely(!done && nr))
		return -ENOMEM;
	return (int)done;
}
