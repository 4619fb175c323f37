// SPDX-License-Identifier: MIT
/*
 * fio's workload shapes (tools/shape.c): how the options read (bssplit's
 * shares and order, bsrange, rw=MODE:N, the zoned index, distributions and
 * percentages per direction), and what the shaped planner makes of them on
 * a job of one file: offsets with holes, sizes that fit, strided zones,
 * and no shape where none is asked for.
 */
#include "../tools/error.h"
#include "../tools/job.h"
#include "../tools/options.h"
#include "../tools/shape.h"
#include "test.h"

static struct job_opts o;
static struct run_opts r;

static void set(const char *name, const char *val)
{
	if (opt_set(&o, &r, name, val, "here", true, true))
		TEST_FAIL("%s=%s: %s", name, val, tool_last_error());
}

static void test_bssplit(void)
{
	const struct bs_split *s = &o.bssplit[DDIR_READ];

	opts_defaults(&o, &r);
	/* fio's example: the empty shares take 25% each, in share order */
	set("bssplit", "4k/50:1k/:32k/");
	CHECK_EQ(s->nr, 3);
	CHECK(s->e[0].bs == 1024 && s->e[0].pct == 25);
	CHECK(s->e[1].bs == 32768 && s->e[1].pct == 25);
	CHECK(s->e[2].bs == 4096 && s->e[2].pct == 50);
	CHECK(opts_min_bs(&o, DDIR_READ) == 1024 && opts_max_bs(&o, DDIR_READ) == 32768);
	/* per direction as bs=; write zeroes takes trim's */
	set("bssplit", "2k/50:4k/50,4k/90:8k/10");
	CHECK(o.bssplit[DDIR_READ].nr == 2 && o.bssplit[DDIR_WRITE].e[1].bs == 4096);
	CHECK_EQ(o.bssplit[DDIR_TRIM].e[0].pct, 10);
	CHECK_EQ(o.bssplit[DDIR_ZERO].e[1].pct, 90);
	/* a lone size is all of it; a share of nothing is dropped */
	set("bssplit", "8k");
	CHECK(s->nr == 1 && s->e[0].pct == 100);
	set("bssplit", "8k/100:4k/");
	CHECK(s->nr == 1 && s->e[0].bs == 8192);
	CHECK_EQ(opts_min_bs(&o, DDIR_READ), 8192);
	/* over 100% as fio takes it: the size left without a share gets none */
	set("bssplit", "4k/60:8k/60:16k/");
	CHECK(s->nr == 2 && s->over == 120 && s->e[1].bs == 8192);
	CHECK(opt_set(&o, &r, "bssplit", "4k/60:8k/50:16k:32k", "here", true, true) == -EINVAL);
}

static void test_bsrange_and_bs(void)
{
	opts_defaults(&o, &r);
	set("bsrange", "16k-4k,2k:8k");
	CHECK(o.bsrange[DDIR_READ].min == 4096 && o.bsrange[DDIR_READ].max == 16384);
	CHECK(o.bsrange[DDIR_WRITE].min == 2048 && o.bsrange[DDIR_TRIM].max == 8192);
	set("bs", "64k");
	/* bsrange over bs, bssplit over both */
	CHECK(opts_min_bs(&o, DDIR_READ) == 4096 && opts_max_bs(&o, DDIR_READ) == 16384);
	set("bssplit", "32k/100");
	CHECK(opts_min_bs(&o, DDIR_READ) == 32768 && opts_max_bs(&o, DDIR_READ) == 32768);
	opts_defaults(&o, &r);
	CHECK(opts_min_bs(&o, DDIR_WRITE) == 4096 && opts_max_bs(&o, DDIR_WRITE) == 4096);
}

static void test_rw_modifier(void)
{
	opts_defaults(&o, &r);
	CHECK_EQ(o.rw.nr, 0);
	set("rw", "read:8k");
	CHECK(!rw_modes[o.rw.mode].random && o.rw.nr == 8192);
	set("rw", "randread:4");
	CHECK(rw_modes[o.rw.mode].random && o.rw.nr == 4);
	set("rw", "randwrite");
	CHECK_EQ(o.rw.nr, 1);
	set("rw_sequencer", "identical");
	CHECK_EQ(o.rw_sequencer, RW_SEQ_IDENTICAL);
}

static void test_distributions(void)
{
	const struct rand_dist *d = &o.random_distribution;

	opts_defaults(&o, &r);
	CHECK(d->kind == DIST_RANDOM);
	set("random_distribution", "zipf");
	CHECK(d->kind == DIST_ZIPF && d->value == 1.1 && d->center == -1);
	set("random_distribution", "pareto:0.3:0.25");
	CHECK(d->kind == DIST_PARETO && d->value == 0.3 && d->center == 0.25);
	/* fio's index: which zone each 1% of the accesses goes to */
	set("random_distribution", "zoned:60/10:30/20:8/30:2/40");
	CHECK(d->kind == DIST_ZONED && d->zones[DDIR_WRITE].set);
	CHECK(d->zones[DDIR_READ].at[0].start == 0 && d->zones[DDIR_READ].at[59].end == 10);
	CHECK(d->zones[DDIR_READ].at[60].start == 10 && d->zones[DDIR_READ].at[89].end == 30);
	CHECK(d->zones[DDIR_READ].at[97].end == 60 && d->zones[DDIR_READ].at[99].end == 100);
	set("random_distribution", "zoned_abs:50/1M:50/1M,100/4M");
	CHECK(d->zones[DDIR_READ].at[49].end == 1 << 20 &&
	      d->zones[DDIR_READ].at[99].end == 2 << 20);
	CHECK(d->zones[DDIR_WRITE].at[99].end == 4 << 20);
	set("percentage_random", "50,20");
	CHECK(o.percentage_random[DDIR_READ] == 50 && o.percentage_random[DDIR_ZERO] == 20);
}

/* A one-file job on a region of len bytes with the options given (name,
 * value, ..., NULL), planned as job.c plans it. */
static struct job *planned(uint64_t len, const char *const *opts)
{
	static struct job_file file;
	static struct io_unit units[8], *free_units[8];
	static struct job j;

	opts_defaults(&o, &r);
	for (; *opts; opts += 2)
		set(opts[0], opts[1]);
	file = (struct job_file){.len = len, .dev_size = len, .lbs = 512, .bytes_left = len};
	j = (struct job){.o = &o, .files = &file, .nr_files = 1, .number = 1, .depth = 8};
	j.ios = units;
	j.free = free_units;
	for (unsigned i = 0; i < 8; i++)
		free_units[i] = &units[i];
	j.nr_free = 8;
	j.number_left = j.io_bytes_left = UINT64_MAX;
	CHECK_EQ(plan_setup(&j, 1), 0);
	return &j;
}

/* Plans up to n I/Os into ios, their units idle again; how many. */
static unsigned plan_n(struct job *j, struct io_unit **ios, unsigned n)
{
	unsigned got = j->plan(j, ios, n);

	for (unsigned i = 0; i < got; i++)
		j->free[j->nr_free++] = ios[i];
	return got;
}

static void test_holes(void)
{
	static const char *const opts[] = {"rw", "read:8k", NULL};
	struct job *j = planned(64 << 10, opts);
	struct io_unit *ios[8];

	/* 8k after each 4k block, and no I/O past the region */
	CHECK(j->shape);
	CHECK_EQ(plan_n(j, ios, 8), 6);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(ios[i]->offset, i * 12288);
	CHECK_EQ(plan_n(j, ios, 8), 0);
	shape_free(j);
}

static void test_sizes_fit(void)
{
	static const char *const opts[] = {"rw", "write", "bsrange", "4k-16k", NULL};
	struct job *j = planned(1 << 20, opts);
	struct io_unit *ios[8];
	uint64_t at = 0;
	unsigned n;

	/* back to back, each of the range, to the region's end exactly */
	while ((n = plan_n(j, ios, 8))) {
		for (unsigned i = 0; i < n; i++) {
			CHECK_EQ(ios[i]->offset, at);
			CHECK(ios[i]->len >= 4096 && ios[i]->len <= 16384 && !(ios[i]->len % 4096));
			at += ios[i]->len;
		}
	}
	CHECK_EQ(at, 1 << 20);
	shape_free(j);
}

static void test_strided(void)
{
	static const char *const opts[] = {"rw", "randread",  "zonemode", "strided", "zonesize",
	                                   "4k", "zonerange", "16k",      NULL};
	struct job *j = planned(1 << 20, opts);
	struct io_unit *ios[1];

	/* one 4k block somewhere in each 16k zone, zone after zone */
	for (unsigned k = 0; k < 64; k++) {
		CHECK_EQ(plan_n(j, ios, 1), 1);
		CHECK_EQ(ios[0]->offset / 16384, k);
		CHECK_EQ(ios[0]->len, 4096);
	}
	shape_free(j);
}

static void test_lean_kept(void)
{
	static const char *const opts[] = {"rw", "randread", "bsrange", "8k-8k", NULL};
	struct job *j = planned(1 << 20, opts);

	/* a range of one size is bs: no shape, the lean planner */
	CHECK(!j->shape && j->lean && j->bs[DDIR_READ] == 8192);
}

static const struct test_case cases[] = {
    {"bssplit", test_bssplit, 0},
    {"bsrange_and_bs", test_bsrange_and_bs, 0},
    {"rw_modifier", test_rw_modifier, 0},
    {"distributions", test_distributions, 0},
    {"holes", test_holes, 0},
    {"sizes_fit", test_sizes_fit, 0},
    {"strided", test_strided, 0},
    {"lean_kept", test_lean_kept, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
