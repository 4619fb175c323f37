// SPDX-License-Identifier: MIT
/* Task work: completions from other threads reach the owner once each, in
 * order, and a sleeping owner is woken once per batch, not per completion. */
#include <errno.h>
#include <pthread.h>
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

static void submit_reads(struct blkring *ring, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(ring);

		blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
		sqe->user_data = i;
	}
	CHECK_EQ(blkring_submit(ring), n);
}

struct ender {
	struct blkring *ring;
	struct fake_dev *fake;
	unsigned n;
};

/* Ends n held bios in one burst once the owner is asleep. */
static void *end_when_asleep(void *arg)
{
	struct ender *e = arg;

	while (stats(e->ring).sleeps == 0)
		usleep(100);
	ring_fake_end(e->fake, e->n, 0);
	return NULL;
}

static void tw_single_wake(void)
{
	enum { N = 32 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct ender e = {&ring, fake, N};
	struct blkring_cqe *cqe;
	pthread_t t;

	ring_fake_ring(&ring, N, fake);
	submit_reads(&ring, N);
	CHECK_EQ(pthread_create(&t, NULL, end_when_asleep, &e), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, NULL, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/* The owner slept once; of N pushes, only the one that found it
	 * asleep woke it. */
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	CHECK_EQ(stats(&ring).sleeps, 1);
	CHECK_EQ(stats(&ring).tw_wakes, 1);
	CHECK_EQ(stats(&ring).tw_run, N);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* An owner that is not asleep is not woken at all. */
static void tw_busy_owner_not_woken(void)
{
	enum { N = 32 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, N, fake);
	submit_reads(&ring, N);
	ring_fake_end_from_thread(fake, N, 0);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	CHECK_EQ(stats(&ring).sleeps, 0);
	CHECK_EQ(stats(&ring).tw_wakes, 0);
	CHECK_EQ(stats(&ring).tw_run, N);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* One producer's completions run in the order it produced them. */
static void tw_fifo(void)
{
	enum { N = 1000 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_params p = {.flags = BLKRING_SETUP_CQSIZE, .cq_entries = 1024};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(1024, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	submit_reads(&ring, N);
	ring_fake_end_from_thread(fake, N, 0);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void *end_some(void *arg)
{
	struct ender *e = arg;

	ring_fake_end(e->fake, e->n, 0);
	return NULL;
}

/* Many producers while the owner reaps and sleeps: every completion once. */
static void tw_many_producers(void)
{
	enum { THREADS = 4, PER = 500, N = THREADS * PER };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_params p = {.flags = BLKRING_SETUP_CQSIZE, .cq_entries = N};
	struct blkring ring;
	struct ender e = {&ring, fake, PER};
	static bool seen[N];
	pthread_t t[THREADS];

	CHECK_EQ(blkring_queue_init_params(N, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	submit_reads(&ring, N);
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, end_some, &e), 0);
	for (unsigned i = 0; i < N; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK(cqe.user_data < N && !seen[cqe.user_data]);
		seen[cqe.user_data] = true;
		CHECK_EQ(cqe.res, sizeof(buf));
	}
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	CHECK_EQ(stats(&ring).tw_run, N);
	CHECK(stats(&ring).tw_wakes <= stats(&ring).sleeps);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-tw-single-wake", tw_single_wake, 0},
	    {"ring-tw-busy-owner-not-woken", tw_busy_owner_not_woken, 0},
	    {"ring-tw-fifo", tw_fifo, 0},
	    {"ring-tw-many-producers", tw_many_producers, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
