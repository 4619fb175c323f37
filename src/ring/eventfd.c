// SPDX-License-Identifier: MIT
/*
 * A ring's eventfd (io_uring/eventfd.c's role), for event loops that sit in
 * epoll: it is signalled when completions come for the ring.  From other
 * threads a completion is task work the owner must run, so the push that
 * finds the list empty signals it (later pushes coalesce into that one
 * count); CQEs the owner posts itself signal at the end of the call that
 * posted them, unless the eventfd is registered _async.  CQ flag
 * BLKRING_CQ_EVENTFD_DISABLED silences it.
 *
 * The ring signals its own dup() of the descriptor and keeps every dup
 * until exit: a completion thread may still hold one it loaded just before
 * an unregister, and a closed number could be another file's by then.  A
 * completing thread counts itself in ev_users before its push and out
 * after its signal; exit waits for the count to drain before it closes the
 * dups and frees the ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/error.h"
#include "ring.h"

void blkring__ev_signal(struct blkring__ctx *ctx, int fd)
{
	if (atomic_load_explicit(&ctx->rings->cq_flags, memory_order_relaxed) &
	    BLKRING_CQ_EVENTFD_DISABLED)
		return;
	eventfd_write(fd, 1); /* a full counter: signalled already */
}

int blkring__ev_get(struct blkring__ctx *ctx)
{
	int fd;

	if (likely(atomic_load_explicit(&ctx->ev_fd, memory_order_relaxed) < 0))
		return -1;
	atomic_fetch_add_explicit(&ctx->ev_users, 1, memory_order_seq_cst);
	fd = atomic_load_explicit(&ctx->ev_fd, memory_order_acquire);
	if (fd < 0)
		atomic_fetch_sub_explicit(&ctx->ev_users, 1, memory_order_release);
	return fd;
}

void blkring__ev_put(struct blkring__ctx *ctx, int fd, bool signal)
{
	if (signal)
		blkring__ev_signal(ctx, fd);
	atomic_fetch_sub_explicit(&ctx->ev_users, 1, memory_order_release);
}

/* The owner posted CQEs since its call began at CQ tail `tail`. */
void blkring__ev_posted(struct blkring__ctx *ctx, uint32_t tail)
{
	int fd = atomic_load_explicit(&ctx->ev_fd, memory_order_relaxed);

	if (fd >= 0 && !ctx->ev_async && ctx->cached_cq_tail != tail)
		blkring__ev_signal(ctx, fd);
}

static int ev_keep(struct blkring__ctx *ctx, int fd)
{
	int *kept = realloc(ctx->ev_kept, (ctx->nr_ev_kept + 1) * sizeof(*kept));

	if (!kept)
		return -ENOMEM;
	kept[ctx->nr_ev_kept++] = fd;
	ctx->ev_kept = kept;
	return 0;
}

static int ev_register(struct blkring__ctx *ctx, int fd, bool async)
{
	int dup_fd, ret;

	if (atomic_load_explicit(&ctx->ev_fd, memory_order_relaxed) >= 0)
		return blkring__error(-EBUSY, "register eventfd: the ring has one");
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return -errno;
	ret = ev_keep(ctx, dup_fd);
	if (ret) {
		close(dup_fd);
		return ret;
	}
	ctx->ev_async = async;
	atomic_store_explicit(&ctx->ev_fd, dup_fd, memory_order_release);
	return 0;
}

static int register_eventfd(struct blkring *ring, int fd, bool async)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = ev_register(ctx, fd, async);
	blkring__register_end(ctx);
	return ret;
}

int blkring_register_eventfd(struct blkring *ring, int fd)
{
	return register_eventfd(ring, fd, false);
}

int blkring_register_eventfd_async(struct blkring *ring, int fd)
{
	return register_eventfd(ring, fd, true);
}

int blkring_unregister_eventfd(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	if (atomic_load_explicit(&ctx->ev_fd, memory_order_relaxed) < 0)
		ret = -ENXIO;
	else
		atomic_store_explicit(&ctx->ev_fd, -1, memory_order_release);
	blkring__register_end(ctx);
	return ret;
}

void blkring__ev_exit(struct blkring__ctx *ctx)
{
	atomic_store_explicit(&ctx->ev_fd, -1, memory_order_seq_cst);
	while (atomic_load_explicit(&ctx->ev_users, memory_order_acquire))
		sched_yield();
	for (unsigned i = 0; i < ctx->nr_ev_kept; i++)
		close(ctx->ev_kept[i]);
	free(ctx->ev_kept);
	ctx->ev_kept = NULL;
	ctx->nr_ev_kept = 0;
}
