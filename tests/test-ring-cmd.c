// SPDX-License-Identifier: MIT
/* Commands on rings (BLKRING_OP_URING_CMD): the SQE copied into the
 * request, the non-blocking first issue, the invisible punt to a worker,
 * one CQE per command. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ring-fake.h"
#include "test.h"

static struct blkring_ring_stats stats(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st;
}

static void null_ring(struct blkring *ring, unsigned entries, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(entries, ring, 0), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

static int run(struct blkring *ring)
{
	CHECK_EQ(blkring_submit(ring), 1);
	return ring_reap(ring).res;
}

static void fill(struct blkring *ring, char byte, uint64_t off, unsigned len)
{
	char *buf = aligned_alloc(4096, len);

	CHECK(buf);
	memset(buf, byte, len);
	blkring_prep_write(ring_sqe(ring), 0, buf, len, off);
	CHECK_EQ(run(ring), (int)len);
	free(buf);
}

/* Every byte of [off, off + len) equals `byte`. */
static void expect_bytes(struct blkring *ring, char byte, uint64_t off, unsigned len)
{
	char *buf = aligned_alloc(4096, len);

	CHECK(buf);
	blkring_prep_read(ring_sqe(ring), 0, buf, len, off);
	CHECK_EQ(run(ring), (int)len);
	for (unsigned i = 0; i < len; i++)
		if (buf[i] != byte)
			TEST_FAIL("byte %llu is %d, expected %d", (unsigned long long)off + i,
			          buf[i], byte);
	free(buf);
}

/* One bio's worth: issued inline, no worker. */
static void cmd_discard_inline(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq,memory_backed=1,discard=1");
	struct blkring ring;

	null_ring(&ring, 8, dev);
	fill(&ring, 0x5a, 0, 64 << 10);
	blkring_prep_cmd_discard(ring_sqe(&ring), 0, 4096, 8192);
	CHECK_EQ(run(&ring), 0);
	CHECK_EQ(stats(&ring).punted, 0);
	CHECK_EQ(stats(&ring).workers, 0);
	expect_bytes(&ring, 0x5a, 0, 4096);
	expect_bytes(&ring, 0, 4096, 8192);
	expect_bytes(&ring, 0x5a, 12288, 4096);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* More than one bio: -EAGAIN before anything is issued, then a worker does
 * it; the caller sees one CQE with success. */
static void cmd_discard_punted(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=softirq,memory_backed=1,discard=1,max_discard_sectors=8");
	struct blkring ring;

	null_ring(&ring, 8, dev);
	fill(&ring, 0x33, 0, 256 << 10);
	blkring_prep_cmd_discard(ring_sqe(&ring), 0, 64 << 10, 128 << 10);
	CHECK_EQ(run(&ring), 0);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	CHECK_EQ(stats(&ring).punted, 1);
	CHECK_EQ(stats(&ring).async, 1);
	expect_bytes(&ring, 0x33, 0, 64 << 10);
	expect_bytes(&ring, 0, 64 << 10, 128 << 10);
	expect_bytes(&ring, 0x33, 192 << 10, 64 << 10);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* The application reuses the SQE slot at once: the punted command still
 * runs with what it was submitted with. */
static void cmd_sqe_copied(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=softirq,memory_backed=1,discard=1,max_discard_sectors=8");
	struct blkring ring;
	struct blkring_sqe *sqe;

	null_ring(&ring, 1, dev);
	fill(&ring, 0x11, 0, 64 << 10);
	sqe = ring_sqe(&ring);
	blkring_prep_cmd_discard(sqe, 0, 0, 32 << 10);
	sqe->user_data = 1;
	CHECK_EQ(blkring_submit(&ring), 1);
	/* The one slot again, scribbled over while the worker may still run. */
	CHECK(ring_sqe(&ring) == sqe);
	memset(sqe, 0xff, sizeof(*sqe));
	blkring_prep_nop(sqe);
	sqe->user_data = 2;
	CHECK_EQ(blkring_submit(&ring), 1);
	for (unsigned i = 0; i < 2; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK_EQ(cqe.res, 0);
	}
	CHECK_EQ(stats(&ring).punted, 1);
	expect_bytes(&ring, 0, 0, 32 << 10);
	expect_bytes(&ring, 0x11, 32 << 10, 32 << 10);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A chained multi-bio discard where one child hits a bad block: one CQE,
 * carrying the child's -EIO. */
static void cmd_discard_child_fails(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=softirq,memory_backed=1,discard=1,max_discard_sectors=8,"
	              "badblocks=40-47");
	struct blkring ring;
	struct blkring_cqe *cqe;

	null_ring(&ring, 8, dev);
	blkring_prep_cmd_discard(ring_sqe(&ring), 0, 0, 64 << 10);
	CHECK_EQ(run(&ring), -EIO);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	CHECK_EQ(stats(&ring).punted, 1);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Write zeroes without the device's offload: zero pages, from a worker. */
static void cmd_write_zeroes_fallback(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq,memory_backed=1");
	struct blkring ring;

	null_ring(&ring, 8, dev);
	fill(&ring, 0x77, 0, 32 << 10);
	blkring_prep_cmd_write_zeroes(ring_sqe(&ring), 0, 4096, 16 << 10, 0);
	CHECK_EQ(run(&ring), 0);
	CHECK_EQ(stats(&ring).punted, 1);
	expect_bytes(&ring, 0x77, 0, 4096);
	expect_bytes(&ring, 0, 4096, 16 << 10);
	expect_bytes(&ring, 0x77, 20 << 10, 12 << 10);
	blkring_prep_cmd_write_zeroes(ring_sqe(&ring), 0, 0, 4096, BLKRING_ZERO_NOFALLBACK);
	CHECK_EQ(run(&ring), -EOPNOTSUPP);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* The block layer's checks come back as the command's CQE, in Linux's order,
 * and a failed command stops its chain like any request. */
static void cmd_errors(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=none");
	struct blkring ring;
	struct blkring_sqe *sqe;

	null_ring(&ring, 8, dev);
	/* No discard on this device, but the unused field is checked first. */
	sqe = ring_sqe(&ring);
	blkring_prep_cmd_discard(sqe, 0, 0, 4096);
	sqe->len = 1;
	CHECK_EQ(run(&ring), -EINVAL);
	blkring_prep_cmd_discard(ring_sqe(&ring), 0, 0, 4096);
	CHECK_EQ(run(&ring), -EOPNOTSUPP);
	sqe = ring_sqe(&ring);
	blkring_prep_cmd_discard(sqe, 0, 0, 4096);
	sqe->cmd_op = 0x1201;
	CHECK_EQ(run(&ring), -EINVAL);

	sqe = ring_sqe(&ring);
	blkring_prep_cmd_discard(sqe, 0, 0, 4096);
	sqe->flags = BLKRING_SQE_IO_LINK;
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(ring_reap(&ring).res, -EOPNOTSUPP);
	CHECK_EQ(ring_reap(&ring).res, -ECANCELED);
	CHECK_EQ(stats(&ring).punted, 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* ASYNC commands start on a worker, blocking, with no punt. */
static void cmd_async(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=softirq,memory_backed=1,discard=1,max_discard_sectors=8");
	struct blkring ring;
	struct blkring_sqe *sqe;

	null_ring(&ring, 8, dev);
	sqe = ring_sqe(&ring);
	blkring_prep_cmd_discard(sqe, 0, 0, 64 << 10);
	sqe->flags = BLKRING_SQE_ASYNC;
	CHECK_EQ(run(&ring), 0);
	CHECK_EQ(stats(&ring).punted, 0);
	CHECK_EQ(stats(&ring).async, 1);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-cmd-discard-inline", cmd_discard_inline, 0},
	    {"ring-cmd-discard-punted", cmd_discard_punted, 0},
	    {"ring-cmd-sqe-copied", cmd_sqe_copied, 0},
	    {"ring-cmd-discard-child-fails", cmd_discard_child_fails, 0},
	    {"ring-cmd-write-zeroes-fallback", cmd_write_zeroes_fallback, 0},
	    {"ring-cmd-errors", cmd_errors, 0},
	    {"ring-cmd-async", cmd_async, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
