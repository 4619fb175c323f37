// SPDX-License-Identifier: MIT
/* The probe says which opcodes exist, as io_uring's; the wait helpers. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static void probe_lists_opcodes(void)
{
	static const int have[] = {
	    BLKRING_OP_NOP,         BLKRING_OP_READV,          BLKRING_OP_WRITEV,
	    BLKRING_OP_FSYNC,       BLKRING_OP_READ_FIXED,     BLKRING_OP_WRITE_FIXED,
	    BLKRING_OP_READ,        BLKRING_OP_WRITE,          BLKRING_OP_URING_CMD,
	    BLKRING_OP_TIMEOUT,     BLKRING_OP_TIMEOUT_REMOVE, BLKRING_OP_LINK_TIMEOUT,
	    BLKRING_OP_ASYNC_CANCEL};
	struct blkring_probe *p = blkring_get_probe();
	struct blkring ring;
	unsigned n = 0;

	CHECK(p);
	CHECK_EQ(p->last_op, BLKRING_OP_LAST - 1);
	for (unsigned i = 0; i < ARRAY_SIZE(have); i++)
		CHECK(blkring_opcode_supported(p, have[i]));
	for (int op = 0; op <= p->last_op; op++)
		n += (unsigned)blkring_opcode_supported(p, op);
	CHECK_EQ(n, ARRAY_SIZE(have));
	CHECK(!blkring_opcode_supported(p, 6));   /* IORING_OP_POLL_ADD */
	CHECK(!blkring_opcode_supported(p, 255)); /* beyond last_op */
	CHECK(!blkring_opcode_supported(p, -1));
	blkring_free_probe(p);
	CHECK(blkring_get_probe_ring(NULL) == NULL);
	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	p = blkring_get_probe_ring(&ring);
	CHECK(p && blkring_opcode_supported(p, BLKRING_OP_READ));
	blkring_free_probe(p);
	blkring_queue_exit(&ring);
}

/* wait_cqe_nr, submit_and_wait_timeout and cq_has_overflow, as liburing's. */
static void wait_helpers(void)
{
	struct blkring_params p = {.flags = BLKRING_SETUP_CQSIZE, .cq_entries = 4};
	struct __kernel_timespec ts = {0, 10 * 1000 * 1000};
	struct blkring_cqe *cqe;
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(4, &ring, &p), 0);
	for (unsigned i = 0; i < 3; i++)
		blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit_and_wait_timeout(&ring, &cqe, 3, &ts, NULL), 3);
	CHECK(cqe);
	CHECK_EQ(blkring_wait_cqe_nr(&ring, &cqe, 3), 0);
	CHECK_EQ(blkring_submit_and_wait_timeout(&ring, &cqe, 4, &ts, NULL), -ETIME);
	CHECK(!blkring_cq_has_overflow(&ring));
	for (unsigned i = 0; i < 4; i++)
		blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 4); /* 7 CQEs for a CQ of 4 */
	CHECK(blkring_cq_has_overflow(&ring));
	blkring_cq_advance(&ring, 4);
	CHECK_EQ(blkring_wait_cqe_nr(&ring, &cqe, 3), 0);
	CHECK(!blkring_cq_has_overflow(&ring));
	blkring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-probe-lists-opcodes", probe_lists_opcodes, 0},
	    {"ring-wait-helpers", wait_helpers, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
