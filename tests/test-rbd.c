// SPDX-License-Identifier: MIT
/*
 * rbd devices against a real cluster: one mon and one memstore OSD that
 * tests/ceph-cluster.sh starts under a scratch directory for this program
 * and stops on any exit.  Every operation in both completion modes,
 * polling beside an unpolled ring, volumes with an rbd leg (reload under
 * load), snapshots, open errors, and a killed OSD: errors within
 * osd_op_timeout, never a hang.  The module is the build tree's
 * (tests/test.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define MiB (1ULL << 20)
#define IMG_MB 128
/* osd_op_timeout of the device the killed OSD fails: its writes fail after
 * one, and librbd's close after them waits about three more, so each second
 * here is four of the program's.  2 s is still 20 times the connect and the
 * first write on this one-node cluster. */
#define KILL_TIMEOUT_S 2

static struct {
	pid_t parent;
	char dir[64];
	bool started;
	char why[PATH_MAX + 64]; /* why there is no cluster */
} rt;

/* ---- the cluster ---- */

static int rt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int rt_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void rt_cleanup(void)
{
	if (getpid() != rt.parent || !rt.dir[0])
		return;
	if (rt.started && rt_sh("tests/ceph-cluster.sh stop '%s'", rt.dir))
		fprintf(stderr, "cleanup: stopping the cluster in %s failed\n", rt.dir);
	if (rt_sh("rm -rf '%s'", rt.dir))
		fprintf(stderr, "cleanup: rm -rf %s failed\n", rt.dir);
	rt.dir[0] = '\0';
}

static void rt_on_signal(int sig)
{
	rt_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void rt_start(void)
{
	char conf[128];

	if (rt_sh("command -v ceph-mon >/dev/null && command -v rbd >/dev/null")) {
		snprintf(rt.why, sizeof(rt.why),
		         "ceph-mon and rbd not installed (scripts/setup.sh test installs them)");
		return;
	}
	rt.started = true;
	if (rt_sh("tests/ceph-cluster.sh start '%s' >'%s.log' 2>&1", rt.dir, rt.dir) ||
	    rt_sh("tests/ceph-cluster.sh image '%s' img %d >>'%s.log' 2>&1", rt.dir, IMG_MB,
	          rt.dir) ||
	    rt_sh("tests/ceph-cluster.sh image '%s' snapimg 16 >>'%s.log' 2>&1 && "
	          "rbd -c '%s/ceph.conf' snap create rbd/snapimg@s1 >>'%s.log' 2>&1",
	          rt.dir, rt.dir, rt.dir, rt.dir)) {
		snprintf(rt.why, sizeof(rt.why), "the cluster did not start: see %s.log", rt.dir);
		return;
	}
	snprintf(conf, sizeof(conf), "%s/ceph.conf", rt.dir);
	setenv("CEPH_CONF", conf, 1);
	rt.why[0] = '\0';
}

/* The sanitizers take their options only at start.  librados and librbd
 * keep allocations past exit (the tree's suppressions for LeakSanitizer),
 * and synchronise inside code built without the thread sanitizer, which
 * then must not judge what that code touches. */
static void rt_sanitizer_options(char **argv)
{
	if (getenv("LSAN_OPTIONS") || getenv("TSAN_OPTIONS"))
		return;
	setenv("LSAN_OPTIONS", "suppressions=tests/sanitizer/rbd-lsan.supp:print_suppressions=0",
	       1);
	setenv("TSAN_OPTIONS", "ignore_noninstrumented_modules=1", 1);
	execv("/proc/self/exe", argv);
}

static void rt_setup(void)
{
	char module[PATH_MAX + 16];

	rt.parent = getpid();
	strcpy(rt.dir, "/tmp/blkring-rbd.XXXXXX");
	if (!mkdtemp(rt.dir)) {
		perror("mkdtemp");
		exit(1);
	}
	signal(SIGINT, rt_on_signal);
	signal(SIGTERM, rt_on_signal);
	signal(SIGHUP, rt_on_signal);
	snprintf(module, sizeof(module), "%s/rbd.so", getenv("BLKRING_MODULE_DIR"));
	if (access(module, R_OK))
		snprintf(rt.why, sizeof(rt.why), "%s is not built (make builds it with librbd-dev)",
		         module);
	else
		rt_start();
}

static void rt_need_cluster(void)
{
	if (rt.why[0])
		SKIP("%s", rt.why);
}

/* ---- helpers ---- */

static struct blkring_dev *rt_open(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct blkring_dev *rt_open(const char *fmt, ...)
{
	char spec[512];
	va_list ap;

	rt_need_cluster();
	va_start(ap, fmt);
	vsnprintf(spec, sizeof(spec), fmt, ap);
	va_end(ap);
	return test_open(spec);
}

/* n writes then n reads of bs each from base, all in flight at once. */
static void rt_batch(struct blkring *ring, uint64_t base, unsigned n, unsigned bs, uint64_t seed)
{
	char *buf = test_alloc((size_t)n * bs);
	uint64_t seen = 0, data;

	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			memset(buf, 0, (size_t)n * bs);
		else
			test_fill(buf, (size_t)n * bs, base, seed);
		for (unsigned i = 0; i < n; i++) {
			struct blkring_sqe *sqe = ring_sqe(ring);
			char *p = buf + (size_t)i * bs;

			if (pass)
				blkring_prep_read(sqe, 0, p, bs, base + (uint64_t)i * bs);
			else
				blkring_prep_write(sqe, 0, p, bs, base + (uint64_t)i * bs);
			sqe->user_data = i;
		}
		CHECK_EQ(blkring_submit(ring), n);
		seen = 0;
		for (unsigned i = 0; i < n; i++) {
			CHECK_EQ(test_wait(ring, &data, 20000), bs);
			CHECK(data < n && !(seen & (1ULL << data)));
			seen |= 1ULL << data;
		}
	}
	CHECK(test_pattern_ok(buf, (size_t)n * bs, base, seed));
	free(buf);
}

/* ---- cases ---- */

static void test_info(void)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/img,poll_queues=2");
	struct blkring_dev_info in;
	uint32_t io_min, io_opt;

	CHECK_EQ(blkring_dev_info(dev, &in), 0);
	CHECK_EQ(in.size, IMG_MB * MiB);
	/* rbd's default object: 4 MiB (order 22), the image's optimal I/O. */
	CHECK_EQ(blkring_dev_io_hints(dev, &io_min, &io_opt), 0);
	CHECK_EQ(io_min, 512);
	CHECK_EQ(io_opt, 4U << 20);
	CHECK_EQ(in.logical_block_size, 512);
	CHECK_EQ(in.nr_hw_queues, 1);
	CHECK_EQ(in.nr_poll_queues, 2);
	CHECK(in.features & BLKRING_FEAT_FLUSH);
	CHECK(in.features & BLKRING_FEAT_FUA);
	CHECK(in.features & BLKRING_FEAT_DISCARD);
	CHECK(in.features & BLKRING_FEAT_WRITE_ZEROES);
	CHECK(in.features & BLKRING_FEAT_POLL);
	CHECK(!in.read_only);
	CHECK_EQ(strcmp(in.type, "rbd"), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Every operation through a ring, in one completion mode. */
static void ring_ops(const char *mode, uint64_t base)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/img,completion=%s", mode);
	char *buf = test_alloc(65536), *out = test_alloc(65536);
	struct iovec iov[3];
	struct blkring ring;

	test_ring(&ring, 0, dev);
	test_fill(buf, 65536, base, 1);
	CHECK_EQ(test_ring_rw(&ring, true, buf, 65536, base, 0), 65536);
	CHECK_EQ(test_ring_rw(&ring, false, out, 65536, base, 0), 65536);
	CHECK(test_pattern_ok(out, 65536, base, 1));
	/* FUA: the write, then a flush. */
	test_fill(buf, 4096, base + 65536, 2);
	CHECK_EQ(test_ring_rw(&ring, true, buf, 4096, base + 65536, BLKRING_RWF_DSYNC), 4096);
	CHECK_EQ(test_ring_rw(&ring, false, out, 4096, base + 65536, 0), 4096);
	CHECK(test_pattern_ok(out, 4096, base + 65536, 2));
	blkring_prep_fsync(ring_sqe(&ring), 0, 0);
	CHECK_EQ(test_ring_one(&ring), 0);

	/* Vectored, in segments of 1000, 3096 and 61440 bytes. */
	iov[0] = (struct iovec){out, 1000};
	iov[1] = (struct iovec){out + 1000, 3096};
	iov[2] = (struct iovec){out + 4096, 61440};
	test_fill(out, 65536, base + MiB, 3);
	blkring_prep_writev(ring_sqe(&ring), 0, iov, 3, base + MiB);
	CHECK_EQ(test_ring_one(&ring), 65536);
	memset(out, 0, 65536);
	blkring_prep_readv(ring_sqe(&ring), 0, iov, 3, base + MiB);
	CHECK_EQ(test_ring_one(&ring), 65536);
	CHECK(test_pattern_ok(out, 65536, base + MiB, 3));

	/* Write zeroes zeroes for real; discard is advisory (not checked). */
	blkring_prep_cmd_write_zeroes(ring_sqe(&ring), 0, base, 16384, 0);
	CHECK_EQ(test_ring_one(&ring), 0);
	blkring_prep_cmd_write_zeroes(ring_sqe(&ring), 0, base + 16384, 8192, BLKRING_ZERO_NOUNMAP);
	CHECK_EQ(test_ring_one(&ring), 0);
	CHECK_EQ(test_ring_rw(&ring, false, out, 65536, base, 0), 65536);
	CHECK(test_zero(out, 24576));
	CHECK(test_pattern_ok(out + 24576, 65536 - 24576, base + 24576, 1));
	blkring_prep_cmd_discard(ring_sqe(&ring), 0, base + MiB, 65536);
	CHECK_EQ(test_ring_one(&ring), 0);

	/* Out of range: the block layer's answer. */
	CHECK_EQ(test_ring_rw(&ring, false, out, 4096, IMG_MB * MiB, 0), -EINVAL);
	rt_batch(&ring, base + 2 * MiB, 48, 4096, 4);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
	free(out);
}

static void test_ring_ops_callback(void)
{
	ring_ops("callback", 0);
}

static void test_ring_ops_eventfd(void)
{
	ring_ops("eventfd", 8 * MiB);
}

static void test_ring_ops_writeback(void)
{
	ring_ops("callback,cache=writeback", 40 * MiB);
}

static void test_ring_ops_uncached(void)
{
	ring_ops("eventfd,cache=none", 44 * MiB);
}

struct rt_thread_arg {
	struct blkring_dev *dev;
	unsigned flags;
	uint64_t base;
};

static void *rt_ring_thread(void *p)
{
	struct rt_thread_arg *a = p;
	struct blkring ring;

	test_ring(&ring, a->flags, a->dev);
	for (unsigned i = 0; i < 10; i++)
		rt_batch(&ring, a->base + i * 256 * 1024, 32, 8192, a->base + i);
	blkring_queue_exit(&ring);
	return NULL;
}

/* Two polling rings share a poll queue beside an unpolled ring: in the
 * eventfd mode any reaper may take another's completions and routes them. */
static void poll_rings(const char *mode, uint64_t base)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/img,poll_queues=1,completion=%s", mode);
	struct rt_thread_arg a[3] = {
	    {dev, BLKRING_SETUP_IOPOLL, base},
	    {dev, BLKRING_SETUP_IOPOLL, base + 4 * MiB},
	    {dev, 0, base + 8 * MiB},
	};
	pthread_t t[3];

	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, rt_ring_thread, &a[i]), 0);
	for (unsigned i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_poll_callback(void)
{
	poll_rings("callback", 16 * MiB);
}

static void test_poll_eventfd(void)
{
	poll_rings("eventfd", 32 * MiB);
}

/* Polled I/O on a device with no poll queue: refused, as elsewhere. */
static void test_poll_refused(void)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/img");
	struct blkring ring;
	char *buf = test_alloc(4096);

	test_ring(&ring, BLKRING_SETUP_IOPOLL, dev);
	CHECK_EQ(test_ring_rw(&ring, false, buf, 4096, 0, 0), -EOPNOTSUPP);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* More in flight than the queue has tags: the rest wait, and all end. */
static void test_tags_exhausted(void)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/img");
	struct blkring ring;
	enum { N = 512 };
	char *buf = test_alloc(N * 4096);

	CHECK_EQ(blkring_queue_init(N, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (unsigned i = 0; i < N; i++)
		blkring_prep_write(ring_sqe(&ring), 0, buf + i * 4096, 4096, 48 * MiB + i * 4096);
	CHECK_EQ(blkring_submit(&ring), N);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(test_wait(&ring, NULL, 30000), 4096);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* A snapshot opens read-only and reads what the image held when taken. */
static void test_snapshot(void)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/snapimg@s1");
	struct blkring_dev *rw = rt_open("rbd:rbd/snapimg");
	struct blkring_dev_info in;
	char *buf = test_alloc(4096);

	CHECK_EQ(blkring_dev_info(dev, &in), 0);
	CHECK(in.read_only);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EBADF);
	memset(buf, 0x77, 4096);
	CHECK_EQ(blkring_dev_pwrite(rw, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 0), 4096);
	CHECK(test_zero(buf, 4096));
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(blkring_dev_close(rw), 0);
	dev = rt_open("rbd:rbd/snapimg,ro=1");
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static void test_open_errors(void)
{
	rt_need_cluster();
	test_open_fails("rbd:nopool/img", -ENOENT, "cannot open pool 'nopool'", "'nopool/img'");
	test_open_fails("rbd:rbd/noimage", -ENOENT, "cannot open image 'noimage'", "pool 'rbd'");
	test_open_fails("rbd:rbd/img@nosnap", -ENOENT, "snapshot nosnap", NULL);
	test_open_fails("rbd:rbd/img,conf=/nonexistent.conf", -ENOENT, "/nonexistent.conf", NULL);
	test_open_fails("rbd:rbd/img,id=nobody,osd_op_timeout=2", -EACCES,
	                "cannot connect to the cluster", NULL);
}

/* Specs the driver refuses before it reaches a cluster. */
static void test_bad_specs(void)
{
	rt_need_cluster();
	test_open_fails("rbd:img", -EINVAL, "expected POOL/IMAGE", NULL);
	test_open_fails("rbd:/img", -EINVAL, "expected POOL/IMAGE", NULL);
	test_open_fails("rbd:rbd/", -EINVAL, "expected POOL/IMAGE", NULL);
	test_open_fails("rbd:rbd/img@", -EINVAL, "no snapshot name", NULL);
	test_open_fails("rbd:", -EINVAL, "expected rbd:POOL/IMAGE", NULL);
	test_open_fails("rbd:rbd/img,osd_op_timeout=0", -EINVAL, "osd_op_timeout", "1 to 86400");
	test_open_fails("rbd:rbd/img,poll_queues=17", -EINVAL, "poll_queues", "0 to 16");
	test_open_fails("rbd:rbd/img,completion=irq", -EINVAL, "completion", "eventfd");
	test_open_fails("rbd:rbd/img,cache=some", -EINVAL, "cache", "writeback");
	test_open_fails("rbd:rbd/img,colour=red", -EINVAL, "unknown key 'colour'",
	                "osd_op_timeout");
}

/* ---- volumes ---- */

/* A reload under load swaps a local leg for an rbd one, whose limits and
 * features differ: no I/O fails, and what the volume writes after lands
 * in the image. */
static void test_volume_reload(void)
{
	struct test_load a = {0};
	struct blkring_dev *leg;
	char *buf = test_alloc(65536);
	pthread_t t;
	unsigned long before;

	rt_need_cluster();
	a.vol = test_vol("0 32768 linear null:memory_backed=1,size=16M,name=rbd-reload 0\n", NULL);
	CHECK_EQ(pthread_create(&t, NULL, test_load_thread, &a), 0);
	while (atomic_load(&a.done) < 10)
		usleep(1000);
	CHECK_EQ(blkring_vol_load(a.vol, "0 32768 linear rbd:rbd/img 131072\n", NULL), 0);
	CHECK_EQ(blkring_vol_resume(a.vol), 0);
	before = atomic_load(&a.done);
	while (atomic_load(&a.done) < before + 10)
		usleep(1000);
	atomic_store(&a.stop, true);
	pthread_join(t, NULL);
	test_fill(buf, 65536, MiB, 0x51);
	CHECK_EQ(blkring_dev_pwrite(a.vol, buf, 65536, MiB), 65536);
	leg = test_open("rbd:rbd/img");
	memset(buf, 0, 65536);
	CHECK_EQ(blkring_dev_pread(leg, buf, 65536, 64 * MiB + MiB), 65536);
	CHECK(test_pattern_ok(buf, 65536, MiB, 0x51));
	CHECK_EQ(blkring_dev_close(a.vol), 0);
	CHECK_EQ(blkring_dev_close(leg), 0);
	free(buf);
}

/* ---- faults: last, as the cluster does not survive them ---- */

/* The OSD killed with I/O in flight: each I/O fails within osd_op_timeout,
 * and so does what comes after. */
static void test_osd_killed(void)
{
	struct blkring_dev *dev = rt_open("rbd:rbd/img,osd_op_timeout=%d", KILL_TIMEOUT_S);
	char *buf = test_alloc(32 * 4096);
	struct blkring ring;
	uint64_t t0, took;
	int res;

	test_ring(&ring, 0, dev);
	CHECK_EQ(test_ring_rw(&ring, true, buf, 4096, 0, 0), 4096);
	CHECK_EQ(rt_sh("tests/ceph-cluster.sh kill-osd '%s'", rt.dir), 0);
	t0 = test_now_ms();
	for (unsigned i = 0; i < 32; i++)
		blkring_prep_write(ring_sqe(&ring), 0, buf + i * 4096, 4096, i * 4096);
	CHECK_EQ(blkring_submit(&ring), 32);
	for (unsigned i = 0; i < 32; i++) {
		res = test_wait(&ring, NULL, KILL_TIMEOUT_S * 1000 * 4);
		if (res >= 0)
			TEST_FAIL("a write succeeded with the OSD killed: %d", res);
	}
	took = test_now_ms() - t0;
	if (took > KILL_TIMEOUT_S * 1000 * 3)
		TEST_FAIL("writes failed after %llu ms, osd_op_timeout=%d s",
		          (unsigned long long)took, KILL_TIMEOUT_S);
	CHECK(test_ring_rw(&ring, false, buf, 4096, MiB, 0) < 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static const struct test_case cases[] = {
    {"rbd_info", test_info, 60},
    {"rbd_ring_ops_callback", test_ring_ops_callback, 60},
    {"rbd_ring_ops_eventfd", test_ring_ops_eventfd, 60},
    {"rbd_ring_ops_writeback", test_ring_ops_writeback, 60},
    {"rbd_ring_ops_uncached", test_ring_ops_uncached, 60},
    {"rbd_poll_callback", test_poll_callback, 60},
    {"rbd_poll_eventfd", test_poll_eventfd, 60},
    {"rbd_poll_refused", test_poll_refused, 60},
    {"rbd_tags_exhausted", test_tags_exhausted, 60},
    {"rbd_snapshot", test_snapshot, 60},
    {"rbd_open_errors", test_open_errors, 60},
    {"rbd_bad_specs", test_bad_specs, 30},
    {"rbd_volume_reload", test_volume_reload, 60},
    {"rbd_osd_killed", test_osd_killed, 60},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	int ret;

	rt_sanitizer_options(argv);
	rt_setup();
	ret = test_main(cases, argc, argv);
	rt_cleanup();
	return ret;
}
