// SPDX-License-Identifier: MIT
/*
 * Cancel (io_uring/cancel.c's role): ASYNC_CANCEL and the synchronous
 * register_sync_cancel find requests by user_data (or device, or any) and
 * end those the ring still holds with -ECANCELED: armed timeouts, drained
 * requests not started, chain members not started, next links ready to
 * start, work queued for the worker pool.  A request on its device cannot
 * be called back (block I/O has no cancel): it is "running", -EALREADY.
 * Requests the owner issued whose bio waits for a device's tag or is held
 * by a suspended volume are taken back too.  io_uring's cancel finds
 * neither linked requests not yet started nor held I/O; blkring's does.
 * What a worker issued, and split bios, count as running.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "lib/clock.h"
#include "ring.h"

#define CANCEL_FLAGS (BLKRING_ASYNC_CANCEL_ALL | BLKRING_ASYNC_CANCEL_FD | BLKRING_ASYNC_CANCEL_ANY)

struct cancel {
	uint64_t key;
	struct blkring_dev *dev; /* CANCEL_FD */
	unsigned flags;
	const struct blkring_req *self;
};

/* Opcodes whose request names a device (req->dev is theirs). */
static bool has_dev(unsigned op)
{
	return (op >= BLKRING_OP_READV && op <= BLKRING_OP_WRITE_FIXED) || op == BLKRING_OP_READ ||
	       op == BLKRING_OP_WRITE || op == BLKRING_OP_URING_CMD;
}

static bool matches(const struct cancel *c, const struct blkring_req *req)
{
	if (req->opcode == BLKRING__REQ_FREE || req == c->self)
		return false;
	if (c->flags & BLKRING_ASYNC_CANCEL_ANY)
		return true;
	if (c->flags & BLKRING_ASYNC_CANCEL_FD)
		/* Prep keeps the device of what has not started, the bio of
		 * what has (the fast path fills only the bio). */
		return has_dev(req->opcode) && (req->dev == c->dev || req->bio.dev == c->dev);
	return req->user_data == c->key;
}

/* Takes req off a singly linked list through ->next; true if it was there. */
static bool list_take(struct blkring_req **head, struct blkring_req **tail, struct blkring_req *req)
{
	struct blkring_req *prev = NULL;

	for (struct blkring_req *r = *head; r; prev = r, r = r->next) {
		if (r != req)
			continue;
		if (prev)
			prev->next = r->next;
		else
			*head = r->next;
		if (*tail == r)
			*tail = prev;
		return true;
	}
	return false;
}

/* The live request whose next link is req: req has not started. */
static struct blkring_req *link_before(struct blkring__ctx *ctx, const struct blkring_req *req)
{
	for (struct blkring__req_chunk *ch = ctx->chunks; ch; ch = ch->next)
		for (unsigned i = 0; i < ch->nr; i++)
			if (ch->reqs[i].opcode != BLKRING__REQ_FREE && ch->reqs[i].link == req)
				return &ch->reqs[i];
	return NULL;
}

bool blkring__req_take_back(struct blkring__ctx *ctx, struct blkring_req *req)
{
	if (blkring__io_wq_cancel_one(&ctx->wq, &req->work))
		return true;
	/* The worker owns the bio of what it issued. */
	return has_dev(req->opcode) && !(req->flags & REQ_F_PUNTED) &&
	       blkring__bio_cancel(&req->bio);
}

/* Ends req with -ECANCELED where the ring holds it; false when it runs. */
static bool cancel_one(struct blkring__ctx *ctx, struct blkring_req *req)
{
	struct blkring_req *before;

	if (req->opcode == BLKRING_OP_TIMEOUT && req->tm.armed) {
		blkring__timeout_take(ctx, req);
	} else if (req->opcode == BLKRING_OP_LINK_TIMEOUT) {
		return false; /* ends with the request it bounds */
	} else if ((before = link_before(ctx, req))) {
		/* It, and what follows it, do not start; before's device thread
		 * may be ending it meanwhile. */
		WRITE_ONCE(before->link, NULL);
	} else if (!list_take(&ctx->defer_head, &ctx->defer_tail, req) &&
	           !list_take(&ctx->ready_head, &ctx->ready_tail, req) &&
	           !blkring__req_take_back(ctx, req)) {
		return false;
	}
	blkring__req_post(ctx, req, -ECANCELED);
	return true;
}

/* How many were cancelled (all, or the first); -ENOENT for no match,
 * -EALREADY when what matched runs.  *running: how many run. */
static int cancel_run(struct blkring__ctx *ctx, const struct cancel *c, unsigned *running)
{
	bool all = c->flags & (BLKRING_ASYNC_CANCEL_ALL | BLKRING_ASYNC_CANCEL_ANY);
	unsigned done = 0;

	*running = 0;
	for (struct blkring__req_chunk *ch = ctx->chunks; ch; ch = ch->next) {
		for (unsigned i = 0; i < ch->nr; i++) {
			struct blkring_req *req = &ch->reqs[i];

			if (!matches(c, req))
				continue;
			if (cancel_one(ctx, req))
				done++;
			else
				(*running)++;
			if (done && !all)
				return 0;
		}
	}
	if (done)
		return all ? (int)done : 0;
	return *running ? -EALREADY : -ENOENT;
}

static int cancel_check(struct blkring__ctx *ctx, uint64_t key, int fd, unsigned flags,
                        struct cancel *c)
{
	if (flags & ~CANCEL_FLAGS)
		return -EINVAL;
	*c = (struct cancel){.key = key, .flags = flags};
	if (!(flags & BLKRING_ASYNC_CANCEL_FD))
		return 0;
	if ((unsigned)fd >= ctx->nr_devs || !ctx->devs[fd])
		return -EBADF;
	c->dev = ctx->devs[fd];
	return 0;
}

int blkring__cancel_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                         const struct blkring_sqe *sqe)
{
	if (sqe->len || sqe->off || sqe->buf_index || sqe->file_index || sqe->ioprio)
		return -EINVAL;
	req->tm.key = sqe->addr;
	req->tm.target = sqe->cancel_flags;
	req->tm.deadline = (uint64_t)(uint32_t)sqe->fd;
	(void)ctx;
	return 0;
}

int blkring__cancel_issue(struct blkring_req *req, unsigned issue_flags)
{
	struct blkring__ctx *ctx = req->ctx;
	struct cancel c;
	unsigned running;
	int ret =
	    cancel_check(ctx, req->tm.key, (int)(uint32_t)req->tm.deadline, req->tm.target, &c);

	(void)issue_flags;
	if (ret)
		return ret;
	c.self = req;
	ret = cancel_run(ctx, &c, &running);
	blkring__req_post(ctx, req, ret);
	return 0;
}

/* Whether anything that matches is still in flight. */
static bool still_running(struct blkring__ctx *ctx, const struct cancel *c)
{
	for (struct blkring__req_chunk *ch = ctx->chunks; ch; ch = ch->next)
		for (unsigned i = 0; i < ch->nr; i++)
			if (matches(c, &ch->reqs[i]))
				return true;
	return false;
}

static int sync_wait(struct blkring__ctx *ctx, const struct cancel *c,
                     const struct __kernel_timespec *timeout)
{
	bool forever = timeout->tv_sec < 0;
	uint64_t end =
	    blkring__now_ns() +
	    (forever ? 0 : (uint64_t)timeout->tv_sec * 1000000000ULL + (uint64_t)timeout->tv_nsec);

	for (;;) {
		blkring__tw_run(ctx); /* a deferring ring's too */
		blkring__enter(ctx);
		if (blkring__iopoll_pending(ctx))
			blkring__iopoll(ctx);
		if (!still_running(ctx, c))
			return 0;
		if (!forever && blkring__now_ns() >= end)
			return -ETIME;
		sched_yield();
	}
}

int blkring_register_sync_cancel(struct blkring *ring, struct blkring_sync_cancel_reg *reg)
{
	struct blkring__ctx *ctx = ring->ctx;
	struct cancel c;
	unsigned running;
	int ret;

	if (!reg || reg->opcode || reg->pad[0] || reg->pad2[0])
		return -EINVAL;
	if (ctx->sq || !blkring__is_owner(ctx))
		return ctx->sq ? -EOPNOTSUPP : -EEXIST;
	ret = cancel_check(ctx, reg->addr, reg->fd, reg->flags, &c);
	if (ret)
		return ret;
	ret = cancel_run(ctx, &c, &running);
	if (ret == -ENOENT || (ret >= 0 && !running))
		return ret;
	return sync_wait(ctx, &c, &reg->timeout);
}
