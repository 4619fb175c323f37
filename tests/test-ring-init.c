// SPDX-License-Identifier: MIT
/* Ring setup: sizes, parameters, and every error setup answers. */
#include <errno.h>
#include <string.h>

#include "test.h"

static void init_sizes(void)
{
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(100, &ring, 0), 0);
	CHECK_EQ(ring.sq.ring_entries, 128);
	CHECK_EQ(ring.sq.ring_mask, 127);
	CHECK_EQ(ring.cq.ring_entries, 256);
	CHECK_EQ(ring.cq.ring_mask, 255);
	CHECK_EQ(*ring.sq.khead, 0);
	CHECK_EQ(*ring.sq.ktail, 0);
	CHECK_EQ(*ring.sq.kflags, 0);
	CHECK_EQ(*ring.cq.koverflow, 0);
	CHECK_EQ(blkring_sq_space_left(&ring), 128);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	blkring_queue_exit(&ring);
	CHECK(ring.ctx == NULL);
	/* A second exit of the same ring does nothing. */
	blkring_queue_exit(&ring);

	CHECK_EQ(blkring_queue_init(1, &ring, 0), 0);
	CHECK_EQ(ring.sq.ring_entries, 1);
	CHECK_EQ(ring.cq.ring_entries, 2);
	blkring_queue_exit(&ring);

	CHECK_EQ(blkring_queue_init(32768, &ring, 0), 0);
	CHECK_EQ(ring.sq.ring_entries, 32768);
	CHECK_EQ(ring.cq.ring_entries, 65536);
	blkring_queue_exit(&ring);
}

static void init_params_out(void)
{
	struct blkring_params p;
	struct blkring ring;

	memset(&p, 0, sizeof(p));
	p.flags = BLKRING_SETUP_CQSIZE | BLKRING_SETUP_SINGLE_ISSUER;
	p.cq_entries = 1000;
	CHECK_EQ(blkring_queue_init_params(64, &ring, &p), 0);
	CHECK_EQ(p.sq_entries, 64);
	CHECK_EQ(p.cq_entries, 1024);
	CHECK_EQ(ring.cq.ring_entries, 1024);
	CHECK_EQ(ring.flags, BLKRING_SETUP_CQSIZE | BLKRING_SETUP_SINGLE_ISSUER);
	blkring_queue_exit(&ring);

	/* Without CQSIZE, cq_entries is output only. */
	memset(&p, 0, sizeof(p));
	p.cq_entries = 7;
	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(p.cq_entries, 16);
	blkring_queue_exit(&ring);
}

static void expect_einval(unsigned entries, struct blkring_params *p, const char *msg)
{
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(entries, &ring, p), -EINVAL);
	if (!strstr(blkring_last_error(), msg))
		TEST_FAIL("message '%s' lacks '%s'", blkring_last_error(), msg);
}

static void init_errors(void)
{
	struct blkring_params p;

	memset(&p, 0, sizeof(p));
	expect_einval(0, &p, "entries 0");
	expect_einval(32769, &p, "entries 32769");

	p.flags = BLKRING_SETUP_CQSIZE;
	p.cq_entries = 0;
	expect_einval(8, &p, "cq_entries 0");
	p.cq_entries = 65537;
	expect_einval(8, &p, "cq_entries 65537");
	p.cq_entries = 4;
	expect_einval(8, &p, "smaller than the SQ");

	memset(&p, 0, sizeof(p));
	p.flags = 1U << 29;
	expect_einval(8, &p, "unknown flags");
	p.flags = BLKRING_SETUP_SQPOLL | BLKRING_SETUP_DEFER_TASKRUN;
	expect_einval(8, &p, "cannot be combined");

	memset(&p, 0, sizeof(p));
	p.resv[3] = 1;
	expect_einval(8, &p, "resv[3]");

	memset(&p, 0, sizeof(p));
	p.wq_max_workers = 100000;
	expect_einval(8, &p, "wq_max_workers");
}

static void init_many_rings(void)
{
	struct blkring rings[16];

	for (unsigned i = 0; i < 16; i++)
		CHECK_EQ(blkring_queue_init(256, &rings[i], 0), 0);
	for (unsigned i = 0; i < 16; i++)
		blkring_queue_exit(&rings[i]);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-init-sizes", init_sizes, 0},
	    {"ring-init-params-out", init_params_out, 0},
	    {"ring-init-errors", init_errors, 0},
	    {"ring-init-many-rings", init_many_rings, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
