// SPDX-License-Identifier: MIT
/*
 * irqmode=signal: a null device's completions as interrupts.  Each (ring,
 * hardware queue) pair has a POSIX timer aimed at the thread that runs the
 * ring's task work (SIGEV_THREAD_ID), armed for the pair's earliest bio.
 * Its handler interrupts that thread wherever it is, notes the time and
 * hands the pair's work to the ring (blkring_ioc.irq_work); the work, in
 * the ring's next task-work round, ends every bio that was due at the
 * interrupt (as NVMe interrupt coalescing does) and arms the timer for the
 * first one left.  No third thread
 * competes for the CPUs, and when a completion lands is the device's
 * choice, not the scheduler's.
 *
 * The handler touches only the pair's `fired_ns` and `raised` and the
 * ring's task-work push, all lock-free and async-signal-safe; the pending list
 * and the timer belong to the ring's thread outside the handler.  A
 * pair's state lives from the ring's first I/O to the device to the ring's
 * exit, with nothing in flight, and its timer is deleted before it is
 * freed: the kernel then drops a signal still pending for it (checked at
 * the first open, blkring__null_irq_setup()).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "drivers/null.h"
#include "lib/clock.h"
#include "lib/error.h"

struct irq_ring;

struct irq_pair {
	struct irq_ring *ring;
	struct blkring_tw_node work;
	_Atomic bool raised;       /* work handed to the ring and not run yet */
	_Atomic uint64_t fired_ns; /* the last interrupt: what was due then ends */
	bool has_timer;
	timer_t timer;
	pthread_t thread;  /* the timer's target */
	uint64_t armed_ns; /* 0: not armed */
	struct null_pending pending;
};

/* The ring's state for one device: a pair per default hardware queue. */
struct irq_ring {
	struct blkring_ioc_queue link;
	struct blkring_ioc *ioc;
	void (*end)(struct blkring_bio *bio);
	unsigned nr_pairs;
	struct irq_pair pairs[];
};

/* ---- the handler, and the process-wide setup ---- */

static void irq_handler(int sig, siginfo_t *si, void *uc)
{
	struct irq_pair *p = si->si_value.sival_ptr;
	int saved = errno;

	(void)sig;
	(void)uc;
	if (si->si_code != SI_TIMER || !p)
		return; /* not a timer of ours: kill(2) or sigqueue(3) */
	blkring__irqs++;
	atomic_store_explicit(&p->fired_ns, blkring__now_ns(), memory_order_relaxed);
	if (!atomic_exchange_explicit(&p->raised, true, memory_order_acq_rel))
		p->ring->ioc->irq_work(p->ring->ioc, &p->work);
	errno = saved;
}

static struct sigevent irq_event(void *value)
{
	struct sigevent ev;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = BLKRING_IRQ_SIGNAL;
	ev.sigev_value.sival_ptr = value;
	ev._sigev_un._tid = gettid();
	return ev;
}

static void irq_sigset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, BLKRING_IRQ_SIGNAL);
}

/*
 * Whether the kernel drops the pending signal of a deleted timer (Linux
 * 6.13's posix-timers rework): a timer fires at this thread with the
 * signal blocked, is deleted, and the signal must not be there to take.
 */
static int irq_probe(void)
{
	struct itimerspec soon = {.it_value = {.tv_nsec = 1}};
	struct timespec zero = {0}, nap = {.tv_nsec = 100000};
	struct sigevent ev = irq_event(NULL);
	sigset_t set, old, pending;
	siginfo_t si;
	timer_t t;
	int got;

	irq_sigset(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (timer_create(CLOCK_MONOTONIC, &ev, &t)) {
		got = -errno;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return got;
	}
	timer_settime(t, 0, &soon, NULL);
	for (int i = 0; i < 1000; i++) {
		sigpending(&pending);
		if (sigismember(&pending, BLKRING_IRQ_SIGNAL))
			break;
		nanosleep(&nap, NULL);
	}
	timer_delete(t);
	got = sigtimedwait(&set, &si, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return got == BLKRING_IRQ_SIGNAL ? -EOPNOTSUPP : 0;
}

static int irq_install(void)
{
	struct sigaction sa, old;

	if (sigaction(BLKRING_IRQ_SIGNAL, NULL, &old))
		return -errno;
	if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == irq_handler)
		return 0;
	if (old.sa_handler != SIG_DFL)
		return -EBUSY;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = irq_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(BLKRING_IRQ_SIGNAL, &sa, NULL) ? -errno : 0;
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int setup_ret;

static void irq_setup(void)
{
	setup_ret = irq_probe() ?: irq_install();
}

int blkring__null_irq_setup(void)
{
	pthread_once(&setup_once, irq_setup);
	if (setup_ret == -EOPNOTSUPP)
		return blkring__error(setup_ret,
		                      "null: irqmode=signal: this kernel still delivers a deleted "
		                      "timer's signal (Linux 6.13 drops it); use irqmode=timer");
	if (setup_ret == -EBUSY)
		return blkring__error(
		    setup_ret,
		    "null: irqmode=signal: signal %d (BLKRING_IRQ_SIGNAL) already "
		    "has a handler in this process",
		    BLKRING_IRQ_SIGNAL);
	if (setup_ret)
		return blkring__error(setup_ret, "null: irqmode=signal: no timer signal: %s",
		                      strerror(-setup_ret));
	return 0;
}

/* ---- a pair's timer, on the ring's thread ---- */

static void pair_arm(struct irq_pair *p, uint64_t at)
{
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)(at / 1000000000ULL),
	                 .tv_nsec = (long)(at % 1000000000ULL)},
	};

	p->armed_ns = at;
	timer_settime(p->timer, TIMER_ABSTIME, &its, NULL);
}

static uint64_t pair_next(const struct irq_pair *p)
{
	return container_of(p->pending.first, struct blkring_bio, node)->deadline_ns;
}

/*
 * Aims the timer at the calling thread, which runs the ring's task work
 * now (an SQ thread that stopped hands the ring to the exiting one).  The
 * library's own threads block every signal: this one is let through.  A
 * failure keeps the old timer, which still reaches the ring.
 */
static int pair_target(struct irq_pair *p)
{
	struct sigevent ev;
	sigset_t set;
	timer_t t;

	if (p->has_timer && pthread_equal(p->thread, pthread_self()))
		return 0;
	ev = irq_event(p);
	if (timer_create(CLOCK_MONOTONIC, &ev, &t))
		return -errno;
	irq_sigset(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (p->has_timer)
		timer_delete(p->timer);
	p->timer = t;
	p->has_timer = true;
	p->thread = pthread_self();
	if (p->pending.first)
		pair_arm(p, pair_next(p));
	return 0;
}

/* The pair's work: the interrupt's bottom half, on the ring's thread. */
static void pair_run(struct blkring_tw_node *work)
{
	struct irq_pair *p = container_of(work, struct irq_pair, work);
	struct blkring_bio *bio;
	uint64_t fired;

	/* Cleared first: a fire from here on raises the work again. */
	atomic_store_explicit(&p->raised, false, memory_order_release);
	pair_target(p);
	p->armed_ns = 0;
	fired = atomic_load_explicit(&p->fired_ns, memory_order_relaxed);
	/* Each bio leaves the list before it ends: its end may submit.  What
	 * fell due after the interrupt waits for the next one. */
	while ((bio = blkring__null_pending_due(&p->pending, fired)))
		p->ring->end(bio);
	if (p->pending.first && !p->armed_ns)
		pair_arm(p, pair_next(p));
}

/* ---- the ring's queue ops ---- */

static struct irq_ring *irq_ring_of(struct blkring_ioc_queue *link)
{
	return container_of(link, struct irq_ring, link);
}

/* The thread about to sleep is the one the interrupts must wake. */
static int irq_prepare_sleep(struct blkring_ioc_queue *link, bool *wakes)
{
	struct irq_ring *r = irq_ring_of(link);

	(void)wakes;
	for (unsigned i = 0; i < r->nr_pairs; i++)
		if (r->pairs[i].pending.first)
			pair_target(&r->pairs[i]);
	return -ENOENT;
}

static bool irq_idle(struct blkring_ioc_queue *link)
{
	struct irq_ring *r = irq_ring_of(link);

	for (unsigned i = 0; i < r->nr_pairs; i++)
		if (r->pairs[i].pending.first)
			return false;
	return true;
}

static void irq_exit(struct blkring_ioc_queue *link)
{
	struct irq_ring *r = irq_ring_of(link);

	for (unsigned i = 0; i < r->nr_pairs; i++)
		if (r->pairs[i].has_timer)
			timer_delete(r->pairs[i].timer);
	free(r);
}

/* No flush and no reap: only the interrupt ends bios. */
static const struct blkring_ioc_queue_ops irq_ring_ops = {
    .prepare_sleep = irq_prepare_sleep,
    .idle = irq_idle,
    .exit = irq_exit,
};

static struct irq_ring *irq_ring_create(struct blkring_dev *dev, struct blkring_ioc *ioc,
                                        void (*end)(struct blkring_bio *bio))
{
	struct irq_ring *r = calloc(1, sizeof(*r) + dev->nr_hw_queues * sizeof(r->pairs[0]));

	if (!r)
		return NULL;
	r->link.dev = dev;
	r->link.ops = &irq_ring_ops;
	r->ioc = ioc;
	r->end = end;
	r->nr_pairs = dev->nr_hw_queues;
	for (unsigned i = 0; i < r->nr_pairs; i++) {
		r->pairs[i].ring = r;
		r->pairs[i].work.func = pair_run;
	}
	blkring__ioc_add(ioc, &r->link);
	return r;
}

bool blkring__null_irq_queue(struct blkring_dev *dev, struct blkring_bio *bio,
                             void (*end)(struct blkring_bio *bio))
{
	struct blkring_ioc_queue *link = blkring__ioc_find(bio->ioc, dev);
	struct irq_ring *r = link ? irq_ring_of(link) : irq_ring_create(dev, bio->ioc, end);
	struct irq_pair *p;

	if (unlikely(!r))
		return false;
	p = &r->pairs[bio->hctx->index];
	if (unlikely(pair_target(p)))
		return false;
	blkring__null_pending_add(&p->pending, bio);
	if (!p->armed_ns || bio->deadline_ns < p->armed_ns)
		pair_arm(p, bio->deadline_ns);
	return true;
}
