// SPDX-License-Identifier: MIT
/*
 * Statistics, offsets and clock: mean and deviation against a direct
 * computation, merges, fio's depth and latency buckets, number formats,
 * offset generators (every block once per pass), and the clock's choice
 * and calibration.
 */
#include <math.h>
#include <unistd.h>

#include "../tools/clock.h"
#include "../tools/output.h"
#include "../tools/plan.h"
#include "../tools/stats.h"
#include "test.h"

/* Bandwidth samples: fio's running mean, and group_reporting's pure sum. */
static void check_sample_sum(void)
{
	struct sample_stat a, b, empty;

	sample_init(&a);
	sample_init(&b);
	sample_init(&empty);
	sample_add(&a, 100);
	sample_add(&a, 200);
	sample_add(&a, 300);
	CHECK(a.mean == 200.0 && sample_min(&a) == 100 && a.max == 300);
	CHECK(fabs(sample_stddev(&a) - 100.0) < 1e-9);
	sample_add(&b, 1000);
	sample_add(&b, 1000);
	sample_sum(&empty, &a); /* the first is taken as it is */
	CHECK(empty.n == 3 && empty.min == 100 && empty.mean == 200.0);
	sample_sum(&a, &b);
	CHECK(a.n == 5 && a.min == 1100 && a.max == 1300 && a.mean == 1200.0);
	/* S adds up (b's is 0), over the summed count: sqrt(20000 / 4) */
	CHECK(fabs(sample_stddev(&a) - sqrt(5000.0)) < 1e-9);
	CHECK(sample_pct_of_group(&a, 1200 * 1024) == 100.0);
	CHECK(fabs(sample_pct_of_group(&a, 2400 * 1024) - 50.0) < 1e-9);
	CHECK(sample_pct_of_group(&a, 1024) == 100.0);
}

static void test_lat_stat(void)
{
	struct lat_stat a, b, all;
	uint64_t s = 7, v[5000];
	double sum = 0, dev = 0, mean;

	lat_init(&a);
	lat_init(&b);
	lat_init(&all);
	CHECK_EQ(lat_min(&a), 0);
	CHECK(lat_mean(&a) == 0.0 && lat_stddev(&a) == 0.0);
	for (int i = 0; i < 5000; i++) {
		v[i] = 1000000 + rng_below(&s, 5000);
		lat_add(i < 2000 ? &a : &b, v[i]);
		lat_add(&all, v[i]);
		sum += (double)v[i];
	}
	mean = sum / 5000;
	for (int i = 0; i < 5000; i++)
		dev += ((double)v[i] - mean) * ((double)v[i] - mean);
	dev = sqrt(dev / 4999);
	lat_merge(&a, &b);
	CHECK_EQ(a.n, 5000);
	CHECK_EQ(a.min, all.min);
	CHECK_EQ(a.max, all.max);
	CHECK(fabs(lat_mean(&a) - mean) < 1e-6);
	/* a narrow spread far from zero: cancellation would show here */
	CHECK(fabs(lat_stddev(&a) - dev) < 1e-6 * dev);
	CHECK(lat_stddev(&all) == lat_stddev(&a));

	lat_init(&a);
	lat_init(&b);
	lat_add_n(&a, 300, 4);
	for (int i = 0; i < 4; i++)
		lat_add(&b, 300);
	CHECK(a.n == b.n && a.sum == b.sum && a.sumsq == b.sumsq && a.min == b.min &&
	      a.max == b.max);
	lat_add_n(&a, 7, 2);
	CHECK_EQ(a.n, 6);
	CHECK_EQ(a.min, 7);
	CHECK_EQ(a.sum, 4 * 300 + 2 * 7);
	CHECK(a.sumsq == 4 * 300 * 300 + 2 * 7 * 7);
	check_sample_sum();
}

static void test_buckets(void)
{
	/* fio's io_u_map: 1, 2-3, 4-7, ..., 32-63, 64 and more */
	static const unsigned depth[][2] = {{1, 0},  {2, 1},  {3, 1},  {4, 2},  {7, 2},   {8, 3},
	                                    {31, 4}, {32, 5}, {63, 5}, {64, 6}, {4096, 6}};
	/* fio's submit/complete map: 0, 1-4, 5-8, 9-16, 17-32, 33-64, more */
	static const unsigned batch[][2] = {{0, 0},  {1, 1},  {4, 1},   {5, 2},  {8, 2},
	                                    {9, 3},  {16, 3}, {17, 4},  {32, 4}, {33, 5},
	                                    {64, 5}, {65, 6}, {1000, 6}};

	for (size_t i = 0; i < sizeof(depth) / sizeof(depth[0]); i++)
		CHECK_EQ(depth_bucket(depth[i][0]), depth[i][1]);
	for (size_t i = 0; i < sizeof(batch) / sizeof(batch[0]); i++)
		CHECK_EQ(batch_bucket(batch[i][0]), batch[i][1]);
}

static void test_lat_buckets(void)
{
	struct job_stats *st = calloc(1, sizeof(*st));
	struct lat_buckets lb;

	job_stats_init(st);
	hist_add(&st->dir[DDIR_READ].clat_hist, 1);           /* ns "2": below 2 */
	hist_add(&st->dir[DDIR_READ].clat_hist, 260);         /* ns "500" */
	hist_add(&st->dir[DDIR_WRITE].clat_hist, 1500);       /* us "2" */
	hist_add(&st->dir[DDIR_WRITE].clat_hist, 30000000);   /* ms "50" */
	hist_add(&st->dir[DDIR_WRITE].clat_hist, 1500000000); /* ms "2000" */
	/* total latencies are not what fio counts there */
	hist_add(&st->dir[DDIR_WRITE].lat_hist, 3000000000);
	st->dir[DDIR_READ].clat.n = 2;
	st->dir[DDIR_WRITE].clat.n = 3;
	lat_buckets(st, &lb);
	CHECK(lb.ns[0] == 20.0 && lb.ns[7] == 20.0);
	CHECK(lb.us[0] == 20.0);
	CHECK(lb.ms[4] == 20.0 && lb.ms[10] == 20.0 && lb.ms[11] == 0.0);
	CHECK(!strcmp(lat_bucket_keys[7], "500") && !strcmp(lat_bucket_keys[11], ">=2000"));
	free(st);
}

static void test_fmt_num(void)
{
	static const struct {
		double v;
		bool pow2;
		const char *text;
	} cases[] = {
	    {0, false, "0"},          {999, false, "999"},          {9999, false, "9999"},
	    {33900, false, "33.9k"},  {1216000, false, "1216k"},    {13500000, false, "13.5M"},
	    {4096, true, "4096"},     {49152, true, "48.0Ki"},      {138412032, true, "132Mi"},
	    {54.3e9, false, "54.3G"}, {4981000000, false, "4981M"},
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt_num(buf, sizeof(buf), cases[i].v, cases[i].pow2);
		if (strcmp(buf, cases[i].text))
			TEST_FAIL("%.0f: '%s', expected '%s'", cases[i].v, buf, cases[i].text);
	}
}

/* Every block exactly once per pass, whatever the region's size. */
static void test_permutation(void)
{
	static const uint64_t sizes[] = {1, 2, 3, 7, 64, 1000, 4097, 65536};

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		uint64_t n = sizes[si];
		uint8_t *seen = calloc(n, 1);
		struct offset_gen g;
		uint64_t first[4], moved = 0;

		gen_init(&g, GEN_PERM, n, 1234);
		for (int pass = 0; pass < 2; pass++) {
			memset(seen, 0, n);
			for (uint64_t i = 0; i < n; i++) {
				uint64_t b = gen_perm(&g);

				if (b >= n || seen[b])
					TEST_FAIL(
					    "n=%llu pass %d: block %llu twice or out of range",
					    (unsigned long long)n, pass, (unsigned long long)b);
				seen[b] = 1;
				if (i < 4 && !pass)
					first[i] = b;
				if (i < 4 && pass)
					moved += b != first[i];
				if (i && b != (first[0] + i) % n)
					moved++;
			}
		}
		/* the order is not just counting, and changes between passes */
		if (n > 64)
			CHECK(moved > n);
		free(seen);
	}
}

static void test_generators(void)
{
	struct offset_gen a, b, c;
	uint64_t same = 0;

	gen_init(&a, GEN_SEQ, 5, 1);
	for (uint64_t i = 0; i < 12; i++)
		CHECK_EQ(gen_seq(&a), i % 5);
	gen_init(&a, GEN_RANDOM, 1000, 99);
	gen_init(&b, GEN_RANDOM, 1000, 99);
	gen_init(&c, GEN_RANDOM, 1000, 100);
	for (int i = 0; i < 10000; i++) {
		uint64_t x = gen_random(&a);

		CHECK(x < 1000);
		CHECK_EQ(x, gen_random(&b));
		same += x == gen_random(&c);
	}
	/* another seed, another sequence */
	CHECK(same < 100);
	gen_init(&a, GEN_PERM, 1000, 99);
	gen_init(&b, GEN_PERM, 1000, 99);
	for (int i = 0; i < 3000; i++)
		CHECK_EQ(gen_perm(&a), gen_perm(&b));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static void test_clock_choice(void)
{
	char cpu[] = "/tmp/blkring-cpuinfoXXXXXX", src[] = "/tmp/blkring-clocksrcXXXXXX";
	const char *why;

	close(mkstemp(cpu));
	close(mkstemp(src));
	write_file(cpu, "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n");
	CHECK(clock_tsc_invariant(cpu));
	write_file(cpu, "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp\n");
	CHECK(!clock_tsc_invariant(cpu));
	write_file(cpu, "processor\t: 0\nflags\t\t: fpu tsc nonstop_tsc\n");
	CHECK(!clock_tsc_invariant(cpu));
	CHECK(!clock_tsc_invariant("/nonexistent"));
	write_file(src, "tsc kvm-clock \n");
	CHECK(clock_kernel_trusts_tsc(src));
	write_file(src, "hpet acpi_pm \n");
	CHECK(!clock_kernel_trusts_tsc(src));
	CHECK(clock_kernel_trusts_tsc("/nonexistent"));
	unlink(cpu);
	unlink(src);

	CHECK_EQ(clock_init(CLOCK_SRC_GETTIME, &why), CLOCK_SRC_GETTIME);
	CHECK(!bench_clock.tsc && why && strstr(why, "clock_gettime"));
}

/* Whichever source is in use, it counts nanoseconds like CLOCK_MONOTONIC. */
static void check_clock_rate(void)
{
	struct timespec pause = {.tv_nsec = 30 * 1000 * 1000};
	uint64_t a = clock_now_ns(), m0 = clock_mono_ns(), b, m1;

	nanosleep(&pause, NULL);
	b = clock_now_ns();
	m1 = clock_mono_ns();
	CHECK(b > a);
	if (fabs((double)(b - a) - (double)(m1 - m0)) > 0.02 * (double)(m1 - m0) + 20000)
		TEST_FAIL("clock says %llu ns where CLOCK_MONOTONIC says %llu",
		          (unsigned long long)(b - a), (unsigned long long)(m1 - m0));
}

static void test_clock_rate(void)
{
	const char *why;
	int src = clock_init(CLOCK_SRC_CPU, &why);

	check_clock_rate();
	CHECK_EQ(clock_init(CLOCK_SRC_GETTIME, &why), CLOCK_SRC_GETTIME);
	check_clock_rate();
	if (src != CLOCK_SRC_CPU)
		SKIP("the TSC is not used here: %s", why);
}

static const struct test_case cases[] = {
    {"lat_stat", test_lat_stat, 0},
    {"buckets", test_buckets, 0},
    {"lat_buckets", test_lat_buckets, 0},
    {"fmt_num", test_fmt_num, 0},
    {"permutation", test_permutation, 0},
    {"generators", test_generators, 0},
    {"clock_choice", test_clock_choice, 0},
    {"clock_rate", test_clock_rate, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
