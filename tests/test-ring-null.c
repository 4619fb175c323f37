// SPDX-License-Identifier: MIT
/* Rings over real null devices: each completion mode, queue depth, data,
 * errors, and the device's registration reference. */
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

static void *xaligned(size_t size)
{
	void *p = aligned_alloc(4096, size);

	CHECK(p);
	memset(p, 0, size);
	return p;
}

static void null_ring(struct blkring *ring, unsigned entries, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(entries, ring, 0), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

static void ring_close(struct blkring *ring, struct blkring_dev *dev)
{
	blkring_queue_exit(ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Reads at depth `qd`, `total` in all, reaping as they come. */
static void read_many(struct blkring *ring, char *buf, unsigned qd, unsigned total)
{
	unsigned submitted = 0, done = 0;

	while (done < total) {
		struct blkring_cqe *cqe;

		while (submitted < total && submitted - done < qd) {
			struct blkring_sqe *sqe = ring_sqe(ring);

			blkring_prep_read(sqe, 0, buf + (submitted % qd) * 4096, 4096,
			                  (uint64_t)(submitted * 7919 % 65536) * 4096);
			sqe->user_data = submitted++;
		}
		CHECK(blkring_submit(ring) >= 0);
		CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
		CHECK_EQ(cqe->res, 4096);
		blkring_cqe_seen(ring, cqe);
		done++;
	}
}

static void null_irqmode_none_inline(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=none");
	struct blkring ring;
	char *buf = xaligned(128 * 4096);

	null_ring(&ring, 128, dev);
	read_many(&ring, buf, 128, 10000);
	/* Completed inline on the owner: no task work, no sleep. */
	CHECK_EQ(stats(&ring).tw_run, 0);
	CHECK_EQ(stats(&ring).sleeps, 0);
	CHECK_EQ(stats(&ring).issued, 10000);
	ring_close(&ring, dev);
	free(buf);
}

static void null_irqmode_softirq(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq");
	struct blkring ring;
	char *buf = xaligned(64 * 4096);

	null_ring(&ring, 64, dev);
	read_many(&ring, buf, 64, 5000);
	/* Ended by the queue's completion thread: all of it task work. */
	CHECK_EQ(stats(&ring).tw_run, 5000);
	ring_close(&ring, dev);
	free(buf);
}

static void null_irqmode_timer(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=timer,completion_nsec=50000");
	struct blkring ring;
	char *buf = xaligned(16 * 4096);

	null_ring(&ring, 16, dev);
	read_many(&ring, buf, 16, 500);
	CHECK_EQ(stats(&ring).tw_run, 500);
	ring_close(&ring, dev);
	free(buf);
}

/* Beyond the queue depth, bios wait for tags; the owner does not block. */
static void null_queue_depth(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=timer,hw_queue_depth=2,completion_nsec=200000");
	struct blkring ring;
	char *buf = xaligned(64 * 4096);

	null_ring(&ring, 64, dev);
	for (unsigned i = 0; i < 64; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf + i * 4096, 4096, i * 4096);
	CHECK_EQ(blkring_submit(&ring), 64);
	CHECK_EQ(blkring_submit_and_wait(&ring, 64), 0);
	CHECK_EQ(blkring_cq_ready(&ring), 64);
	for (unsigned i = 0; i < 64; i++)
		CHECK_EQ(ring_reap(&ring).res, 4096);
	ring_close(&ring, dev);
	free(buf);
}

/* With tags taken, RWF_NOWAIT answers -EAGAIN instead of waiting. */
static void null_nowait_eagain(void)
{
	struct blkring_dev *dev =
	    test_open("null:irqmode=timer,hw_queue_depth=1,completion_nsec=100000000");
	struct blkring ring;
	struct blkring_sqe *sqe;
	struct blkring_cqe cqe;
	char *buf = xaligned(2 * 4096);

	null_ring(&ring, 4, dev);
	blkring_prep_read(ring_sqe(&ring), 0, buf, 4096, 0);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf + 4096, 4096, 4096);
	sqe->rw_flags = BLKRING_RWF_NOWAIT;
	sqe->user_data = 1;
	CHECK_EQ(blkring_submit(&ring), 2);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.user_data, 1);
	CHECK_EQ(cqe.res, -EAGAIN);
	CHECK_EQ(stats(&ring).punted, 0);
	CHECK_EQ(ring_reap(&ring).res, 4096);
	ring_close(&ring, dev);
	free(buf);
}

/* Data goes through: writes, vectored reads, FUA, flush. */
static void null_memory_backed_data(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq,memory_backed=1");
	struct blkring ring;
	struct blkring_sqe *sqe;
	char *wbuf = xaligned(8 * 4096), *rbuf = xaligned(8 * 4096);
	struct iovec iov[8];

	for (unsigned i = 0; i < 8 * 4096; i++)
		wbuf[i] = (char)(i * 31 + 7);
	null_ring(&ring, 16, dev);
	for (unsigned i = 0; i < 8; i++) {
		sqe = ring_sqe(&ring);
		blkring_prep_write(sqe, 0, wbuf + i * 4096, 4096, (1000 + i) * 4096ULL);
		sqe->rw_flags = i % 2 ? BLKRING_RWF_DSYNC : 0;
	}
	CHECK_EQ(blkring_submit_and_wait(&ring, 8), 8);
	for (unsigned i = 0; i < 8; i++)
		CHECK_EQ(ring_reap(&ring).res, 4096);
	blkring_prep_fsync(ring_sqe(&ring), 0, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, 0);
	/* Read back in reverse page order through one readv. */
	for (unsigned i = 0; i < 8; i++)
		iov[i] = (struct iovec){rbuf + (7 - i) * 4096, 4096};
	blkring_prep_readv(ring_sqe(&ring), 0, iov, 8, 1000 * 4096ULL);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, 8 * 4096);
	for (unsigned i = 0; i < 8; i++)
		CHECK(memcmp(rbuf + (7 - i) * 4096, wbuf + i * 4096, 4096) == 0);
	ring_close(&ring, dev);
	free(wbuf);
	free(rbuf);
}

/* A bad block fails its read with -EIO and cancels the rest of its chain. */
static void null_badblocks_link(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq,badblocks=16-23");
	struct blkring ring;
	char *buf = xaligned(4096);
	struct blkring_sqe *sqe;

	null_ring(&ring, 8, dev);
	for (unsigned i = 0; i < 4; i++) {
		sqe = ring_sqe(&ring);
		blkring_prep_read(sqe, 0, buf, 4096, i * 4096ULL);
		sqe->flags = i < 3 ? BLKRING_SQE_IO_LINK : 0;
		sqe->user_data = i;
	}
	CHECK_EQ(blkring_submit(&ring), 4);
	CHECK_EQ(ring_reap(&ring).res, 4096);
	CHECK_EQ(ring_reap(&ring).res, 4096);
	CHECK_EQ(ring_reap(&ring).res, -EIO);
	CHECK_EQ(ring_reap(&ring).res, -ECANCELED);
	ring_close(&ring, dev);
	free(buf);
}

/* A registered device's last close is refused until the ring lets go. */
static void null_close_registered(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=none");
	struct blkring ring;

	null_ring(&ring, 4, dev);
	CHECK_EQ(blkring_dev_close(dev), -EBUSY);
	CHECK_EQ(blkring_unregister_devices(&ring), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	blkring_queue_exit(&ring);
}

/* A submit batch takes tags for all its SQEs with its first bio; those its
 * failed SQEs never used go back when the batch ends. */
static void null_plug_returns_tags(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=1M,irqmode=timer,hw_queue_depth=8,completion_nsec=100000000");
	struct blkring ring;
	char *buf = xaligned(8 * 4096);

	null_ring(&ring, 8, dev);
	for (unsigned i = 0; i < 8; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf + i * 4096, 4096,
		                  i < 4 ? i * 4096 : (1 << 20) + i * 4096);
	CHECK_EQ(blkring_submit(&ring), 8);
	CHECK_EQ(blkring__dev_inflight(dev), 4); /* not 8: the rest went back */
	for (unsigned i = 0; i < 8; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK_EQ(cqe.res, cqe.res == -EINVAL ? -EINVAL : 4096);
	}
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	ring_close(&ring, dev);
	free(buf);
}

static void *ring_thread_main(void *arg);

/* Tags few and wanted by rings' batches and blocking calls at once: every
 * I/O ends, the tags a batch holds go to whoever waits. */
static void *blocking_reader(void *arg)
{
	char *buf = xaligned(4096);

	for (unsigned i = 0; i < 500; i++)
		CHECK_EQ(blkring_dev_pread(arg, buf, 4096, (uint64_t)(i % 64) * 4096), 4096);
	free(buf);
	return NULL;
}

static void null_plug_stress(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq,hw_queue_depth=4");
	pthread_t rings[3], reader;

	CHECK_EQ(pthread_create(&reader, NULL, blocking_reader, dev), 0);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_create(&rings[i], NULL, ring_thread_main, dev), 0);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_join(rings[i], NULL), 0);
	CHECK_EQ(pthread_join(reader, NULL), 0);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Several rings on one device, each with its own owner thread. */
static void *ring_thread_main(void *arg)
{
	struct blkring_dev *dev = arg;
	struct blkring ring;
	char *buf = xaligned(32 * 4096);

	null_ring(&ring, 32, dev);
	read_many(&ring, buf, 32, 2000);
	blkring_queue_exit(&ring);
	free(buf);
	return NULL;
}

static void null_rings_on_threads(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=softirq,submit_queues=2");
	pthread_t rt[3];

	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_create(&rt[i], NULL, ring_thread_main, dev), 0);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_join(rt[i], NULL), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-null-irqmode-none-inline", null_irqmode_none_inline, 0},
	    {"ring-null-irqmode-softirq", null_irqmode_softirq, 0},
	    {"ring-null-irqmode-timer", null_irqmode_timer, 0},
	    {"ring-null-queue-depth", null_queue_depth, 0},
	    {"ring-null-nowait-eagain", null_nowait_eagain, 0},
	    {"ring-null-memory-backed-data", null_memory_backed_data, 0},
	    {"ring-null-badblocks-link", null_badblocks_link, 0},
	    {"ring-null-close-registered", null_close_registered, 0},
	    {"ring-null-rings-on-threads", null_rings_on_threads, 0},
	    {"ring-null-plug-returns-tags", null_plug_returns_tags, 0},
	    {"ring-null-plug-stress", null_plug_stress, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
