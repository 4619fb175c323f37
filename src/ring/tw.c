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
 * Priority (TW_PRIO, Linux 5.17): one list still carries everything, each
 * node saying whether it is a completion.  The runner sorts what it takes
 * into completions and other work, runs the completions and commits their
 * CQEs (blkring__cq_flush) before the other work, so on an SQPOLL ring the
 * reaper gets them while the SQ thread issues.  Without it, the CQEs that
 * task work posts on an SQPOLL ring are committed when the list is empty,
 * as io_uring's io_submit_flush_completions().
 *
 * Lazy wake (DEFER_TASKRUN, Linux 6.1+): the owner sleeps until enough work
 * for its wait arrived.  Producers count themselves in nr_added before they
 * push, read the owner's wake_at, and the one whose count reaches it wakes
 * the owner after its push: every access to the ring still comes before the
 * push.  The owner sleeps with BLKRING__TW_SLEEPING_LAZY, or, when enough
 * work was counted but not all of it pushed yet, with the plain marker.
 *
 * A ring with driver queues (ioc.c) waits for their completions as well:
 * its owner (or SQ thread) sleeps on them and on an eventfd (ioc.c), and
 * marks the head with the eventfd's descriptor, which the producer signals.  Such a sleep ends at
 * any push, lazy or not.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/futex.h"
#include "ring.h"

/* wake_at while nobody waits: half the counter's range away from any count. */
#define TW_NO_WAKE (1U << 31)

void blkring__tw_init(struct blkring__tw_list *tw)
{
	atomic_init(&tw->head, 0);
	atomic_init(&tw->nr_added, 0);
	atomic_init(&tw->wake_at, TW_NO_WAKE);
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

/* Whether the push that replaced `head`, counted as `nr`, ends a lazy sleep. */
static inline bool tw_lazy_due(uintptr_t head, uint32_t nr, uint32_t wake_at)
{
	if (head == BLKRING__TW_SLEEPING_LAZY)
		return (int32_t)(nr - wake_at) >= 0;
	return head > BLKRING__TW_SLEEPING_LAZY && nr == wake_at;
}

/* Signals the eventfd in a sleeping mark.  The descriptor stays valid after
 * its ring is gone: ring eventfds are never closed (ioc.c), so a late
 * signal is at worst a spurious wake. */
static void tw_wake_fd(uintptr_t mark)
{
	uint64_t one = 1;

	if (write((int)(mark >> 3), &one, sizeof(one)) < 0)
		return; /* a full counter: the owner has been signalled */
}

/* now: end a lazy sleep whatever the count, as for a completion whose
 * chain goes on only once the owner runs it (Linux drops LAZY_WAKE for
 * linked requests). */
static inline void tw_push(struct blkring__ctx *ctx, struct blkring_tw_node *node, bool now)
{
	struct blkring__tw_list *tw = &ctx->tw;
	_Atomic uint32_t *word = tw_futex_word(tw);
	bool lazy = ctx->flags & BLKRING_SETUP_DEFER_TASKRUN;
	uint32_t nr = 0, wake_at = 0;
	uintptr_t head;
	/* Read before the push: after it the ring may be gone, but for the
	 * eventfd's users count, which exit waits out (eventfd.c).  An SQ
	 * thread signals the eventfd itself, when it posts the CQEs. */
	int ev = (ctx->flags & BLKRING_SETUP_SQPOLL) ? -1 : blkring__ev_get(ctx);

	if (lazy) {
		nr = atomic_fetch_add_explicit(&tw->nr_added, 1, memory_order_seq_cst) + 1;
		wake_at = atomic_load_explicit(&tw->wake_at, memory_order_seq_cst);
	}
	head = atomic_load_explicit(&tw->head, memory_order_relaxed);
	do {
		node->node.next = (struct llist_node *)head;
	} while (!atomic_compare_exchange_weak_explicit(
	    &tw->head, &head, (uintptr_t)node, memory_order_acq_rel, memory_order_relaxed));
	/* An owner outside the ring learns of the first push by its eventfd. */
	if (unlikely(ev >= 0))
		blkring__ev_put(ctx, ev, !head);
	/* Acquire: a mark's eventfd was made before the mark was set. */
	if (unlikely(head & BLKRING__TW_FD_BIT))
		tw_wake_fd(head);
	else if (unlikely(head == BLKRING__TW_SLEEPING) ||
	         (lazy &&
	          (tw_lazy_due(head, nr, wake_at) || (now && head >= BLKRING__TW_SLEEPING_LAZY))))
		futex_wake(word, 1);
}

void blkring__tw_add(struct blkring__ctx *ctx, struct blkring_tw_node *node, bool chain)
{
	node->prio = true;
	node->pushed_ns = blkring__now_ns();
	tw_push(ctx, node, chain);
}

/* A driver's interrupt: its work may carry completions a lazy wait counts
 * on, so it ends any sleep. */
void blkring__tw_irq_work(struct blkring_ioc *ioc, struct blkring_tw_node *work)
{
	blkring__tw_add(container_of(ioc, struct blkring__ctx, ioc), work, true);
}

void blkring__tw_queue(struct blkring__ctx *ctx, struct blkring_tw_node *node)
{
	node->prio = false;
	tw_push(ctx, node, false);
}

/*
 * Takes the list and reverses it into arrival order, counting it and the
 * wake it carries.  On a TW_PRIO ring the same pass sorts it: completions
 * to *prio, other work to *normal, each in arrival order, so a deep round
 * walks its items once before running them, not twice (Linux keeps two
 * lists; one pass over a list that no longer fits in the cache costs as
 * much as running it).  Without it all goes to *normal.
 */
static void tw_take(struct blkring__ctx *ctx, struct llist_node **prio, struct llist_node **normal)
{
	uintptr_t head = atomic_exchange_explicit(&ctx->tw.head, 0, memory_order_acquire);
	struct llist_node *node = (struct llist_node *)head;
	bool split = prio != NULL;

	if (split)
		*prio = NULL;
	*normal = NULL;
	while (node) {
		struct llist_node *next = node->next, **list = normal;

		if (blkring__tw_is_mark((uintptr_t)next)) {
			if ((uintptr_t)next != BLKRING__TW_SLEEPING_LAZY)
				blkring__stat_add(&ctx->stats.tw_wakes, 1);
			next = NULL;
		}
		if (split && container_of(node, struct blkring_tw_node, node)->prio)
			list = prio;
		node->next = *list;
		*list = node;
		node = next;
		ctx->tw_taken++;
	}
}

/* The CQEs posted so far are published: their wait ends now. */
void blkring__tw_wait_published(struct blkring__ctx *ctx)
{
	uint64_t now = blkring__now_ns();

	blkring__stat_add(&ctx->stats.tw_wait_nr, ctx->tw_wait_nr);
	blkring__stat_add(&ctx->stats.tw_wait_ns, ctx->tw_wait_nr * now - ctx->tw_wait_pushed);
	ctx->tw_wait_nr = 0;
	ctx->tw_wait_pushed = 0;
}

/* A completion's CQEs wait from its push until the CQ tail store that
 * publishes them: in the CQE's fill, or in a batch's flush. */
static inline void tw_run_one(struct blkring__ctx *ctx, struct llist_node *node)
{
	struct blkring_tw_node *tw = container_of(node, struct blkring_tw_node, node);
	uint64_t pushed = tw->prio ? tw->pushed_ns : 0;
	uint32_t tail = ctx->cached_cq_tail, posted;

	tw->func(tw); /* may free tw */
	posted = ctx->cached_cq_tail - tail;
	if (!pushed || !posted)
		return;
	ctx->tw_wait_nr += posted;
	ctx->tw_wait_pushed += posted * pushed;
	if (!ctx->cq_batch)
		blkring__tw_wait_published(ctx);
}

static unsigned tw_run_list(struct blkring__ctx *ctx, struct llist_node *node)
{
	unsigned nr = 0;

	while (node) {
		/* The item may free itself. */
		struct llist_node *next = node->next;

		tw_run_one(ctx, node);
		node = next;
		nr++;
	}
	return nr;
}

/*
 * Rounds until the list stays empty (work may add work), each run in
 * arrival order.  On a TW_PRIO ring, Linux 5.17's: the round's completions
 * first, their CQEs committed (waking an SQPOLL ring's reaper), then the
 * other work taken with them; completions that arrive while other work
 * runs wait for the next round, not behind later work.
 */
static unsigned tw_run_rounds(struct blkring__ctx *ctx, bool prio_first)
{
	unsigned nr = 0;

	do {
		struct llist_node *prio = NULL, *normal;

		tw_take(ctx, prio_first ? &prio : NULL, &normal);
		if (prio) {
			nr += tw_run_list(ctx, prio);
			blkring__cq_flush(ctx);
		}
		nr += tw_run_list(ctx, normal);
	} while (blkring__tw_pending(ctx));
	return nr;
}

unsigned blkring__tw_run(struct blkring__ctx *ctx)
{
	unsigned nr;

	if (!blkring__tw_pending(ctx))
		return 0;
	/* The reaper of an SQPOLL ring is another thread: as io_uring's task
	 * work, commit CQEs at flush points, not one by one. */
	ctx->cq_batch = ctx->sq != NULL;
	nr = tw_run_rounds(ctx, ctx->flags & BLKRING_SETUP_TW_PRIO);
	ctx->cq_batch = false;
	blkring__cq_flush(ctx);
	blkring__stat_add(&ctx->stats.tw_run, nr);
	return nr;
}

/* Time left until an absolute CLOCK_MONOTONIC deadline; false when none is. */
bool blkring__time_left(const struct timespec *deadline, struct timespec *left)
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
static int tw_cancel_sleep(struct blkring__tw_list *tw, uintptr_t marker, int why)
{
	if (atomic_compare_exchange_strong_explicit(&tw->head, &marker, 0, memory_order_relaxed,
	                                            memory_order_relaxed))
		return why;
	return 0;
}

/*
 * The sleep of a ring with driver queues: on them and on the eventfd task
 * work producers signal (blkring__ioc_sleep()) (`busy` as for tw_sleep()).
 * Returns as tw_sleep() does; 0 also when a queue has completions.  When no
 * sleep can be set up (no eventfd, no memory) it only yields: the caller
 * looks again.
 */
static int tw_sleep_fd(struct blkring__ctx *ctx, bool (*busy)(struct blkring__ctx *ctx),
                       const struct timespec *deadline)
{
	struct blkring__tw_list *tw = &ctx->tw;
	uintptr_t empty = 0, mark;
	struct timespec left;
	unsigned irqs;
	int nr, ret;

	/* Before the queues are asked, as a queue may watch its device a
	 * while, and after, for the time that left. */
	if (deadline && !blkring__time_left(deadline, &left))
		return -ETIME;
	nr = blkring__ioc_prepare_sleep(&ctx->ioc);
	if (nr < 0) {
		if (nr != -EAGAIN)
			sched_yield();
		return 0;
	}
	if (deadline && !blkring__time_left(deadline, &left))
		return -ETIME;
	mark = BLKRING__TW_SLEEPING_FD(ctx->ioc.wake_fd);
	/* seq_cst, as tw_sleep()'s; and a release: the producer that takes
	 * the mark uses the descriptor. */
	if (!atomic_compare_exchange_strong_explicit(&tw->head, &empty, mark, memory_order_seq_cst,
	                                             memory_order_relaxed))
		return 0;
	if (busy && busy(ctx))
		return tw_cancel_sleep(tw, mark, 0);
	blkring__stat_add(&ctx->stats.sleeps, 1);
	irqs = blkring__irqs;
	ret =
	    blkring__ioc_sleep(&ctx->ioc, (unsigned)nr, deadline ? &left : NULL, ctx->wait_sigmask);
	if (ret == -EINTR && irqs != blkring__irqs)
		ret = 1; /* a driver's interrupt, not the application's signal */
	return tw_cancel_sleep(tw, mark, ret == 0 ? -ETIME : ret < 0 ? ret : 0);
}

/*
 * Marks the empty list with `marker` and sleeps until a producer (or a
 * kick) replaces it, or the deadline (absolute, monotonic; NULL for none)
 * passes.  `busy`, when given, is asked after the mark (a seq_cst
 * read-modify-write): with seq_cst loads it sees what a waker stored
 * (seq_cst) before its kick, or the waker sees the mark.  Returns 0 with
 * work pending (or arrived before the sleep began), -ETIME at the deadline,
 * -EINTR when a signal handler ran.  A ring with driver queues sleeps on
 * them instead (tw_sleep_fd()), woken by any push.
 */
static int tw_sleep(struct blkring__ctx *ctx, uintptr_t marker,
                    bool (*busy)(struct blkring__ctx *ctx), const struct timespec *deadline)
{
	struct blkring__tw_list *tw = &ctx->tw;
	uintptr_t empty = 0;
	struct timespec left;

	/* A signal mask comes with the sleep only in ppoll(): a futex has none. */
	if (unlikely(ctx->ioc.queues || ctx->wait_sigmask))
		return tw_sleep_fd(ctx, busy, deadline);
	if (!atomic_compare_exchange_strong_explicit(&tw->head, &empty, marker,
	                                             memory_order_seq_cst, memory_order_relaxed))
		return 0;
	if (busy && busy(ctx))
		return tw_cancel_sleep(tw, marker, 0);
	blkring__stat_add(&ctx->stats.sleeps, 1);
	for (;;) {
		int ret;

		if (deadline && !blkring__time_left(deadline, &left))
			return tw_cancel_sleep(tw, marker, -ETIME);
		ret = futex_wait(tw_futex_word(tw), (uint32_t)marker, deadline ? &left : NULL);
		if (atomic_load_explicit(&tw->head, memory_order_relaxed) != marker) {
			/* A lazy sleep's producers leave no mark: count the wake here. */
			if (marker == BLKRING__TW_SLEEPING_LAZY && !ret)
				blkring__stat_add(&ctx->stats.tw_wakes, 1);
			return 0;
		}
		if (ret == -ETIMEDOUT)
			return tw_cancel_sleep(tw, marker, -ETIME);
		if (ret == -EINTR)
			return tw_cancel_sleep(tw, marker, -EINTR);
	}
}

int blkring__tw_wait(struct blkring__ctx *ctx, const struct timespec *deadline)
{
	return tw_sleep(ctx, BLKRING__TW_SLEEPING, NULL, deadline);
}

/*
 * Deferred task running: sleeps until nr more items were added after all
 * the owner has taken (or what tw_wait ends on).  When the count is there
 * already but a producer has not pushed yet, its push wakes the owner.
 */
int blkring__tw_wait_nr(struct blkring__ctx *ctx, unsigned nr, const struct timespec *deadline)
{
	struct blkring__tw_list *tw = &ctx->tw;
	uint32_t target = ctx->tw_taken + nr, added;
	int ret;

	/* Any push ends a sleep on driver queues: no count to arm. */
	if (unlikely(ctx->ioc.queues || ctx->wait_sigmask))
		return tw_sleep_fd(ctx, NULL, deadline);
	atomic_store_explicit(&tw->wake_at, target, memory_order_seq_cst);
	added = atomic_load_explicit(&tw->nr_added, memory_order_seq_cst);
	/* A drained request starts only once the owner ran what it waits for:
	 * the first push must wake the owner. */
	if ((int32_t)(added - target) >= 0 || ctx->defer_head)
		ret = tw_sleep(ctx, BLKRING__TW_SLEEPING, NULL, deadline);
	else
		ret = tw_sleep(ctx, BLKRING__TW_SLEEPING_LAZY, NULL, deadline);
	atomic_store_explicit(&tw->wake_at, target + TW_NO_WAKE, memory_order_relaxed);
	return ret;
}

/* The SQ thread's sleep: until task work, or a kick after what `busy` checks. */
void blkring__tw_idle(struct blkring__ctx *ctx, bool (*busy)(struct blkring__ctx *ctx),
                      const struct timespec *deadline)
{
	tw_sleep(ctx, BLKRING__TW_SLEEPING, busy, deadline);
}

/* Wakes an owner asleep in tw_idle, from a thread that has no work to push. */
void blkring__tw_kick(struct blkring__ctx *ctx)
{
	struct blkring__tw_list *tw = &ctx->tw;
	uintptr_t sleeping = atomic_load_explicit(&tw->head, memory_order_seq_cst);

	if (sleeping != BLKRING__TW_SLEEPING && !(sleeping & BLKRING__TW_FD_BIT))
		return;
	if (!atomic_compare_exchange_strong_explicit(&tw->head, &sleeping, 0, memory_order_seq_cst,
	                                             memory_order_relaxed))
		return;
	if (sleeping & BLKRING__TW_FD_BIT)
		tw_wake_fd(sleeping);
	else
		futex_wake(tw_futex_word(tw), 1);
}
