// SPDX-License-Identifier: MIT
/*
 * Timeouts, as liburing's test/timeout.c and test/link-timeout.c use them
 * where they apply to block I/O: relative, absolute and count, removal and
 * update, linked timeouts that cancel a request the ring still holds or
 * answer -EALREADY for one on its device, on every ring kind, on the fake
 * device, a slow null device and a file.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

static char buf[512];

static struct __kernel_timespec ms(long n)
{
	return (struct __kernel_timespec){n / 1000, (n % 1000) * 1000000LL};
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void ring_of(struct blkring *ring, unsigned flags)
{
	struct blkring_params p = {.flags = flags, .sq_thread_idle = 10};

	CHECK_EQ(blkring_queue_init_params(16, ring, &p), 0);
}

static struct blkring_cqe next(struct blkring *ring)
{
	struct blkring_cqe *cqe, copy;

	CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
	copy = *cqe;
	blkring_cqe_seen(ring, cqe);
	return copy;
}

/* A relative timeout fires in its time, an absolute one at it; with a count
 * that is reached first it completes 0. */
static void timeouts(unsigned flags)
{
	struct __kernel_timespec rel = ms(30), abs, far = ms(10000);
	struct blkring_sqe *sqe;
	struct blkring_cqe cqe;
	struct blkring ring;
	struct timespec now;
	uint64_t start;

	ring_of(&ring, flags);
	start = now_ms();
	blkring_prep_timeout(ring_sqe(&ring), &rel, 0, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	cqe = next(&ring);
	CHECK_EQ(cqe.res, -ETIME);
	CHECK(now_ms() - start >= 29 && now_ms() - start < 2000);

	clock_gettime(CLOCK_MONOTONIC, &now);
	abs = (struct __kernel_timespec){now.tv_sec, now.tv_nsec + 20000000LL};
	if (abs.tv_nsec >= 1000000000LL) {
		abs.tv_nsec -= 1000000000LL;
		abs.tv_sec++;
	}
	blkring_prep_timeout(ring_sqe(&ring), &abs, 0, BLKRING_TIMEOUT_ABS);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(next(&ring).res, -ETIME);

	/* A count of 2: two NOPs complete it with 0, long before its time. */
	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &far, 2, 0);
	sqe->user_data = 7;
	CHECK_EQ(blkring_submit(&ring), 1);
	blkring_prep_nop(ring_sqe(&ring));
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 2);
	for (int i = 0; i < 3; i++) {
		cqe = next(&ring);
		if (cqe.user_data == 7)
			CHECK_EQ(cqe.res, 0);
	}
	blkring_queue_exit(&ring);
}

static void timeout_plain(void)
{
	timeouts(0);
}

static void timeout_defer(void)
{
	timeouts(BLKRING_SETUP_DEFER_TASKRUN);
}

static void timeout_sqpoll(void)
{
	timeouts(BLKRING_SETUP_SQPOLL);
}

static void timeout_iopoll(void)
{
	timeouts(BLKRING_SETUP_IOPOLL);
}

/* Removal answers -ECANCELED on the timeout and 0 on itself; an update
 * moves its time; an unknown one is -ENOENT; bad timespecs are -EINVAL. */
static void timeout_remove_update(void)
{
	struct __kernel_timespec far = ms(10000), soon = ms(10), bad = {0, 1000000000LL};
	struct blkring_sqe *sqe;
	struct blkring_cqe cqe;
	struct blkring ring;

	ring_of(&ring, 0);
	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &far, 0, 0);
	sqe->user_data = 1;
	CHECK_EQ(blkring_submit(&ring), 1);
	sqe = ring_sqe(&ring);
	blkring_prep_timeout_remove(sqe, 1, 0);
	sqe->user_data = 2;
	CHECK_EQ(blkring_submit(&ring), 1);
	for (int i = 0; i < 2; i++) {
		cqe = next(&ring);
		CHECK_EQ(cqe.res, cqe.user_data == 1 ? -ECANCELED : 0);
	}
	blkring_prep_timeout_remove(ring_sqe(&ring), 1, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(next(&ring).res, -ENOENT);

	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &far, 0, 0);
	sqe->user_data = 3;
	sqe = ring_sqe(&ring);
	blkring_prep_timeout_update(sqe, &soon, 3, 0);
	sqe->user_data = 4;
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(next(&ring).user_data, 4);
	cqe = next(&ring);
	CHECK_EQ(cqe.user_data, 3);
	CHECK_EQ(cqe.res, -ETIME);

	blkring_prep_timeout(ring_sqe(&ring), &bad, 0, 0);
	blkring_prep_timeout(ring_sqe(&ring), NULL, 0, 0);
	blkring_prep_timeout(ring_sqe(&ring), &far, 0,
	                     BLKRING_TIMEOUT_BOOTTIME | BLKRING_TIMEOUT_REALTIME);
	CHECK_EQ(blkring_submit(&ring), 3);
	CHECK_EQ(next(&ring).res, -EINVAL);
	CHECK_EQ(next(&ring).res, -EFAULT);
	CHECK_EQ(next(&ring).res, -EINVAL);
	blkring_queue_exit(&ring);
}

/* Exit ends a timeout that has not fired with -ECANCELED, without waiting. */
static void timeout_exit(void)
{
	struct __kernel_timespec far = ms(60000);
	struct blkring ring;
	uint64_t start = now_ms();

	ring_of(&ring, 0);
	blkring_prep_timeout(ring_sqe(&ring), &far, 0, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	blkring_queue_exit(&ring);
	CHECK(now_ms() - start < 5000);
}

/* A request then its linked timeout: the request ends first (-ECANCELED
 * on the timeout), or the timeout fires on one the device holds
 * (-EALREADY, the request ends as it will), or on one queued for the
 * worker pool (-ETIME, the request -ECANCELED). */
static void link_timeout(unsigned flags)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec far = ms(10000), soon = ms(20);
	struct blkring_sqe *sqe;
	struct blkring_cqe cqe;
	struct blkring ring;

	ring_of(&ring, flags);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = BLKRING_SQE_IO_LINK;
	sqe->user_data = 1;
	sqe = ring_sqe(&ring);
	blkring_prep_link_timeout(sqe, &far, 0);
	sqe->user_data = 2;
	CHECK_EQ(blkring_submit(&ring), 2);
	ring_fake_end_from_thread(fake, 1, 0);
	cqe = next(&ring);
	CHECK_EQ(cqe.user_data, 1);
	CHECK_EQ(cqe.res, sizeof(buf));
	cqe = next(&ring);
	CHECK_EQ(cqe.user_data, 2);
	CHECK_EQ(cqe.res, -ECANCELED);

	/* On the device: the timeout cannot call it back. */
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = BLKRING_SQE_IO_LINK;
	sqe->user_data = 3;
	sqe = ring_sqe(&ring);
	blkring_prep_link_timeout(sqe, &soon, 0);
	sqe->user_data = 4;
	CHECK_EQ(blkring_submit(&ring), 2);
	cqe = next(&ring);
	CHECK_EQ(cqe.user_data, 4);
	CHECK_EQ(cqe.res, -EALREADY);
	ring_fake_end_from_thread(fake, 1, 0);
	cqe = next(&ring);
	CHECK_EQ(cqe.user_data, 3);
	CHECK_EQ(cqe.res, sizeof(buf));
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void link_timeout_plain(void)
{
	link_timeout(0);
}

static void link_timeout_defer(void)
{
	link_timeout(BLKRING_SETUP_DEFER_TASKRUN);
}

static void link_timeout_sqpoll(void)
{
	link_timeout(BLKRING_SETUP_SQPOLL);
}

/* Queued for the worker pool behind a blocked worker: the timeout takes it
 * back (-ETIME), the request gets -ECANCELED, the rest of its chain too. */
static void link_timeout_cancels_queued(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_BLOCK);
	struct blkring_params p = {.wq_max_workers = 1};
	struct __kernel_timespec soon = ms(20);
	struct blkring_sqe *sqe;
	struct blkring ring;
	int seen[4] = {0};

	CHECK_EQ(blkring_queue_init_params(16, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	sqe = ring_sqe(&ring); /* holds the only worker */
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = BLKRING_SQE_ASYNC;
	sqe->user_data = 0;
	CHECK_EQ(blkring_submit(&ring), 1);
	ring_fake_wait_blocked(fake, 1);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = BLKRING_SQE_ASYNC | BLKRING_SQE_IO_LINK;
	sqe->user_data = 1;
	sqe = ring_sqe(&ring);
	blkring_prep_link_timeout(sqe, &soon, 0);
	sqe->flags = BLKRING_SQE_IO_LINK;
	sqe->user_data = 2;
	sqe = ring_sqe(&ring);
	blkring_prep_nop(sqe);
	sqe->user_data = 3;
	CHECK_EQ(blkring_submit(&ring), 3);
	for (int i = 0; i < 3; i++) {
		struct blkring_cqe cqe = next(&ring);

		CHECK(cqe.user_data >= 1 && cqe.user_data <= 3);
		seen[cqe.user_data] = cqe.res;
	}
	CHECK_EQ(seen[1], -ECANCELED);
	CHECK_EQ(seen[2], -ETIME);
	CHECK_EQ(seen[3], -ECANCELED);
	ring_fake_unblock(fake);
	CHECK_EQ(next(&ring).user_data, 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A linked read and timeout on dev: the read that ends first cancels its
 * timeout; with a slow device, the timeout that fires first answers
 * -EALREADY and the read completes as it will. */
static void link_timeout_on(struct blkring_dev *dev, unsigned flags, bool slow)
{
	struct __kernel_timespec far = ms(10000), soon = ms(5);
	struct blkring_sqe *sqe;
	struct blkring ring;
	struct blkring_cqe cqe;

	ring_of(&ring, flags);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int pass = 0; pass < (slow ? 2 : 1); pass++) {
		sqe = ring_sqe(&ring);
		blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
		sqe->flags = BLKRING_SQE_IO_LINK;
		sqe->user_data = 1;
		sqe = ring_sqe(&ring);
		blkring_prep_link_timeout(sqe, pass ? &soon : &far, 0);
		sqe->user_data = 2;
		CHECK_EQ(blkring_submit(&ring), 2);
		cqe = next(&ring);
		CHECK_EQ(cqe.user_data, pass ? 2 : 1);
		CHECK_EQ(cqe.res, pass ? -EALREADY : (int)sizeof(buf));
		cqe = next(&ring);
		CHECK_EQ(cqe.user_data, pass ? 1 : 2);
		CHECK_EQ(cqe.res, pass ? (int)sizeof(buf) : -ECANCELED);
	}
	blkring_queue_exit(&ring);
}

static const unsigned ring_kinds[] = {0, BLKRING_SETUP_DEFER_TASKRUN, BLKRING_SETUP_SQPOLL,
                                      BLKRING_SETUP_IOPOLL};

/* A null device that completes each I/O 50 ms after it came (and polls). */
static void link_timeout_slow_null(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=timer,completion_nsec=50000000,poll_queues=1");

	for (unsigned i = 0; i < ARRAY_SIZE(ring_kinds); i++)
		link_timeout_on(dev, ring_kinds[i], true);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Waits for all n CQEs at once (no CQE in between takes the owner back into
 * the ring), within 1 s though the wait allows 5; returns user_data 7's res. */
static int wait_all(struct blkring *ring, unsigned n)
{
	struct __kernel_timespec limit = ms(5000);
	struct blkring_cqe *cqe;
	uint64_t start = now_ms();
	int res = 1;

	CHECK_EQ(blkring_wait_cqes(ring, &cqe, n, &limit, NULL), 0);
	CHECK(now_ms() - start < 1000);
	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(blkring_peek_cqe(ring, &cqe), 0);
		if (cqe->user_data == 7)
			res = cqe->res;
		blkring_cqe_seen(ring, cqe);
	}
	return res;
}

/* A device whose reads end on its thread, 20 ms after they start. */
static void slow_ring(struct blkring *ring, struct blkring_dev **dev)
{
	*dev = test_open("null:irqmode=timer,completion_nsec=20000000");
	ring_of(ring, 0);
	CHECK_EQ(blkring_register_devices(ring, dev, 1), 0);
}

/* A drained absolute timeout long past starts when the read before it
 * ends, inside the wait that would sleep next: it fires before that sleep. */
static void timeout_abs_past_at_start(void)
{
	struct __kernel_timespec zero = {0, 0};
	struct blkring_sqe *sqe;
	struct blkring_dev *dev;
	struct blkring ring;

	slow_ring(&ring, &dev);
	blkring_prep_read(ring_sqe(&ring), 0, buf, sizeof(buf), 0);
	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &zero, 0, BLKRING_TIMEOUT_ABS);
	sqe->flags |= BLKRING_SQE_IO_DRAIN;
	sqe->user_data = 7;
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(wait_all(&ring, 2), -ETIME);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A count completed by a CQE posted after the timeouts were looked at (the
 * NOP a read's end starts, in the same entry) ends the timeout before the
 * owner sleeps again, not at its time. */
static void timeout_count_at_start(void)
{
	struct __kernel_timespec far = ms(10000);
	struct blkring_sqe *sqe;
	struct blkring_dev *dev;
	struct blkring ring;

	slow_ring(&ring, &dev);
	sqe = ring_sqe(&ring);
	blkring_prep_timeout(sqe, &far, 2, 0);
	sqe->user_data = 7;
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags |= BLKRING_SQE_IO_LINK;
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 3);
	CHECK_EQ(wait_all(&ring, 3), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A file through the kernel's io_uring: its reads end first. */
static void link_timeout_file(void)
{
	char path[] = "/tmp/blkring-lt.XXXXXX", spec[80];
	int fd = mkstemp(path);
	struct blkring_dev *dev;

	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 1 << 20), 0);
	close(fd);
	/* Buffered: the shared buffer is not aligned for O_DIRECT. */
	snprintf(spec, sizeof(spec), "file:%s,direct=0", path);
	dev = test_open(spec);
	for (unsigned i = 0; i < ARRAY_SIZE(ring_kinds); i++)
		link_timeout_on(dev, ring_kinds[i], false);
	CHECK_EQ(blkring_dev_close(dev), 0);
	unlink(path);
}

/* A read waiting for the device's only tag has not reached the device: its
 * linked timeout cancels it (-ETIME), and the read ahead of it completes. */
static void link_timeout_cancels_tag_wait(void)
{
	struct blkring_dev *dev = NULL;
	struct __kernel_timespec soon = ms(20);
	struct blkring_sqe *sqe;
	struct blkring ring;
	int seen[3] = {0};

	CHECK_EQ(
	    blkring_dev_open("null:hw_queue_depth=1,irqmode=timer,completion_nsec=300000000", &dev),
	    0);
	ring_of(&ring, 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->user_data = 0;
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	sqe->flags = BLKRING_SQE_IO_LINK;
	sqe->user_data = 1;
	sqe = ring_sqe(&ring);
	blkring_prep_link_timeout(sqe, &soon, 0);
	sqe->user_data = 2;
	CHECK_EQ(blkring_submit(&ring), 3);
	for (int i = 0; i < 3; i++) {
		struct blkring_cqe cqe = next(&ring);

		CHECK(cqe.user_data <= 2);
		seen[cqe.user_data] = cqe.res;
		if (i < 2)
			CHECK(cqe.user_data != 0); /* the timeout came long before */
	}
	CHECK_EQ(seen[0], sizeof(buf));
	CHECK_EQ(seen[1], -ECANCELED);
	CHECK_EQ(seen[2], -ETIME);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-timeout-plain", timeout_plain, 20},
	    {"ring-timeout-defer", timeout_defer, 20},
	    {"ring-timeout-sqpoll", timeout_sqpoll, 20},
	    {"ring-timeout-iopoll", timeout_iopoll, 20},
	    {"ring-timeout-remove-update", timeout_remove_update, 20},
	    {"ring-timeout-exit", timeout_exit, 20},
	    {"ring-timeout-abs-past-at-start", timeout_abs_past_at_start, 20},
	    {"ring-timeout-count-at-start", timeout_count_at_start, 20},
	    {"ring-link-timeout-plain", link_timeout_plain, 20},
	    {"ring-link-timeout-defer", link_timeout_defer, 20},
	    {"ring-link-timeout-sqpoll", link_timeout_sqpoll, 20},
	    {"ring-link-timeout-cancels-queued", link_timeout_cancels_queued, 20},
	    {"ring-link-timeout-cancels-tag-wait", link_timeout_cancels_tag_wait, 20},
	    {"ring-link-timeout-slow-null", link_timeout_slow_null, 20},
	    {"ring-link-timeout-file", link_timeout_file, 20},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
