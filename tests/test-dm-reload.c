// SPDX-License-Identifier: MIT
/*
 * Suspend, load, resume: held I/O replayed exactly once, NOWAIT refused
 * while suspended, in-flight I/O drained before suspend returns, tables
 * swapped while other threads keep I/O in flight (every completion
 * counted once, every read checked), also between tables whose limits and
 * features differ (I/O split to the new ones, held I/O checked again at
 * replay), and the layout description.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "dm/dm.h"
#include "test.h"

#define MEM(name, extra) "null:memory_backed=1,size=1M,name=" name extra
#define A MEM("a", "")
#define B MEM("b", "")
#define C MEM("c", ",irqmode=none")
#define D MEM("d", ",max_sectors=8,discard=1")
#define SLOW "null:memory_backed=1,size=1M,irqmode=timer,completion_nsec=20000000,name=slow"

struct tio {
	struct blkring_bio bio;
	_Atomic int calls;
	int status;
	uint64_t sector;
	unsigned char buf[8192];
};

static void tio_end(struct blkring_bio *bio)
{
	struct tio *t = container_of(bio, struct tio, bio);

	t->status = bio->status;
	atomic_fetch_add_explicit(&t->calls, 1, memory_order_release);
}

static int tio_submit(struct tio *t, struct blkring_dev *dev, unsigned op, uint64_t sector,
                      size_t len, unsigned flags)
{
	atomic_store(&t->calls, 0);
	t->status = 1;
	t->sector = sector;
	blkring__bio_init(&t->bio, dev, op, sector * 512, len);
	blkring__bio_set_buf(&t->bio, t->buf, len);
	t->bio.flags = flags;
	t->bio.end_io = tio_end;
	return blkring__submit_bio(&t->bio);
}

static void tio_wait(struct tio *t)
{
	while (!atomic_load_explicit(&t->calls, memory_order_acquire))
		sched_yield();
}

static void pattern(unsigned char *buf, size_t len, uint64_t sector)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((sector + i / 512) * 29 + i);
}

static void write_pattern(struct blkring_dev *dev, uint64_t sectors)
{
	unsigned char *buf = malloc(sectors * 512);

	CHECK(buf);
	pattern(buf, sectors * 512, 0);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, sectors * 512, 0), (ssize_t)(sectors * 512));
	free(buf);
}

static bool pattern_ok(const unsigned char *buf, size_t len, uint64_t sector)
{
	unsigned char want[sizeof(((struct tio *)0)->buf)];

	pattern(want, len, sector);
	return !memcmp(want, buf, len);
}

static void test_suspend_holds(void)
{
	struct blkring_dev *dev = test_vol("0 512 linear " C " 0", NULL);
	static struct tio t[4], nowait;

	write_pattern(dev, 512);
	CHECK_EQ(blkring_vol_suspend(dev), 0);
	CHECK_EQ(blkring_vol_suspend(dev), -EINVAL);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(tio_submit(&t[i], dev, REQ_OP_READ, i * 16, 4096, 0), 0);
	CHECK_EQ(tio_submit(&nowait, dev, REQ_OP_READ, 0, 512, BIO_NOWAIT), -EAGAIN);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(atomic_load(&t[i].calls), 0);
	CHECK_EQ(blkring_vol_resume(dev), 0);
	for (unsigned i = 0; i < 4; i++) {
		tio_wait(&t[i]);
		CHECK_EQ(t[i].status, 0);
		CHECK(pattern_ok(t[i].buf, 4096, i * 16));
	}
	CHECK_EQ(atomic_load(&nowait.calls), 0);
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(atomic_load(&t[i].calls), 1);
	/* Resume with nothing suspended and nothing loaded does nothing. */
	CHECK_EQ(blkring_vol_resume(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Suspend returns only once the I/O in flight has ended. */
static void test_suspend_drains(void)
{
	struct blkring_dev *dev = test_vol("0 512 linear " SLOW " 0", NULL);
	struct blkring_dev *slow = test_open(SLOW);
	struct blkring_dev_info info;
	static struct tio t[8];

	for (unsigned i = 0; i < 8; i++)
		CHECK_EQ(tio_submit(&t[i], dev, REQ_OP_WRITE, i * 8, 4096, 0), 0);
	CHECK_EQ(blkring_vol_suspend(dev), 0);
	/* The legs counted every clone as ended (the originals end just after,
	 * on the completion thread, as in Linux: the count drops first). */
	CHECK_EQ(blkring_dev_info(slow, &info), 0);
	CHECK_EQ(info.ios[BLKRING_DIR_WRITE], 8);
	for (unsigned i = 0; i < 8; i++) {
		tio_wait(&t[i]);
		CHECK_EQ(atomic_load(&t[i].calls), 1);
	}
	CHECK_EQ(blkring_dev_close(slow), 0);
	CHECK_EQ(blkring_vol_resume(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A held bio still ends, once, when its volume goes away. */
static void test_close_while_held(void)
{
	struct blkring_dev *dev = test_vol("0 512 linear " C " 0", NULL);
	static struct tio t;

	CHECK_EQ(blkring_vol_suspend(dev), 0);
	CHECK_EQ(tio_submit(&t, dev, REQ_OP_READ, 0, 512, 0), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(atomic_load(&t.calls), 1);
	CHECK_EQ(t.status, -EIO);
}

static void test_load_and_swap(void)
{
	struct blkring_dev *dev = test_vol("0 64 linear " C " 0", NULL);
	struct blkring_dev *b = test_open(B);
	unsigned char buf[512], other[512];

	write_pattern(dev, 64);
	memset(other, 0x5a, sizeof(other));
	CHECK_EQ(blkring_dev_pwrite(b, other, 512, 7 * 512), 512);
	/* A bad table leaves both slots as they were. */
	CHECK_EQ(blkring_vol_load(dev, "0 64 linear " B " x", NULL), -EINVAL);
	CHECK(strstr(blkring_last_error(), "line 1: linear: argument 2 'x'"));
	CHECK_EQ(blkring_vol_load(dev, "0 64 linear " B " 7\n64 64 zero", NULL), 0);
	/* Loaded but not live until resume. */
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), 512);
	CHECK(pattern_ok(buf, 512, 0));
	CHECK_EQ(blkring_vol_resume(dev), 0);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), 512);
	CHECK(!memcmp(buf, other, 512));
	/* The new table's size: sector 100 lies in its zero target. */
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 100 * 512), 512);
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(atomic_load(&b->refs), 1);
	CHECK_EQ(blkring_dev_close(b), 0);
}

/* ---- reload while other threads keep I/O in flight ---- */

#define THREADS 2
#define DEPTH 8
#define RELOADS 300
#define MIN_ROUNDS 50 /* per worker, all of them while reloads run */
#define VOL_SECTORS 1024

static const char *const tables[] = {
    "0 1024 linear " A " 0",
    "0 200 linear " A " 0\n200 824 linear " A " 200",
    "0 8 linear " A " 0\n8 1000 linear " A " 8\n1008 16 linear " A " 1008",
};

static _Atomic bool stop;

struct worker {
	struct blkring_dev *dev;
	unsigned seed;
	size_t len; /* bytes per read */
	_Atomic unsigned long rounds;
	unsigned long submitted, completed, refused, bad;
	struct tio *t;
};

static unsigned next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop)) {
		unsigned flags[DEPTH];

		w->rounds++;
		for (unsigned i = 0; i < DEPTH; i++) {
			uint64_t sector = next_rand(&w->seed) % (VOL_SECTORS - 16);
			int ret;

			flags[i] = next_rand(&w->seed) % 4 ? 0 : BIO_NOWAIT;
			ret = tio_submit(&w->t[i], w->dev, REQ_OP_READ, sector, w->len, flags[i]);
			if (ret == -EAGAIN && flags[i]) {
				w->refused++;
				flags[i] = ~0U;
				continue;
			}
			if (ret)
				w->bad++;
			w->submitted++;
		}
		for (unsigned i = 0; i < DEPTH; i++) {
			if (flags[i] == ~0U)
				continue;
			tio_wait(&w->t[i]);
			w->completed++;
			if (w->t[i].status || !pattern_ok(w->t[i].buf, w->len, w->t[i].sector))
				w->bad++;
		}
	}
	return NULL;
}

static unsigned long slowest_worker(struct worker *w)
{
	unsigned long min = ~0UL;

	for (unsigned i = 0; i < THREADS; i++)
		if (atomic_load(&w[i].rounds) < min)
			min = atomic_load(&w[i].rounds);
	return min;
}

/* Workers read len bytes at random while the volume cycles through the
 * tables; every read ends once, well and with the pattern.  The test holds
 * the legs open, so their data outlives the tables that use them. */
static void reload_under_io(const char *const *tabs, unsigned nr, const char *const *legs,
                            unsigned nr_legs, size_t len)
{
	struct blkring_dev *dev = test_vol(tabs[0], NULL), *held[2];
	struct worker w[THREADS];
	pthread_t th[THREADS];
	unsigned reloads;

	CHECK(nr_legs <= ARRAY_SIZE(held));
	for (unsigned i = 0; i < nr_legs; i++)
		held[i] = test_open(legs[i]);
	for (unsigned i = 0; i < nr; i++) {
		CHECK_EQ(blkring_vol_load(dev, tabs[i], NULL), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		write_pattern(dev, VOL_SECTORS);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		w[i] = (struct worker){
		    .dev = dev, .seed = i + 1, .len = len, .t = calloc(DEPTH, sizeof(struct tio))};
		CHECK(w[i].t);
		CHECK_EQ(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (reloads = 0; reloads < RELOADS || slowest_worker(w) < MIN_ROUNDS; reloads++) {
		CHECK_EQ(blkring_vol_load(dev, tabs[reloads % nr], NULL), 0);
		if (reloads % 3 == 0)
			CHECK_EQ(blkring_vol_suspend(dev), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		if (reloads % 8 == 0)
			sched_yield();
	}
	atomic_store(&stop, true);
	for (unsigned i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		for (unsigned j = 0; j < DEPTH; j++)
			CHECK_EQ(atomic_load(&w[i].t[j].calls), w[i].t[j].status == 1 ? 0 : 1);
		CHECK_EQ(w[i].bad, 0);
		CHECK_EQ(w[i].submitted, w[i].completed);
		CHECK_EQ(w[i].submitted + w[i].refused, w[i].rounds * DEPTH);
		free(w[i].t);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
	for (unsigned i = 0; i < nr_legs; i++)
		CHECK_EQ(blkring_dev_close(held[i]), 0);
}

static void test_reload_under_io(void)
{
	static const char *const legs[] = {A};

	reload_under_io(tables, ARRAY_SIZE(tables), legs, ARRAY_SIZE(legs), 4096);
}

/* A's limits and features, then D's (4 KiB at most, discard): 8 KiB reads
 * fit one table and are split under the other. */
static void test_reload_limits_under_io(void)
{
	static const char *const tabs[] = {"0 1024 linear " A " 0", "0 1024 linear " D " 0"};
	static const char *const legs[] = {A, D};

	reload_under_io(tabs, ARRAY_SIZE(tabs), legs, ARRAY_SIZE(legs), 8192);
}

/* ---- describe ---- */

struct seen {
	unsigned n;
	char text[1024];
};

static int describe_one(const struct blkring_vol_target *t, void *arg)
{
	struct seen *s = arg;
	size_t len = strlen(s->text);

	len +=
	    snprintf(s->text + len, sizeof(s->text) - len, "%u: %llu+%llu %s [%s]", t->line,
	             (unsigned long long)t->start, (unsigned long long)t->len, t->type, t->params);
	for (unsigned i = 0; i < t->nr_legs; i++)
		len += snprintf(s->text + len, sizeof(s->text) - len, " {%s %llu+%llu}",
		                t->legs[i].spec, (unsigned long long)t->legs[i].start,
		                (unsigned long long)t->legs[i].len);
	snprintf(s->text + len, sizeof(s->text) - len, "\n");
	return ++s->n == 2 ? 7 : 0;
}

static void test_describe(void)
{
	struct blkring_dev *dev =
	    test_vol("# layout\n0 100 linear " C " 7\n100 96 striped 2 8 " C " 200 " B
	             " 0\n196 4 zero\n200 8 flakey " B " 100 1 2 1 drop_writes\n208 8 error",
	             NULL);
	struct blkring_dev *null = test_open(B);
	struct seen s = {0};
	const char *c = "null:irqmode=none,memory_backed=1,name=c,size=1M";
	const char *b = "null:memory_backed=1,name=b,size=1M";
	char want[1024];

	snprintf(want, sizeof(want),
	         "2: 0+100 linear [%s 7] {%s 7+100}\n"
	         "3: 100+96 striped [2 8 %s 200 %s 0] {%s 200+48} {%s 0+48}\n",
	         c, c, c, b, c, b);
	CHECK_EQ(blkring_vol_describe(dev, describe_one, &s), 7); /* stopped by the callback */
	if (strcmp(s.text, want))
		TEST_FAIL("\n got: %s\nwant: %s", s.text, want);
	s = (struct seen){.n = 10};
	CHECK_EQ(blkring_vol_describe(dev, describe_one, &s), 0);
	snprintf(want, sizeof(want),
	         "2: 0+100 linear [%s 7] {%s 7+100}\n"
	         "3: 100+96 striped [2 8 %s 200 %s 0] {%s 200+48} {%s 0+48}\n"
	         "4: 196+4 zero []\n"
	         "5: 200+8 flakey [%s 100 1 2 1 drop_writes] {%s 100+8}\n"
	         "6: 208+8 error []\n",
	         c, c, c, b, c, b, b, b);
	if (strcmp(s.text, want))
		TEST_FAIL("\n got: %s\nwant: %s", s.text, want);
	CHECK_EQ(blkring_vol_describe(null, describe_one, &s), -EINVAL);
	CHECK_EQ(blkring_dev_close(null), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static const struct test_case cases[] = {
    {"suspend-holds", test_suspend_holds, 0},
    {"suspend-drains", test_suspend_drains, 0},
    {"close-while-held", test_close_while_held, 0},
    {"load-and-swap", test_load_and_swap, 0},
    {"reload-under-io", test_reload_under_io, 120},
    {"reload-limits-under-io", test_reload_limits_under_io, 120},
    {"describe", test_describe, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
