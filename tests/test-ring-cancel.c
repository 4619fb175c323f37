// SPDX-License-Identifier: MIT
/*
 * Cancel, as liburing's test/async-cancel.c uses it where it applies to
 * block I/O: by user_data, all, any and by device; every state the ring
 * holds a request in (armed timeout, drained, chain member not started,
 * queued for the worker pool, waiting for a device's tag, held by a
 * suspended volume) ends -ECANCELED; one on its device is -EALREADY;
 * nothing matched is -ENOENT; the synchronous form waits.
 */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static char buf[512];

static struct blkring_sqe *read_sqe(struct blkring *ring, uint64_t data, unsigned flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->user_data = data;
	sqe->flags = (uint8_t)flags;
	return sqe;
}

static int cancel(struct blkring *ring, uint64_t data, int flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);
	struct blkring_cqe cqe;

	blkring_prep_cancel64(sqe, data, flags);
	sqe->user_data = 1000;
	CHECK_EQ(blkring_submit(ring), 1);
	for (;;) {
		cqe = ring_reap(ring);
		if (cqe.user_data == 1000)
			return cqe.res;
		TEST_FAIL("unexpected CQE %llu res %d before the cancel's",
		          (unsigned long long)cqe.user_data, cqe.res);
	}
}

/* Running on its device: -EALREADY; a chain member behind it (and what
 * follows it) and an armed timeout: -ECANCELED; nothing: -ENOENT. */
static void cancel_states(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec far = {60, 0};
	struct blkring_sqe *sqe;
	struct blkring ring;
	struct blkring_cqe cqe;

	ring_fake_ring(&ring, 16, fake);
	read_sqe(&ring, 1, BLKRING_SQE_IO_LINK);
	read_sqe(&ring, 2, BLKRING_SQE_IO_LINK);
	read_sqe(&ring, 3, 0);
	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &far, 0, 0);
	sqe->user_data = 5;
	CHECK_EQ(blkring_submit(&ring), 4);
	CHECK_EQ(cancel(&ring, 99, 0), -ENOENT);
	CHECK_EQ(cancel(&ring, 1, 0), -EALREADY);
	blkring_prep_cancel64(ring_sqe(&ring), 2, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 2);
	CHECK_EQ(cqe.res, -ECANCELED);
	CHECK_EQ(ring_reap(&ring).res, -ECANCELED); /* 3 */
	CHECK_EQ(ring_reap(&ring).res, 0);          /* the cancel */
	blkring_prep_cancel64(ring_sqe(&ring), 5, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 5);
	CHECK_EQ(cqe.res, -ECANCELED);
	CHECK_EQ(ring_reap(&ring).res, 0);
	ring_fake_end_from_thread(fake, 1, 0);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 1);
	CHECK_EQ(cqe.res, sizeof(buf));
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A drained request (an SQE cancel would wait behind the drain too: the
 * synchronous form reaches it) and work queued for the worker pool. */
static void cancel_drained_and_queued(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_BLOCK);
	struct blkring_params p = {.wq_max_workers = 1};
	struct blkring_sync_cancel_reg reg = {.addr = 3, .timeout = {1, 0}};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(16, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	read_sqe(&ring, 1, BLKRING_SQE_ASYNC); /* holds the only worker */
	CHECK_EQ(blkring_submit(&ring), 1);
	ring_fake_wait_blocked(fake, 1);
	read_sqe(&ring, 2, BLKRING_SQE_ASYNC); /* queued behind it */
	read_sqe(&ring, 3, BLKRING_SQE_IO_DRAIN);
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(blkring_register_sync_cancel(&ring, &reg), 0);
	CHECK_EQ(ring_reap(&ring).user_data, 3);
	/* Requests after the drain still wait behind what came before it. */
	reg.addr = 2;
	CHECK_EQ(blkring_register_sync_cancel(&ring, &reg), 0);
	CHECK_EQ(ring_reap(&ring).res, -ECANCELED);
	ring_fake_unblock(fake);
	CHECK_EQ(ring_reap(&ring).user_data, 1);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* ALL counts what it ended; ANY matches everything; FD a device's. */
static void cancel_all_any_fd(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec far = {60, 0};
	struct blkring ring;
	struct blkring_sqe *sqe;

	ring_fake_ring(&ring, 16, fake);
	for (int i = 0; i < 3; i++) {
		sqe = ring_sqe(&ring);
		blkring_prep_timeout(sqe, &far, 0, 0);
		sqe->user_data = 7;
	}
	CHECK_EQ(blkring_submit(&ring), 3);
	blkring_prep_cancel64(ring_sqe(&ring), 7, BLKRING_ASYNC_CANCEL_ALL);
	ring_sqe(&ring)->user_data = 0; /* (a NOP SQE left zeroed) */
	CHECK_EQ(blkring_submit(&ring), 2);
	for (int i = 0; i < 5; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		if (cqe.user_data == 7)
			CHECK_EQ(cqe.res, -ECANCELED);
	}
	read_sqe(&ring, 8, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	sqe = ring_sqe(&ring);
	blkring_prep_cancel_fd(sqe, 0, 0);
	sqe->user_data = 1000;
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, -EALREADY);
	sqe = ring_sqe(&ring);
	blkring_prep_cancel_fd(sqe, 5, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, -EBADF);
	CHECK_EQ(cancel(&ring, 0, BLKRING_ASYNC_CANCEL_ANY), -EALREADY);
	ring_fake_end_from_thread(fake, 1, 0);
	CHECK_EQ(ring_reap(&ring).user_data, 8);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* The synchronous form: an armed timeout is cancelled at once; a running
 * read is waited for, up to the timeout. */
static void cancel_sync(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec far = {60, 0};
	struct blkring_sync_cancel_reg reg = {.addr = 5, .timeout = {0, 20 * 1000 * 1000}};
	struct blkring_sqe *sqe;
	struct blkring ring;

	ring_fake_ring(&ring, 16, fake);
	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &far, 0, 0);
	sqe->user_data = 5;
	read_sqe(&ring, 6, 0);
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(blkring_register_sync_cancel(&ring, &reg), 0);
	CHECK_EQ(ring_reap(&ring).res, -ECANCELED);
	reg.addr = 6;
	CHECK_EQ(blkring_register_sync_cancel(&ring, &reg), -ETIME);
	reg.addr = 77;
	CHECK_EQ(blkring_register_sync_cancel(&ring, &reg), -ENOENT);
	reg.flags = 1U << 7;
	CHECK_EQ(blkring_register_sync_cancel(&ring, &reg), -EINVAL);
	ring_fake_end_from_thread(fake, 1, 0);
	CHECK_EQ(ring_reap(&ring).user_data, 6);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static struct blkring_dev *open_dev(const char *spec)
{
	struct blkring_dev *dev = NULL;

	CHECK_EQ(blkring_dev_open(spec, &dev), 0);
	return dev;
}

static void ring_on(struct blkring *ring, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(16, ring, 0), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

/* Cancels data: its -ECANCELED comes first, then the cancel's 0. */
static void expect_cancelled(struct blkring *ring, uint64_t data)
{
	struct blkring_sqe *sqe = ring_sqe(ring);
	struct blkring_cqe cqe;

	blkring_prep_cancel64(sqe, data, 0);
	sqe->user_data = 1000;
	CHECK_EQ(blkring_submit(ring), 1);
	cqe = ring_reap(ring);
	CHECK_EQ(cqe.user_data, data);
	CHECK_EQ(cqe.res, -ECANCELED);
	cqe = ring_reap(ring);
	CHECK_EQ(cqe.user_data, 1000);
	CHECK_EQ(cqe.res, 0);
}

/* One tag: the second read waits for it and is taken back; the third,
 * queued behind it, then gets the tag the first frees. */
static void cancel_tag_wait(void)
{
	struct blkring_dev *dev =
	    open_dev("null:hw_queue_depth=1,irqmode=timer,completion_nsec=100000000");
	struct blkring ring;
	struct blkring_cqe cqe;

	ring_on(&ring, dev);
	read_sqe(&ring, 1, 0);
	read_sqe(&ring, 2, 0);
	read_sqe(&ring, 3, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	CHECK_EQ(cancel(&ring, 1, 0), -EALREADY);
	expect_cancelled(&ring, 2);
	for (uint64_t want = 1; want <= 3; want += 2) {
		cqe = ring_reap(&ring);
		CHECK_EQ(cqe.user_data, want);
		CHECK_EQ(cqe.res, sizeof(buf));
	}
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A suspended volume holds a read: the cancel ends it, and resuming
 * replays only what is left. */
static void cancel_suspended_volume(void)
{
	struct blkring_dev *vol = test_vol("0 2048 linear null:irqmode=none,size=1M 0\n", NULL);
	struct blkring ring;
	struct blkring_cqe cqe, *none;

	ring_on(&ring, vol);
	CHECK_EQ(blkring_vol_suspend(vol), 0);
	read_sqe(&ring, 1, 0);
	read_sqe(&ring, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 2);
	expect_cancelled(&ring, 1);
	CHECK_EQ(blkring_peek_cqe(&ring, &none), -EAGAIN);
	CHECK_EQ(blkring_vol_resume(vol), 0);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 2);
	CHECK_EQ(cqe.res, sizeof(buf));
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(vol), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-cancel-states", cancel_states, 20},
	    {"ring-cancel-drained-and-queued", cancel_drained_and_queued, 20},
	    {"ring-cancel-all-any-fd", cancel_all_any_fd, 20},
	    {"ring-cancel-sync", cancel_sync, 20},
	    {"ring-cancel-tag-wait", cancel_tag_wait, 20},
	    {"ring-cancel-suspended-volume", cancel_suspended_volume, 20},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
