// SPDX-License-Identifier: MIT
/* The device registry: one device per canonical spec, references, -EBUSY. */
#include <errno.h>
#include <pthread.h>

#include "block/blkdev.h"
#include "test.h"

static void test_same_spec_same_device(void)
{
	struct blkring_dev *a = test_open("null:size=1G,bs=4096");
	struct blkring_dev *b = test_open("null:bs=4096,size=1G");
	struct blkring_dev *c = test_open("null:size=1G,bs=4096,name=other");
	struct blkring_dev_info info;

	CHECK(a == b);
	CHECK(a != c);
	CHECK_EQ(blkring_dev_info(a, &info), 0);
	CHECK(!strcmp(info.spec, "null:bs=4096,size=1G"));
	CHECK(!strcmp(info.type, "null"));
	CHECK_EQ(atomic_load(&a->refs), 2);
	CHECK_EQ(blkring_dev_close(b), 0);
	CHECK_EQ(atomic_load(&a->refs), 1);
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(c), 0);
}

static void test_escaped_values_canonical(void)
{
	struct blkring_dev *a = test_open("null:name=x\\,y");
	struct blkring_dev *b = test_open("null:name=x\\,y");
	struct blkring_dev *c = test_open("null:name=x,size=1G");
	struct blkring_dev_info info;

	CHECK(a == b);
	CHECK(a != c);
	CHECK_EQ(blkring_dev_info(a, &info), 0);
	CHECK(!strcmp(info.spec, "null:name=x\\,y"));
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(b), 0);
	CHECK_EQ(blkring_dev_close(c), 0);
}

static void test_bare_type(void)
{
	struct blkring_dev *a = test_open("null");
	struct blkring_dev *b = test_open("null:");

	CHECK(a == b);
	blkring_dev_close(a);
	blkring_dev_close(b);
}

static void test_busy_while_registered(void)
{
	struct blkring_dev *a = test_open("null:name=busy");
	struct blkring_dev *b = test_open("null:name=busy");

	atomic_fetch_add(&a->ring_refs, 1);
	/* Not the last reference: fine. */
	CHECK_EQ(blkring_dev_close(b), 0);
	CHECK_EQ(blkring_dev_close(a), -EBUSY);
	CHECK_EQ(atomic_load(&a->refs), 1);
	atomic_fetch_sub(&a->ring_refs, 1);
	CHECK_EQ(blkring_dev_close(a), 0);
}

static void ignore_end(struct blkring_bio *bio)
{
	(void)bio;
}

static void test_busy_while_inflight(void)
{
	struct blkring_dev *dev = test_open("null:irqmode=2,completion_nsec=200000000,name=if");
	char buf[512];
	struct blkring_bio bio;

	blkring__bio_init(&bio, dev, REQ_OP_READ, 0, sizeof(buf));
	blkring__bio_set_buf(&bio, buf, sizeof(buf));
	bio.end_io = ignore_end;
	CHECK_EQ(blkring__submit_bio(&bio), 0);
	CHECK_EQ(blkring_dev_close(dev), -EBUSY);
	CHECK_EQ(blkring_dev_pread(dev, buf, sizeof(buf), 0), sizeof(buf));
	/* The timer bio ended before the later one (deadline order). */
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_new_device_after_last_close(void)
{
	struct blkring_dev *a = test_open("null:memory_backed=1,size=1M,name=re");
	struct blkring_dev *b;
	char buf[512] = {1}, out[512];

	CHECK_EQ(blkring_dev_pwrite(a, buf, sizeof(buf), 0), 512);
	CHECK_EQ(blkring_dev_close(a), 0);
	b = test_open("null:memory_backed=1,size=1M,name=re");
	CHECK_EQ(blkring_dev_pread(b, out, sizeof(out), 0), 512);
	CHECK_EQ(out[0], 0); /* a fresh device: the old contents went with it */
	CHECK_EQ(blkring_dev_close(b), 0);
}

static void test_bad_args(void)
{
	struct blkring_dev *dev;

	CHECK_EQ(blkring_dev_open("null", NULL), -EINVAL);
	CHECK_EQ(blkring_dev_open(NULL, &dev), -EINVAL);
	CHECK_EQ(blkring_dev_close(NULL), -EINVAL);
	CHECK_EQ(blkring_dev_info(NULL, NULL), -EINVAL);
}

static void *opener(void *arg)
{
	struct blkring_dev **out = arg;

	for (int i = 0; i < 200; i++) {
		struct blkring_dev *d = test_open("null:name=race,irqmode=0");

		if (i == 0)
			*out = d;
		else
			CHECK(d == *out);
	}
	for (int i = 1; i < 200; i++)
		CHECK_EQ(blkring_dev_close(*out), 0);
	return NULL;
}

static void test_concurrent_open(void)
{
	struct blkring_dev *keep = test_open("null:name=race,irqmode=0");
	struct blkring_dev *got[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, opener, &got[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(got[i] == keep);
		CHECK_EQ(blkring_dev_close(got[i]), 0);
	}
	CHECK_EQ(atomic_load(&keep->refs), 1);
	CHECK_EQ(blkring_dev_close(keep), 0);
}

/* Many devices at once, more than the registry has buckets: each spec
 * still finds its own device, and a close removes only it. */
static void test_many_devices(void)
{
	enum { N = 3000 };
	static struct blkring_dev *devs[N];
	struct blkring_dev *again;
	char spec[64];

	for (unsigned i = 0; i < N; i++) {
		snprintf(spec, sizeof(spec), "null:irqmode=none,size=1M,name=m%u", i);
		CHECK_EQ(blkring_dev_open(spec, &devs[i]), 0);
	}
	for (unsigned i = 0; i < N; i++) {
		snprintf(spec, sizeof(spec), "null:irqmode=none,size=1M,name=m%u", i);
		CHECK_EQ(blkring_dev_open(spec, &again), 0);
		CHECK(again == devs[i]);
		CHECK_EQ(blkring_dev_close(again), 0);
	}
	for (unsigned i = 0; i < N; i += 2)
		CHECK_EQ(blkring_dev_close(devs[i]), 0);
	for (unsigned i = 0; i < N; i++) {
		snprintf(spec, sizeof(spec), "null:irqmode=none,size=1M,name=m%u", i);
		CHECK_EQ(blkring_dev_open(spec, &again), 0);
		/* A closed one opens afresh (maybe at the same address). */
		CHECK_EQ(atomic_load(&again->refs), i % 2 ? 2 : 1);
		if (i % 2)
			CHECK(again == devs[i]);
		CHECK_EQ(blkring_dev_close(again), 0);
	}
	for (unsigned i = 1; i < N; i += 2)
		CHECK_EQ(blkring_dev_close(devs[i]), 0);
}

static const struct test_case cases[] = {
    {"same_spec_same_device", test_same_spec_same_device, 0},
    {"escaped_values_canonical", test_escaped_values_canonical, 0},
    {"bare_type", test_bare_type, 0},
    {"busy_while_registered", test_busy_while_registered, 0},
    {"busy_while_inflight", test_busy_while_inflight, 0},
    {"new_device_after_last_close", test_new_device_after_last_close, 0},
    {"bad_args", test_bad_args, 0},
    {"concurrent_open", test_concurrent_open, 0},
    {"many_devices", test_many_devices, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
