// SPDX-License-Identifier: MIT
/*
 * I/O through volumes on memory-backed null devices: data round trips
 * through linear, striped and stacked volumes (completions inline and
 * from completion threads), the zero and error targets, flakey's up and
 * down intervals on an injected clock, discards and write zeroes sent as
 * one range per stripe, and BIO_NOWAIT refused before anything is issued.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dm/dm.h"
#include "test.h"

#define MEM(name, extra) "null:memory_backed=1,size=4M,name=" name extra
#define A MEM("a", "")
#define B MEM("b", "")
#define C MEM("c", ",irqmode=none")
#define DA MEM("da", ",discard=1,write_zeroes=1")
#define DB MEM("db", ",discard=1,write_zeroes=1")
#define DC MEM("dc", ",discard=1,write_zeroes=1,irqmode=none")

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

/* Writes a pattern, reads it back through the volume. */
static void roundtrip(struct blkring_dev *dev, uint64_t offset, size_t len, unsigned seed)
{
	unsigned char *w = malloc(len), *r = malloc(len);

	CHECK(w && r);
	fill(w, len, seed);
	CHECK_EQ(blkring_dev_pwrite(dev, w, len, offset), (ssize_t)len);
	memset(r, 0, len);
	CHECK_EQ(blkring_dev_pread(dev, r, len, offset), (ssize_t)len);
	if (memcmp(w, r, len))
		TEST_FAIL("data differs at offset %llu length %zu", (unsigned long long)offset,
		          len);
	free(w);
	free(r);
}

/* I/Os at odd places and of odd sizes cross targets and chunks. */
static void roundtrips(struct blkring_dev *dev)
{
	static const struct {
		uint64_t sector;
		size_t sectors;
	} io[] = {{0, 1}, {7, 9}, {23, 50}, {100, 300}, {1, 2047}, {513, 128}};
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	for (unsigned i = 0; i < ARRAY_SIZE(io); i++)
		if ((io[i].sector + io[i].sectors) * 512 <= info.size)
			roundtrip(dev, io[i].sector * 512, io[i].sectors * 512, i);
	/* Overwrites in the middle leave the rest alone. */
	roundtrip(dev, 0, 2048 * 512, 99);
	roundtrip(dev, 300 * 512, 5 * 512, 100);
}

static void test_linear_roundtrip(void)
{
	struct blkring_dev *dev =
	    test_vol("0 1000 linear " A " 17\n1000 1048 linear " C " 3", NULL);

	roundtrips(dev);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_striped_roundtrip(void)
{
	struct blkring_dev *dev = test_vol("0 2160 striped 3 24 " A " 5 " B " 11 " C " 0", NULL);

	roundtrips(dev);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static char dir[64];

static void put_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ(system(cmd), 0);
}

/* A volume on volumes: striped over a striped volume and a linear one. */
static void test_stacked_roundtrip(void)
{
	struct blkring_dev *dev;

	snprintf(dir, sizeof(dir), "/tmp/blkring-dm-XXXXXX");
	CHECK(mkdtemp(dir));
	put_file("inner-striped.table", "0 2048 striped 2 16 " A " 0 " B " 0\n");
	put_file("inner-linear.table", "0 1024 linear " C " 100\n1024 1024 linear " B " 1024\n");
	dev = test_vol(
	    "0 500 linear table:inner-linear.table 0\n"
	    "500 2000 striped 2 40 table:inner-striped.table 8 table:inner-linear.table 500\n",
	    dir);
	roundtrips(dev);
	CHECK_EQ(blkring_dev_close(dev), 0);
	remove_dir();
}

static bool all_zero(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

static void test_zero_target(void)
{
	struct blkring_dev *dev = test_vol("0 64 zero\n64 64 linear " C " 0", NULL);
	unsigned char buf[128 * 512];

	fill(buf, sizeof(buf), 1);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(blkring_dev_pread(dev, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	CHECK(all_zero(buf, 64 * 512)); /* the write to the zero target was dropped */
	CHECK(!all_zero(buf + 64 * 512, 64 * 512));
	CHECK_EQ(blkring_dev_close(dev), 0);

	dev = test_vol("0 64 zero", NULL);
	CHECK_EQ(blkring_dev_discard(dev, 0, 8 * 512), 0);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 8 * 512, 8 * 512, 0), 0);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_error_target(void)
{
	struct blkring_dev *dev = test_vol("0 64 error\n64 64 linear " DC " 0", NULL);
	unsigned char buf[64 * 512] = {0};
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), -EIO);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 63 * 512), -EIO);
	CHECK_EQ(blkring_dev_discard(dev, 0, 512), -EIO);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 512, 0), -EIO);
	/* One bio over both targets: the error wins over the good half. */
	CHECK_EQ(blkring_dev_pread(dev, buf, sizeof(buf), 32 * 512), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 64 * 512), 512);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.errors[BLKRING_DIR_READ], 2);
	CHECK_EQ(info.errors[BLKRING_DIR_WRITE], 1);
	CHECK_EQ(info.ios[BLKRING_DIR_READ], 1);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* ---- flakey, on a clock the test moves ---- */

static uint64_t fake_ns;

static uint64_t fake_clock(void)
{
	return fake_ns;
}

#define SEC 1000000000ULL

struct flakey_case {
	const char *features;
	int read_down, write_down; /* results while down */
	bool write_lands;          /* a successful write while down reaches the device */
};

static void check_flakey(const struct flakey_case *fc)
{
	char table[256];
	unsigned char w[512], r[512];
	struct blkring_dev *dev;

	blkring__dm_clock_ns = fake_clock;
	fake_ns = 1000 * SEC;
	snprintf(table, sizeof(table), "0 64 flakey " C " 0 2 3%s", fc->features);
	dev = test_vol(table, NULL);
	fill(w, sizeof(w), 1);
	/* Up for 2 s. */
	CHECK_EQ(blkring_dev_pwrite(dev, w, 512, 0), 512);
	fake_ns += 2 * SEC - 1;
	CHECK_EQ(blkring_dev_pread(dev, r, 512, 0), 512);
	CHECK(!memcmp(w, r, 512));
	/* Down for 3 s. */
	fake_ns += 1;
	fill(w, sizeof(w), 2);
	CHECK_EQ(blkring_dev_pread(dev, r, 512, 0), fc->read_down);
	CHECK_EQ(blkring_dev_pwrite(dev, w, 512, 0), fc->write_down);
	fake_ns += 3 * SEC - 1;
	CHECK_EQ(blkring_dev_pread(dev, r, 512, 0), fc->read_down);
	/* Up again: what the down interval did to the data shows. */
	fake_ns += 1;
	CHECK_EQ(blkring_dev_pread(dev, r, 512, 0), 512);
	fill(w, sizeof(w), fc->write_down == 512 && fc->write_lands ? 2 : 1);
	CHECK(!memcmp(w, r, 512));
	/* And the cycle repeats. */
	fake_ns += 5 * SEC + 2 * SEC;
	CHECK_EQ(blkring_dev_pread(dev, r, 512, 0), fc->read_down);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_flakey(void)
{
	static const struct flakey_case cases[] = {
	    {"", -EIO, -EIO, false},
	    {" 1 drop_writes", 512, 512, false},
	    {" 1 error_writes", 512, -EIO, false},
	    {" 1 error_reads", -EIO, 512, true},
	    {" 2 error_reads drop_writes", -EIO, 512, false},
	};

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++)
		check_flakey(&cases[i]);
}

static void test_flakey_always(void)
{
	unsigned char buf[512] = {0};
	struct blkring_dev *dev =
	    test_vol("0 64 flakey " C " 0 0 1\n64 64 flakey " C " 0 1 0", NULL);

	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 64 * 512), 512);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* ---- discards and write zeroes: one range per stripe ---- */

struct leg_expect {
	uint64_t lo, hi, count;
};

/* Sector by sector, which leg sectors a volume range covers. */
static void expect_ranges(const struct dm_stripe_geom *g, uint64_t sector, uint64_t len,
                          const uint64_t *offset, struct leg_expect *e)
{
	for (uint32_t t = 0; t < g->stripes; t++)
		e[t] = (struct leg_expect){UINT64_MAX, 0, 0};
	for (uint64_t s = sector; s < sector + len; s++) {
		uint32_t t;
		uint64_t r;

		blkring__stripe_map_sector(g, s, &t, &r);
		r += offset[t];
		e[t].lo = r < e[t].lo ? r : e[t].lo;
		e[t].hi = r + 1 > e[t].hi ? r + 1 : e[t].hi;
		e[t].count++;
	}
}

static void leg_counts(struct blkring_dev *const *legs, unsigned n, unsigned dir, uint64_t *ios,
                       uint64_t *bytes)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_dev_info info;

		CHECK_EQ(blkring_dev_info(legs[i], &info), 0);
		ios[i] = info.ios[dir];
		bytes[i] = info.bytes[dir];
	}
}

/* The leg's sectors in [lo, hi) read as zeros, the rest as the fill. */
static void check_leg_data(struct blkring_dev *leg, uint64_t start, uint64_t len,
                           const struct leg_expect *e)
{
	unsigned char buf[512];

	for (uint64_t s = start; s < start + len; s++) {
		bool hit = e->count && s >= e->lo && s < e->hi;

		CHECK_EQ(blkring_dev_pread(leg, buf, 512, s * 512), 512);
		if (hit != all_zero(buf, 512))
			TEST_FAIL("leg sector %llu: %s", (unsigned long long)s,
			          hit ? "not zeroed" : "zeroed but outside the range");
	}
}

static void check_range_op(bool zeroes, uint64_t sector, uint64_t len)
{
	static const uint64_t offset[3] = {5, 0, 16};
	const struct dm_stripe_geom g = {.stripes = 3, .chunk = 24, .chunk_shift = -1};
	struct blkring_dev *legs[3] = {test_open(DA), test_open(DB), test_open(DC)};
	unsigned dir = zeroes ? BLKRING_DIR_WRITE_ZEROES : BLKRING_DIR_DISCARD;
	uint64_t ios0[3], bytes0[3], ios1[3], bytes1[3];
	struct leg_expect e[3];
	unsigned char *fillbuf = malloc(144 * 512 * 2);
	struct blkring_dev *dev = test_vol("0 288 striped 3 24 " DA " 5 " DB " 0 " DC " 16", NULL);

	CHECK(fillbuf);
	memset(fillbuf, 0xaa, 144 * 512 * 2);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(blkring_dev_pwrite(legs[i], fillbuf, 144 * 512, 0), 144 * 512);
	leg_counts(legs, 3, dir, ios0, bytes0);
	if (zeroes)
		CHECK_EQ(blkring_dev_write_zeroes(dev, sector * 512, len * 512, 0), 0);
	else
		CHECK_EQ(blkring_dev_discard(dev, sector * 512, len * 512), 0);
	leg_counts(legs, 3, dir, ios1, bytes1);
	expect_ranges(&g, sector, len, offset, e);
	for (unsigned i = 0; i < 3; i++) {
		if (ios1[i] - ios0[i] != (e[i].count ? 1 : 0) ||
		    bytes1[i] - bytes0[i] != e[i].count * 512)
			TEST_FAIL("[%llu+%llu) leg %u: %llu bios, %llu bytes; expected %d, %llu",
			          (unsigned long long)sector, (unsigned long long)len, i,
			          (unsigned long long)(ios1[i] - ios0[i]),
			          (unsigned long long)(bytes1[i] - bytes0[i]), e[i].count ? 1 : 0,
			          (unsigned long long)e[i].count * 512);
		check_leg_data(legs[i], 0, 120, &e[i]);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(blkring_dev_close(legs[i]), 0);
	free(fillbuf);
}

static void test_striped_discard_ranges(void)
{
	static const uint64_t ranges[][2] = {
	    {0, 8}, {0, 24}, {0, 72}, {5, 30}, {20, 60}, {30, 100}, {47, 2}, {70, 200}, {0, 288},
	};

	for (unsigned i = 0; i < ARRAY_SIZE(ranges); i++) {
		check_range_op(false, ranges[i][0], ranges[i][1]);
		check_range_op(true, ranges[i][0], ranges[i][1]);
	}
}

/* Cut at target boundaries only: one bio per leg of each target. */
static void test_discard_across_targets(void)
{
	struct blkring_dev *da = test_open(DA), *db = test_open(DB);
	struct blkring_dev *legs[2] = {da, db};
	uint64_t ios0[2], bytes0[2], ios1[2], bytes1[2];
	struct blkring_dev *dev = test_vol(
	    "0 100 linear " DA " 0\n100 96 striped 2 8 " DA " 200 " DB " 0\n196 50 zero", NULL);

	leg_counts(legs, 2, BLKRING_DIR_DISCARD, ios0, bytes0);
	CHECK_EQ(blkring_dev_discard(dev, 50 * 512, 180 * 512), 0);
	leg_counts(legs, 2, BLKRING_DIR_DISCARD, ios1, bytes1);
	/* da: sectors 50-99 of the linear target, then its stripe's 48. */
	CHECK_EQ(ios1[0] - ios0[0], 2);
	CHECK_EQ(bytes1[0] - bytes0[0], (50 + 48) * 512);
	CHECK_EQ(ios1[1] - ios0[1], 1);
	CHECK_EQ(bytes1[1] - bytes0[1], 48 * 512);
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(blkring_dev_close(da), 0);
	CHECK_EQ(blkring_dev_close(db), 0);
}

/* ---- BIO_NOWAIT ---- */

struct done {
	_Atomic int calls;
	int status;
};

static void count_end(struct blkring_bio *bio)
{
	struct done *d = bio->private;

	d->status = bio->status;
	atomic_fetch_add(&d->calls, 1);
}

static int submit_nowait(struct blkring_dev *dev, void *buf, uint64_t sector, size_t len,
                         struct done *d)
{
	struct blkring_bio bio;
	int ret;

	blkring__bio_init(&bio, dev, REQ_OP_READ, sector * 512, len);
	blkring__bio_set_buf(&bio, buf, len);
	bio.flags = BIO_NOWAIT;
	bio.end_io = count_end;
	bio.private = d;
	ret = blkring__submit_bio(&bio);
	while (!ret && !atomic_load(&d->calls))
		;
	return ret;
}

/* A NOWAIT bio that would need more than one clone is refused before
 * anything is issued; one that fits a single clone goes through. */
static void test_nowait_split(void)
{
	struct blkring_dev *dev = test_vol("0 96 striped 2 8 " C " 0 " DC " 0", NULL);
	unsigned char buf[16 * 512];
	struct done d = {0};

	CHECK_EQ(submit_nowait(dev, buf, 0, 8 * 512, &d), 0);
	CHECK_EQ(atomic_load(&d.calls), 1);
	CHECK_EQ(d.status, 0);
	d.calls = 0;
	CHECK_EQ(submit_nowait(dev, buf, 4, 8 * 512, &d), -EAGAIN);
	CHECK_EQ(atomic_load(&d.calls), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static const struct test_case cases[] = {
    {"linear-roundtrip", test_linear_roundtrip, 0},
    {"striped-roundtrip", test_striped_roundtrip, 0},
    {"stacked-roundtrip", test_stacked_roundtrip, 0},
    {"zero-target", test_zero_target, 0},
    {"error-target", test_error_target, 0},
    {"flakey", test_flakey, 0},
    {"flakey-always", test_flakey_always, 0},
    {"striped-discard-ranges", test_striped_discard_ranges, 0},
    {"discard-across-targets", test_discard_across_targets, 0},
    {"nowait-split", test_nowait_split, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
