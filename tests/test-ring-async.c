// SPDX-License-Identifier: MIT
/* The worker pool: ASYNC requests, -EAGAIN punts, its bound, its lazy start. */
#include <errno.h>
#include <string.h>

#include "ring-fake.h"
#include "test.h"

static char buf[4096];

static struct blkring_ring_stats stats(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st;
}

static void async_nop(void)
{
	struct blkring ring;
	struct blkring_sqe *sqe;
	struct blkring_cqe cqe;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(stats(&ring).workers, 0);
	sqe = ring_sqe(&ring);
	blkring_prep_nop(sqe);
	sqe->flags = BLKRING_SQE_ASYNC;
	sqe->user_data = 5;
	CHECK_EQ(blkring_submit(&ring), 1);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 5);
	CHECK_EQ(cqe.res, 0);
	CHECK_EQ(stats(&ring).async, 1);
	CHECK_EQ(stats(&ring).punted, 0);
	CHECK_EQ(stats(&ring).tw_run, 1);
	CHECK_EQ(stats(&ring).workers, 1);
	blkring_queue_exit(&ring);
}

static void async_read_on_worker(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct blkring_sqe *sqe;

	ring_fake_ring(&ring, 8, fake);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 8192);
	sqe->flags = BLKRING_SQE_ASYNC;
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, sizeof(buf));
	CHECK(!ring_fake_record(fake, 0).on_owner);
	CHECK_EQ(ring_fake_record(fake, 0).sector, 16);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A non-blocking issue answered -EAGAIN goes to a worker, unseen by the caller. */
static void async_eagain_punted(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	fake->eagain_owner = true;
	ring_fake_ring(&ring, 8, fake);
	blkring_prep_write(ring_sqe(&ring), 0, buf, sizeof(buf), 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, sizeof(buf));
	CHECK_EQ(ring_fake_submitted(fake), 2);
	CHECK(ring_fake_record(fake, 0).on_owner);
	CHECK(!ring_fake_record(fake, 1).on_owner);
	CHECK_EQ(ring_fake_record(fake, 1).op, REQ_OP_WRITE);
	CHECK_EQ(stats(&ring).punted, 1);
	CHECK_EQ(stats(&ring).async, 1);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* RWF_NOWAIT: the caller asked for -EAGAIN, so it gets it. */
static void async_nowait_not_punted(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct blkring_sqe *sqe;

	ring_fake_ring(&ring, 8, fake);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->rw_flags = BLKRING_RWF_NOWAIT;
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, -EAGAIN);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	CHECK(ring_fake_record(fake, 0).flags & BIO_NOWAIT);
	CHECK_EQ(stats(&ring).punted, 0);
	CHECK_EQ(stats(&ring).workers, 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Workers that block: never more than wq_max_workers of them, and all the
 * queued work still runs. */
static void async_pool_bounded(void)
{
	enum { N = 8 };
	struct fake_dev *fake = ring_fake_create(FAKE_BLOCK);
	struct blkring_params p;
	struct blkring ring;
	bool seen[N];

	memset(&p, 0, sizeof(p));
	p.wq_max_workers = 2;
	CHECK_EQ(blkring_queue_init_params(N, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned i = 0; i < N; i++) {
		struct blkring_sqe *sqe = ring_sqe(&ring);

		blkring_prep_read(sqe, 0, buf, sizeof(buf), i * 4096);
		sqe->flags = BLKRING_SQE_ASYNC;
		sqe->user_data = i;
	}
	/* The owner is not blocked: submit returns with both workers stuck. */
	CHECK_EQ(blkring_submit(&ring), N);
	ring_fake_wait_blocked(fake, 2);
	CHECK_EQ(stats(&ring).workers, 2);
	ring_fake_unblock(fake);
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < N; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK(cqe.user_data < N && !seen[cqe.user_data]);
		seen[cqe.user_data] = true;
		CHECK_EQ(cqe.res, sizeof(buf));
	}
	CHECK_EQ(fake->max_blocked, 2);
	CHECK_EQ(stats(&ring).workers, 2);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-async-nop", async_nop, 0},
	    {"ring-async-read-on-worker", async_read_on_worker, 0},
	    {"ring-async-eagain-punted", async_eagain_punted, 0},
	    {"ring-async-nowait-not-punted", async_nowait_not_punted, 0},
	    {"ring-async-pool-bounded", async_pool_bounded, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
