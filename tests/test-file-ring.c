// SPDX-License-Identifier: MIT
/*
 * file devices on rings: each ring gets its own kernel io_uring for the
 * device, flushed once per submit batch and reaped in the ring's enter and
 * wait; the owner sleeps inside the kernel ring, which also watches an
 * eventfd that task work signals; commands, registered buffers, exit and unregister.
 */
#include <pthread.h>
#include <signal.h>

#include "drivers/file.h"
#include "ring/ring.h"
#include "test-file-util.h"

static struct blkring_sqe *sqe_of(struct blkring *ring)
{
	struct blkring_sqe *sqe = blkring_get_sqe(ring);

	CHECK(sqe);
	return sqe;
}

/* Waits for one CQE and returns its result (user_data must match). */
static int reap_one(struct blkring *ring, uint64_t user_data)
{
	struct blkring_cqe *cqe;
	int res;

	CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
	CHECK_EQ(cqe->user_data, user_data);
	res = cqe->res;
	blkring_cqe_seen(ring, cqe);
	return res;
}

static struct file_ring_queue *queue_of(struct blkring *ring, struct blkring_dev *dev)
{
	struct blkring_ioc_queue *link = blkring__ioc_find(&ring->ctx->ioc, dev);

	return link ? container_of(link, struct file_ring_queue, link) : NULL;
}

#define BATCH 32

/* A batch of writes, a flush and a read: one submit each, every CQE right. */
static void ring_roundtrip(struct blkring_dev *dev, uint64_t seed)
{
	struct blkring ring;
	struct blkring_sqe *sqe;
	char *buf = tf_alloc(BATCH * 4096);

	CHECK_EQ(blkring_queue_init(64, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	CHECK(!queue_of(&ring, dev)); /* made on the first I/O */
	tf_fill(buf, BATCH * 4096, 0, seed);
	for (int i = 0; i < BATCH; i++)
		blkring_prep_write(sqe_of(&ring), 0, buf + i * 4096, 4096, (uint64_t)i * 4096);
	CHECK_EQ(blkring_submit(&ring), BATCH);
	CHECK(queue_of(&ring, dev));
	for (int i = 0; i < BATCH; i++)
		CHECK_EQ(reap_one(&ring, 0), 4096);
	memset(buf, 0, BATCH * 4096);
	blkring_prep_fsync(sqe_of(&ring), 0, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 0);
	sqe = sqe_of(&ring);
	blkring_prep_read(sqe, 0, buf, BATCH * 4096, 0);
	sqe->user_data = 7;
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 7), BATCH * 4096);
	CHECK(tf_check_pattern(buf, BATCH * 4096, 0, seed));
	CHECK_EQ(blkring_unregister_devices(&ring), 0);
	CHECK(!ring.ctx->ioc.queues); /* the per-ring queue went with the table */
	blkring_queue_exit(&ring);
	free(buf);
}

static void test_tmpfs(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "ring.img"));

	ring_roundtrip(dev, 21);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/*
 * Whether the ring's owner (or SQ thread) has slept.  On a loaded machine
 * the loop device's worker can preempt the owner inside its submit and
 * finish each I/O before it waits, so the tests that need a sleep run
 * their batch up to MAX_BATCHES times, and skip when none slept.
 */
#define MAX_BATCHES 8
#define NO_SLEEP "the device finished every I/O of 8 batches before the owner waited"

static bool ring_slept(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st.sleeps > 0;
}

/* A loop device completes from interrupts: the owner sleeps on its kernel ring. */
static void test_loop_sleeps(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct blkring ring;
	char *buf = tf_alloc(1 << 20);

	ring_roundtrip(dev, 22);
	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int batch = 0; batch < MAX_BATCHES && !ring_slept(&ring); batch++) {
		for (int i = 0; i < 16; i++) {
			blkring_prep_read(sqe_of(&ring), 0, buf, 1 << 20, (uint64_t)i << 20);
			CHECK_EQ(blkring_submit(&ring), 1);
			CHECK_EQ(reap_one(&ring, 0), 1 << 20);
		}
	}
	if (!ring_slept(&ring))
		SKIP(NO_SLEEP);
	CHECK(ring.ctx->ioc.wake_fd >= 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Reads from the second device alone, then from both at once. */
static void two_devices_batch(struct blkring *ring, char *buf)
{
	for (int i = 0; i < 16; i++) {
		blkring_prep_read(sqe_of(ring), 1, buf, 1 << 20, (uint64_t)i << 20);
		CHECK_EQ(blkring_submit(ring), 1);
		CHECK_EQ(reap_one(ring, 0), 1 << 20);
	}
	for (int i = 0; i < 16; i++) {
		blkring_prep_read(sqe_of(ring), (unsigned)i & 1, buf, 1 << 20, (uint64_t)i << 20);
		blkring_prep_read(sqe_of(ring), (unsigned)(i + 1) & 1, buf + (1 << 20), 1 << 20,
		                  (uint64_t)i << 20);
		CHECK_EQ(blkring_submit(ring), 2);
		CHECK_EQ(reap_one(ring, 0), 1 << 20);
		CHECK_EQ(reap_one(ring, 0), 1 << 20);
	}
}

/* A ring with two devices has two kernel rings; the owner sleeps in the
 * first (the primary), and the second's completions still wake it: through
 * the ring's eventfd where the kernel rings defer task work, through its
 * own descriptor in ppoll() where they do not. */
static void two_devices_sleep(unsigned flags)
{
	struct blkring_dev *devs[2] = {tf_open("%s", tf_loop(0)), tf_open("%s", tf_loop(1))};
	struct blkring ring;
	char *buf = tf_alloc(2 << 20);
	int batch = 0;

	CHECK_EQ(blkring_queue_init(8, &ring, flags), 0);
	CHECK_EQ(blkring_register_devices(&ring, devs, 2), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 4096);
	/* At least once: the second device must take I/O, slept or not. */
	do
		two_devices_batch(&ring, buf);
	while (++batch < MAX_BATCHES && !ring_slept(&ring));
	if (!ring_slept(&ring))
		SKIP(NO_SLEEP);
	CHECK(queue_of(&ring, devs[0])->primary);
	CHECK(!queue_of(&ring, devs[1])->primary);
	CHECK_EQ(queue_of(&ring, devs[1])->q.defer, !!(flags & BLKRING_SETUP_DEFER_TASKRUN));
	CHECK_EQ(queue_of(&ring, devs[1])->signals, queue_of(&ring, devs[1])->q.defer);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(devs[0]), 0);
	CHECK_EQ(blkring_dev_close(devs[1]), 0);
	free(buf);
}

static void test_two_devices_sleep(void)
{
	two_devices_sleep(0);
}

static void test_two_devices_sleep_defer(void)
{
	two_devices_sleep(BLKRING_SETUP_DEFER_TASKRUN);
}

/* Beyond the tags bios wait and go to the shared queue: they end on its
 * reaper thread, as task work that wakes the owner through its eventfd.
 * (The multishot poll that watches it may end, when the tiny kernel CQ
 * overflows, and is armed again at the next sleep.) */
static void test_task_work_wakes(void)
{
	struct blkring_dev *dev = tf_open("file:%s,hw_queue_depth=2,spin_nsec=0", tf_loop(0));
	struct blkring_ring_stats st;
	struct blkring ring;
	char *buf = tf_alloc(16 * 65536);

	CHECK_EQ(blkring_queue_init(16, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int batch = 0; batch < MAX_BATCHES && !ring_slept(&ring); batch++) {
		for (int i = 0; i < 16; i++)
			blkring_prep_read(sqe_of(&ring), 0, buf + i * 65536, 65536,
			                  (uint64_t)i * 65536);
		CHECK_EQ(blkring_submit(&ring), 16);
		for (int i = 0; i < 16; i++)
			CHECK_EQ(reap_one(&ring, 0), 65536);
		CHECK_EQ(blkring_ring_stats(&ring, &st), 0);
		CHECK(st.tw_run > 0);
	}
	if (!ring_slept(&ring))
		SKIP(NO_SLEEP);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Discard and write zeroes as ring commands, on a loop device. */
static void test_loop_commands(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct blkring ring;
	char *buf = tf_alloc(65536);

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	tf_fill(buf, 65536, 0, 6);
	blkring_prep_write(sqe_of(&ring), 0, buf, 65536, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 65536);
	blkring_prep_cmd_discard(sqe_of(&ring), 0, 0, 8192);
	blkring_prep_cmd_write_zeroes(sqe_of(&ring), 0, 16384, 8192, BLKRING_ZERO_NOUNMAP);
	blkring_prep_cmd_write_zeroes(sqe_of(&ring), 0, 32768, 8192, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(reap_one(&ring, 0), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 65536, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 65536);
	CHECK(tf_is_zero(buf, 8192));
	CHECK(tf_check_pattern(buf + 8192, 8192, 8192, 6));
	CHECK(tf_is_zero(buf + 16384, 8192));
	CHECK(tf_check_pattern(buf + 24576, 8192, 24576, 6));
	CHECK(tf_is_zero(buf + 32768, 8192));
	CHECK(tf_check_pattern(buf + 40960, 65536 - 40960, 40960, 6));
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Registered buffers: the kernel ring gets them; other devices see plain
 * reads and writes; io_uring's errors.  An SQPOLL ring registers them from
 * the application's thread, as io_uring and fio do. */
static void fixed_buffers(unsigned flags)
{
	struct blkring_params p = {.flags = flags, .sq_thread_idle = 10};
	struct blkring_dev *devs[2] = {tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "fixed.img")),
	                               tf_open("null:memory_backed=1,size=1M,irqmode=0")};
	char *a = tf_alloc(65536), *b = tf_alloc(65536);
	struct iovec iov[2] = {{a, 65536}, {b, 65536}};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, devs, 2), 0);
	CHECK_EQ(blkring_unregister_buffers(&ring), -ENXIO);
	CHECK_EQ(blkring_register_buffers(&ring, iov, 0), -EINVAL);
	CHECK_EQ(blkring_register_buffers(&ring, iov, 2), 0);
	CHECK_EQ(blkring_register_buffers(&ring, iov, 2), -EBUSY);
	for (int d = 0; d < 2; d++) {
		tf_fill(a + 8192, 16384, 4096, 30 + d);
		blkring_prep_write_fixed(sqe_of(&ring), d, a + 8192, 16384, 4096, 0);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(reap_one(&ring, 0), 16384);
		memset(b, 0, 16384);
		blkring_prep_read_fixed(sqe_of(&ring), d, b, 16384, 4096, 1);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(reap_one(&ring, 0), 16384);
		CHECK(tf_check_pattern(b, 16384, 4096, 30 + d));
	}
	if (!(flags & BLKRING_SETUP_SQPOLL)) /* else the SQ thread's */
		CHECK(queue_of(&ring, devs[0])->q.fixed_bufs);
	/* An index beyond the table, a range beyond the buffer. */
	blkring_prep_read_fixed(sqe_of(&ring), 0, b, 4096, 0, 2);
	blkring_prep_read_fixed(sqe_of(&ring), 0, b + 65536 - 2048, 4096, 0, 1);
	blkring_prep_read_fixed(sqe_of(&ring), 0, a, 4096, 0, 1);
	CHECK_EQ(blkring_submit(&ring), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(reap_one(&ring, 0), -EFAULT);
	CHECK_EQ(blkring_unregister_buffers(&ring), 0);
	blkring_prep_read_fixed(sqe_of(&ring), 0, b, 4096, 0, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), -EFAULT);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(devs[0]), 0);
	CHECK_EQ(blkring_dev_close(devs[1]), 0);
	free(a);
	free(b);
}

static void test_fixed_buffers(void)
{
	fixed_buffers(0);
}

static void test_fixed_buffers_sqpoll(void)
{
	fixed_buffers(BLKRING_SETUP_SQPOLL);
}

struct ring_thread {
	struct blkring_dev *dev;
	int id;
};

static void *ring_thread(void *arg)
{
	struct ring_thread *t = arg;
	struct blkring ring;
	char *buf = tf_alloc(65536);

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &t->dev, 1), 0);
	for (int i = 0; i < 64; i++) {
		uint64_t off = ((uint64_t)t->id * 64 + i) * 65536;

		tf_fill(buf, 65536, off, 40);
		blkring_prep_write(sqe_of(&ring), 0, buf, 65536, off);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(reap_one(&ring, 0), 65536);
		blkring_prep_read(sqe_of(&ring), 0, buf, 65536, off);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(reap_one(&ring, 0), 65536);
		CHECK(tf_check_pattern(buf, 65536, off, 40));
	}
	blkring_queue_exit(&ring);
	free(buf);
	return NULL;
}

/* The kernel's io-wq workers of this thread (they are named after it). */
static int io_workers_now(void)
{
	char name[32];

	snprintf(name, sizeof(name), "iou-wrk-%ld\n", (long)gettid());
	return test_threads_with("comm", name);
}

/* Reads tmpfs cannot do without blocking go to the thread's io-wq, and
 * io_workers=1 keeps it at one worker however many are punted at once. */
static void test_io_workers(void)
{
	struct blkring_dev *dev =
	    tf_open("file:%s,size=4M,io_workers=1", tf_path(tf.shm_dir, "workers.img"));
	struct blkring ring;
	char *buf = tf_alloc(64 * 4096);
	int most = 0;

	CHECK_EQ(blkring_queue_init(64, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 64; i++)
			blkring_prep_read(sqe_of(&ring), 0, buf + i * 4096, 4096,
			                  (uint64_t)i * 4096);
		CHECK_EQ(blkring_submit(&ring), 64);
		for (int i = 0; i < 64; i++) {
			CHECK_EQ(reap_one(&ring, 0), 4096);
			if (io_workers_now() > most)
				most = io_workers_now();
		}
	}
	CHECK_EQ(most, 1);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Reads tmpfs does in microseconds: with I/O in flight the owner watches
 * the kernel ring (spin_nsec) and sees each one come without sleeping. */
static void test_spin_watches(void)
{
	struct blkring_dev *dev =
	    tf_open("file:%s,size=2M,spin_nsec=1000000000", tf_path(tf.shm_dir, "spin.img"));
	struct blkring_ring_stats st;
	struct blkring ring;
	char *buf = tf_alloc(8 * 4096);

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int round = 0; round < 64; round++) {
		for (int i = 0; i < 8; i++)
			blkring_prep_read(sqe_of(&ring), 0, buf + i * 4096, 4096,
			                  (uint64_t)(round * 8 + i) * 4096);
		CHECK_EQ(blkring_submit(&ring), 8);
		for (int i = 0; i < 8; i++)
			CHECK_EQ(reap_one(&ring, 0), 4096);
	}
	CHECK_EQ(blkring_ring_stats(&ring, &st), 0);
	CHECK_EQ(st.sleeps, 0);
	CHECK_EQ(queue_of(&ring, dev)->q.inflight, 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* A watch that finds nothing makes the next sleeps start at once, counting
 * down: here the device is made to look busy with nothing to come, and
 * each wait ends at its timeout. */
static void test_spin_backs_off(void)
{
	struct blkring_dev *dev =
	    tf_open("file:%s,size=1M,spin_nsec=1000", tf_path(tf.shm_dir, "backoff.img"));
	struct __kernel_timespec ts = {0, 1000000};
	struct file_ring_queue *rq;
	unsigned first;
	struct blkring_cqe *cqe;
	struct blkring ring;
	char *buf = tf_alloc(4096);

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 4096);
	rq = queue_of(&ring, dev);
	rq->q.inflight = 1;
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	first = rq->spin_skip; /* a wait may sleep more than once */
	CHECK(first > 0 && first <= FILE_SPIN_BACKOFF);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK(rq->spin_skip < first);
	rq->q.inflight = 0;
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* devs[0] watches for a second (spin_nsec) and is made to look busy with
 * nothing to come; reads of devs[1] end each watch with their completion,
 * so none runs out and backs off. */
static void spin_ends_early(struct blkring_dev *devs[2])
{
	struct file_ring_queue *rq;
	struct blkring ring;
	char *buf = tf_alloc(4096);

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, devs, 2), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 4096);
	rq = queue_of(&ring, devs[0]);
	CHECK(rq->primary);
	rq->q.inflight = 1;
	for (int i = 0; i < 4; i++) {
		blkring_prep_read(sqe_of(&ring), 1, buf, 4096, 0);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(reap_one(&ring, 0), 4096);
		CHECK_EQ(rq->spin_skip, 0);
	}
	rq->q.inflight = 0;
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(devs[0]), 0);
	CHECK_EQ(blkring_dev_close(devs[1]), 0);
	free(buf);
}

/* Task work ends the watch: a null device's completion, pushed by its
 * completion thread. */
static void test_spin_ends_for_task_work(void)
{
	struct blkring_dev *devs[2] = {
	    tf_open("file:%s,size=1M,spin_nsec=1000000000", tf_path(tf.shm_dir, "spintw.img")),
	    test_open("null:irqmode=softirq")};

	spin_ends_early(devs);
}

/* The watch looks at all of the ring's kernel rings: a second file
 * device's completion ends it. */
static void test_spin_sees_other_devices(void)
{
	struct blkring_dev *devs[2] = {
	    tf_open("file:%s,size=1M,spin_nsec=1000000000", tf_path(tf.shm_dir, "spin-a.img")),
	    tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "spin-b.img"))};

	spin_ends_early(devs);
}

/* Two rings on one device from two threads: two kernel rings, no lock. */
static void test_two_rings(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct ring_thread t[2] = {{dev, 0}, {dev, 1}};
	pthread_t tid[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&tid[i], NULL, ring_thread, &t[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct signaller {
	struct blkring *ring;
	pthread_t target;
};

static void *signal_when_asleep(void *arg)
{
	struct signaller *s = arg;
	struct blkring_ring_stats st;

	do {
		usleep(1000);
		CHECK_EQ(blkring_ring_stats(s->ring, &st), 0);
	} while (st.sleeps < 2);
	pthread_kill(s->target, SIGUSR1);
	return NULL;
}

/* Sleeping on the kernel ring keeps the ring's wait semantics: a timeout is
 * -ETIME, a signal handler -EINTR. */
static void test_wait_semantics(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct sigaction sa = {.sa_handler = on_usr1};
	struct __kernel_timespec ts = {0, 20 * 1000 * 1000};
	struct blkring ring;
	struct blkring_cqe *cqe;
	struct signaller s = {&ring, pthread_self()};
	char *buf = tf_alloc(4096);
	pthread_t t;

	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 4096);
	CHECK(ring.ctx->ioc.queues);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK_EQ(pthread_create(&t, NULL, signal_when_asleep, &s), 0);
	CHECK_EQ(blkring_wait_cqe(&ring, &cqe), -EINTR);
	CHECK_EQ(pthread_join(t, NULL), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Exit waits for what the kernel still holds, then frees the queue. */
static void test_exit_in_flight(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct blkring ring;
	char *buf = tf_alloc(8 << 20);

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int i = 0; i < 8; i++)
		blkring_prep_read(sqe_of(&ring), 0, buf + (i << 20), 1 << 20, (uint64_t)i << 20);
	CHECK_EQ(blkring_submit(&ring), 8);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static volatile sig_atomic_t usr1_count;

static void count_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

/* A ring with file devices sleeps in its kernel rings; a wait with a
 * signal mask sleeps in ppoll() instead, which sets the mask atomically:
 * a pending SIGUSR1 the mask lets through ends it. */
static void test_sigmask_wait(void)
{
	const char *path = tf_path(tf.shm_dir, "sigmask");
	struct sigaction sa = {.sa_handler = count_usr1};
	struct __kernel_timespec ts = {0, 20 * 1000 * 1000};
	struct blkring_dev *dev;
	struct blkring_cqe *cqe;
	struct blkring ring;
	sigset_t usr1, during;
	char *buf = tf_alloc(4096);

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	dev = tf_open("%s", path);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &during), 0);
	sigdelset(&during, SIGUSR1);
	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 4096); /* the device's kernel ring exists */
	CHECK_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK_EQ(usr1_count, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, &during), -EINTR);
	CHECK_EQ(usr1_count, 1);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Chains of a read, a write and an fsync, CHAINS of them, on `dev`. */
#define CHAINS 4
static void chains_submit(struct blkring *ring, struct blkring_dev *dev, char *buf)
{
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
	for (unsigned i = 0; i < CHAINS; i++) {
		char *b = buf + ((size_t)i << 16);
		uint64_t off = (uint64_t)i << 16;
		struct blkring_sqe *sqe = sqe_of(ring);

		blkring_prep_read(sqe, 0, b, 1 << 16, off);
		sqe->flags = BLKRING_SQE_IO_LINK;
		sqe->user_data = i * 3;
		sqe = sqe_of(ring);
		blkring_prep_write(sqe, 0, b, 1 << 16, off);
		sqe->flags = BLKRING_SQE_IO_LINK;
		sqe->user_data = i * 3 + 1;
		sqe = sqe_of(ring);
		blkring_prep_fsync(sqe, 0, 0);
		sqe->user_data = i * 3 + 2;
	}
	CHECK_EQ(blkring_submit(ring), 3 * CHAINS);
}

static struct blkring_dev *chain_dev(bool loop)
{
	const char *path = tf_path(tf.shm_dir, "chain");

	if (loop)
		return tf_open("%s", tf_loop(1));
	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	return tf_open("%s", path);
}

/* Exit with chains in flight whose heads are file I/O returns: a flush that
 * reaps a head starts its next link, so nothing sleeps with a link ready. */
static void exit_with_chains(unsigned flags, bool loop)
{
	struct blkring_dev *dev = chain_dev(loop);
	struct blkring ring;
	char *buf = tf_alloc(CHAINS << 16);

	CHECK_EQ(blkring_queue_init(4 * CHAINS, &ring, flags), 0);
	chains_submit(&ring, dev, buf);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* The same chains waited for: every SQE gets exactly one CQE, in chain order. */
static void wait_for_chains(unsigned flags, bool loop)
{
	struct blkring_dev *dev = chain_dev(loop);
	unsigned seen[3 * CHAINS] = {0}, next[CHAINS] = {0};
	struct blkring ring;
	char *buf = tf_alloc(CHAINS << 16);

	CHECK_EQ(blkring_queue_init(4 * CHAINS, &ring, flags), 0);
	chains_submit(&ring, dev, buf);
	for (unsigned n = 0; n < 3 * CHAINS; n++) {
		struct blkring_cqe *cqe;
		uint64_t ud;

		CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		ud = cqe->user_data;
		CHECK(ud < 3 * CHAINS);
		CHECK_EQ(seen[ud]++, 0);
		CHECK_EQ(ud % 3, next[ud / 3]++);
		CHECK_EQ(cqe->res, ud % 3 == 2 ? 0 : 1 << 16);
		blkring_cqe_seen(&ring, cqe);
	}
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static void test_exit_chains_tmpfs(void)
{
	exit_with_chains(0, false);
	exit_with_chains(BLKRING_SETUP_DEFER_TASKRUN, false);
}

static void test_exit_chains_loop(void)
{
	exit_with_chains(0, true);
	exit_with_chains(BLKRING_SETUP_DEFER_TASKRUN, true);
}

static void test_wait_chains(void)
{
	wait_for_chains(0, false);
	wait_for_chains(BLKRING_SETUP_DEFER_TASKRUN, false);
	wait_for_chains(0, true);
	wait_for_chains(BLKRING_SETUP_DEFER_TASKRUN, true);
}

/* An SQPOLL ring's kernel rings are the SQ thread's, and the application
 * enters them at exit: they must not be DEFER_TASKRUN's, which only their
 * maker may enter.  Exit with reads in flight returns, every bio ended. */
static void test_sqpoll_exit_in_flight(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct blkring_params p = {.flags = BLKRING_SETUP_SQPOLL, .sq_thread_idle = 1000};
	struct blkring ring;
	char *buf = tf_alloc(8 << 20);

	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	blkring_prep_read(sqe_of(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(reap_one(&ring, 0), 4096);
	CHECK(!queue_of(&ring, dev)->q.defer);
	for (int i = 0; i < 8; i++)
		blkring_prep_read(sqe_of(&ring), 0, buf + (i << 20), 1 << 20, (uint64_t)i << 20);
	CHECK_EQ(blkring_submit(&ring), 8);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

struct handed {
	struct blkring_dev *dev;
	struct blkring ring;
	char *buf;
};

/* Makes a ring, starts reads on it and ends, leaving them in flight. */
static void *start_and_leave(void *arg)
{
	struct handed *h = arg;

	CHECK_EQ(blkring_queue_init(8, &h->ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&h->ring, &h->dev, 1), 0);
	for (int i = 0; i < 8; i++)
		blkring_prep_read(sqe_of(&h->ring), 0, h->buf + (i << 20), 1 << 20,
		                  (uint64_t)i << 20);
	CHECK_EQ(blkring_submit(&h->ring), 8);
	CHECK(!queue_of(&h->ring, h->dev)->q.defer);
	return NULL;
}

/* Exit by another thread than the one whose kernel ring holds the reads,
 * after that thread ended: without DEFER_TASKRUN the kernel ring lets any
 * thread in, so exit returns with every bio ended. */
static void test_exit_by_another_thread(void)
{
	struct handed h = {.dev = tf_open("%s", tf_loop(0)), .buf = tf_alloc(8 << 20)};
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, start_and_leave, &h), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	blkring_queue_exit(&h.ring);
	CHECK_EQ(blkring__dev_inflight(h.dev), 0);
	CHECK_EQ(blkring_dev_close(h.dev), 0);
	free(h.buf);
}

/* An IOPOLL ring: reads and writes go to the poll half of the kernel ring
 * pair and end when the ring polls; a flush still ends on the interrupt
 * side. */
static void iopoll_ring(const char *spec, int expect)
{
	struct blkring_dev *dev = tf_open("%s", spec);
	struct blkring_sqe *sqe;
	struct blkring ring;
	char *buf = tf_alloc(BATCH * 4096);

	CHECK_EQ(blkring_queue_init(64, &ring, BLKRING_SETUP_IOPOLL), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int i = 0; i < BATCH; i++)
		blkring_prep_read(sqe_of(&ring), 0, buf + i * 4096, 4096, (uint64_t)i * 4096);
	sqe = sqe_of(&ring);
	blkring_prep_fsync(sqe, 0, 0);
	sqe->user_data = 1;
	CHECK_EQ(blkring_submit(&ring), BATCH + 1);
	for (int i = 0; i < BATCH + 1; i++) {
		struct blkring_cqe *cqe;

		CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		CHECK_EQ(cqe->res, cqe->user_data ? 0 : expect);
		blkring_cqe_seen(&ring, cqe);
	}
	CHECK(queue_of(&ring, dev)->poll.has_ring);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static void test_iopoll_ring(void)
{
	char spec[400];

	snprintf(spec, sizeof(spec), "file:%s,size=1M", tf_path(tf.shm_dir, "iopoll.img"));
	iopoll_ring(spec, 4096);
	/* The kernel's IOPOLL on a loop device: its -EOPNOTSUPP comes back. */
	snprintf(spec, sizeof(spec), "file:%s,iopoll=1", tf_loop(0));
	iopoll_ring(spec, -EOPNOTSUPP);
}

/* Writes a pattern and reads it back through a ring made with `p`, one I/O
 * at a time with pauses, so its owner (or SQ thread) sleeps between them. */
static void ring_flags_roundtrip(const char *spec, struct blkring_params *p)
{
	struct blkring_dev *dev = tf_open("%s", spec);
	struct blkring ring;
	char *buf = tf_alloc(65536);

	CHECK_EQ(blkring_queue_init_params(8, &ring, p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (int batch = 0; batch < MAX_BATCHES && !ring_slept(&ring); batch++) {
		for (int i = 0; i < 16; i++) {
			uint64_t off = (uint64_t)i * 65536;

			tf_fill(buf, 65536, off, 60 + batch);
			blkring_prep_write(sqe_of(&ring), 0, buf, 65536, off);
			CHECK_EQ(blkring_submit(&ring), 1);
			CHECK_EQ(reap_one(&ring, 0), 65536);
			memset(buf, 0, 65536);
			blkring_prep_read(sqe_of(&ring), 0, buf, 65536, off);
			CHECK_EQ(blkring_submit(&ring), 1);
			CHECK_EQ(reap_one(&ring, 0), 65536);
			CHECK(tf_check_pattern(buf, 65536, off, 60 + batch));
			usleep(3000);
		}
	}
	if (!ring_slept(&ring))
		SKIP(NO_SLEEP);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* An SQPOLL ring: the SQ thread issues to the kernel ring, reaps it, and
 * sleeps on it when idle; the application's submit wakes it. */
static void test_sqpoll_ring(void)
{
	struct blkring_params p = {.flags = BLKRING_SETUP_SQPOLL, .sq_thread_idle = 1};

	ring_flags_roundtrip(tf_loop(0), &p);
	ring_flags_roundtrip(tf_path(tf.shm_dir, "sqpoll.img,size=1M"), &p);
}

/* Deferred task running and the priority list change nothing for file
 * devices: their completions wake the owner all the same.  No watch before
 * the sleep: on a loaded machine the owner, preempted inside it, found
 * every completion there when it ran again and never slept. */
static void test_defer_and_prio_rings(void)
{
	struct blkring_params defer = {.flags = BLKRING_SETUP_DEFER_TASKRUN};
	struct blkring_params prio = {.flags = BLKRING_SETUP_TW_PRIO};
	char spec[400];

	snprintf(spec, sizeof(spec), "file:%s,spin_nsec=0", tf_loop(0));
	ring_flags_roundtrip(spec, &defer);
	ring_flags_roundtrip(spec, &prio);
}

static const struct test_case cases[] = {
    {"tmpfs", test_tmpfs, 0},
    {"loop_sleeps", test_loop_sleeps, 0},
    {"two_devices_sleep", test_two_devices_sleep, 0},
    {"two_devices_sleep_defer", test_two_devices_sleep_defer, 0},
    {"task_work_wakes", test_task_work_wakes, 0},
    {"loop_commands", test_loop_commands, 0},
    {"fixed_buffers", test_fixed_buffers, 0},
    {"fixed_buffers_sqpoll", test_fixed_buffers_sqpoll, 0},
    {"io_workers", test_io_workers, 0},
    {"spin_watches", test_spin_watches, 0},
    {"spin_backs_off", test_spin_backs_off, 0},
    {"spin_ends_for_task_work", test_spin_ends_for_task_work, 0},
    {"spin_sees_other_devices", test_spin_sees_other_devices, 0},
    {"two_rings", test_two_rings, 0},
    {"wait_semantics", test_wait_semantics, 0},
    {"exit_in_flight", test_exit_in_flight, 0},
    {"exit_chains_tmpfs", test_exit_chains_tmpfs, 20},
    {"exit_chains_loop", test_exit_chains_loop, 20},
    {"wait_chains", test_wait_chains, 20},
    {"sigmask_wait", test_sigmask_wait, 20},
    {"sqpoll_exit_in_flight", test_sqpoll_exit_in_flight, 0},
    {"exit_by_another_thread", test_exit_by_another_thread, 0},
    {"iopoll_ring", test_iopoll_ring, 0},
    {"sqpoll_ring", test_sqpoll_ring, 0},
    {"defer_and_prio_rings", test_defer_and_prio_rings, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	tf_setup();
	tf_add_loop(32 << 20, 512);
	tf_add_loop(32 << 20, 512);
	return tf_main(cases, argc, argv);
}
