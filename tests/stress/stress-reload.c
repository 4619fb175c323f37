// SPDX-License-Identifier: MIT
/*
 * Volume reload under load, for every ring kind.  The ring's owner keeps
 * two batches of 32 reads and writes in flight on a volume while another
 * thread alternates its table between `striped 2` over legs B and C and
 * `linear` over leg A (load, sometimes suspend, resume).  Writes put the
 * pattern of their own offset, so both layouts hold the same data and a
 * misdirected write shows.  Two variants: "held" keeps the legs open
 * besides the tables, so their data survives every swap and each read
 * must hold the pattern; "dropped" leaves the tables the only openers, so
 * each swap frees the old legs (a fresh leg reads zeros).
 * Checked: every SQE gets exactly one CQE, with its full length; the data;
 * the volume (and held legs) counted exactly the I/O that succeeded; after
 * exit and the last close no leg is left open (reopening a leg's spec gives
 * a fresh device) and no library thread runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define LEG_A "null:memory_backed=1,size=4M,name=stress-reload-a"
#define LEG_B "null:memory_backed=1,size=2M,irqmode=none,name=stress-reload-b"
#define LEG_C                                                                                \
	"null:memory_backed=1,size=2M,irqmode=timer,completion_nsec=20000,hw_queue_depth=4," \
	"name=stress-reload-c"
#define VOL_SIZE (4U << 20)
#define TABLE_LINEAR "0 8192 linear " LEG_A " 0"
#define TABLE_STRIPED "0 8192 striped 2 16 " LEG_B " 0 " LEG_C " 0"

#define BS 4096U
#define BATCH 32U
#define DEPTH (2 * BATCH)
#define SHORT_MS 700U
#define MIN_RELOADS 10U

static const char *const legs[] = {LEG_A, LEG_B, LEG_C};
#define NR_LEGS 3

struct reload_case {
	const struct stress_ring_kind *ring;
	bool held; /* the test keeps the legs open too */
};

struct slot {
	bool busy;
	uint8_t op;
	uint64_t off;
	char *buf;
};

struct load {
	const struct reload_case *c;
	struct blkring ring;
	struct blkring_dev *vol;
	struct slot slots[DEPTH];
	uint64_t rnd, reload_seed;
	uint64_t reads, writes; /* that succeeded */
	_Atomic bool stop;
	_Atomic unsigned reloads;
};

static struct blkring_dev *vol_create(const char *table)
{
	struct blkring_dev *dev;
	int ret = blkring_vol_create(table, NULL, &dev);

	if (ret)
		TEST_FAIL("volume: %s (%s)", strerror(-ret), blkring_last_error());
	return dev;
}

static void reload(struct blkring_dev *vol, const char *table, bool suspend)
{
	int ret = blkring_vol_load(vol, table, NULL);

	if (ret)
		TEST_FAIL("load: %s (%s)", strerror(-ret), blkring_last_error());
	if (suspend)
		CHECK_EQ(blkring_vol_suspend(vol), 0);
	CHECK_EQ(blkring_vol_resume(vol), 0);
}

static void *reloader(void *arg)
{
	struct load *l = arg;
	uint64_t rnd = l->reload_seed;

	for (unsigned n = 1; !atomic_load(&l->stop); n++) {
		uint64_t r = stress_rand(&rnd);

		reload(l->vol, n % 2 ? TABLE_LINEAR : TABLE_STRIPED, r % 3 == 0);
		atomic_fetch_add(&l->reloads, 1);
		stress_sleep_us((unsigned)(r >> 8) % 200);
	}
	return NULL;
}

/* The pattern through both tables (the held variant keeps it in the legs). */
static void prefill(struct blkring_dev *vol)
{
	char *buf = aligned_alloc(BS, VOL_SIZE);

	CHECK(buf);
	stress_fill(buf, VOL_SIZE, 0);
	CHECK_EQ(blkring_dev_pwrite(vol, buf, VOL_SIZE, 0), VOL_SIZE);
	reload(vol, TABLE_LINEAR, false);
	CHECK_EQ(blkring_dev_pwrite(vol, buf, VOL_SIZE, 0), VOL_SIZE);
	free(buf);
}

static void prep_slot(struct load *l, unsigned i)
{
	struct blkring_sqe *sqe = blkring_get_sqe(&l->ring);
	struct slot *s = &l->slots[i];
	uint64_t r = stress_rand(&l->rnd);

	CHECK(sqe);
	s->off = (r >> 8) % (VOL_SIZE / BS) * BS;
	s->busy = true;
	if (r % 4 == 0) {
		s->op = BLKRING_OP_WRITE;
		stress_fill(s->buf, BS, s->off);
		blkring_prep_write(sqe, 0, s->buf, BS, s->off);
	} else {
		s->op = BLKRING_OP_READ;
		memset(s->buf, 0xee, BS);
		blkring_prep_read(sqe, 0, s->buf, BS, s->off);
	}
	sqe->user_data = i;
}

/* The first byte of a read that is neither the pattern nor, on a leg a
 * reload opened fresh (words still unwritten), zero; or -1. */
static long bad_byte(const struct load *l, const struct slot *s)
{
	uint64_t want[BS / 8];
	const uint64_t *got = (const uint64_t *)s->buf;

	stress_fill(want, BS, s->off);
	for (unsigned i = 0; i < BS / 8; i++)
		if (got[i] != want[i] && (l->c->held || got[i]))
			return (long)i * 8;
	return -1;
}

static void check_read(struct load *l, const struct slot *s)
{
	long bad = bad_byte(l, s);

	if (bad >= 0)
		TEST_FAIL("read at %llu after %u reloads: wrong data at byte %ld",
		          (unsigned long long)s->off, atomic_load(&l->reloads), bad);
	l->reads++;
}

static void reap_one(struct load *l)
{
	struct __kernel_timespec ts = {STRESS_EXIT_SECONDS, 0};
	struct blkring_cqe *cqe;
	struct slot *s;
	int ret = blkring_wait_cqes(&l->ring, &cqe, 1, &ts, NULL);

	if (ret)
		TEST_FAIL("waiting for a CQE after %u reloads: %s", atomic_load(&l->reloads),
		          strerror(-ret));
	if (cqe->user_data >= DEPTH || !l->slots[cqe->user_data].busy)
		TEST_FAIL("CQE for user_data %llu, not in flight",
		          (unsigned long long)cqe->user_data);
	s = &l->slots[cqe->user_data];
	s->busy = false;
	if (cqe->res != (int)BS)
		TEST_FAIL("%s at %llu: res %d", s->op == BLKRING_OP_READ ? "read" : "write",
		          (unsigned long long)s->off, cqe->res);
	if (s->op == BLKRING_OP_READ)
		check_read(l, s);
	else
		l->writes++;
	blkring_cqe_seen(&l->ring, cqe);
}

/* Reaps a batch's worth, then refills the free slots in one submit. */
static void cycle(struct load *l, unsigned reap)
{
	unsigned n = 0;
	int ret;

	for (unsigned i = 0; i < reap; i++)
		reap_one(l);
	for (unsigned i = 0; i < DEPTH && n < BATCH; i++)
		if (!l->slots[i].busy) {
			prep_slot(l, i);
			n++;
		}
	ret = blkring_submit(&l->ring);
	if (ret != (int)n)
		TEST_FAIL("submit of %u: %d", n, ret);
}

static unsigned nr_busy(const struct load *l)
{
	unsigned n = 0;

	for (unsigned i = 0; i < DEPTH; i++)
		n += l->slots[i].busy;
	return n;
}

static uint64_t dev_ios(struct blkring_dev *dev, unsigned dir)
{
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	return info.ios[dir];
}

/* Sum over the held legs of reads and writes. */
static uint64_t legs_ios(struct blkring_dev *const *held)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < NR_LEGS; i++)
		n += dev_ios(held[i], BLKRING_DIR_READ) + dev_ios(held[i], BLKRING_DIR_WRITE);
	return n;
}

static void run_load(struct load *l, uint64_t end)
{
	pthread_t t;

	stress_ring_init(&l->ring, DEPTH, 0, l->c->ring);
	CHECK_EQ(blkring_register_devices(&l->ring, &l->vol, 1), 0);
	cycle(l, 0);
	CHECK_EQ(pthread_create(&t, NULL, reloader, l), 0);
	while (stress_now_ns() < end || atomic_load(&l->reloads) < MIN_RELOADS)
		cycle(l, BATCH);
	/* Drain before joining: on an IOPOLL ring a suspend waits for polled
	 * clones, which end only while the owner polls. */
	atomic_store(&l->stop, true);
	for (unsigned n = nr_busy(l); n; n--)
		reap_one(l);
	CHECK_EQ(pthread_join(t, NULL), 0);
	stress_ring_exit(&l->ring, l->c->ring, "reload case, nothing in flight");
}

/* A leg left open by an old table would come back with its counters. */
static void check_fresh(const char *spec)
{
	struct blkring_dev *dev = test_open(spec);
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	for (unsigned d = 0; d < BLKRING_DIR_NR; d++)
		if (info.ios[d] || info.errors[d])
			TEST_FAIL("%s reopened with %llu I/Os counted: an old table left it open",
			          spec, (unsigned long long)info.ios[d] + info.errors[d]);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static unsigned nr_cases;

static void run_reload_case(const void *arg)
{
	const struct reload_case *c = arg;
	uint64_t end = stress_now_ns() + stress_case_ns(SHORT_MS, nr_cases);
	struct load *l = calloc(1, sizeof(*l));
	struct blkring_dev *held[NR_LEGS] = {NULL};
	uint64_t vol_r, vol_w, leg_rw = 0;

	CHECK(l);
	l->c = c;
	l->rnd = stress_seed();
	l->reload_seed = l->rnd ^ 0x72656c6f6164ULL;
	for (unsigned i = 0; c->held && i < NR_LEGS; i++)
		held[i] = test_open(legs[i]);
	l->vol = vol_create(TABLE_STRIPED);
	prefill(l->vol);
	for (unsigned i = 0; i < DEPTH; i++)
		CHECK(l->slots[i].buf = aligned_alloc(BS, BS));
	vol_r = dev_ios(l->vol, BLKRING_DIR_READ);
	vol_w = dev_ios(l->vol, BLKRING_DIR_WRITE);
	if (c->held)
		leg_rw = legs_ios(held);
	run_load(l, end);
	stress_note("%s: %u reloads, %llu reads, %llu writes", c->ring->name,
	            atomic_load(&l->reloads), (unsigned long long)l->reads,
	            (unsigned long long)l->writes);
	/* Each 4 KiB I/O is one clone on one leg: counted once each. */
	CHECK_EQ(dev_ios(l->vol, BLKRING_DIR_READ) - vol_r, l->reads);
	CHECK_EQ(dev_ios(l->vol, BLKRING_DIR_WRITE) - vol_w, l->writes);
	if (c->held)
		CHECK_EQ(legs_ios(held) - leg_rw, l->reads + l->writes);
	CHECK_EQ(blkring_dev_close(l->vol), 0);
	for (unsigned i = 0; c->held && i < NR_LEGS; i++)
		CHECK_EQ(blkring_dev_close(held[i]), 0);
	for (unsigned i = 0; i < NR_LEGS; i++)
		check_fresh(legs[i]);
	CHECK_EQ(stress_lib_threads(), 0);
	for (unsigned i = 0; i < DEPTH; i++)
		free(l->slots[i].buf);
	free(l);
}

int main(int argc, char **argv)
{
	static struct reload_case cases[STRESS_NR_RING_KINDS * 2];
	unsigned n = 0;

	for (unsigned k = 0; k < STRESS_NR_RING_KINDS; k++)
		for (unsigned h = 0; h < 2; h++)
			cases[n++] = (struct reload_case){&stress_ring_kinds[k], h};
	nr_cases = n;
	for (unsigned i = 0; i < n; i++) {
		char name[96];

		snprintf(name, sizeof(name), "stress-reload-%s-%s", cases[i].ring->name,
		         cases[i].held ? "held" : "dropped");
		stress_run_case(name, run_reload_case, &cases[i],
		                stress_case_timeout(SHORT_MS, nr_cases), argc, argv);
	}
	return 0;
}
