// SPDX-License-Identifier: MIT
/*
 * Volumes on rings: the error target's -EIO and the zero target's zeros
 * as CQEs, a suspended volume that holds a ring's I/O without blocking its
 * submit, and tables reloaded from another thread while a ring keeps I/O
 * in flight (every request completes exactly once, reads checked).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ring-fake.h"
#include "test.h"

#define C "null:memory_backed=1,size=1M,irqmode=none,name=c"
#define DC "null:memory_backed=1,size=1M,irqmode=none,discard=1,name=dc"
#define A "null:memory_backed=1,size=1M,name=a"
/* Ends on a completion thread, so its tags go through the ring's plug. */
#define PLUGGED "null:size=1M,irqmode=softirq,name=plugged"

static void setup(struct blkring *ring, unsigned entries, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(entries, ring, 0), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

static void teardown(struct blkring *ring, struct blkring_dev *dev)
{
	blkring_queue_exit(ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static struct blkring_sqe *sqe(struct blkring *ring)
{
	struct blkring_sqe *s = blkring_get_sqe(ring);

	CHECK(s);
	return s;
}

/* Submits what is queued and returns the next CQE's result. */
static int one_cqe(struct blkring *ring, uint64_t *user_data)
{
	struct blkring_cqe *cqe;
	int res;

	CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
	res = cqe->res;
	if (user_data)
		*user_data = cqe->user_data;
	blkring_cqe_seen(ring, cqe);
	return res;
}

static void test_error_and_zero_cqes(void)
{
	struct blkring_dev *dev = test_vol("0 64 error\n64 64 zero\n128 64 linear " DC " 0", NULL);
	static unsigned char buf[4096];
	struct blkring ring;

	setup(&ring, 8, dev);
	blkring_prep_read(sqe(&ring), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(one_cqe(&ring, NULL), -EIO);
	blkring_prep_write(sqe(&ring), 0, buf, 512, 63 * 512);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(one_cqe(&ring, NULL), -EIO);
	blkring_prep_cmd_discard(sqe(&ring), 0, 0, 4096);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(one_cqe(&ring, NULL), -EIO);
	memset(buf, 0xff, sizeof(buf));
	blkring_prep_read(sqe(&ring), 0, buf, 4096, 64 * 512);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(one_cqe(&ring, NULL), 4096);
	for (unsigned i = 0; i < sizeof(buf); i++)
		if (buf[i])
			TEST_FAIL("byte %u of a zero-target read is %u", i, buf[i]);
	/* One read over the error and zero targets: the error wins. */
	blkring_prep_read(sqe(&ring), 0, buf, 4096, 60 * 512);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(one_cqe(&ring, NULL), -EIO);
	teardown(&ring, dev);
}

static struct blkring_sqe *prep_read(struct blkring *ring, void *buf, unsigned len, uint64_t offset,
                                     uint64_t user_data)
{
	struct blkring_sqe *s = sqe(ring);

	blkring_prep_read(s, 0, buf, len, offset);
	blkring_sqe_set_data64(s, user_data);
	return s;
}

/* Suspended: submit returns at once, NOWAIT fails, the rest completes on
 * resume, each request once. */
static void test_suspended_ring(void)
{
	struct blkring_dev *dev = test_vol("0 256 linear " C " 0", NULL);
	static unsigned char buf[5][4096];
	struct blkring_cqe *cqe;
	struct blkring ring;
	unsigned seen = 0;
	uint64_t ud;

	setup(&ring, 8, dev);
	CHECK_EQ(blkring_vol_suspend(dev), 0);
	for (unsigned i = 0; i < 4; i++)
		prep_read(&ring, buf[i], 4096, i * 4096, i);
	prep_read(&ring, buf[4], 4096, 0, 99)->rw_flags = BLKRING_RWF_NOWAIT;
	CHECK_EQ(blkring_submit(&ring), 5);
	CHECK_EQ(one_cqe(&ring, &ud), -EAGAIN);
	CHECK_EQ(ud, 99);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	CHECK_EQ(blkring_vol_resume(dev), 0);
	for (unsigned i = 0; i < 4; i++) {
		CHECK_EQ(one_cqe(&ring, &ud), 4096);
		CHECK(ud < 4 && !(seen & (1U << ud)));
		seen |= 1U << ud;
	}
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	teardown(&ring, dev);
}

/* ---- reload from another thread while a ring keeps I/O in flight ---- */

#define DEPTH 32
#define COMPLETIONS 4000
#define MIN_RELOADS 50

static const char *const tables[] = {
    "0 2048 linear " A " 0",
    "0 1000 linear " A " 0\n1000 1048 linear " A " 1000",
    "0 8 linear " A " 0\n8 2040 linear " A " 8",
};

static _Atomic bool stop;
static _Atomic unsigned reloads;

static void *reloader(void *arg)
{
	struct blkring_dev *dev = arg;

	for (unsigned n = 0; !atomic_load(&stop); n++) {
		CHECK_EQ(blkring_vol_load(dev, tables[n % 3], NULL), 0);
		if (n % 2)
			CHECK_EQ(blkring_vol_suspend(dev), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		atomic_fetch_add(&reloads, 1);
		sched_yield();
	}
	return NULL;
}

static unsigned char expected(uint64_t offset, unsigned i)
{
	return (unsigned char)((offset + i) * 13 / 512);
}

static void write_pattern(struct blkring_dev *dev)
{
	static unsigned char buf[2048 * 512];

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = expected(0, i);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
}

struct slot {
	bool busy;
	uint64_t offset;
	unsigned char buf[4096];
};

static void issue(struct blkring *ring, struct slot *slots, unsigned i, unsigned *seed)
{
	*seed = *seed * 1103515245 + 12345;
	slots[i].offset = (*seed >> 8) % (2048 - 8) * 512;
	slots[i].busy = true;
	prep_read(ring, slots[i].buf, 4096, slots[i].offset, i)->rw_flags =
	    (*seed >> 4) % 4 ? 0 : BLKRING_RWF_NOWAIT;
}

static void check_slot(struct slot *s)
{
	for (unsigned i = 0; i < 4096; i++)
		if (s->buf[i] != expected(s->offset, i))
			TEST_FAIL("offset %llu byte %u: %u, expected %u",
			          (unsigned long long)s->offset, i, s->buf[i],
			          expected(s->offset, i));
}

static void test_reload_under_ring(void)
{
	struct blkring_dev *dev = test_vol(tables[0], NULL);
	static struct slot slots[DEPTH];
	unsigned done = 0, again = 0, seed = 7;
	struct blkring ring;
	pthread_t th;

	write_pattern(dev);
	setup(&ring, DEPTH, dev);
	for (unsigned i = 0; i < DEPTH; i++)
		issue(&ring, slots, i, &seed);
	CHECK_EQ(blkring_submit(&ring), DEPTH);
	CHECK_EQ(pthread_create(&th, NULL, reloader, dev), 0);
	while (done < COMPLETIONS || atomic_load(&reloads) < MIN_RELOADS) {
		uint64_t ud;
		int res = one_cqe(&ring, &ud);

		CHECK(ud < DEPTH && slots[ud].busy);
		slots[ud].busy = false;
		if (res == -EAGAIN)
			again++;
		else if (res != 4096)
			TEST_FAIL("offset %llu: %d", (unsigned long long)slots[ud].offset, res);
		else
			check_slot(&slots[ud]);
		done++;
		issue(&ring, slots, ud, &seed);
		CHECK_EQ(blkring_submit(&ring), 1);
	}
	atomic_store(&stop, true);
	CHECK_EQ(pthread_join(th, NULL), 0);
	for (unsigned n = 0; n < DEPTH; n++) {
		uint64_t ud;
		int res = one_cqe(&ring, &ud);

		CHECK(ud < DEPTH && slots[ud].busy);
		slots[ud].busy = false;
		CHECK(res == 4096 || res == -EAGAIN);
	}
	CHECK(done > again);
	teardown(&ring, dev);
}

struct reload_in_batch {
	struct blkring_dev *vol;
	struct fake_dev *fake;
};

/* While the submitter is blocked in the middle of its batch: a reload. */
static void *reload_mid_batch(void *arg)
{
	struct reload_in_batch *r = arg;

	ring_fake_wait_blocked(r->fake, 1);
	CHECK_EQ(blkring_vol_load(r->vol, "0 2048 linear " A " 0", NULL), 0);
	CHECK_EQ(blkring_vol_suspend(r->vol), 0);
	CHECK_EQ(blkring_vol_resume(r->vol), 0);
	ring_fake_unblock(r->fake);
	return NULL;
}

/* A reload while a ring's batch holds tags of the old table's leg: the leg
 * closes when the batch gives them back, not never and not before. */
static void test_reload_frees_plugged_leg(void)
{
	struct reload_in_batch r = {.vol = test_vol("0 2048 linear " PLUGGED " 0", NULL),
	                            .fake = ring_fake_create(FAKE_BLOCK)};
	struct blkring_dev *devs[2] = {r.vol, r.fake->dev}, *leg;
	struct blkring_dev_info info;
	static char buf[2][4096];
	struct blkring ring;
	pthread_t t;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, devs, 2), 0);
	blkring_prep_read(sqe(&ring), 0, buf[0], 4096, 0);
	blkring_prep_read(sqe(&ring), 1, buf[1], 4096, 0);
	CHECK_EQ(pthread_create(&t, NULL, reload_mid_batch, &r), 0);
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(one_cqe(&ring, NULL), 4096);
	CHECK_EQ(one_cqe(&ring, NULL), 4096);
	/* The old leg is gone: its spec opens a new device. */
	leg = test_open(PLUGGED);
	CHECK_EQ(blkring_dev_info(leg, &info), 0);
	CHECK_EQ(info.ios[BLKRING_DIR_READ], 0);
	CHECK_EQ(blkring_dev_close(leg), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(r.vol), 0);
	ring_fake_destroy(r.fake);
}

static const struct test_case cases[] = {
    {"error-and-zero-cqes", test_error_and_zero_cqes, 0},
    {"suspended-ring", test_suspended_ring, 0},
    {"reload-under-ring", test_reload_under_ring, 120},
    {"reload-frees-plugged-leg", test_reload_frees_plugged_leg, 20},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
