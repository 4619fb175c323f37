// SPDX-License-Identifier: MIT
/* The registered device table: indexes, -EBADF, ring_refs, -EBUSY. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static int read_res(struct blkring *ring, int idx)
{
	static char buf[512];

	blkring_prep_read(ring_sqe(ring), idx, buf, sizeof(buf), 0);
	CHECK_EQ(blkring_submit(ring), 1);
	return ring_reap(ring).res;
}

static void devices_ebadf(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring_dev *table[3] = {fake->dev, NULL, fake->dev};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	/* Nothing registered yet. */
	CHECK_EQ(read_res(&ring, 0), -EBADF);
	CHECK_EQ(blkring_register_devices(&ring, table, 3), 0);
	CHECK_EQ(read_res(&ring, 0), 512);
	CHECK_EQ(read_res(&ring, 2), 512);
	CHECK_EQ(read_res(&ring, 1), -EBADF); /* an empty slot */
	CHECK_EQ(read_res(&ring, 3), -EBADF);
	CHECK_EQ(read_res(&ring, -1), -EBADF);
	CHECK_EQ(read_res(&ring, 1 << 30), -EBADF);
	blkring_prep_fsync(ring_sqe(&ring), 7, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, -EBADF);
	blkring_prep_cmd_discard(ring_sqe(&ring), 7, 0, 4096);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, -EBADF);
	/* Only the two valid reads reached the device. */
	CHECK_EQ(ring_fake_submitted(fake), 2);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void devices_register_errors(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_unregister_devices(&ring), -ENXIO);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 0), -EINVAL);
	CHECK_EQ(blkring_register_devices(&ring, NULL, 1), -EINVAL);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), -EBUSY);
	CHECK_EQ(blkring_unregister_devices(&ring), 0);
	CHECK_EQ(blkring_unregister_devices(&ring), -ENXIO);
	/* A new table after the old one went. */
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	CHECK_EQ(read_res(&ring, 0), 512);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void devices_ring_refs(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring_dev *twice[2] = {fake->dev, fake->dev};
	struct blkring r1, r2;

	CHECK_EQ(blkring_queue_init(8, &r1, 0), 0);
	CHECK_EQ(blkring_queue_init(8, &r2, 0), 0);
	CHECK_EQ(fake->dev->ring_refs, 0);
	CHECK_EQ(blkring_register_devices(&r1, twice, 2), 0);
	CHECK_EQ(fake->dev->ring_refs, 2);
	CHECK_EQ(blkring_register_devices(&r2, &fake->dev, 1), 0);
	CHECK_EQ(fake->dev->ring_refs, 3);
	CHECK_EQ(blkring_unregister_devices(&r1), 0);
	CHECK_EQ(fake->dev->ring_refs, 1);
	/* Exit unregisters. */
	blkring_queue_exit(&r2);
	CHECK_EQ(fake->dev->ring_refs, 0);
	blkring_queue_exit(&r1);
	ring_fake_destroy(fake);
}

static void devices_unregister_busy(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	static char buf[4096];
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	blkring_prep_read(ring_sqe(&ring), 0, buf, sizeof(buf), 4096);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(blkring_unregister_devices(&ring), -EBUSY);
	CHECK_EQ(fake->dev->ring_refs, 1);
	ring_fake_end_from_thread(fake, 1, 0);
	/* The completion is task work for this thread: unregister runs it first. */
	CHECK_EQ(blkring_unregister_devices(&ring), 0);
	CHECK_EQ(fake->dev->ring_refs, 0);
	CHECK_EQ(ring_reap(&ring).res, 4096);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Sparse tables and slot updates, with I/O in flight on other slots and on
 * the slot that changes (completions on a device thread: TSan watches). */
static void devices_sparse_update(void)
{
	struct blkring_dev *a = test_open("null:size=1M,irqmode=softirq,name=ua");
	struct blkring_dev *b = test_open("null:size=1M,irqmode=softirq,name=ub");
	struct blkring_dev *none = NULL;
	unsigned posted = 0, reaped = 0, ebadf = 0;
	int ret;
	static char data[4096];
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(64, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices_update(&ring, 0, &a, 1), -ENXIO);
	CHECK_EQ(blkring_register_devices_sparse(&ring, 0), -EINVAL);
	CHECK_EQ(blkring_register_devices_sparse(&ring, 4), 0);
	CHECK_EQ(blkring_register_devices_sparse(&ring, 4), -EBUSY);
	CHECK_EQ(blkring_register_devices_update(&ring, 3, (struct blkring_dev *[]){a, b}, 2),
	         -EINVAL);
	CHECK_EQ(blkring_register_devices_update(&ring, 0, &a, 1), 1);
	for (unsigned round = 0; round < 300; round++) {
		struct blkring_dev *next = round % 3 == 0 ? b : round % 3 == 1 ? a : none;
		struct blkring_cqe *cqe;
		unsigned head, n = 0;

		for (unsigned i = 0; i < 4; i++) {
			struct blkring_sqe *sqe = blkring_get_sqe(&ring);

			if (!sqe)
				break;
			blkring_prep_read(sqe, i % 2, data, 512, 0);
			sqe->user_data = i % 2;
			posted++;
		}
		ret = blkring_submit(&ring);
		if (ret < 0 && ret != -EBUSY)
			TEST_FAIL("submit: %d", ret);
		CHECK_EQ(blkring_register_devices_update(&ring, 1, &next, 1), 1);
		blkring_for_each_cqe (&ring, head, cqe) {
			CHECK(cqe->res == 512 || (cqe->user_data == 1 && cqe->res == -EBADF));
			ebadf += cqe->res == -EBADF;
			n++;
		}
		blkring_cq_advance(&ring, n);
		reaped += n;
	}
	while (reaped < posted) {
		struct blkring_cqe *cqe;

		CHECK(blkring_submit(&ring) >= 0 || blkring_cq_ready(&ring)); /* what -EBUSY left */
		CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		ebadf += cqe->res == -EBADF;
		blkring_cqe_seen(&ring, cqe);
		reaped++;
	}
	CHECK(ebadf > 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(b), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-devices-ebadf", devices_ebadf, 0},
	    {"ring-devices-register-errors", devices_register_errors, 0},
	    {"ring-devices-ring-refs", devices_ring_refs, 0},
	    {"ring-devices-unregister-busy", devices_unregister_busy, 0},
	    {"ring-devices-sparse-update", devices_sparse_update, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
