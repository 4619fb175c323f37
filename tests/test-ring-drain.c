// SPDX-License-Identifier: MIT
/* IO_DRAIN: a drained request starts after everything before it completed,
 * and nothing after it starts before it completed. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static char buf[4096];

static void drain_sqe(struct blkring *ring, int op, uint64_t data, unsigned flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	if (op == BLKRING_OP_NOP)
		blkring_prep_nop(sqe);
	else
		blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->user_data = data;
	sqe->flags = (uint8_t)flags;
}

static void expect(struct blkring *ring, uint64_t data)
{
	struct blkring_cqe cqe = ring_reap(ring);

	CHECK_EQ(cqe.user_data, data);
	CHECK(cqe.res >= 0);
}

static void expect_none(struct blkring *ring)
{
	struct blkring_cqe *cqe;

	CHECK_EQ(blkring_peek_cqe(ring, &cqe), -EAGAIN);
}

static void drain_waits_for_earlier(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	drain_sqe(&ring, BLKRING_OP_READ, 0, 0);
	drain_sqe(&ring, BLKRING_OP_READ, 1, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 2, BLKRING_SQE_IO_DRAIN);
	drain_sqe(&ring, BLKRING_OP_NOP, 3, 0);
	CHECK_EQ(blkring_submit(&ring), 4);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 1);
	expect(&ring, 2);
	expect(&ring, 3);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void drain_holds_later(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	/* Nothing before it: the drained read starts at once. */
	drain_sqe(&ring, BLKRING_OP_READ, 0, BLKRING_SQE_IO_DRAIN);
	drain_sqe(&ring, BLKRING_OP_READ, 1, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	expect_none(&ring);
	/* Later submissions queue behind it too. */
	drain_sqe(&ring, BLKRING_OP_NOP, 3, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0);
	CHECK_EQ(ring_fake_submitted(fake), 2);
	expect(&ring, 2);
	expect(&ring, 3);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 1);
	/* Drain over: a plain request runs at once again. */
	drain_sqe(&ring, BLKRING_OP_NOP, 4, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(blkring_cq_ready(&ring), 1);
	expect(&ring, 4);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Two drains: each is a barrier on both sides. */
static void drain_two_barriers(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	drain_sqe(&ring, BLKRING_OP_READ, 0, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 1, BLKRING_SQE_IO_DRAIN);
	drain_sqe(&ring, BLKRING_OP_NOP, 2, 0);
	drain_sqe(&ring, BLKRING_OP_READ, 3, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 4, BLKRING_SQE_IO_DRAIN);
	drain_sqe(&ring, BLKRING_OP_NOP, 5, 0);
	CHECK_EQ(blkring_submit(&ring), 6);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0);
	expect(&ring, 1);
	expect(&ring, 2);
	CHECK_EQ(ring_fake_submitted(fake), 2);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 3);
	expect(&ring, 4);
	expect(&ring, 5);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A drain flag on a chain member drains the whole chain. */
static void drain_on_chain(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	drain_sqe(&ring, BLKRING_OP_READ, 0, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 1, BLKRING_SQE_IO_LINK);
	drain_sqe(&ring, BLKRING_OP_NOP, 2, BLKRING_SQE_IO_DRAIN);
	CHECK_EQ(blkring_submit(&ring), 3);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0);
	expect(&ring, 1);
	expect(&ring, 2);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Invalid SQEs after a drain wait their turn too: their CQEs keep order. */
static void drain_failed_prep_keeps_order(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct blkring_cqe cqe;

	ring_fake_ring(&ring, 8, fake);
	drain_sqe(&ring, BLKRING_OP_READ, 0, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 1, BLKRING_SQE_IO_DRAIN);
	drain_sqe(&ring, BLKRING_OP_NOP, 2, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 3, 0);
	ring.sq.sqes[3].opcode = 200;
	CHECK_EQ(blkring_submit(&ring), 4);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0);
	expect(&ring, 1);
	expect(&ring, 2);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 3);
	CHECK_EQ(cqe.res, -EINVAL);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A drained chain with a member that fails prep never starts, so it
 * drains nothing: it ends at once and later requests do not wait. */
static void drain_failed_chain_drains_nothing(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct blkring_cqe cqe;

	ring_fake_ring(&ring, 8, fake);
	drain_sqe(&ring, BLKRING_OP_READ, 0, 0);
	drain_sqe(&ring, BLKRING_OP_NOP, 1, BLKRING_SQE_IO_DRAIN | BLKRING_SQE_IO_LINK);
	drain_sqe(&ring, BLKRING_OP_NOP, 2, 0);
	ring.sq.sqes[2].opcode = 200;
	drain_sqe(&ring, BLKRING_OP_NOP, 3, 0);
	CHECK_EQ(blkring_submit(&ring), 4);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 1);
	CHECK_EQ(cqe.res, -ECANCELED);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 2);
	CHECK_EQ(cqe.res, -EINVAL);
	expect(&ring, 3);
	expect_none(&ring);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-drain-waits-for-earlier", drain_waits_for_earlier, 0},
	    {"ring-drain-holds-later", drain_holds_later, 0},
	    {"ring-drain-two-barriers", drain_two_barriers, 0},
	    {"ring-drain-on-chain", drain_on_chain, 0},
	    {"ring-drain-failed-prep-keeps-order", drain_failed_prep_keeps_order, 0},
	    {"ring-drain-failed-chain-drains-nothing", drain_failed_chain_drains_nothing, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
