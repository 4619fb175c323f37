// SPDX-License-Identifier: MIT
/*
 * The priority task-work list (BLKRING_SETUP_TW_PRIO): completions handed
 * over from other threads run before issues turned into task work (TW_ISSUE),
 * each kind in arrival order; without the flag everything runs in arrival
 * order.  DEFER_TASKRUN keeps the work queued until the test waits, so the
 * test decides what is on the list when it runs.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "ring-fake.h"
#include "ring/ring.h"
#include "test.h"

#define HELD 0   /* device index: bios wait for the test to end them */
#define INLINE 1 /* device index: bios end inside their issue */

static char buf[512];

static void ring_two(struct blkring *ring, unsigned flags, unsigned entries, struct fake_dev *held,
                     struct blkring_dev *inl)
{
	struct blkring_params p = {.flags = flags | BLKRING_SETUP_CQSIZE,
	                           .cq_entries = 2 * entries};
	struct blkring_dev *devs[2] = {held->dev, inl};

	CHECK_EQ(blkring_queue_init_params(entries, ring, &p), 0);
	CHECK_EQ(blkring_register_devices(ring, devs, 2), 0);
}

static void queue_read(struct blkring *ring, int dev, uint64_t user_data)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	blkring_prep_read(sqe, dev, buf, sizeof(buf), 0);
	sqe->user_data = user_data;
	CHECK_EQ(blkring_submit(ring), 1);
}

/* Runs the task work queued so far without waiting for a CQE. */
static void run_queued(struct blkring *ring)
{
	struct __kernel_timespec now = {0, 0};
	struct blkring_cqe *cqe;

	CHECK_EQ(blkring_wait_cqes(ring, &cqe, ring->cq.ring_entries, &now, NULL), -ETIME);
}

/*
 * Puts N issues (reads of the inline device, user_data 100+i) and N
 * completions (held reads, user_data i) on the list alternately, issue
 * first, then runs them and returns the CQEs' user_data in order.
 */
static void interleave(unsigned flags, uint64_t *order, unsigned n)
{
	struct fake_dev *held = ring_fake_create(FAKE_HOLD);
	struct fake_dev *inl = ring_fake_create(FAKE_INLINE);
	struct blkring_cqe *cqe;
	struct blkring ring;

	ring_two(&ring, flags | BLKRING_SETUP_DEFER_TASKRUN | BLKRING_SETUP_TW_ISSUE, 64, held,
	         inl->dev);
	for (unsigned i = 0; i < n; i++)
		queue_read(&ring, HELD, i);
	run_queued(&ring);
	CHECK_EQ(ring_fake_held(held), n);
	for (unsigned i = 0; i < n; i++) {
		queue_read(&ring, INLINE, 100 + i);
		ring_fake_end_from_thread(held, 1, 0);
	}
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 2 * n, NULL, NULL), 0);
	for (unsigned i = 0; i < 2 * n; i++) {
		struct blkring_cqe c = ring_reap(&ring);

		CHECK_EQ(c.res, sizeof(buf));
		order[i] = c.user_data;
	}
	blkring_queue_exit(&ring);
	ring_fake_destroy(held);
	ring_fake_destroy(inl);
}

/* Completions first, each kind in arrival order. */
static void twprio_completions_first(void)
{
	enum { N = 6 };
	uint64_t order[2 * N];

	interleave(BLKRING_SETUP_TW_PRIO, order, N);
	for (unsigned i = 0; i < N; i++) {
		CHECK_EQ(order[i], i);
		CHECK_EQ(order[N + i], 100 + i);
	}
}

/* Without the flag the same list runs in arrival order: issue, completion, ... */
static void twprio_off_is_fifo(void)
{
	enum { N = 6 };
	uint64_t order[2 * N];

	interleave(0, order, N);
	for (unsigned i = 0; i < N; i++) {
		CHECK_EQ(order[2 * i], 100 + i);
		CHECK_EQ(order[2 * i + 1], i);
	}
}

/* ---- when an SQPOLL ring's reaper sees the CQEs ---- */

/* Task work that holds the SQ thread until the test opens it. */
struct gate {
	struct blkring_tw_node tw;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool entered, open;
};

static void gate_run(struct blkring_tw_node *tw)
{
	struct gate *g = container_of(tw, struct gate, tw);

	pthread_mutex_lock(&g->lock);
	g->entered = true;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_init(struct gate *g)
{
	memset(g, 0, sizeof(*g));
	g->tw.func = gate_run;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
}

static void gate_wait_entered(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->entered)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/*
 * Completions and other work taken together by the SQ thread: returns how
 * many CQEs the application sees while the SQ thread runs that other work.
 * (The first gate holds the thread while both are queued.)
 */
static unsigned visible_during_other_work(unsigned flags)
{
	enum { N = 4 };
	struct fake_dev *held = ring_fake_create(FAKE_HOLD);
	struct blkring_params p = {.flags = flags | BLKRING_SETUP_SQPOLL};
	struct blkring_cqe *cqe;
	struct gate first, second;
	struct blkring ring;
	unsigned visible;

	gate_init(&first);
	gate_init(&second);
	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &held->dev, 1), 0);
	for (unsigned i = 0; i < N; i++) {
		blkring_prep_read(ring_sqe(&ring), 0, buf, sizeof(buf), 0);
		CHECK_EQ(blkring_submit(&ring), 1);
	}
	ring_fake_wait_submitted(held, N);
	blkring__tw_queue(ring.ctx, &first.tw);
	gate_wait_entered(&first);
	ring_fake_end_from_thread(held, N, 0);
	blkring__tw_queue(ring.ctx, &second.tw);
	gate_open(&first);
	gate_wait_entered(&second);
	visible = blkring_cq_ready(&ring);
	gate_open(&second);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, N, NULL, NULL), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(held);
	return visible;
}

/* With the priority list they are committed before the other work runs. */
static void twprio_sqpoll_commits_first(void)
{
	CHECK_EQ(visible_during_other_work(BLKRING_SETUP_TW_PRIO), 4);
}

/* Without it they are committed when the task work is done, as io_uring's. */
static void twprio_off_sqpoll_commits_at_end(void)
{
	CHECK_EQ(visible_during_other_work(0), 0);
}

/* ---- nothing lost under many producers ---- */

struct producer {
	struct fake_dev *fake;
	unsigned n;
};

static void *produce(void *arg)
{
	struct producer *p = arg;

	ring_fake_end(p->fake, p->n, 0);
	return NULL;
}

/*
 * Producers end held bios while the owner keeps issuing (as task work) and
 * reaping: every CQE arrives once.  With DEFER_TASKRUN the owner waits for
 * all it misses, so a lost lazy wake would hang the case.
 */
static void many_producers(unsigned flags)
{
	enum { THREADS = 4, PER = 400, N = THREADS * PER, EXTRA = 400 };
	struct fake_dev *held = ring_fake_create(FAKE_HOLD);
	struct fake_dev *inl = ring_fake_create(FAKE_INLINE);
	struct producer prod = {held, PER};
	static bool seen[N + EXTRA];
	pthread_t t[THREADS];
	struct blkring ring;
	unsigned reaped = 0;

	memset(seen, 0, sizeof(seen));
	ring_two(&ring, flags | BLKRING_SETUP_TW_PRIO | BLKRING_SETUP_TW_ISSUE, 4096, held,
	         inl->dev);
	for (unsigned i = 0; i < N; i++) {
		blkring_prep_read(ring_sqe(&ring), HELD, buf, sizeof(buf), 0);
		ring.sq.sqes[(ring.sq.sqe_tail - 1) & ring.sq.ring_mask].user_data = i;
	}
	CHECK_EQ(blkring_submit(&ring), N);
	while (ring_fake_held(held) < N)
		run_queued(&ring);
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, produce, &prod), 0);
	for (unsigned i = 0; i < EXTRA; i++)
		queue_read(&ring, INLINE, N + i);
	while (reaped < N + EXTRA) {
		struct blkring_cqe *cqe;
		unsigned head;

		CHECK_EQ(blkring_wait_cqes(&ring, &cqe, N + EXTRA - reaped, NULL, NULL), 0);
		blkring_for_each_cqe (&ring, head, cqe) {
			CHECK(cqe->user_data < N + EXTRA && !seen[cqe->user_data]);
			CHECK_EQ(cqe->res, sizeof(buf));
			seen[cqe->user_data] = true;
			blkring_cqe_seen(&ring, cqe);
			reaped++;
		}
	}
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(held);
	ring_fake_destroy(inl);
}

static void twprio_many_producers(void)
{
	many_producers(0);
}

static void twprio_many_producers_defer(void)
{
	many_producers(BLKRING_SETUP_DEFER_TASKRUN);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-twprio-completions-first", twprio_completions_first, 0},
	    {"ring-twprio-off-is-fifo", twprio_off_is_fifo, 0},
	    {"ring-twprio-sqpoll-commits-first", twprio_sqpoll_commits_first, 0},
	    {"ring-twprio-off-sqpoll-commits-at-end", twprio_off_sqpoll_commits_at_end, 0},
	    {"ring-twprio-many-producers", twprio_many_producers, 0},
	    {"ring-twprio-many-producers-defer", twprio_many_producers_defer, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
