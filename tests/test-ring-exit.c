// SPDX-License-Identifier: MIT
/* Ring exit with requests in flight: waits for what started, cancels what
 * did not, leaks nothing, and nothing reaches the ring afterwards. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

static char buf[4096];

struct helper {
	struct blkring *ring;
	struct fake_dev *fake;
	unsigned cqes; /* wait for this many CQEs posted... */
	bool asleep;   /* ...or for the owner to sleep */
	unsigned n;    /* then end this many held bios */
	bool unblock;  /* or unblock a FAKE_BLOCK device */
};

static bool helper_ready(struct helper *h)
{
	struct blkring_ring_stats st;

	if (h->asleep) {
		CHECK_EQ(blkring_ring_stats(h->ring, &st), 0);
		return st.sleeps > 0;
	}
	return atomic_load(h->ring->cq.ktail) >= h->cqes;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	while (!helper_ready(h))
		usleep(100);
	if (h->unblock)
		ring_fake_unblock(h->fake);
	else
		ring_fake_end(h->fake, h->n, 0);
	return NULL;
}

static void read_sqe(struct blkring *ring, unsigned flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = (uint8_t)flags;
}

static void exit_waits_inflight(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct helper h = {.ring = &ring, .fake = fake, .asleep = true, .n = 8};
	pthread_t t;

	ring_fake_ring(&ring, 8, fake);
	for (unsigned i = 0; i < 8; i++)
		read_sqe(&ring, 0);
	CHECK_EQ(blkring_submit(&ring), 8);
	CHECK_EQ(pthread_create(&t, NULL, helper_main, &h), 0);
	blkring_queue_exit(&ring);
	/* Exit returned: every bio had ended and been run. */
	CHECK_EQ(ring_fake_held(fake), 0);
	CHECK_EQ(fake->dev->ring_refs, 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	ring_fake_destroy(fake);
}

/* Drained requests that never started are cancelled, not started. */
static void exit_cancels_deferred(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct helper h = {.ring = &ring, .fake = fake, .cqes = 2, .n = 1};
	pthread_t t;

	ring_fake_ring(&ring, 8, fake);
	read_sqe(&ring, 0);
	read_sqe(&ring, BLKRING_SQE_IO_DRAIN);
	read_sqe(&ring, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	CHECK_EQ(pthread_create(&t, NULL, helper_main, &h), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	ring_fake_destroy(fake);
}

/* The rest of a chain whose head is in flight never starts. */
static void exit_cancels_chain_rest(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct helper h = {.ring = &ring, .fake = fake, .asleep = true, .n = 1};
	pthread_t t;

	ring_fake_ring(&ring, 8, fake);
	read_sqe(&ring, BLKRING_SQE_IO_LINK);
	read_sqe(&ring, BLKRING_SQE_IO_LINK);
	read_sqe(&ring, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	CHECK_EQ(pthread_create(&t, NULL, helper_main, &h), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	ring_fake_destroy(fake);
}

/* Work queued for a busy worker is cancelled; the worker's own is waited for. */
static void exit_cancels_queued_work(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_BLOCK);
	struct blkring_params p = {.wq_max_workers = 1};
	struct blkring ring;
	struct helper h = {.ring = &ring, .fake = fake, .cqes = 1, .unblock = true};
	pthread_t t;

	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	read_sqe(&ring, BLKRING_SQE_ASYNC);
	read_sqe(&ring, BLKRING_SQE_ASYNC);
	CHECK_EQ(blkring_submit(&ring), 2);
	ring_fake_wait_blocked(fake, 1);
	CHECK_EQ(pthread_create(&t, NULL, helper_main, &h), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	ring_fake_destroy(fake);
}

/* Completions still in flight on other threads at exit, many times over:
 * ASan/TSan see any access to a freed ring. */
static void exit_races_completions(void)
{
	for (unsigned round = 0; round < 50; round++) {
		struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
		struct blkring ring;
		struct helper h = {.ring = &ring, .fake = fake, .cqes = 0, .n = 16};
		pthread_t t;

		ring_fake_ring(&ring, 16, fake);
		for (unsigned i = 0; i < 16; i++)
			read_sqe(&ring, 0);
		CHECK_EQ(blkring_submit(&ring), 16);
		CHECK_EQ(pthread_create(&t, NULL, helper_main, &h), 0);
		blkring_queue_exit(&ring);
		CHECK_EQ(pthread_join(t, NULL), 0);
		ring_fake_destroy(fake);
	}
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-exit-waits-inflight", exit_waits_inflight, 0},
	    {"ring-exit-cancels-deferred", exit_cancels_deferred, 0},
	    {"ring-exit-cancels-chain-rest", exit_cancels_chain_rest, 0},
	    {"ring-exit-cancels-queued-work", exit_cancels_queued_work, 0},
	    {"ring-exit-races-completions", exit_races_completions, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
