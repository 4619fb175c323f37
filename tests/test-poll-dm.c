// SPDX-License-Identifier: MIT
/*
 * Polling through volumes with both strategies (poll=all, poll=cookie):
 * data and exactly-once completion with several rings, -EOPNOTSUPP when a
 * leg cannot poll (re-evaluated on reload), the `all` list rebuilt when the
 * table reloads while rings poll, stacked volumes in every combination
 * (also when the stacked one reloads), a held queue skipped, bios the
 * volume splits or holds, and exit with polled I/O in flight.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dm/dm.h"
#include "ring-fake.h"
#include "test.h"

#define BS 4096
#define LEG_SECTORS 2048ULL /* 1 MiB legs */
#define LEG(name) "null:memory_backed=1,size=1M,name=" name
#define LEGS3(p) LEG(p "0"), LEG(p "1"), LEG(p "2")

static const char *const strategy_name[] = {"all", "cookie"};

/* ---- volumes and rings ---- */

/* A linear volume, one target per leg, with the given strategy. */
static struct blkring_dev *pd_linear(const char *const *legs, unsigned nr, unsigned strategy)
{
	char text[2048];
	size_t len = 0;
	struct blkring_dev *dev;

	for (unsigned i = 0; i < nr; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%llu %llu linear %s 0\n",
		                        i * LEG_SECTORS, LEG_SECTORS, legs[i]);
	if (blkring_vol_create(text, NULL, &dev))
		TEST_FAIL("%s: %s", text, blkring_last_error());
	blkring__dm_poll_vol(dev)->strategy = strategy;
	return dev;
}

static void pd_table_text(char *text, size_t size, const char *const *legs, unsigned nr)
{
	size_t len = 0;

	for (unsigned i = 0; i < nr; i++)
		len += (size_t)snprintf(text + len, size - len, "%llu %llu linear %s 0\n",
		                        i * LEG_SECTORS, LEG_SECTORS, legs[i]);
}

static void pd_ring(struct blkring *ring, unsigned entries, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(entries, ring, BLKRING_SETUP_IOPOLL), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

static uint64_t pd_reads(const char *spec)
{
	struct blkring_dev *dev = test_open(spec);
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	return info.ios[BLKRING_DIR_READ];
}

/* ---- data: a pattern by volume sector, written to the legs directly ---- */

static void pd_pattern(unsigned char *buf, size_t len, uint64_t sector)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((sector + i / 512) * 131 + i % 512);
}

/* Legs the test keeps open, so that their data outlives the volumes. */
static struct blkring_dev *pd_kept[16];
static unsigned pd_nr_kept;

static void pd_fill_legs(const char *const *legs, unsigned nr)
{
	unsigned char *buf = malloc(LEG_SECTORS * 512);

	CHECK(buf);
	for (unsigned i = 0; i < nr; i++) {
		struct blkring_dev *leg = test_open(legs[i]);

		pd_pattern(buf, LEG_SECTORS * 512, i * LEG_SECTORS);
		CHECK_EQ(blkring_dev_pwrite(leg, buf, LEG_SECTORS * 512, 0),
		         (ssize_t)(LEG_SECTORS * 512));
		CHECK(pd_nr_kept < 16);
		pd_kept[pd_nr_kept++] = leg;
	}
	free(buf);
}

/* Closes the kept legs; none may have I/O in flight. */
static void pd_release_legs(void)
{
	while (pd_nr_kept) {
		struct blkring_dev *leg = pd_kept[--pd_nr_kept];

		CHECK_EQ(blkring__dev_inflight(leg), 0);
		CHECK_EQ(blkring_dev_close(leg), 0);
	}
}

static void pd_check(const unsigned char *buf, size_t len, uint64_t sector)
{
	unsigned char *want = malloc(len);

	CHECK(want);
	pd_pattern(want, len, sector);
	if (memcmp(buf, want, len))
		TEST_FAIL("data at sector %llu differs", (unsigned long long)sector);
	free(want);
}

/*
 * `total` polled reads of `size` bytes at depth qd over [0, sectors),
 * each checked against the pattern and each CQE seen exactly once.
 */
static void pd_read_many(struct blkring *ring, unsigned qd, unsigned total, uint32_t size,
                         uint64_t sectors, unsigned seed)
{
	unsigned char *bufs = aligned_alloc(BS, (size_t)qd * size);
	uint64_t *sector = calloc(qd, sizeof(*sector));
	uint8_t *seen = calloc(total, 1);
	unsigned submitted = 0, done = 0, slots = 0;
	unsigned *free_slot = calloc(qd, sizeof(*free_slot));

	CHECK(bufs && sector && seen && free_slot);
	for (unsigned i = 0; i < qd; i++)
		free_slot[slots++] = i;
	while (done < total) {
		struct blkring_cqe *cqe;
		unsigned slot;

		while (submitted < total && slots) {
			struct blkring_sqe *sqe = ring_sqe(ring);
			uint64_t nr = sectors / (size / 512);

			slot = free_slot[--slots];
			sector[slot] =
			    (uint64_t)((submitted + seed) * 2654435761U % nr) * (size / 512);
			blkring_prep_read(sqe, 0, bufs + (size_t)slot * size, size,
			                  sector[slot] * 512);
			sqe->user_data = (uint64_t)submitted++ << 32 | slot;
		}
		CHECK(blkring_submit(ring) >= 0);
		CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
		if (cqe->res != (int)size)
			TEST_FAIL("read %llu: res %d", (unsigned long long)(cqe->user_data >> 32),
			          cqe->res);
		slot = (unsigned)cqe->user_data;
		CHECK_EQ(seen[cqe->user_data >> 32]++, 0);
		pd_check(bufs + (size_t)slot * size, size, sector[slot]);
		free_slot[slots++] = slot;
		blkring_cqe_seen(ring, cqe);
		done++;
	}
	free(bufs);
	free(sector);
	free(seen);
	free(free_slot);
}

/* Polled writes across every leg read back (blocking reads), then the
 * pattern is put back. */
static void pd_write_back(struct blkring *ring, struct blkring_dev *dev)
{
	unsigned char *w = aligned_alloc(BS, 6 * BS), *r = malloc(BS);
	uint64_t off[6];

	CHECK(w && r);
	for (unsigned i = 0; i < 6; i++) {
		off[i] = (i / 2) * LEG_SECTORS * 512 + (i % 2) * 100 * BS;
		memset(w + i * BS, 0xa0 + i, BS);
		blkring_prep_write(ring_sqe(ring), 0, w + i * BS, BS, off[i]);
	}
	CHECK_EQ(blkring_submit_and_wait(ring, 6), 6);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(ring_reap(ring).res, BS);
	for (unsigned i = 0; i < 6; i++) {
		CHECK_EQ(blkring_dev_pread(dev, r, BS, off[i]), BS);
		CHECK(!memcmp(r, w + i * BS, BS));
		pd_pattern(w + i * BS, BS, off[i] / 512);
		blkring_prep_write(ring_sqe(ring), 0, w + i * BS, BS, off[i]);
	}
	CHECK_EQ(blkring_submit_and_wait(ring, 6), 6);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(ring_reap(ring).res, BS);
	free(w);
	free(r);
}

/* ---- cases ---- */

/* Polled reads through a linear and a striped volume, both strategies:
 * right data, no task work, no sleep; reads larger than a stripe chunk
 * make several clones per bio. */
static void pd_data(void)
{
	static const char *const legs[] = {LEGS3("data")};

	pd_fill_legs(legs, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *lin = pd_linear(legs, 3, s), *str;
		struct blkring_ring_stats st;
		struct blkring ring;
		char text[1024];

		pd_ring(&ring, 32, lin);
		pd_read_many(&ring, 32, 3000, BS, 3 * LEG_SECTORS, s);
		CHECK_EQ(blkring_ring_stats(&ring, &st), 0);
		CHECK_EQ(st.tw_run, 0);
		CHECK_EQ(st.sleeps, 0);
		pd_write_back(&ring, lin);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(lin), 0);

		/* Striped over the same legs, chunk 8 sectors: a 16 KiB read is
		 * four clones on three legs. */
		snprintf(text, sizeof(text), "0 %llu striped 3 8 %s 0 %s 0 %s 0\n", 3 * LEG_SECTORS,
		         legs[0], legs[1], legs[2]);
		CHECK_EQ(blkring_vol_create(text, NULL, &str), 0);
		blkring__dm_poll_vol(str)->strategy = s;
		pd_ring(&ring, 16, str);
		/* The pattern is by leg sector here; read and compare raw. */
		for (unsigned i = 0; i < 64; i++) {
			unsigned char *buf = aligned_alloc(BS, 4 * BS), *want = malloc(4 * BS);

			CHECK(buf && want);
			blkring_prep_read(ring_sqe(&ring), 0, buf, 4 * BS, (uint64_t)i * 4 * BS);
			CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
			CHECK_EQ(ring_reap(&ring).res, 4 * BS);
			CHECK_EQ(blkring_dev_pread(str, want, 4 * BS, (uint64_t)i * 4 * BS),
			         4 * BS);
			CHECK(!memcmp(buf, want, 4 * BS));
			free(buf);
			free(want);
		}
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(str), 0);
	}
	pd_release_legs();
}

/* As Linux: a volume polls only if every leg does; otherwise polled I/O
 * is -EOPNOTSUPP, and a reload decides again. */
static void pd_eopnotsupp(void)
{
	static const char *const good[] = {LEGS3("ok")};
	static const char *const bad[] = {LEG("nopoll0"), LEG("nopoll1") ",poll_queues=0",
	                                  LEG("nopoll2")};
	char text[2048];

	pd_fill_legs(good, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(bad, 3, s), *zero;
		struct blkring_dev_info info;
		struct blkring ring;
		char *buf = aligned_alloc(BS, BS);

		CHECK_EQ(blkring_dev_info(dev, &info), 0);
		CHECK(!(info.features & BLKRING_FEAT_POLL));
		pd_ring(&ring, 8, dev);
		blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
		CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
		CHECK_EQ(ring_reap(&ring).res, -EOPNOTSUPP);

		pd_table_text(text, sizeof(text), good, 3);
		CHECK_EQ(blkring_vol_load(dev, text, NULL), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		CHECK_EQ(blkring_dev_info(dev, &info), 0);
		CHECK(info.features & BLKRING_FEAT_POLL);
		pd_read_many(&ring, 8, 200, BS, 3 * LEG_SECTORS, 0);

		pd_table_text(text, sizeof(text), bad, 3);
		CHECK_EQ(blkring_vol_load(dev, text, NULL), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
		CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
		CHECK_EQ(ring_reap(&ring).res, -EOPNOTSUPP);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(dev), 0);

		/* A target without legs (zero) cannot poll either. */
		snprintf(text, sizeof(text), "0 8 zero\n8 %llu linear %s 0\n", LEG_SECTORS - 8,
		         good[0]);
		CHECK_EQ(blkring_vol_create(text, NULL, &zero), 0);
		pd_ring(&ring, 8, zero);
		blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
		CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
		CHECK_EQ(ring_reap(&ring).res, -EOPNOTSUPP);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(zero), 0);
		free(buf);
	}
	pd_release_legs();
}

/* ---- several rings on one volume ---- */

struct pd_poller {
	struct blkring_dev *dev;
	pthread_t thread;
	unsigned seed, total;
	_Atomic bool *stop; /* run until set, when not NULL */
	unsigned rounds;
};

static void *pd_poller_run(void *arg)
{
	struct pd_poller *p = arg;
	struct blkring ring;

	pd_ring(&ring, 16, p->dev);
	do {
		pd_read_many(&ring, 16, p->total, BS, 3 * LEG_SECTORS, p->seed + p->rounds * 7);
		p->rounds++;
	} while (p->stop && !atomic_load(p->stop));
	blkring_queue_exit(&ring);
	return NULL;
}

static void pd_start(struct pd_poller *p, unsigned n, struct blkring_dev *dev, unsigned total,
                     _Atomic bool *stop)
{
	for (unsigned i = 0; i < n; i++) {
		p[i] =
		    (struct pd_poller){.dev = dev, .seed = i * 1000, .total = total, .stop = stop};
		CHECK_EQ(pthread_create(&p[i].thread, NULL, pd_poller_run, &p[i]), 0);
	}
}

static void pd_join(struct pd_poller *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		pthread_join(p[i].thread, NULL);
}

/* Three rings poll one volume: each CQE reaches its ring once (checked
 * per ring), and the volume and its legs count each read once. */
static void pd_exactly_once(void)
{
	enum { RINGS = 3, PER = 1500 };
	static const char *const legs[] = {LEGS3("once")};

	pd_fill_legs(legs, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(legs, 3, s);
		uint64_t before = 0, after = 0;
		struct blkring_dev_info info;
		struct pd_poller p[RINGS];

		for (unsigned i = 0; i < 3; i++)
			before += pd_reads(legs[i]);
		pd_start(p, RINGS, dev, PER, NULL);
		pd_join(p, RINGS);
		for (unsigned i = 0; i < 3; i++)
			after += pd_reads(legs[i]);
		CHECK_EQ(blkring_dev_info(dev, &info), 0);
		CHECK_EQ(info.ios[BLKRING_DIR_READ], RINGS * PER);
		CHECK_EQ(after - before, RINGS * PER);
		CHECK_EQ(blkring_dev_close(dev), 0);
	}
	pd_release_legs();
}

/*
 * Rings keep polling while another thread reloads the table back and forth
 * between two sets of legs: the `all` list goes with each table (polled
 * I/O on the new legs completes only if the new list is walked), nothing
 * is lost or doubled, every read has the right data.
 */
static void pd_reload_while_polling(void)
{
	enum { RINGS = 2, RELOADS = 12 };
	static const char *const set_a[] = {LEGS3("ra")};
	static const char *const set_b[] = {LEGS3("rb")};

	pd_fill_legs(set_a, 3);
	pd_fill_legs(set_b, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(set_a, 3, s);
		_Atomic bool stop = false;
		struct pd_poller p[RINGS];
		uint64_t b_before = 0, b_after = 0;
		char text[2048];

		pd_start(p, RINGS, dev, 200, &stop);
		for (unsigned r = 0; r < RELOADS; r++) {
			pd_table_text(text, sizeof(text), r % 2 ? set_a : set_b, 3);
			CHECK_EQ(blkring_vol_load(dev, text, NULL), 0);
			CHECK_EQ(blkring_vol_resume(dev), 0);
			usleep(2000);
		}
		/* The last table is set_a's; one more to set_b, then only it serves. */
		pd_table_text(text, sizeof(text), set_b, 3);
		CHECK_EQ(blkring_vol_load(dev, text, NULL), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		for (unsigned i = 0; i < 3; i++)
			b_before += pd_reads(set_b[i]);
		usleep(20000);
		atomic_store(&stop, true);
		pd_join(p, RINGS);
		for (unsigned i = 0; i < 3; i++)
			b_after += pd_reads(set_b[i]);
		CHECK(b_after > b_before);
		for (unsigned i = 0; i < RINGS; i++)
			CHECK(p[i].rounds > 0);
		CHECK_EQ(blkring_dev_close(dev), 0);
	}
	pd_release_legs();
}

/* ---- stacked volumes, from table files ---- */

static char pd_dir[64];

static void pd_put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", pd_dir, name);
	f = fopen(path, "w");
	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK_EQ(fclose(f), 0);
}

static void pd_mkdir(void)
{
	snprintf(pd_dir, sizeof(pd_dir), "/tmp/blkring-poll-XXXXXX");
	CHECK(mkdtemp(pd_dir));
}

static void pd_rmdir(const char *const *names, unsigned nr)
{
	char path[256];

	for (unsigned i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s", pd_dir, names[i]);
		unlink(path);
	}
	rmdir(pd_dir);
}

static struct blkring_dev *pd_open_table(const char *name, const char *poll)
{
	char spec[256];

	snprintf(spec, sizeof(spec), "table:%s/%s,poll=%s", pd_dir, name, poll);
	return test_open(spec);
}

/*
 * An outer volume over an inner one, in all four combinations of
 * strategies; then the inner one reloads onto other legs, and polled
 * reads through the outer one still complete (an `all` list copied from
 * the inner table is stale then, and knows it).
 */
static void pd_stacked(void)
{
	static const char *const set_a[] = {LEGS3("sa")};
	static const char *const set_b[] = {LEGS3("sb")};
	static const char *const files[] = {"inner.table", "outer-all.table", "outer-cookie.table"};
	char text[2048], line[512];

	pd_fill_legs(set_a, 3);
	pd_fill_legs(set_b, 3);
	pd_mkdir();
	pd_table_text(text, sizeof(text), set_a, 3);
	pd_put("inner.table", text);
	for (unsigned in = DM_POLL_ALL; in <= DM_POLL_COOKIE; in++) {
		snprintf(line, sizeof(line), "0 %llu linear table:inner.table,poll=%s 0\n",
		         3 * LEG_SECTORS, strategy_name[in]);
		pd_put(in == DM_POLL_ALL ? "outer-all.table" : "outer-cookie.table", line);
	}
	for (unsigned out = DM_POLL_ALL; out <= DM_POLL_COOKIE; out++) {
		for (unsigned in = DM_POLL_ALL; in <= DM_POLL_COOKIE; in++) {
			struct blkring_dev *outer = pd_open_table(
			    in == DM_POLL_ALL ? "outer-all.table" : "outer-cookie.table",
			    strategy_name[out]);
			struct blkring_dev *inner = pd_open_table("inner.table", strategy_name[in]);
			struct blkring ring;

			CHECK_EQ(blkring__dm_poll_vol(outer)->strategy, out);
			CHECK_EQ(blkring__dm_poll_vol(inner)->strategy, in);
			pd_ring(&ring, 16, outer);
			pd_read_many(&ring, 16, 500, BS, 3 * LEG_SECTORS, in * 2 + out);
			pd_table_text(text, sizeof(text), set_b, 3);
			CHECK_EQ(blkring_vol_load(inner, text, NULL), 0);
			CHECK_EQ(blkring_vol_resume(inner), 0);
			pd_read_many(&ring, 16, 500, BS, 3 * LEG_SECTORS, in * 2 + out + 1);
			pd_table_text(text, sizeof(text), set_a, 3);
			CHECK_EQ(blkring_vol_load(inner, text, NULL), 0);
			CHECK_EQ(blkring_vol_resume(inner), 0);
			blkring_queue_exit(&ring);
			CHECK_EQ(blkring_dev_close(outer), 0);
			CHECK_EQ(blkring_dev_close(inner), 0);
		}
	}
	pd_rmdir(files, 3);
	pd_release_legs();
}

/* Polled reads, res checked only. */
static void pd_reads_ok(struct blkring *ring, unsigned total)
{
	char *buf = aligned_alloc(BS, 8 * BS);

	CHECK(buf);
	for (unsigned done = 0; done < total; done += 8) {
		for (unsigned i = 0; i < 8; i++)
			blkring_prep_read(ring_sqe(ring), 0, buf + i * BS, BS,
			                  (uint64_t)((done + i) * 769 % (3 * LEG_SECTORS / 8)) *
			                      BS);
		CHECK_EQ(blkring_submit_and_wait(ring, 8), 8);
		for (unsigned i = 0; i < 8; i++)
			CHECK_EQ(ring_reap(ring).res, BS);
	}
	free(buf);
}

/*
 * The inner volume's reload closes its old legs, which nothing else holds;
 * the outer `all` list copied their queues and still walks them, so it
 * must hold them itself (ASan sees a use after free otherwise).
 */
static void pd_stacked_reload_closes_legs(void)
{
	static const char *const set_a[] = {"null:size=1M,name=fa0", "null:size=1M,name=fa1",
	                                    "null:size=1M,name=fa2"};
	static const char *const set_b[] = {"null:size=1M,name=fb0", "null:size=1M,name=fb1",
	                                    "null:size=1M,name=fb2"};
	static const char *const files[] = {"inner.table", "outer.table"};
	struct blkring_dev *outer, *inner;
	struct blkring ring;
	char text[2048];

	pd_mkdir();
	pd_table_text(text, sizeof(text), set_a, 3);
	pd_put("inner.table", text);
	snprintf(text, sizeof(text), "0 %llu linear table:inner.table,poll=all 0\n",
	         3 * LEG_SECTORS);
	pd_put("outer.table", text);
	outer = pd_open_table("outer.table", "all");
	inner = pd_open_table("inner.table", "all");
	pd_ring(&ring, 16, outer);
	pd_reads_ok(&ring, 64);
	pd_table_text(text, sizeof(text), set_b, 3);
	CHECK_EQ(blkring_vol_load(inner, text, NULL), 0);
	CHECK_EQ(blkring_vol_resume(inner), 0);
	pd_reads_ok(&ring, 256);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(outer), 0);
	CHECK_EQ(blkring_dev_close(inner), 0);
	pd_rmdir(files, 2);
}

/* The spec key: poll=all|cookie, default cookie, a bad value named. */
static void pd_spec_key(void)
{
	static const char *const legs[] = {LEGS3("key")};
	static const char *const files[] = {"v.table"};
	struct blkring_dev *dev;
	char text[2048], spec[256];

	pd_mkdir();
	pd_table_text(text, sizeof(text), legs, 3);
	pd_put("v.table", text);
	snprintf(spec, sizeof(spec), "table:%s/v.table", pd_dir);
	dev = test_open(spec);
	CHECK_EQ(blkring__dm_poll_vol(dev)->strategy, DM_POLL_COOKIE);
	CHECK_EQ(blkring_dev_close(dev), 0);
	dev = pd_open_table("v.table", "all");
	CHECK_EQ(blkring__dm_poll_vol(dev)->strategy, DM_POLL_ALL);
	CHECK_EQ(blkring_dev_close(dev), 0);
	snprintf(spec, sizeof(spec), "table:%s/v.table,poll=some", pd_dir);
	CHECK_EQ(blkring_dev_open(spec, &dev), -EINVAL);
	CHECK(strstr(blkring_last_error(), "poll"));
	CHECK(strstr(blkring_last_error(), "all|cookie"));
	pd_rmdir(files, 1);
}

/* A poller skips a leg's queue that another holds: reads on the other
 * legs complete, the held leg's only once it is let go. */
static void pd_busy_leg_skipped(void)
{
	static const char *const legs[] = {LEGS3("busy")};

	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(legs, 3, s), *leg1 = test_open(legs[1]);
		struct blkring_hctx *held = &leg1->hctxs[leg1->nr_hw_queues];
		struct blkring_cqe *cqe;
		struct blkring ring;
		char *buf = aligned_alloc(BS, 3 * BS);

		pd_ring(&ring, 8, dev);
		CHECK(blkring__hctx_trylock_poll(held));
		for (unsigned i = 0; i < 3; i++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_read(sqe, 0, buf + i * BS, BS, i * LEG_SECTORS * 512);
			sqe->user_data = i;
		}
		CHECK_EQ(blkring_submit_and_wait(&ring, 2), 3);
		for (unsigned i = 0; i < 2; i++)
			CHECK(ring_reap(&ring).user_data != 1);
		CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
		blkring__hctx_unlock_poll(held);
		CHECK_EQ(ring_reap(&ring).user_data, 1);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(leg1), 0);
		CHECK_EQ(blkring_dev_close(dev), 0);
		free(buf);
	}
}

/* A read larger than the legs' max_sectors is split before the volume
 * sees it: the pieces are not polled by name, so polling the original
 * falls back to the volume's queues; it completes with the right data. */
static void pd_split_read(void)
{
	static const char *const legs[] = {LEG("sp0") ",max_sectors=8", LEG("sp1") ",max_sectors=8",
	                                   LEG("sp2") ",max_sectors=8"};

	pd_fill_legs(legs, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(legs, 3, s);
		struct blkring ring;

		pd_ring(&ring, 8, dev);
		pd_read_many(&ring, 8, 100, 64 * 1024, 3 * LEG_SECTORS, s);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(dev), 0);
	}
	pd_release_legs();
}

struct pd_resumer {
	struct blkring_dev *dev;
	pthread_t thread;
};

static void *pd_resume_later(void *arg)
{
	struct pd_resumer *r = arg;

	usleep(20000);
	CHECK_EQ(blkring_vol_resume(r->dev), 0);
	return NULL;
}

/* Polled reads held by a suspended volume: the ring polls (nothing to
 * find) until another thread resumes the volume and replays them. */
static void pd_held_while_suspended(void)
{
	static const char *const legs[] = {LEGS3("held")};

	pd_fill_legs(legs, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct pd_resumer r = {.dev = pd_linear(legs, 3, s)};
		unsigned char *buf = aligned_alloc(BS, 8 * BS);
		struct blkring_cqe *cqe;
		struct blkring ring;

		pd_ring(&ring, 8, r.dev);
		CHECK_EQ(blkring_vol_suspend(r.dev), 0);
		for (unsigned i = 0; i < 8; i++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_read(sqe, 0, buf + i * BS, BS, i * 700 * 512ULL);
			sqe->user_data = i;
		}
		CHECK_EQ(blkring_submit(&ring), 8);
		CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
		CHECK_EQ(pthread_create(&r.thread, NULL, pd_resume_later, &r), 0);
		CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 8, NULL, NULL), 0);
		pthread_join(r.thread, NULL);
		for (unsigned i = 0; i < 8; i++) {
			struct blkring_cqe c = ring_reap(&ring);

			CHECK_EQ(c.res, BS);
			pd_check(buf + c.user_data * BS, BS, c.user_data * 700);
		}
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(r.dev), 0);
		free(buf);
	}
	pd_release_legs();
}

/* Polled reads held while the volume reloads onto a table that cannot
 * poll (a zero target in front): replayed, their clones still reach a leg
 * that polls, and they complete; new polled reads are refused. */
static void pd_held_across_reload_to_no_poll(void)
{
	static const char *const legs[] = {LEGS3("hz")};

	pd_fill_legs(legs, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(legs, 3, s);
		unsigned char *buf = aligned_alloc(BS, 4 * BS);
		struct blkring_dev_info info;
		struct blkring ring;
		char text[1024];

		pd_ring(&ring, 8, dev);
		CHECK_EQ(blkring_vol_suspend(dev), 0);
		for (unsigned i = 0; i < 4; i++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_read(sqe, 0, buf + i * BS, BS, (1000 + i * 8) * 512ULL);
			sqe->user_data = i;
		}
		CHECK_EQ(blkring_submit(&ring), 4);
		snprintf(text, sizeof(text), "0 8 zero\n8 %llu linear %s 8\n", LEG_SECTORS - 8,
		         legs[0]);
		CHECK_EQ(blkring_vol_load(dev, text, NULL), 0);
		CHECK_EQ(blkring_vol_resume(dev), 0);
		CHECK_EQ(blkring_dev_info(dev, &info), 0);
		CHECK(!(info.features & BLKRING_FEAT_POLL));
		for (unsigned i = 0; i < 4; i++) {
			struct blkring_cqe c = ring_reap(&ring);

			CHECK_EQ(c.res, BS);
			pd_check(buf + c.user_data * BS, BS, 1000 + c.user_data * 8);
		}
		blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 1000 * 512);
		CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
		CHECK_EQ(ring_reap(&ring).res, -EOPNOTSUPP);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(dev), 0);
		free(buf);
	}
	pd_release_legs();
}

/* Exit with polled I/O in flight on a volume polls it to completion. */
static void pd_exit_inflight(void)
{
	static const char *const legs[] = {LEGS3("exit")};

	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(legs, 3, s);
		char *buf = aligned_alloc(BS, 64 * BS);
		struct blkring ring;

		pd_ring(&ring, 64, dev);
		for (unsigned i = 0; i < 64; i++)
			blkring_prep_read(ring_sqe(&ring), 0, buf + i * BS, BS, i * 97 * 512ULL);
		CHECK_EQ(blkring_submit(&ring), 64);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(dev), 0);
		for (unsigned i = 0; i < 3; i++) {
			struct blkring_dev *leg = test_open(legs[i]);

			CHECK_EQ(blkring__dev_inflight(leg), 0);
			CHECK_EQ(blkring_dev_close(leg), 0);
		}
		free(buf);
	}
}

/* Discards and write zeroes through a volume on an IOPOLL ring take the
 * interrupt path, next to polled reads in flight. */
static void pd_commands(void)
{
	static const char *const legs[] = {LEG("cmd0") ",discard=1,write_zeroes=1",
	                                   LEG("cmd1") ",discard=1,write_zeroes=1",
	                                   LEG("cmd2") ",discard=1,write_zeroes=1"};

	pd_fill_legs(legs, 3);
	for (unsigned s = DM_POLL_ALL; s <= DM_POLL_COOKIE; s++) {
		struct blkring_dev *dev = pd_linear(legs, 3, s);
		unsigned char *buf = aligned_alloc(BS, 4 * BS), *zero = calloc(1, 4 * BS);
		uint64_t at = (LEG_SECTORS - 8) * 512; /* two legs' worth */
		struct blkring ring;

		CHECK(buf && zero);
		pd_ring(&ring, 16, dev);
		blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
		blkring_prep_cmd_discard(ring_sqe(&ring), 0, at, 2 * BS);
		blkring_prep_read(ring_sqe(&ring), 0, buf + BS, BS, 8 * BS);
		blkring_prep_cmd_write_zeroes(ring_sqe(&ring), 0, at + 2 * BS, 2 * BS, 0);
		blkring_prep_fsync(ring_sqe(&ring), 0, 0);
		CHECK_EQ(blkring_submit_and_wait(&ring, 5), 5);
		for (unsigned i = 0; i < 5; i++) {
			struct blkring_cqe c = ring_reap(&ring);

			CHECK(c.res == 0 || c.res == BS);
		}
		pd_check(buf, BS, 0);
		pd_check(buf + BS, BS, 8 * 8);
		blkring_prep_read(ring_sqe(&ring), 0, buf, 4 * BS, at);
		CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
		CHECK_EQ(ring_reap(&ring).res, 4 * BS);
		CHECK(!memcmp(buf, zero, 4 * BS));
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(dev), 0);
		free(buf);
		free(zero);
	}
	pd_release_legs();
}

static const struct test_case cases[] = {
    {"pd_data", pd_data, 0},
    {"pd_eopnotsupp", pd_eopnotsupp, 0},
    {"pd_exactly_once", pd_exactly_once, 0},
    {"pd_reload_while_polling", pd_reload_while_polling, 0},
    {"pd_stacked", pd_stacked, 0},
    {"pd_stacked_reload_closes_legs", pd_stacked_reload_closes_legs, 0},
    {"pd_spec_key", pd_spec_key, 0},
    {"pd_busy_leg_skipped", pd_busy_leg_skipped, 0},
    {"pd_split_read", pd_split_read, 0},
    {"pd_held_while_suspended", pd_held_while_suspended, 0},
    {"pd_held_across_reload_to_no_poll", pd_held_across_reload_to_no_poll, 0},
    {"pd_exit_inflight", pd_exit_inflight, 0},
    {"pd_commands", pd_commands, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
