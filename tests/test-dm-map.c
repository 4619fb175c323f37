// SPDX-License-Identifier: MIT
/*
 * Volume mapping: dm-stripe's sector and range math against a sector-by-
 * sector reference, and sector -> (leg, sector) through real volumes on
 * memory-backed null devices (a sector written through the volume is
 * read back from the leg where the table says it lives).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dm/dm.h"
#include "test.h"

#define A "null:memory_backed=1,size=1M,name=a"
#define B "null:memory_backed=1,size=1M,name=b"
#define C "null:memory_backed=1,size=1M,name=c"

static struct dm_stripe_geom geom(uint32_t stripes, uint32_t chunk)
{
	return (struct dm_stripe_geom){.stripes = stripes,
	                               .chunk = chunk,
	                               .chunk_shift =
	                                   (chunk & (chunk - 1)) ? -1 : __builtin_ctz(chunk)};
}

/* Expected values worked out by hand from dm-stripe's formula. */
static void test_stripe_sector(void)
{
	static const struct {
		uint32_t stripes, chunk;
		uint64_t sector;
		uint32_t stripe;
		uint64_t result;
	} cases[] = {
	    {3, 24, 0, 0, 0},     {3, 24, 23, 0, 23},  {3, 24, 24, 1, 0},   {3, 24, 48, 2, 0},
	    {3, 24, 72, 0, 24},   {3, 24, 100, 1, 28}, {3, 24, 143, 2, 47}, {2, 8, 0, 0, 0},
	    {2, 8, 7, 0, 7},      {2, 8, 8, 1, 0},     {2, 8, 16, 0, 8},    {2, 8, 31, 1, 15},
	    {1, 12, 100, 0, 100}, {5, 9, 44, 4, 8},    {5, 9, 45, 0, 9},    {4, 128, 1000, 3, 232},
	};

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dm_stripe_geom g = geom(cases[i].stripes, cases[i].chunk);
		uint32_t stripe;
		uint64_t result;

		blkring__stripe_map_sector(&g, cases[i].sector, &stripe, &result);
		if (stripe != cases[i].stripe || result != cases[i].result)
			TEST_FAIL("case %u: %u stripes, chunk %u, sector %llu: got stripe %u "
			          "sector %llu, expected %u %llu",
			          i, cases[i].stripes, cases[i].chunk,
			          (unsigned long long)cases[i].sector, stripe,
			          (unsigned long long)result, cases[i].stripe,
			          (unsigned long long)cases[i].result);
	}
}

/* The reference: every sector of the range mapped one by one. */
static void reference_range(const struct dm_stripe_geom *g, uint64_t sector, uint64_t len,
                            uint32_t want, uint64_t *lo, uint64_t *hi, uint64_t *count)
{
	*lo = UINT64_MAX;
	*hi = 0;
	*count = 0;
	for (uint64_t s = sector; s < sector + len; s++) {
		uint32_t stripe;
		uint64_t result;

		blkring__stripe_map_sector(g, s, &stripe, &result);
		if (stripe != want)
			continue;
		*lo = result < *lo ? result : *lo;
		*hi = result + 1 > *hi ? result + 1 : *hi;
		(*count)++;
	}
}

static void check_range(uint32_t stripes, uint32_t chunk, uint64_t sector, uint64_t len)
{
	struct dm_stripe_geom g = geom(stripes, chunk);

	for (uint32_t t = 0; t < stripes; t++) {
		uint64_t lo, hi, count, begin = 0, nr = 0;
		bool some = blkring__stripe_map_range(&g, sector, len, t, &begin, &nr);

		reference_range(&g, sector, len, t, &lo, &hi, &count);
		if (!count && some)
			TEST_FAIL("%u x %u [%llu+%llu) stripe %u: range %llu+%llu, expected none",
			          stripes, chunk, (unsigned long long)sector,
			          (unsigned long long)len, t, (unsigned long long)begin,
			          (unsigned long long)nr);
		if (count && (!some || begin != lo || nr != hi - lo || nr != count))
			TEST_FAIL("%u x %u [%llu+%llu) stripe %u: got %d %llu+%llu, expected "
			          "%llu+%llu",
			          stripes, chunk, (unsigned long long)sector,
			          (unsigned long long)len, t, some, (unsigned long long)begin,
			          (unsigned long long)nr, (unsigned long long)lo,
			          (unsigned long long)(hi - lo));
	}
}

static void test_stripe_ranges(void)
{
	static const uint32_t shapes[][2] = {{1, 8}, {2, 8}, {3, 24}, {3, 16}, {4, 10}, {5, 9}};

	for (unsigned i = 0; i < ARRAY_SIZE(shapes); i++) {
		uint32_t stripes = shapes[i][0], chunk = shapes[i][1];
		uint64_t width = (uint64_t)stripes * chunk * 4;

		for (uint64_t s = 0; s < width; s += 3)
			for (uint64_t len = 1; s + len <= width; len += 5)
				check_range(stripes, chunk, s, len);
	}
}

static void test_max_io_len(void)
{
	struct dm_target ti = {.begin = 10, .len = 100, .max_io_len = 24};
	struct dm_target plain = {.begin = 10, .len = 100};

	CHECK_EQ(blkring__dm_max_io_len(&ti, 10), 24);
	CHECK_EQ(blkring__dm_max_io_len(&ti, 33), 1);
	CHECK_EQ(blkring__dm_max_io_len(&ti, 34), 24);
	CHECK_EQ(blkring__dm_max_io_len(&ti, 100), 6);
	CHECK_EQ(blkring__dm_max_io_len(&ti, 106), 4); /* the target's end comes first */
	CHECK_EQ(blkring__dm_max_io_len(&plain, 10), 100);
	CHECK_EQ(blkring__dm_max_io_len(&plain, 109), 1);
}

/* ---- through real volumes ---- */

struct where {
	uint64_t vol_sector;
	const char *leg;
	uint64_t leg_sector;
};

static void check_mapping(const char *table, const struct where *w, unsigned n)
{
	struct blkring_dev *vol;
	char buf[512], back[512];
	int ret = blkring_vol_create(table, NULL, &vol);

	if (ret)
		TEST_FAIL("table: %s (%s)", strerror(-ret), blkring_last_error());
	for (unsigned i = 0; i < n; i++) {
		struct blkring_dev *leg = test_open(w[i].leg);

		memset(buf, 0, sizeof(buf));
		snprintf(buf, sizeof(buf), "volume sector %llu",
		         (unsigned long long)w[i].vol_sector);
		CHECK_EQ(blkring_dev_pwrite(vol, buf, 512, w[i].vol_sector * 512), 512);
		CHECK_EQ(blkring_dev_pread(leg, back, 512, w[i].leg_sector * 512), 512);
		if (memcmp(buf, back, 512))
			TEST_FAIL("volume sector %llu: not at %s sector %llu",
			          (unsigned long long)w[i].vol_sector, w[i].leg,
			          (unsigned long long)w[i].leg_sector);
		blkring_dev_close(leg);
	}
	CHECK_EQ(blkring_dev_close(vol), 0);
}

static void test_linear_mapping(void)
{
	static const struct where w[] = {
	    {0, A, 37}, {1, A, 38}, {49, A, 86}, {50, B, 3}, {79, B, 32},
	};

	check_mapping("0 50 linear " A " 37\n50 30 linear " B " 3\n", w, ARRAY_SIZE(w));
}

static void test_striped_mapping(void)
{
	/* Three stripes, chunk 24 (not a power of two), odd offsets. */
	static const struct where w[] = {
	    {0, A, 5},   {23, A, 28},  {24, B, 11},  {48, C, 0},
	    {72, A, 29}, {100, B, 39}, {143, C, 47},
	};

	check_mapping("0 144 striped 3 24 " A " 5 " B " 11 " C " 0", w, ARRAY_SIZE(w));
}

static void test_striped_after_linear(void)
{
	/* Chunks count from the target's start, not the volume's. */
	static const struct where w[] = {
	    {0, A, 0}, {10, B, 3}, {17, B, 10}, {18, C, 1}, {26, B, 11}, {41, C, 16},
	};

	check_mapping("0 10 linear " A " 0\n10 32 striped 2 8 " B " 3 " C " 1", w, ARRAY_SIZE(w));
}

static const struct test_case cases[] = {
    {"stripe-sector", test_stripe_sector, 0},
    {"stripe-ranges", test_stripe_ranges, 0},
    {"max-io-len", test_max_io_len, 0},
    {"linear-mapping", test_linear_mapping, 0},
    {"striped-mapping", test_striped_mapping, 0},
    {"striped-after-linear", test_striped_after_linear, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
