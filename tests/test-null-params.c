// SPDX-License-Identifier: MIT
/* null devices: every parameter, its default and its effect. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/blkdev.h"
#include "drivers/null.h"
#include "test.h"

static void check_info(struct blkring_dev *dev, struct blkring_dev_info *info)
{
	CHECK_EQ(blkring_dev_info(dev, info), 0);
}

static void test_defaults(void)
{
	struct blkring_dev *dev = test_open("null");
	struct blkring_dev_info info;

	check_info(dev, &info);
	CHECK_EQ(info.size, 250ULL << 30);
	CHECK_EQ(info.logical_block_size, 512);
	CHECK_EQ(info.physical_block_size, 512);
	CHECK_EQ(info.nr_hw_queues, 1);
	CHECK_EQ(info.nr_poll_queues, 1);
	CHECK_EQ(info.queue_depth, 64);
	CHECK_EQ(info.max_sectors, 255); /* null_blk's: BLK_SAFE_MAX_SECTORS */
	CHECK_EQ(info.max_discard_sectors, 0);
	CHECK_EQ(info.max_write_zeroes_sectors, 0);
	CHECK_EQ(info.features, BLKRING_FEAT_POLL);
	CHECK_EQ(info.read_only, 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_limits_and_features(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=64M,bs=4K,submit_queues=3,poll_queues=0,hw_queue_depth=7,"
	              "memory_backed=1,discard=1,write_zeroes=1,max_sectors=100,"
	              "max_discard_sectors=77,max_write_zeroes_sectors=2048");
	struct blkring_dev_info info;

	check_info(dev, &info);
	CHECK_EQ(info.size, 64 << 20);
	CHECK_EQ(info.logical_block_size, 4096);
	CHECK_EQ(info.nr_hw_queues, 3);
	CHECK_EQ(info.nr_poll_queues, 0);
	CHECK_EQ(info.queue_depth, 7);
	CHECK_EQ(info.max_sectors, 96); /* rounded down to whole 4K blocks */
	CHECK_EQ(info.max_discard_sectors, 72);
	CHECK_EQ(info.max_write_zeroes_sectors, 2048);
	CHECK_EQ(info.discard_granularity, 4096);
	CHECK_EQ(info.features, BLKRING_FEAT_DISCARD | BLKRING_FEAT_WRITE_ZEROES);
	CHECK_EQ(blkring_dev_close(dev), 0);

	dev = test_open("null:memory_backed=1,discard=1");
	check_info(dev, &info);
	CHECK_EQ(info.max_discard_sectors, UINT32_MAX >> 9);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void fill(char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)(seed * 31 + i * 7 + (i >> 9));
}

static void round_trip(const char *spec)
{
	struct blkring_dev *dev = test_open(spec);
	size_t len = 256 << 10; /* splits at max_sectors */
	char *in = malloc(len), *out = malloc(len);

	fill(in, len, 3);
	CHECK_EQ(blkring_dev_pwrite(dev, in, len, 1 << 20), (ssize_t)len);
	memset(out, 0x55, len);
	CHECK_EQ(blkring_dev_pread(dev, out, len, 1 << 20), (ssize_t)len);
	CHECK(!memcmp(in, out, len));
	/* Unwritten blocks read as zeros, around and between the written ones. */
	CHECK_EQ(blkring_dev_pread(dev, out, 8192, (1 << 20) - 4096), 8192);
	for (int i = 0; i < 4096; i++)
		CHECK_EQ(out[i], 0);
	CHECK(!memcmp(out + 4096, in, 4096));
	CHECK_EQ(blkring_dev_pwrite(dev, in, 4096, 4096), 4096);
	CHECK_EQ(blkring_dev_pread(dev, out, 3 * 4096, 0), 3 * 4096);
	for (int i = 0; i < 4096; i++)
		CHECK(out[i] == 0 && out[8192 + i] == 0 && out[4096 + i] == in[i]);
	free(in);
	free(out);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_memory_backed_none(void)
{
	round_trip("null:memory_backed=1,size=16M,irqmode=none");
}

static void test_memory_backed_softirq(void)
{
	round_trip("null:memory_backed=1,size=16M,irqmode=softirq,submit_queues=2");
}

static void test_memory_backed_timer(void)
{
	round_trip("null:memory_backed=1,size=16M,irqmode=2,completion_nsec=20000");
}

/* Data through the interrupt model, and through a device whose
 * submission costs its submitter time. */
static void test_memory_backed_signal(void)
{
	round_trip("null:memory_backed=1,size=16M,irqmode=signal,completion_nsec=20000");
}

static void test_memory_backed_submit_cost(void)
{
	round_trip("null:memory_backed=1,size=16M,irqmode=signal,submit_nsec=2000,submit_queues=2");
}

static void test_memory_backed_4k(void)
{
	round_trip("null:memory_backed=1,size=16M,bs=4096,irqmode=1");
}

/* A spinning completion thread sees each next I/O while it spins, and a
 * close in the middle of a long spin stops it. */
static void test_memory_backed_spin(void)
{
	round_trip("null:memory_backed=1,size=16M,irqmode=softirq,spin_nsec=1000000000");
}

/* Threads of this process allowed on CPU 0 alone. */
static int pinned_to_cpu0(void)
{
	return test_threads_with("status", "Cpus_allowed_list:\t0\n");
}

/* irq_cpu: the completion thread runs on that CPU only, and still ends
 * every I/O. */
static void test_irq_cpu(void)
{
	int before = pinned_to_cpu0();
	struct blkring_dev *dev = test_open("null:memory_backed=1,size=16M,irq_cpu=0,name=irq0");

	CHECK_EQ(pinned_to_cpu0(), before + 1);
	CHECK_EQ(blkring_dev_close(dev), 0);
	round_trip("null:memory_backed=1,size=16M,irq_cpu=0,submit_queues=2");
}

static void test_not_memory_backed(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=0");
	char buf[512];

	memset(buf, 0x7a, sizeof(buf));
	CHECK_EQ(blkring_dev_pwrite(dev, buf, sizeof(buf), 0), 512);
	memset(buf, 0x11, sizeof(buf));
	/* null_blk without memory leaves the buffer as it was. */
	CHECK_EQ(blkring_dev_pread(dev, buf, sizeof(buf), 0), 512);
	CHECK_EQ(buf[0], 0x11);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_badblocks(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=4M,memory_backed=1,badblocks=100-199+4096-4103,irqmode=1");
	struct blkring_dev_info info;
	char buf[4096] = {0};

	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 99 * 512), 512);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 100 * 512), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 1024, 99 * 512), -EIO);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 199 * 512), -EIO);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 200 * 512), 512);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 4090 * 512), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 4103 * 512), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 4104 * 512), 512);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	check_info(dev, &info);
	CHECK_EQ(info.errors[BLKRING_DIR_READ], 4);
	CHECK_EQ(info.errors[BLKRING_DIR_WRITE], 1);
	CHECK_EQ(info.ios[BLKRING_DIR_READ], 2);
	CHECK_EQ(info.ios[BLKRING_DIR_WRITE], 1);
	CHECK_EQ(blkring_dev_close(dev), 0);

	/* A single sector is a range too. */
	dev = test_open("null:size=1M,badblocks=7,irqmode=0");
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 6 * 512), 512);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 7 * 512), -EIO);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* As Linux: a write to a read-only device is refused before its offset,
 * length and range are looked at, on a ring and in the synchronous calls. */
static void ring_write_checks_read_only_first(struct blkring_dev *dev)
{
	static const struct {
		uint64_t off;
		uint32_t len;
	} bad[] = {{1, 4096}, {0, 100}, {1 << 20, 4096}, {UINT64_MAX - 511, 4096}, {0, 0}};
	static char buf[4096];
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct blkring_sqe *sqe = blkring_get_sqe(&ring);
		struct blkring_cqe *cqe;

		CHECK_EQ(blkring_dev_pwrite(dev, buf, bad[i].len, bad[i].off), -EBADF);
		blkring_prep_write(sqe, 0, buf, bad[i].len, bad[i].off);
		CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
		CHECK_EQ(blkring_peek_cqe(&ring, &cqe), 0);
		CHECK_EQ(cqe->res, -EBADF);
		blkring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(blkring_dev_discard(dev, 1, 1), -EOPNOTSUPP); /* no discard: Linux's order */
	blkring_queue_exit(&ring);
}

static void test_read_only(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,ro=1,irqmode=0");
	struct blkring_dev_info info;
	char buf[512] = {0};

	check_info(dev, &info);
	CHECK_EQ(info.read_only, 1);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 0), -EBADF);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), 512);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	ring_write_checks_read_only_first(dev);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void check_counters(const char *spec)
{
	struct blkring_dev *dev = test_open(spec);
	struct blkring_dev_info info;
	char buf[4096];

	for (int i = 0; i < 5; i++)
		CHECK_EQ(blkring_dev_pread(dev, buf, 4096, i * 4096), 4096);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(blkring_dev_pwrite(dev, buf, 1024, i * 4096), 1024);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 1 << 20), -EINVAL); /* not issued */
	check_info(dev, &info);
	CHECK_EQ(info.ios[BLKRING_DIR_READ], 5);
	CHECK_EQ(info.bytes[BLKRING_DIR_READ], 5 * 4096);
	CHECK_EQ(info.ios[BLKRING_DIR_WRITE], 3);
	CHECK_EQ(info.bytes[BLKRING_DIR_WRITE], 3 * 1024);
	CHECK_EQ(info.ios[BLKRING_DIR_FLUSH], 1);
	CHECK_EQ(info.errors[BLKRING_DIR_READ], 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_counters(void)
{
	check_counters("null:size=1M,irqmode=1");
}

/* irqmode=none's own submit: counted inline, on the submitter's shard. */
static void test_counters_inline(void)
{
	check_counters("null:size=1M,irqmode=none");
}

struct counter_arg {
	struct blkring_dev *dev;
	int n;
};

static void *count_reads(void *arg)
{
	struct counter_arg *a = arg;
	char buf[512];

	for (int i = 0; i < a->n; i++)
		CHECK_EQ(blkring_dev_pread(a->dev, buf, 512, (uint64_t)(i % 64) * 512), 512);
	return NULL;
}

/* More threads than shards: the shared shard adds atomically. */
static void test_counters_many_threads(void)
{
	enum { THREADS = 40, PER = 200 };
	struct counter_arg a = {test_open("null:size=1M,irqmode=0,name=cnt"), PER};
	struct blkring_dev_info info;
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, count_reads, &a), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	check_info(a.dev, &info);
	CHECK_EQ(info.ios[BLKRING_DIR_READ], THREADS * PER);
	CHECK_EQ(info.bytes[BLKRING_DIR_READ], THREADS * PER * 512);
	CHECK_EQ(blkring_dev_close(a.dev), 0);
}

static void test_mbps(void)
{
	/* 1 MiB/s: 64 KiB takes 62.5 ms of link time; it must still complete. */
	struct blkring_dev *dev = test_open("null:size=1M,mbps=1,irqmode=none");
	char buf[65536];
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_EQ(blkring_dev_pread(dev, buf, 65536, 0), 65536);
	CHECK_EQ(blkring_dev_pread(dev, buf, 65536, 0), 65536);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* Two transfers of 1/16 s each cannot end before 1/8 s. */
	CHECK((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) >= 120000000LL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_name_tells_apart(void)
{
	struct blkring_dev *a = test_open("null:memory_backed=1,size=1M,name=one");
	struct blkring_dev *b = test_open("null:memory_backed=1,size=1M,name=two");
	char buf[512] = {9}, out[512];

	CHECK(a != b);
	CHECK_EQ(blkring_dev_pwrite(a, buf, 512, 0), 512);
	CHECK_EQ(blkring_dev_pread(b, out, 512, 0), 512);
	CHECK_EQ(out[0], 0);
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(b), 0);
}

static void test_pages_freed_on_close(void)
{
	struct blkring_dev *dev = test_open("null:memory_backed=1,size=1M,irqmode=0");
	char buf[8192] = {1};

	CHECK_EQ(blkring__null_nr_pages(dev), 0);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, sizeof(buf), 4096), 8192);
	CHECK_EQ(blkring__null_nr_pages(dev), 2);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 4096 + 512), 512);
	CHECK_EQ(blkring__null_nr_pages(dev), 2);
	CHECK_EQ(blkring_dev_close(dev), 0); /* ASan reports a leak otherwise */
}

static const struct test_case cases[] = {
    {"defaults", test_defaults, 0},
    {"limits_and_features", test_limits_and_features, 0},
    {"memory_backed_none", test_memory_backed_none, 0},
    {"memory_backed_softirq", test_memory_backed_softirq, 0},
    {"memory_backed_timer", test_memory_backed_timer, 0},
    {"memory_backed_signal", test_memory_backed_signal, 0},
    {"memory_backed_submit_cost", test_memory_backed_submit_cost, 0},
    {"memory_backed_4k", test_memory_backed_4k, 0},
    {"memory_backed_spin", test_memory_backed_spin, 0},
    {"irq_cpu", test_irq_cpu, 0},
    {"not_memory_backed", test_not_memory_backed, 0},
    {"badblocks", test_badblocks, 0},
    {"read_only", test_read_only, 0},
    {"counters", test_counters, 0},
    {"counters_inline", test_counters_inline, 0},
    {"counters_many_threads", test_counters_many_threads, 0},
    {"mbps", test_mbps, 0},
    {"name_tells_apart", test_name_tells_apart, 0},
    {"pages_freed_on_close", test_pages_freed_on_close, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
