// SPDX-License-Identifier: MIT
/*
 * Deferred task running (BLKRING_SETUP_DEFER_TASKRUN): task work runs only
 * inside a wait, and a waiter sleeps until enough completions for its wait
 * arrived, not until the first one.  It cannot be combined with SQPOLL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

static char buf[512];

static struct blkring_ring_stats stats(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st;
}

static void defer_ring(struct blkring *ring, unsigned flags, struct fake_dev *fake)
{
	struct blkring_params p = {.flags = flags | BLKRING_SETUP_DEFER_TASKRUN};

	CHECK_EQ(blkring_queue_init_params(64, ring, &p), 0);
	CHECK_EQ(blkring_register_devices(ring, &fake->dev, 1), 0);
}

static void submit_reads(struct blkring *ring, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(ring);

		blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
		sqe->user_data = i;
	}
	CHECK_EQ(blkring_submit(ring), n);
}

/* Completions wait through submit, peek and a wait for none; a wait runs them. */
static void defer_runs_only_in_wait(void)
{
	enum { N = 8 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_cqe *cqes[N], *cqe;
	struct __kernel_timespec none = {0, 0};
	struct blkring ring;

	defer_ring(&ring, 0, fake);
	submit_reads(&ring, N);
	ring_fake_end_from_thread(fake, N, 0);
	blkring_prep_nop(ring_sqe(&ring));
	ring.sq.sqes[(ring.sq.sqe_tail - 1) & ring.sq.ring_mask].user_data = 1000;
	CHECK_EQ(blkring_submit(&ring), 1);
	/* The NOP completed inline, on the owner: it is no task work. */
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, N), 1);
	CHECK_EQ(cqes[0]->user_data, 1000);
	blkring_cq_advance(&ring, 1);
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, N), 0);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 0, &none, NULL), -EAGAIN);
	CHECK_EQ(stats(&ring).tw_run, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, NULL, NULL), 0);
	CHECK_EQ(stats(&ring).tw_run, N);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* An issue turned into task work waits for the wait too. */
static void defer_tw_issue_waits(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring_cqe *cqe;
	struct blkring ring;

	defer_ring(&ring, BLKRING_SETUP_TW_ISSUE, fake);
	submit_reads(&ring, 4);
	CHECK_EQ(ring_fake_submitted(fake), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 4, NULL, NULL), 0);
	CHECK_EQ(ring_fake_submitted(fake), 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* ---- the lazy wake ---- */

/* The thread's scheduler state letter, from /proc. */
static char thread_state(pid_t tid)
{
	char path[64], line[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	CHECK(f);
	CHECK(fgets(line, sizeof(line), f));
	fclose(f);
	p = strrchr(line, ')');
	CHECK(p && p[1] == ' ');
	return p[2];
}

struct trickle {
	struct blkring *ring;
	struct fake_dev *fake;
	pid_t owner;
	unsigned n;
};

/* Ends the held bios one at a time, each once the owner sleeps in its wait. */
static void *trickle_ends(void *arg)
{
	struct trickle *t = arg;

	for (unsigned i = 0; i < t->n; i++) {
		while (stats(t->ring).sleeps == 0 || thread_state(t->owner) != 'S')
			usleep(200);
		ring_fake_end(t->fake, 1, 0);
	}
	return NULL;
}

/*
 * A wait for N sleeps through the first N-1 completions: the owner is woken
 * once, by the producer of the Nth.  (Woken at the first, it would take
 * that one, sleep again, and be woken again by the next.)
 */
static void *end_two(void *arg)
{
	ring_fake_end(arg, 1, 0);
	ring_fake_end(arg, 1, 0);
	return NULL;
}

static void defer_lazy_wake(void)
{
	enum { N = 6 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_cqe *cqe;
	struct blkring ring;
	struct trickle t = {&ring, fake, gettid(), N};
	pthread_t thread;

	defer_ring(&ring, 0, fake);
	submit_reads(&ring, N);
	CHECK_EQ(pthread_create(&thread, NULL, trickle_ends, &t), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, N, NULL, NULL), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), N);
	CHECK_EQ(stats(&ring).tw_wakes, 1);
	CHECK_EQ(stats(&ring).tw_run, N);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A wait for a whole chain (or a drained pair): its later requests start
 * only when the owner runs the earlier one's completion, so that completion
 * ends the lazy sleep, whatever the count (the fuzzer's stall). */
static void defer_wait_for_chain(unsigned flags)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec ts = {5, 0};
	struct blkring_sqe *sqe;
	struct blkring_cqe *cqe;
	struct blkring ring;
	pthread_t t;

	defer_ring(&ring, 0, fake);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = (uint8_t)(flags & BLKRING_SQE_IO_LINK);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = (uint8_t)(flags & BLKRING_SQE_IO_DRAIN);
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(ring_fake_held(fake), 1);
	/* A thread ends each bio as it arrives: the second after the owner ran
	 * the first one's completion. */
	CHECK_EQ(pthread_create(&t, NULL, end_two, fake), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 2, &ts, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), 2);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void defer_wait_for_link(void)
{
	defer_wait_for_chain(BLKRING_SQE_IO_LINK);
}

static void defer_wait_for_drain(void)
{
	defer_wait_for_chain(BLKRING_SQE_IO_DRAIN);
}

/* A wait that already has part of what it needs sleeps for the rest only. */
static void defer_lazy_wake_counts_ready(void)
{
	enum { N = 6, FIRST = 2 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_cqe *cqe;
	struct blkring ring;
	struct trickle t = {&ring, fake, gettid(), N - FIRST};
	pthread_t thread;

	defer_ring(&ring, 0, fake);
	submit_reads(&ring, N);
	ring_fake_end_from_thread(fake, FIRST, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, FIRST, NULL, NULL), 0);
	CHECK_EQ(stats(&ring).sleeps, 0);
	CHECK_EQ(pthread_create(&thread, NULL, trickle_ends, &t), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, N, NULL, NULL), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), N);
	CHECK_EQ(stats(&ring).tw_wakes, 1);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A lazy sleep still ends at its timeout, with what arrived run. */
static void defer_lazy_timeout(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec ts = {0, 20 * 1000 * 1000};
	struct blkring_cqe *cqe;
	struct blkring ring;

	defer_ring(&ring, 0, fake);
	submit_reads(&ring, 4);
	ring_fake_end_from_thread(fake, 1, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 4, &ts, NULL), -ETIME);
	CHECK(cqe);
	CHECK_EQ(blkring_cq_ready(&ring), 1);
	ring_fake_end_from_thread(fake, 3, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 4, NULL, NULL), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Exit runs the deferred completions it waits for. */
static void defer_exit_with_pending(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	defer_ring(&ring, BLKRING_SETUP_TW_ISSUE, fake);
	submit_reads(&ring, 4);
	blkring_queue_exit(&ring);
	CHECK_EQ(ring_fake_submitted(fake), 0);
	ring_fake_destroy(fake);
}

/* Linux's rule: the SQ thread would run the owner's task work. */
static void defer_sqpoll_einval(void)
{
	struct blkring_params p = {.flags = BLKRING_SETUP_DEFER_TASKRUN | BLKRING_SETUP_SQPOLL};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), -EINVAL);
	CHECK(strstr(blkring_last_error(), "SQPOLL"));
	CHECK_EQ(blkring_queue_init(8, &ring, BLKRING_SETUP_DEFER_TASKRUN), 0);
	blkring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-defer-runs-only-in-wait", defer_runs_only_in_wait, 0},
	    {"ring-defer-tw-issue-waits", defer_tw_issue_waits, 0},
	    {"ring-defer-lazy-wake", defer_lazy_wake, 0},
	    {"ring-defer-lazy-wake-counts-ready", defer_lazy_wake_counts_ready, 0},
	    {"ring-defer-wait-for-link", defer_wait_for_link, 20},
	    {"ring-defer-wait-for-drain", defer_wait_for_drain, 20},
	    {"ring-defer-lazy-timeout", defer_lazy_timeout, 0},
	    {"ring-defer-exit-with-pending", defer_exit_with_pending, 0},
	    {"ring-defer-sqpoll-einval", defer_sqpoll_einval, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
