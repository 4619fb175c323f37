// SPDX-License-Identifier: MIT
/* CQ overflow: nothing dropped, order kept, -EBUSY while it cannot flush. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static void small_ring(struct blkring *ring, unsigned sq, unsigned cq)
{
	struct blkring_params p = {.flags = BLKRING_SETUP_CQSIZE, .cq_entries = cq};

	CHECK_EQ(blkring_queue_init_params(sq, ring, &p), 0);
}

static void submit_nops(struct blkring *ring, unsigned n, uint64_t first)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(ring);

		blkring_prep_nop(sqe);
		sqe->user_data = first + i;
	}
	CHECK_EQ(blkring_submit(ring), n);
}

static void expect_next(struct blkring *ring, uint64_t *next)
{
	struct blkring_cqe cqe = ring_reap(ring);

	CHECK_EQ(cqe.user_data, *next);
	*next += 1;
}

static void overflow_nops(void)
{
	struct blkring ring;
	struct blkring_ring_stats st;
	uint64_t next = 0;

	small_ring(&ring, 8, 8);
	submit_nops(&ring, 8, 0);
	CHECK_EQ(*ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW, 0);
	submit_nops(&ring, 8, 8);
	CHECK_EQ(blkring_cq_ready(&ring), 8);
	CHECK(*ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW);
	CHECK_EQ(*ring.cq.koverflow, 8);
	CHECK_EQ(blkring_ring_stats(&ring, &st), 0);
	CHECK_EQ(st.overflowed, 8);

	/* No room to flush: submission refuses, leaving the SQE queued. */
	blkring_prep_nop(ring_sqe(&ring));
	ring.sq.sqes[(ring.sq.sqe_tail - 1) & ring.sq.ring_mask].user_data = 16;
	CHECK_EQ(blkring_submit(&ring), -EBUSY);
	CHECK_EQ(blkring_sq_ready(&ring), 1);

	/* Three slots free: three flushed, the rest still wait. */
	for (unsigned i = 0; i < 3; i++)
		expect_next(&ring, &next);
	CHECK_EQ(blkring_submit(&ring), -EBUSY);
	CHECK_EQ(blkring_cq_ready(&ring), 8);
	CHECK(*ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW);

	while (next < 16)
		expect_next(&ring, &next);
	CHECK_EQ(*ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	expect_next(&ring, &next);
	CHECK_EQ(*ring.cq.koverflow, 8);
	blkring_queue_exit(&ring);
}

/* Completions from another thread overflow the same way, in order. */
static void overflow_remote(void)
{
	enum { N = 64 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	static char buf[512];
	struct blkring ring;
	uint64_t next = 0;

	small_ring(&ring, 8, 8);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned i = 0; i < N; i += 8) {
		for (unsigned j = 0; j < 8; j++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
			sqe->user_data = i + j;
		}
		CHECK_EQ(blkring_submit(&ring), 8);
	}
	ring_fake_end_from_thread(fake, N, 0);
	while (next < N)
		expect_next(&ring, &next);
	CHECK_EQ(*ring.cq.koverflow, N - 8);
	CHECK_EQ(*ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW, 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Overflowed requests hold heap iovec copies; exit frees them (LeakSanitizer). */
static void overflow_exit_frees(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	static char buf[16][512];
	struct iovec iov[16];
	struct blkring ring;

	for (unsigned i = 0; i < 16; i++)
		iov[i] = (struct iovec){buf[i], sizeof(buf[i])};
	small_ring(&ring, 4, 4);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < 4; i++)
			blkring_prep_readv(ring_sqe(&ring), 0, iov, 16, 0);
		CHECK_EQ(blkring_submit(&ring), 4);
	}
	CHECK_EQ(*ring.cq.koverflow, 4);
	/* SQEs left unsubmitted by -EBUSY are simply dropped by exit. */
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), -EBUSY);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-overflow-nops", overflow_nops, 0},
	    {"ring-overflow-remote", overflow_remote, 0},
	    {"ring-overflow-exit-frees", overflow_exit_frees, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
