// SPDX-License-Identifier: MIT
/* Reaping: peek_batch, for_each + cq_advance, cqe_seen, peek on an empty CQ. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static void submit_nops(struct blkring *ring, unsigned n, uint64_t first)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(ring);

		blkring_prep_nop(sqe);
		sqe->user_data = first + i;
	}
	CHECK_EQ(blkring_submit(ring), n);
}

static void peek_batch(void)
{
	struct blkring ring;
	struct blkring_cqe *cqes[16];

	CHECK_EQ(blkring_queue_init(16, &ring, 0), 0);
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, 16), 0);
	submit_nops(&ring, 10, 0);
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, 4), 4);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(cqes[i]->user_data, i);
	/* Peeking does not consume. */
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, 4), 4);
	CHECK_EQ(cqes[0]->user_data, 0);
	blkring_cq_advance(&ring, 4);
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, 16), 6);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(cqes[i]->user_data, 4 + i);
	blkring_cq_advance(&ring, 6);
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, 16), 0);
	blkring_queue_exit(&ring);
}

/* for_each walks what is ready, across the CQ's wrap-around. */
static void peek_for_each_wraps(void)
{
	struct blkring ring;
	uint64_t next = 0;

	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	for (unsigned round = 0; round < 100; round++) {
		struct blkring_cqe *cqe;
		unsigned head, n = 0;

		submit_nops(&ring, 1 + round % 4, next);
		blkring_for_each_cqe (&ring, head, cqe) {
			CHECK_EQ(cqe->user_data, next + n);
			CHECK_EQ(cqe->res, 0);
			n++;
		}
		CHECK_EQ(n, 1 + round % 4);
		blkring_cq_advance(&ring, n);
		next += n;
	}
	CHECK_EQ(*ring.cq.ktail, next);
	blkring_queue_exit(&ring);
}

/* An empty CQ sends peek to the slow path, which runs pending task work. */
static void peek_runs_task_work(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct blkring_cqe *cqe, *cqes[4];
	static char buf[512];

	ring_fake_ring(&ring, 4, fake);
	for (unsigned i = 0; i < 2; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf, sizeof(buf), 0);
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	ring_fake_end_from_thread(fake, 1, 0);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), 0);
	CHECK_EQ(cqe->res, sizeof(buf));
	blkring_cqe_seen(&ring, cqe);
	ring_fake_end_from_thread(fake, 1, 0);
	CHECK_EQ(blkring_peek_batch_cqe(&ring, cqes, 4), 1);
	blkring_cq_advance(&ring, 1);
	/* cqe_seen(NULL) is a no-op, as liburing's. */
	blkring_cqe_seen(&ring, NULL);
	CHECK_EQ(*ring.cq.khead, 2);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-peek-batch", peek_batch, 0},
	    {"ring-peek-for-each-wraps", peek_for_each_wraps, 0},
	    {"ring-peek-runs-task-work", peek_runs_task_work, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
