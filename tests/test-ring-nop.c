// SPDX-License-Identifier: MIT
/* NOP round trips: user_data and results come back, once each, in order. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static void nop_one(void)
{
	struct blkring ring;
	struct blkring_sqe *sqe;
	struct blkring_cqe *cqe;
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	sqe = blkring_get_sqe(&ring);
	CHECK(sqe);
	blkring_prep_nop(sqe);
	blkring_sqe_set_data64(sqe, 0x1234567890abcdefULL);
	CHECK_EQ(blkring_sq_ready(&ring), 1);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(blkring_sq_ready(&ring), 0);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), 0);
	CHECK_EQ(cqe->user_data, 0x1234567890abcdefULL);
	CHECK_EQ(cqe->res, 0);
	CHECK_EQ(cqe->flags, 0);
	blkring_cqe_seen(&ring, cqe);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	CHECK(cqe == NULL);
	CHECK_EQ(blkring_ring_stats(&ring, &st), 0);
	CHECK_EQ(st.issued, 1);
	CHECK_EQ(st.tw_run, 0);
	CHECK_EQ(st.workers, 0);
	blkring_queue_exit(&ring);
}

static void nop_full_sq(void)
{
	struct blkring ring;
	static int data[16];

	CHECK_EQ(blkring_queue_init(16, &ring, 0), 0);
	for (unsigned round = 0; round < 100; round++) {
		for (unsigned i = 0; i < 16; i++) {
			struct blkring_sqe *sqe = blkring_get_sqe(&ring);

			CHECK(sqe);
			blkring_prep_nop(sqe);
			blkring_sqe_set_data(sqe, &data[i]);
		}
		CHECK(blkring_get_sqe(&ring) == NULL);
		CHECK_EQ(blkring_sq_space_left(&ring), 0);
		CHECK_EQ(blkring_submit_and_wait(&ring, 16), 16);
		CHECK_EQ(blkring_cq_ready(&ring), 16);
		for (unsigned i = 0; i < 16; i++) {
			struct blkring_cqe *cqe;

			CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
			CHECK(blkring_cqe_get_data(cqe) == &data[i]);
			CHECK_EQ(cqe->res, 0);
			blkring_cqe_seen(&ring, cqe);
		}
	}
	blkring_queue_exit(&ring);
}

static void nop_submit_nothing(void)
{
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	CHECK_EQ(blkring_submit(&ring), 0);
	CHECK_EQ(blkring_submit_and_wait(&ring, 0), 0);
	blkring_queue_exit(&ring);
}

/* Half the SQEs are published, then the rest: each submit takes what is new. */
static void nop_partial_batches(void)
{
	struct blkring ring;
	uint64_t next = 0;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	for (unsigned i = 0; i < 1000; i++) {
		unsigned n = 1 + i % 8;

		for (unsigned j = 0; j < n; j++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_nop(sqe);
			sqe->user_data = next + j;
		}
		CHECK_EQ(blkring_submit(&ring), n);
		for (unsigned j = 0; j < n; j++) {
			struct blkring_cqe *cqe;

			CHECK_EQ(blkring_peek_cqe(&ring, &cqe), 0);
			CHECK_EQ(cqe->user_data, next++);
			blkring_cqe_seen(&ring, cqe);
		}
	}
	blkring_queue_exit(&ring);
}

static void nop_bad_opcode_and_flags(void)
{
	struct blkring ring;
	struct blkring_sqe *sqe;
	struct blkring_cqe *cqe;
	static const uint8_t bad_ops[] = {6, 21, 45, BLKRING_OP_LAST, 255};

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	for (unsigned i = 0; i < sizeof(bad_ops); i++) {
		sqe = ring_sqe(&ring);
		blkring_prep_nop(sqe);
		sqe->opcode = bad_ops[i];
		sqe->user_data = i;
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		CHECK_EQ(cqe->user_data, i);
		CHECK_EQ(cqe->res, -EINVAL);
		blkring_cqe_seen(&ring, cqe);
	}
	/* SQE flag bits blkring does not know (BUFFER_SELECT, bit 7). */
	for (unsigned bit = 0; bit < 8; bit++) {
		if ((1U << bit) &
		    (BLKRING_SQE_FIXED_FILE | BLKRING_SQE_IO_DRAIN | BLKRING_SQE_IO_LINK |
		     BLKRING_SQE_IO_HARDLINK | BLKRING_SQE_ASYNC | BLKRING_SQE_CQE_SKIP_SUCCESS))
			continue;
		sqe = ring_sqe(&ring);
		blkring_prep_nop(sqe);
		sqe->flags = (uint8_t)(1U << bit);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		CHECK_EQ(cqe->res, -EINVAL);
		blkring_cqe_seen(&ring, cqe);
	}
	blkring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-nop-one", nop_one, 0},
	    {"ring-nop-full-sq", nop_full_sq, 0},
	    {"ring-nop-submit-nothing", nop_submit_nothing, 0},
	    {"ring-nop-partial-batches", nop_partial_batches, 0},
	    {"ring-nop-bad-opcode-and-flags", nop_bad_opcode_and_flags, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
