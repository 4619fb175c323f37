// SPDX-License-Identifier: MIT
/* Discard and write-zeroes commands: Linux's check order, the nowait punt,
 * chained completions, the zero-page fallback, and a model test. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "drivers/null.h"
#include "lib/futex.h"
#include "test.h"

struct cmd_result {
	_Atomic uint32_t calls;
	int status;
};

static void cmd_end(struct blkring_bio *bio)
{
	struct cmd_result *r = bio->private;

	r->status = bio->status;
	atomic_fetch_add_explicit(&r->calls, 1, memory_order_release);
	futex_wake(&r->calls, 1);
}

/* The request's bio as the ring sets it up for each issue. */
static void cmd_bio(struct blkring_bio *bio, struct blkring_dev *dev, struct cmd_result *r)
{
	blkring__bio_init(bio, dev, REQ_OP_DISCARD, 0, 0);
	bio->end_io = cmd_end;
	bio->private = r;
}

/* Issues like the ring: non-blocking first, then blocking on -EAGAIN;
 * returns the one completion's status and counts the punts. */
static int run_cmd(struct blkring_dev *dev, const struct blkring_sqe *sqe, int *punts)
{
	struct cmd_result r = {0};
	struct blkring_bio bio;
	int ret;

	cmd_bio(&bio, dev, &r);
	ret = blkring__blkdev_uring_cmd(sqe, &bio, BLKRING_ISSUE_NONBLOCK);
	if (ret == -EAGAIN) {
		CHECK_EQ(atomic_load(&r.calls), 0); /* nothing was issued */
		if (punts)
			(*punts)++;
		cmd_bio(&bio, dev, &r);
		ret = blkring__blkdev_uring_cmd(sqe, &bio, 0);
	}
	if (ret) {
		CHECK_EQ(atomic_load(&r.calls), 0);
		return ret;
	}
	while (!atomic_load_explicit(&r.calls, memory_order_acquire))
		futex_wait(&r.calls, 0, NULL);
	usleep(1000); /* room for a second, wrong, completion to show */
	CHECK_EQ(atomic_load(&r.calls), 1);
	return r.status;
}

/* One direct call: its return, with end_io checked not to have run. */
static int cmd_rejects(struct blkring_dev *dev, const struct blkring_sqe *sqe)
{
	struct cmd_result r = {0};
	struct blkring_bio bio;
	int ret;

	cmd_bio(&bio, dev, &r);
	ret = blkring__blkdev_uring_cmd(sqe, &bio, BLKRING_ISSUE_NONBLOCK);
	CHECK(ret < 0);
	CHECK_EQ(atomic_load(&r.calls), 0);
	return ret;
}

static void discard_sqe(struct blkring_sqe *sqe, uint64_t off, uint64_t len)
{
	blkring_prep_cmd_discard(sqe, 0, off, len);
}

static void test_unused_fields(void)
{
	/* No discard, read-only: the field check still comes first. */
	struct blkring_dev *dev = test_open("null:size=1M,ro=1,irqmode=0,name=uf");
	struct blkring_sqe sqe;

	discard_sqe(&sqe, 0, 4096);
	CHECK_EQ(cmd_rejects(dev, &sqe), -EOPNOTSUPP);
	sqe.ioprio = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.__pad1 = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.len = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.rw_flags = BLKRING_ZERO_NOUNMAP; /* discard takes no flags */
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.file_index = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.buf_index = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.personality = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 4096);
	sqe.__pad2[0] = 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 0, 4096, 1U << 5);
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	/* Unknown command: -EINVAL, before the device's capabilities. */
	discard_sqe(&sqe, 0, 4096);
	sqe.cmd_op = (0x12U << 8) | 1;
	CHECK_EQ(cmd_rejects(dev, &sqe), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_check_order(void)
{
	struct blkring_dev *ro =
	    test_open("null:size=1M,ro=1,memory_backed=1,discard=1,irqmode=0,name=co");
	struct blkring_dev *nowz = test_open("null:size=1M,ro=1,irqmode=0,name=co2");
	struct blkring_dev *rw =
	    test_open("null:size=1M,bs=4096,memory_backed=1,discard=1,irqmode=0,name=co3");
	struct blkring_sqe sqe;

	/* op support, then read-only, then the range */
	discard_sqe(&sqe, 1, 1);
	CHECK_EQ(cmd_rejects(nowz, &sqe), -EOPNOTSUPP);
	CHECK_EQ(cmd_rejects(ro, &sqe), -EBADF);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 1, 1, BLKRING_ZERO_NOFALLBACK);
	CHECK_EQ(cmd_rejects(nowz, &sqe), -EOPNOTSUPP);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 1, 1, 0);
	CHECK_EQ(cmd_rejects(nowz, &sqe), -EBADF); /* falls back to writes: read-only */
	/* range validation, as blk_validate_byte_range */
	discard_sqe(&sqe, 512, 4096);
	CHECK_EQ(cmd_rejects(rw, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 512);
	CHECK_EQ(cmd_rejects(rw, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 0);
	CHECK_EQ(cmd_rejects(rw, &sqe), -EINVAL);
	discard_sqe(&sqe, 1 << 20, 4096);
	CHECK_EQ(cmd_rejects(rw, &sqe), -EINVAL);
	discard_sqe(&sqe, UINT64_MAX - 4095, 8192);
	CHECK_EQ(cmd_rejects(rw, &sqe), -EINVAL);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 4096, 512, 0);
	CHECK_EQ(cmd_rejects(rw, &sqe), -EINVAL);
	discard_sqe(&sqe, 0, 1 << 20);
	CHECK_EQ(run_cmd(rw, &sqe, NULL), 0);
	CHECK_EQ(blkring_dev_close(ro), 0);
	CHECK_EQ(blkring_dev_close(nowz), 0);
	CHECK_EQ(blkring_dev_close(rw), 0);
}

static void test_discard_unsupported(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,memory_backed=1,discard=0,irqmode=0");

	CHECK_EQ(blkring_dev_discard(dev, 0, 4096), -EOPNOTSUPP);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, BLKRING_ZERO_NOFALLBACK), -EOPNOTSUPP);
	CHECK_EQ(blkring_dev_discard(NULL, 0, 4096), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_nowait_punt(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,memory_backed=1,discard=1,"
	                                    "write_zeroes=1,max_discard_sectors=8,"
	                                    "max_write_zeroes_sectors=16,irqmode=1");
	char buf[16384];
	struct blkring_sqe sqe;
	int punts = 0;

	memset(buf, 0xab, sizeof(buf));
	CHECK_EQ(blkring_dev_pwrite(dev, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	CHECK_EQ(blkring__null_nr_pages(dev), 4);
	discard_sqe(&sqe, 0, 4096); /* one bio: inline */
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(punts, 0);
	CHECK_EQ(blkring__null_nr_pages(dev), 3);
	discard_sqe(&sqe, 4096, 8192); /* two bios: punted, then blocking */
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(punts, 1);
	CHECK_EQ(blkring__null_nr_pages(dev), 1);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 8192, 8192, 0); /* one bio */
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(punts, 1);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 0, 16384, BLKRING_ZERO_NOUNMAP); /* two */
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(punts, 2);
	CHECK_EQ(blkring__null_nr_pages(dev), 4); /* NOUNMAP keeps (makes) them allocated */
	CHECK_EQ(blkring_dev_pread(dev, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		CHECK_EQ(buf[i], 0);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 0, 16384, 0); /* unmaps */
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(blkring__null_nr_pages(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_chained_failure_one_completion(void)
{
	/* 16 discard bios of 4 KiB; one covers bad sector 70. */
	struct blkring_dev *dev = test_open("null:size=1M,memory_backed=1,discard=1,"
	                                    "max_discard_sectors=8,badblocks=70,irqmode=1,"
	                                    "hw_queue_depth=4");
	struct blkring_dev_info info;
	struct blkring_sqe sqe;
	int punts = 0;

	discard_sqe(&sqe, 0, 65536);
	CHECK_EQ(run_cmd(dev, &sqe, &punts), -EIO); /* run_cmd checks: exactly one end */
	CHECK_EQ(punts, 1);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.errors[BLKRING_DIR_DISCARD], 1);
	discard_sqe(&sqe, 65536, 65536);
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_zero_fallback(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=8M,memory_backed=1,max_sectors=16,irqmode=1,hw_queue_depth=4");
	size_t len = 3 << 20;
	char *buf = malloc(len);
	struct blkring_dev_info info;
	struct blkring_sqe sqe;
	int punts = 0;

	memset(buf, 0x5a, len);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, len, 0), (ssize_t)len);
	/* Even one block punts: the fallback waits for its writes. */
	blkring_prep_cmd_write_zeroes(&sqe, 0, 512, 1024, 0);
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(punts, 1);
	blkring_prep_cmd_write_zeroes(&sqe, 0, 4096, (2 << 20) + 4096, 0);
	CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
	CHECK_EQ(blkring_dev_pread(dev, buf, len, 0), (ssize_t)len);
	for (size_t i = 0; i < len; i++) {
		bool zero = (i >= 512 && i < 1536) || (i >= 4096 && i < (2 << 20) + 8192);

		if (buf[i] != (zero ? 0 : 0x5a))
			TEST_FAIL("byte %zu is %d", i, buf[i]);
	}
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.ios[BLKRING_DIR_WRITE_ZEROES], 0); /* they were writes */
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, BLKRING_ZERO_NOFALLBACK), -EOPNOTSUPP);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, 0), 0);
	free(buf);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_zero_fallback_error(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=8M,max_sectors=8,badblocks=1000-1001,irqmode=1");

	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 1 << 20, 0), -EIO);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 1 << 20, 1 << 20, 0), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* ---- a device that holds bios until the test ends them ---- */

struct held {
	pthread_mutex_t lock;
	struct blkring_bio *bios[64];
	unsigned nr, total;
};

static struct held held = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int held_submit(struct blkring_dev *dev, struct blkring_bio *bio)
{
	(void)dev;
	pthread_mutex_lock(&held.lock);
	CHECK(held.nr < 64);
	held.bios[held.nr++] = bio;
	held.total++;
	pthread_mutex_unlock(&held.lock);
	return 0;
}

static void held_destroy(struct blkring_dev *dev)
{
	(void)dev;
}

static const struct blkring_dev_ops held_ops = {
    .name = "held", .submit_bio = held_submit, .destroy = held_destroy};

static unsigned held_count(unsigned *total)
{
	unsigned n;

	pthread_mutex_lock(&held.lock);
	n = held.nr;
	if (total)
		*total = held.total;
	pthread_mutex_unlock(&held.lock);
	return n;
}

static struct blkring_bio *held_pop(void)
{
	struct blkring_bio *bio = NULL;

	pthread_mutex_lock(&held.lock);
	if (held.nr)
		bio = held.bios[--held.nr];
	pthread_mutex_unlock(&held.lock);
	return bio;
}

struct zero_call {
	struct blkring_dev *dev;
	uint64_t len;
	int ret;
	_Atomic bool done;
};

static void *zero_thread(void *arg)
{
	struct zero_call *c = arg;

	c->ret = blkring_dev_write_zeroes(c->dev, 0, c->len, 0);
	atomic_store(&c->done, true);
	return NULL;
}

/* The fallback keeps at most 8 writes in flight and stops at the first error. */
static void test_zero_fallback_bounded(void)
{
	struct blkring_dev *dev = blkring__dev_alloc(&held_ops);
	struct zero_call c = {dev, 64 << 20, 1, false};
	unsigned ended = 0, total = 0;
	pthread_t t;

	dev->size = 1ULL << 30;
	dev->limits.max_sectors = 2048; /* 1 MiB writes: 64 of them */
	CHECK_EQ(pthread_create(&t, NULL, zero_thread, &c), 0);
	while (ended < 64) {
		struct blkring_bio *bio;

		while (held_count(&total) < 8 && total < 64)
			usleep(100);
		CHECK(held_count(NULL) <= 8);
		bio = held_pop();
		if (!bio)
			continue;
		CHECK_EQ(bio->op, REQ_OP_WRITE);
		CHECK_EQ(bio->size, 1 << 20);
		blkring__bio_endio(bio, 0);
		ended++;
	}
	pthread_join(t, NULL);
	CHECK_EQ(c.ret, 0);
	CHECK_EQ(held_count(&total), 0);
	CHECK_EQ(total, 64);

	/* An error: what is in flight ends, nothing more is issued. */
	held.total = 0;
	atomic_store(&c.done, false);
	CHECK_EQ(pthread_create(&t, NULL, zero_thread, &c), 0);
	while (held_count(NULL) < 8)
		usleep(100);
	blkring__bio_endio(held_pop(), -EIO);
	while (!atomic_load(&c.done)) {
		struct blkring_bio *bio = held_pop();

		if (bio)
			blkring__bio_endio(bio, 0);
		else
			usleep(100);
	}
	pthread_join(t, NULL);
	CHECK_EQ(c.ret, -EIO);
	held_count(&total);
	CHECK(total <= 9); /* at most the one issued while the error landed */
	blkring__dev_free(dev);
}

/* ---- a model of the device's contents ---- */

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void model_run(const char *spec, unsigned ops)
{
	enum { SIZE = 1 << 20, BS = 512 };
	struct blkring_dev *dev = test_open(spec);
	char *model = calloc(1, SIZE), *buf = malloc(SIZE);
	struct blkring_sqe sqe;
	int punts = 0;

	for (unsigned i = 0; i < ops; i++) {
		uint64_t blocks = rnd() % 64 + 1, off;
		unsigned kind = (unsigned)(rnd() % 5);

		if (rnd() % 8 == 0)
			blocks = rnd() % 512 + 1; /* larger: split into several bios */
		off = (rnd() % (SIZE / BS - blocks + 1)) * BS;
		switch (kind) {
		case 0: /* write */
			for (uint64_t b = 0; b < blocks * BS; b++)
				buf[b] = (char)(rnd() | 1);
			CHECK_EQ(blkring_dev_pwrite(dev, buf, blocks * BS, off), blocks * BS);
			memcpy(model + off, buf, blocks * BS);
			break;
		case 1: /* discard */
			discard_sqe(&sqe, off, blocks * BS);
			CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
			memset(model + off, 0, blocks * BS);
			break;
		case 2:
		case 3: /* write zeroes, both flags' ways */
			blkring_prep_cmd_write_zeroes(&sqe, 0, off, blocks * BS,
			                              kind == 2 ? BLKRING_ZERO_NOUNMAP : 0);
			CHECK_EQ(run_cmd(dev, &sqe, &punts), 0);
			memset(model + off, 0, blocks * BS);
			break;
		default: /* read back a random range */
			CHECK_EQ(blkring_dev_pread(dev, buf, blocks * BS, off), blocks * BS);
			if (memcmp(buf, model + off, blocks * BS))
				TEST_FAIL("op %u: read of %" PRIu64 "+%" PRIu64 " differs", i, off,
				          blocks * BS);
		}
	}
	CHECK_EQ(blkring_dev_pread(dev, buf, SIZE, 0), SIZE);
	CHECK(!memcmp(buf, model, SIZE));
	CHECK(punts > 0);
	free(model);
	free(buf);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_model_offload(void)
{
	model_run("null:size=1M,memory_backed=1,discard=1,write_zeroes=1,max_sectors=64,"
	          "max_discard_sectors=24,max_write_zeroes_sectors=40,irqmode=0",
	          4000);
}

static void test_model_fallback_softirq(void)
{
	model_run("null:size=1M,memory_backed=1,discard=1,max_sectors=64,"
	          "max_discard_sectors=24,irqmode=1,submit_queues=2,hw_queue_depth=3",
	          3000);
}

static const struct test_case cases[] = {
    {"unused_fields", test_unused_fields, 0},
    {"check_order", test_check_order, 0},
    {"discard_unsupported", test_discard_unsupported, 0},
    {"nowait_punt", test_nowait_punt, 0},
    {"chained_failure_one_completion", test_chained_failure_one_completion, 0},
    {"zero_fallback", test_zero_fallback, 0},
    {"zero_fallback_error", test_zero_fallback_error, 0},
    {"zero_fallback_bounded", test_zero_fallback_bounded, 0},
    {"model_offload", test_model_offload, 0},
    {"model_fallback_softirq", test_model_fallback_softirq, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
