// SPDX-License-Identifier: MIT
/*
 * Task work: completions that happen on another thread are handed to the
 * ring's owner, which runs them (posting their CQEs) whenever it enters the
 * ring.  Producers push with one compare-and-swap; the owner takes the whole
 * list with one exchange and runs it oldest first.
 *
 * Sleeping: the owner sleeps only on an empty list, by swapping the empty
 * head (0) for BLKRING__TW_SLEEPING and waiting on the head's low 32 bits.
 * The producer whose push replaces that value is the one that wakes it, so
 * a sleeping owner gets one wake per batch and a busy owner none.  The
 * producer learns this from its own compare-and-swap and touches nothing of
 * the ring after the push (the owner may free it the moment it sees the
 * work); the futex wake needs only the address.  The sleeping value stays in
 * the pushed node's next pointer, where the owner counts it as a wake.
 *
 * A ring with driver queues (ioc.c) waits for their completions as well:
 * its owner sleeps in ppoll() on their descriptors and on an eventfd, and
 * marks the head with the eventfd's descriptor, which the producer signals.
 *
 * Everything a later priority list, SQPOLL thread or deferred task running
 * needs sits behind these four calls: who runs (the owner check lives in
 * the callers), which list a node goes to (tw_add), the order of lists
 * (tw_run) and when a sleeper is woken (tw_wait and the push).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "lib/futex.h"
#include "ring.h"

void blkring__tw_init(struct blkring__tw_list *tw)
{
	atomic_init(&tw->head, 0);
}

/* The 32 bits of the head the futex compares: its low half on either endianness. */
static _Atomic uint32_t *tw_futex_word(struct blkring__tw_list *tw)
{
	char *word = (char *)&tw->head;

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	word += sizeof(uintptr_t) - sizeof(uint32_t);
#endif
	return (_Atomic uint32_t *)word;
}

/* Wakes the owner whose sleeping mark the push replaced.  An eventfd's
 * descriptor stays valid after its ring is gone: ring eventfds are never
 * closed (ioc.c), so a late signal is at worst a spurious wake. */
static void tw_wake(_Atomic uint32_t *word, uintptr_t mark)
{
	uint64_t one = 1;

	if (mark == BLKRING__TW_SLEEPING)
		futex_wake(word, 1);
	else if (write((int)(mark >> 2), &one, sizeof(one)) < 0)
		return; /* a full counter: the owner has been signalled */
}

void blkring__tw_add(struct blkring__ctx *ctx, struct blkring__tw_node *node)
{
	struct blkring__tw_list *tw = &ctx->tw;
	_Atomic uint32_t *word = tw_futex_word(tw);
	uintptr_t head = atomic_load_explicit(&tw->head, memory_order_relaxed);

	do {
		node->node.next = (struct llist_node *)head;
	} while (!atomic_compare_exchange_weak_explicit(
	    &tw->head, &head, (uintptr_t)node, memory_order_acq_rel, memory_order_relaxed));
	if (unlikely(head & BLKRING__TW_MARK_BITS))
		tw_wake(word, head);
}

/* Reverses the taken list into arrival order; counts the wake it carries. */
static struct llist_node *tw_reverse(struct blkring__ctx *ctx, uintptr_t head)
{
	struct llist_node *node = (struct llist_node *)head, *fifo = NULL;

	while (node) {
		struct llist_node *next = node->next;

		if ((uintptr_t)next & BLKRING__TW_MARK_BITS) {
			blkring__stat_add(&ctx->stats.tw_wakes, 1);
			next = NULL;
		}
		node->next = fifo;
		fifo = node;
		node = next;
	}
	return fifo;
}

unsigned blkring__tw_run(struct blkring__ctx *ctx)
{
	struct llist_node *node, *next;
	unsigned nr = 0;
	uintptr_t head;

	if (!blkring__tw_pending(ctx))
		return 0;
	head = atomic_exchange_explicit(&ctx->tw.head, 0, memory_order_acquire);
	for (node = tw_reverse(ctx, head); node; node = next) {
		struct blkring__tw_node *tw = container_of(node, struct blkring__tw_node, node);

		/* The item may free itself. */
		next = node->next;
		tw->func(tw);
		nr++;
	}
	blkring__stat_add(&ctx->stats.tw_run, nr);
	return nr;
}

/* Time left until an absolute CLOCK_MONOTONIC deadline; false when none is. */
static bool time_left(const struct timespec *deadline, struct timespec *left)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left->tv_sec = deadline->tv_sec - now.tv_sec;
	left->tv_nsec = deadline->tv_nsec - now.tv_nsec;
	if (left->tv_nsec < 0) {
		left->tv_nsec += 1000000000L;
		left->tv_sec--;
	}
	return left->tv_sec > 0 || (left->tv_sec == 0 && left->tv_nsec > 0);
}

/* Gives up a sleep nobody ended, answering why; a push that raced with it wins. */
static int tw_cancel_sleep(struct blkring__tw_list *tw, uintptr_t sleeping, int why)
{
	if (atomic_compare_exchange_strong_explicit(&tw->head, &sleeping, 0, memory_order_relaxed,
	                                            memory_order_relaxed))
		return why;
	return 0;
}

/*
 * The sleep of a ring with driver queues: in ppoll() on their descriptors
 * and the eventfd task work producers signal.  Returns as
 * blkring__tw_wait() does; 0 also when a queue has completions.  When no
 * sleep can be set up (no eventfd, no memory) it only yields: the caller
 * looks again.
 */
static int tw_wait_fd(struct blkring__ctx *ctx, const struct timespec *deadline)
{
	struct blkring__tw_list *tw = &ctx->tw;
	int nr = blkring__ioc_prepare_sleep(&ctx->ioc);
	uintptr_t empty = 0, mark;
	struct timespec left;
	int ret;

	if (deadline && !time_left(deadline, &left))
		return -ETIME;
	if (nr < 0) {
		if (nr != -EAGAIN)
			sched_yield();
		return 0;
	}
	mark = BLKRING__TW_SLEEPING_FD(ctx->ioc.wake_fd);
	/* Release: the producer that takes the mark uses the descriptor. */
	if (!atomic_compare_exchange_strong_explicit(&tw->head, &empty, mark, memory_order_release,
	                                             memory_order_relaxed))
		return 0;
	blkring__stat_add(&ctx->stats.sleeps, 1);
	ret = ppoll(ctx->ioc.pfds, (nfds_t)nr, deadline ? &left : NULL, NULL);
	if (ret > 0)
		blkring__ioc_woken(&ctx->ioc);
	if (ret == 0)
		return tw_cancel_sleep(tw, mark, -ETIME);
	if (ret < 0 && errno == EINTR)
		return tw_cancel_sleep(tw, mark, -EINTR);
	return tw_cancel_sleep(tw, mark, 0);
}

/*
 * Sleeps until task work arrives or the deadline (absolute, monotonic; NULL
 * for none) passes.  Returns 0 with work pending (or arrived before the
 * sleep began), -ETIME at the deadline, -EINTR when a signal handler ran.
 */
int blkring__tw_wait(struct blkring__ctx *ctx, const struct timespec *deadline)
{
	struct blkring__tw_list *tw = &ctx->tw;
	uintptr_t empty = 0;
	struct timespec left;

	if (unlikely(ctx->ioc.queues))
		return tw_wait_fd(ctx, deadline);
	if (!atomic_compare_exchange_strong_explicit(&tw->head, &empty, BLKRING__TW_SLEEPING,
	                                             memory_order_relaxed, memory_order_relaxed))
		return 0;
	blkring__stat_add(&ctx->stats.sleeps, 1);
	for (;;) {
		int ret;

		if (deadline && !time_left(deadline, &left))
			return tw_cancel_sleep(tw, BLKRING__TW_SLEEPING, -ETIME);
		ret = futex_wait(tw_futex_word(tw), (uint32_t)BLKRING__TW_SLEEPING,
		                 deadline ? &left : NULL);
		if (atomic_load_explicit(&tw->head, memory_order_relaxed) != BLKRING__TW_SLEEPING)
			return 0;
		if (ret == -ETIMEDOUT)
			return tw_cancel_sleep(tw, BLKRING__TW_SLEEPING, -ETIME);
		if (ret == -EINTR)
			return tw_cancel_sleep(tw, BLKRING__TW_SLEEPING, -EINTR);
	}
}
