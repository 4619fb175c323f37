// SPDX-License-Identifier: MIT
/*
 * The latency histogram against fio's layout and against exact percentiles
 * of sorted samples.
 */
#include <math.h>

#include "../tools/histogram.h"
#include "../tools/options.h"
#include "../tools/plan.h"
#include "test.h"

static const double fio_default[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                     80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

/* fio's bucket of v, written the way fio's plat_val_to_idx reads. */
static unsigned fio_index(uint64_t v)
{
	unsigned msb = v ? 63 - (unsigned)__builtin_clzll(v) : 0, error_bits, idx;

	if (msb <= HIST_BITS)
		return (unsigned)v;
	error_bits = msb - HIST_BITS;
	idx = ((error_bits + 1) << HIST_BITS) + (unsigned)((v >> error_bits) & (HIST_VAL - 1));
	return idx < HIST_NR - 1 ? idx : HIST_NR - 1;
}

static void test_layout(void)
{
	uint64_t s = 1;

	/* below 128 ns every value has its own bucket */
	for (uint64_t v = 0; v < 128; v++) {
		CHECK_EQ(hist_index(v), v);
		CHECK_EQ(hist_value((unsigned)v), v);
	}
	CHECK_EQ(hist_index(128), 128);
	CHECK_EQ(hist_index(129), 128);
	CHECK_EQ(hist_index(130), 129);
	CHECK_EQ(hist_value(128), 129); /* bucket [128,130): its middle */
	CHECK_EQ(hist_lower(129), 130);
	CHECK_EQ(hist_index(1ULL << 34), HIST_NR - 1);
	CHECK_EQ(hist_index(UINT64_MAX), HIST_NR - 1);
	for (int i = 0; i < 200000; i++) {
		uint64_t v = rng_next(&s) >> (rng_next(&s) % 64);
		unsigned idx = hist_index(v);

		if (idx != fio_index(v))
			TEST_FAIL("bucket of %llu: %u, fio's %u", (unsigned long long)v, idx,
			          fio_index(v));
		/* a bucket's lower bound is in it, and values below it are not */
		if (idx < HIST_NR - 1 &&
		    (hist_lower(idx) > v || hist_index(hist_lower(idx)) != idx))
			TEST_FAIL("lower bound of bucket %u is %llu for %llu", idx,
			          (unsigned long long)hist_lower(idx), (unsigned long long)v);
	}
	/* the midpoint is within 1/128 of every value of its bucket */
	for (unsigned idx = 128; idx < HIST_NR; idx++) {
		double mid = (double)hist_value(idx), lo = (double)hist_lower(idx);

		CHECK(fabs(mid - lo) / lo <= 1.0 / 128);
		CHECK_EQ(hist_index(hist_value(idx)), idx);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * fio's rule, on sorted samples: the p-th percentile is the bucket value of
 * the smallest sample whose rank r (1-based) reaches p% of n.
 */
static void check_against_sorted(uint64_t *v, size_t n, const double *pl, unsigned np)
{
	struct hist *h = calloc(1, sizeof(*h));
	uint64_t out[BENCH_MAX_PERCENTILES];

	for (size_t i = 0; i < n; i++)
		hist_add(h, v[i]);
	qsort(v, n, sizeof(*v), cmp_u64);
	CHECK_EQ(hist_percentiles(h, pl, np, out), n);
	for (unsigned k = 0; k < np; k++) {
		long double want = (long double)pl[k] / 100.0L * n;
		size_t r = 1;
		uint64_t exact;

		while ((long double)r < want)
			r++;
		exact = v[r - 1];
		if (out[k] != hist_value(hist_index(exact)))
			TEST_FAIL("n=%zu p%.2f: %llu, sorted gives %llu (bucket %llu)", n, pl[k],
			          (unsigned long long)out[k], (unsigned long long)exact,
			          (unsigned long long)hist_value(hist_index(exact)));
		if (exact < (1ULL << 34) &&
		    fabs((double)out[k] - (double)exact) > (double)exact / 128 + 0.5)
			TEST_FAIL("p%.2f: %llu is not within 1/128 of %llu", pl[k],
			          (unsigned long long)out[k], (unsigned long long)exact);
	}
	free(h);
}

static void test_percentiles(void)
{
	static const size_t sizes[] = {1, 2, 3, 10, 99, 100, 1000, 12345, 100000};
	const double edge[] = {0.001, 33.333, 50, 99.999, 100};
	uint64_t s = 42;

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];
		uint64_t *v = malloc(n * sizeof(*v));

		/* log-uniform from 1 ns to about 1 s: every group gets samples */
		for (size_t i = 0; i < n; i++)
			v[i] = (rng_next(&s) >> 34) >> (rng_next(&s) % 30);
		check_against_sorted(v, n, fio_default, 17);
		/* narrow: a few buckets, many ties */
		for (size_t i = 0; i < n; i++)
			v[i] = 1000 + rng_below(&s, 200);
		check_against_sorted(v, n, fio_default, 17);
		for (size_t i = 0; i < n; i++)
			v[i] = i % 2 ? 5 : 5000000;
		check_against_sorted(v, n, edge, 5);
		for (size_t i = 0; i < n; i++)
			v[i] = 777;
		check_against_sorted(v, n, edge, 5);
		free(v);
	}
}

static void test_empty_and_merge(void)
{
	struct hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint64_t out[2] = {12345, 12345};
	const double pl[2] = {50, 99};

	CHECK_EQ(hist_percentiles(a, pl, 2, out), 0);
	CHECK_EQ(out[0], 12345);
	for (uint64_t v = 0; v < 1000; v++)
		hist_add(a, v);
	for (uint64_t v = 1000; v < 3000; v++)
		hist_add(b, v);
	hist_merge(a, b);
	CHECK_EQ(hist_total(a), 3000);
	CHECK_EQ(hist_percentiles(a, pl, 2, out), 3000);
	CHECK_EQ(out[0], hist_value(hist_index(1499)));
	CHECK_EQ(out[1], hist_value(hist_index(2969)));
	free(a);
	free(b);
}

static const struct test_case cases[] = {
    {"layout", test_layout, 0},
    {"percentiles", test_percentiles, 0},
    {"empty_and_merge", test_empty_and_merge, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
