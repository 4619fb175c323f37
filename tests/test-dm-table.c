// SPDX-License-Identifier: MIT
/*
 * Table loading: every error with its message (line, target, argument),
 * nothing left open after a failed load, cycles, relative paths, one
 * device per spec, and the volume's features and limits from its legs.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dm/dm.h"
#include "test.h"

#define A "null:memory_backed=1,size=1M,name=a"
#define B "null:memory_backed=1,size=1M,name=b"
#define SMALL "null:size=1M,name=small"
#define B4K "null:size=1M,bs=4096,name=b4k"

struct bad_table {
	const char *text;
	int err;
	const char *msg; /* the whole message, or its start when it ends in '*' */
};

static const struct bad_table bad_tables[] = {
    {"0 100", -EINVAL, "line 1: expected 'start length target [arguments]'"},
    {"x 100 zero", -EINVAL, "line 1: start 'x': expected a sector number"},
    {"0 0 zero", -EINVAL, "line 1: length '0': expected a number of sectors above 0"},
    {"0 -5 zero", -EINVAL, "line 1: length '-5': expected a number of sectors above 0"},
    {"0 99999999999999999999 zero", -EINVAL,
     "line 1: length '99999999999999999999': expected a number of sectors above 0"},
    {"0 36028797018963968 zero", -EINVAL,
     "line 1: length 36028797018963968: the volume would pass 2^64 bytes"},
    {"10 100 zero", -EINVAL, "line 1: start 10 leaves a gap: the previous target ends at sector 0"},
    {"0 100 zero\n200 100 zero", -EINVAL,
     "line 2: start 200 leaves a gap: the previous target ends at sector 100"},
    {"0 100 zero\n50 100 zero", -EINVAL,
     "line 2: start 50 overlaps the previous target, which ends at sector 100"},
    {"\n# comment\n0 100 zero\n  \n100 5 mirror core", -EINVAL,
     "line 5: unknown target 'mirror'; known targets: linear, striped, zero, error, flakey"},
    {"# only a comment\n\n", -EINVAL, "the table has no targets"},
    {"0 100 zero extra", -EINVAL, "line 1: zero: expected no arguments, got 1"},
    {"0 100 error x y", -EINVAL, "line 1: error: expected no arguments, got 2"},
    /* linear */
    {"0 100 linear " A, -EINVAL, "line 1: linear: expected 2 arguments (<device> <offset>), got 1"},
    {"0 100 linear " A " 1x", -EINVAL,
     "line 1: linear: argument 2 '1x': offset: expected a decimal number"},
    {"0 100 linear null:bogus=1 0", -EINVAL,
     "line 1: linear: argument 1 'null:bogus=1': device does not open: *"},
    {"0 100 linear nosuch:x=1 0", -ENODEV,
     "line 1: linear: argument 1 'nosuch:x=1': device does not open: unknown device type "
     "'nosuch'*"},
    {"0 4096 linear " SMALL " 1", -EINVAL,
     "line 1: linear: argument 1 '" SMALL "': device has 2048 sectors, the target needs "
     "sectors 1 to 4097"},
    {"0 8 linear " B4K " 1", -EINVAL,
     "line 1: linear: argument 1 '" B4K "': sectors 1+8 are not aligned to the device's "
     "logical block size 4096"},
    {"0 7 zero\n7 8 linear " B4K " 0", -EINVAL,
     "line 1: zero: start 0 and length 7 must be multiples of 8 sectors, the logical block "
     "size of the table's devices"},
    {"0 2048 linear " SMALL " 18446744073709551615", -EINVAL,
     "line 1: linear: argument 1 '" SMALL "': offset 18446744073709551615 plus the 2048 "
     "sectors it needs passes the last sector number"},
    /* striped */
    {"0 96 striped 2 12 " B4K " 0 null:size=1M,bs=4096,name=c4k 0", -EINVAL,
     "line 1: striped: a chunk of 12 sectors must be a multiple of 8 sectors, the logical "
     "block size of the table's devices"},
    {"0 96 striped 2", -EINVAL,
     "line 1: striped: expected <#stripes> <chunk sectors> (<device> <offset>)..., got 1 "
     "arguments"},
    {"0 96 striped 0 8 " A " 0", -EINVAL,
     "line 1: striped: argument 1 '0': #stripes must be at least 1"},
    {"0 96 striped two 8 " A " 0", -EINVAL,
     "line 1: striped: argument 1 'two': #stripes: expected a decimal number"},
    {"0 96 striped 2 0 " A " 0 " B " 0", -EINVAL,
     "line 1: striped: argument 2 '0': chunk must be at least 8 sectors (one page)"},
    {"0 96 striped 2 4 " A " 0 " B " 0", -EINVAL,
     "line 1: striped: argument 2 '4': chunk must be at least 8 sectors (one page)"},
    {"0 97 striped 2 8 " A " 0 " B " 0", -EINVAL,
     "line 1: striped: argument 1 '2': target length 97 is not divisible by #stripes"},
    {"0 100 striped 2 8 " A " 0 " B " 0", -EINVAL,
     "line 1: striped: argument 2 '8': the width of each stripe (50 sectors) is not "
     "divisible by the chunk"},
    {"0 96 striped 2 8 " A " 0", -EINVAL,
     "line 1: striped: 2 stripes need 6 arguments (<device> <offset> per stripe), got 4"},
    {"0 96 striped 2 8 " A " 0 " B " q", -EINVAL,
     "line 1: striped: argument 6 'q': offset: expected a decimal number"},
    {"0 4096 striped 2 8 " A " 0 " SMALL " 1", -EINVAL,
     "line 1: striped: argument 5 '" SMALL "': device has 2048 sectors, the target needs "
     "sectors 1 to 2049"},
    /* flakey */
    {"0 100 flakey " A " 0 1", -EINVAL,
     "line 1: flakey: expected <device> <offset> <up seconds> <down seconds> [<#features> "
     "<feature>...], got 3 arguments"},
    {"0 100 flakey " A " 0 x 1", -EINVAL,
     "line 1: flakey: argument 3 'x': up interval: expected a decimal number"},
    {"0 100 flakey " A " 0 1 4294967296", -EINVAL,
     "line 1: flakey: argument 4 '4294967296': down interval: expected a number up to "
     "4294967295"},
    {"0 100 flakey " A " 0 0 0", -EINVAL,
     "line 1: flakey: argument 4 '0': up and down intervals are both 0"},
    {"0 100 flakey " A " 0 1 1 9", -EINVAL,
     "line 1: flakey: argument 5 '9': #features: expected a number up to 3"},
    {"0 100 flakey " A " 0 1 1 2 drop_writes", -EINVAL,
     "line 1: flakey: argument 5 '2': 2 features need 7 arguments in all, got 6"},
    {"0 100 flakey " A " 0 1 1 1 corrupt_bio_byte", -EINVAL,
     "line 1: flakey: argument 6 'corrupt_bio_byte': unknown feature; expected drop_writes, "
     "error_writes or error_reads"},
    {"0 100 flakey " A " 0 1 1 2 error_reads error_reads", -EINVAL,
     "line 1: flakey: argument 7 'error_reads': feature given twice"},
    {"0 100 flakey " A " 0 1 1 2 drop_writes error_writes", -EINVAL,
     "line 1: flakey: argument 7 'error_writes': drop_writes and error_writes exclude each "
     "other"},
    {"0 100 zero\n100 100 flakey " A " 2000 1 1", -EINVAL,
     "line 2: flakey: argument 1 '" A "': device has 2048 sectors, the target needs sectors "
     "2000 to 2100"},
};

static bool message_matches(const char *got, const char *want)
{
	size_t n = strlen(want);

	if (n && want[n - 1] == '*')
		return !strncmp(got, want, n - 1);
	return !strcmp(got, want);
}

static void test_bad_tables(void)
{
	for (unsigned i = 0; i < ARRAY_SIZE(bad_tables); i++) {
		const struct bad_table *bt = &bad_tables[i];
		struct blkring_dev *dev = NULL;
		int ret = blkring_vol_create(bt->text, NULL, &dev);

		if (ret != bt->err)
			TEST_FAIL("case %u: got %d (%s), expected %d", i, ret, blkring_last_error(),
			          bt->err);
		if (!message_matches(blkring_last_error(), bt->msg))
			TEST_FAIL("case %u:\n got: %s\nwant: %s", i, blkring_last_error(), bt->msg);
		CHECK(dev == NULL);
	}
}

static int refs(struct blkring_dev *dev)
{
	return atomic_load(&dev->refs);
}

/* Every device a failed load opened is closed again. */
static void test_nothing_half_built(void)
{
	static const char *const tables[] = {
	    "0 100 linear " A " 0\n100 100 linear " A " 100\n200 1 bogus",
	    "0 96 striped 2 8 " A " 0 " A " 100 " A " 200 null:bogus=1 0",
	    "0 96 striped 2 8 " A " 0 null:bogus=1 0",
	    "0 100 flakey " A " 0 1 1\n100 8 linear " B4K " 0\n108 100 linear " A " 4000",
	};
	struct blkring_dev *a = test_open(A), *b4k = test_open(B4K), *dev = NULL;

	for (unsigned i = 0; i < ARRAY_SIZE(tables); i++) {
		CHECK(blkring_vol_create(tables[i], NULL, &dev) < 0);
		CHECK_EQ(refs(a), 1);
		CHECK_EQ(refs(b4k), 1);
	}
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(b4k), 0);
}

/* ---- table files ---- */

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/blkring-dm-XXXXXX");
	CHECK(mkdtemp(dir));
}

static void put_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static void put_bytes(const char *name, const char *bytes, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f);
	CHECK_EQ(fwrite(bytes, 1, len, f), len);
	fclose(f);
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ(system(cmd), 0);
}

static int open_table(const char *name, struct blkring_dev **devp)
{
	char spec[256];

	snprintf(spec, sizeof(spec), "table:%s/%s", dir, name);
	return blkring_dev_open(spec, devp);
}

static void test_file_errors(void)
{
	struct blkring_dev *dev = NULL;
	char want[512];

	make_dir();
	put_file("bad.table", "0 100 zero\n\n100 5 bogus\n");
	CHECK_EQ(open_table("bad.table", &dev), -EINVAL);
	snprintf(want, sizeof(want), "%s/bad.table:3: unknown target 'bogus'*", dir);
	if (!message_matches(blkring_last_error(), want))
		TEST_FAIL("got: %s", blkring_last_error());
	CHECK_EQ(open_table("missing.table", &dev), -ENOENT);
	snprintf(want, sizeof(want), "table:%s/missing.table: cannot read: *", dir);
	if (!message_matches(blkring_last_error(), want))
		TEST_FAIL("got: %s", blkring_last_error());
	/* A NUL would end the text early: the lines after it would vanish. */
	put_bytes("nul.table", "0 100 zero\n#\0\n100 5 bogus\n", 26);
	CHECK_EQ(open_table("nul.table", &dev), -EINVAL);
	snprintf(want, sizeof(want), "%s/nul.table:2: a NUL byte: expected text", dir);
	if (strcmp(blkring_last_error(), want))
		TEST_FAIL("got: %s", blkring_last_error());
	snprintf(want, sizeof(want), "%s/dir.table", dir);
	CHECK_EQ(mkdir(want, 0700), 0);
	CHECK_EQ(open_table("dir.table", &dev), -EISDIR);
	snprintf(want, sizeof(want), "table:%s/dir.table: cannot read: Is a directory", dir);
	if (strcmp(blkring_last_error(), want))
		TEST_FAIL("got: %s", blkring_last_error());
	remove_dir();
}

/* The innermost cause survives a long chain of nested tables. */
static void test_deep_nesting(void)
{
	struct blkring_dev *dev = NULL;
	char name[32], text[64];

	make_dir();
	for (unsigned i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "t%u.table", i);
		snprintf(text, sizeof(text), "0 8 linear table:t%u.table 0\n", i + 1);
		put_file(name, text);
	}
	put_file("t40.table", "0 8 zero\n");
	CHECK_EQ(open_table("t0.table", &dev), -ELOOP);
	CHECK(dev == NULL);
	if (!strstr(blkring_last_error(), "t0.table:1: linear: argument 1 'table:t1.table'"))
		TEST_FAIL("no start: %.200s", blkring_last_error());
	if (!strstr(blkring_last_error(), "tables nest deeper than 32"))
		TEST_FAIL("no cause: ...%s",
		          blkring_last_error() + strlen(blkring_last_error()) - 200);
	remove_dir();
}

static void test_cycles(void)
{
	struct blkring_dev *dev = NULL;
	char want[1024];

	make_dir();
	put_file("self.table", "0 100 linear table:self.table 0\n");
	CHECK_EQ(open_table("self.table", &dev), -ELOOP);
	snprintf(want, sizeof(want),
	         "%s/self.table:1: linear: argument 1 'table:self.table': device does not open: "
	         "table:%s/self.table includes itself (self.table -> self.table)",
	         dir, dir);
	if (!message_matches(blkring_last_error(), want))
		TEST_FAIL("\n got: %s\nwant: %s", blkring_last_error(), want);

	put_file("a.table", "0 50 zero\n50 96 linear table:b.table 0\n");
	put_file("b.table", "0 96 striped 1 8 table:./c.table 0\n");
	put_file("c.table", "0 96 linear table:a.table 0\n");
	CHECK_EQ(open_table("a.table", &dev), -ELOOP);
	snprintf(want, sizeof(want),
	         "%s/a.table:2: linear: argument 1 'table:b.table': device does not open: "
	         "%s/b.table:1: striped: argument 3 'table:./c.table': device does not open: "
	         "%s/c.table:1: linear: argument 1 'table:a.table': device does not open: "
	         "table:%s/a.table includes itself (a.table -> b.table -> c.table -> a.table)",
	         dir, dir, dir, dir);
	if (!message_matches(blkring_last_error(), want))
		TEST_FAIL("\n got: %s\nwant: %s", blkring_last_error(), want);
	remove_dir();
}

/* Loading into a live volume: the new table may not reach the volume. */
static void test_load_cycles(void)
{
	struct blkring_dev *v, *w;

	make_dir();
	put_file("v.table", "0 100 zero\n");
	put_file("w.table", "0 100 linear table:v.table 0\n");
	CHECK_EQ(open_table("v.table", &v), 0);
	CHECK_EQ(blkring_vol_load(v, "0 100 linear table:v.table 0", dir), -ELOOP);
	CHECK(strstr(blkring_last_error(),
	             "line 1: linear: argument 1 'table:v.table': cycle: the volume being loaded "
	             "would contain itself"));
	CHECK_EQ(blkring_vol_load(v, "0 100 zero\n100 100 linear table:w.table 0", dir), -ELOOP);
	CHECK(strstr(blkring_last_error(), "line 2: linear: argument 1 'table:w.table': cycle"));
	/* The failed loads left nothing behind: w.table's volume is gone. */
	CHECK_EQ(refs(v), 1);
	CHECK_EQ(open_table("w.table", &w), 0);
	CHECK_EQ(refs(v), 2);
	CHECK_EQ(blkring_dev_close(w), 0);
	CHECK_EQ(blkring_dev_close(v), 0);
	remove_dir();
}

static int leg_spec(const struct blkring_vol_target *t, void *arg)
{
	const char **spec = arg;

	spec[t->line - 1] = t->nr_legs ? t->legs[0].spec : NULL;
	return 0;
}

static void test_relative_paths(void)
{
	struct blkring_dev *outer, *inner, *again;
	const char *specs[2] = {NULL, NULL};
	char want[512];

	make_dir();
	snprintf(want, sizeof(want), "%s/sub", dir);
	CHECK_EQ(mkdir(want, 0755), 0);
	put_file("sub/inner.table", "0 100 zero\n");
	put_file("outer.table", "0 50 linear table:sub/inner.table 0\n50 50 linear "
	                        "table:./sub/inner.table 50\n");
	CHECK_EQ(open_table("outer.table", &outer), 0);
	CHECK_EQ(blkring_vol_describe(outer, leg_spec, specs), 0);
	snprintf(want, sizeof(want), "table:%s/sub/inner.table", dir);
	CHECK(specs[0] && !strcmp(specs[0], want));
	CHECK(specs[1] && !strcmp(specs[1], want));
	/* The same spec string is the same device, whoever opens it. */
	CHECK_EQ(open_table("sub/inner.table", &inner), 0);
	CHECK_EQ(refs(inner), 3);
	CHECK_EQ(open_table("outer.table", &again), 0);
	CHECK(again == outer);
	CHECK_EQ(blkring_dev_close(again), 0);
	CHECK_EQ(blkring_dev_close(outer), 0);
	CHECK_EQ(refs(inner), 1);
	CHECK_EQ(blkring_dev_close(inner), 0);
	/* A directory whose name has a comma, which specs escape. */
	snprintf(want, sizeof(want), "%s/x,y", dir);
	CHECK_EQ(mkdir(want, 0755), 0);
	put_file("x,y/in.table", "0 100 zero\n");
	put_file("x,y/out.table", "0 100 linear table:in.table 0\n");
	CHECK_EQ(open_table("x\\,y/out.table", &outer), 0);
	CHECK_EQ(blkring_dev_close(outer), 0);
	remove_dir();
}

/* ---- features and limits ---- */

static void check_caps(const char *table, uint32_t features, uint32_t lbs, uint32_t max_sectors,
                       uint32_t max_discard, int read_only)
{
	struct blkring_dev *dev;
	struct blkring_dev_info info;
	int ret = blkring_vol_create(table, NULL, &dev);

	if (ret)
		TEST_FAIL("%s: %s", table, blkring_last_error());
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	if (info.features != features || info.logical_block_size != lbs ||
	    info.max_sectors != max_sectors || info.max_discard_sectors != max_discard ||
	    info.read_only != read_only)
		TEST_FAIL("%s: features %#x lbs %u max_sectors %u max_discard %u ro %d", table,
		          info.features, info.logical_block_size, info.max_sectors,
		          info.max_discard_sectors, info.read_only);
	CHECK_EQ(info.nr_poll_queues, 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

#define DZ "null:memory_backed=1,discard=1,write_zeroes=1,max_sectors=64,name=dz"
#define D "null:memory_backed=1,discard=1,max_sectors=128,max_discard_sectors=1000,bs=4096,name=d"
#define P "null:size=1G,name=plain"
#define RO "null:size=1G,ro=1,name=ro"
#define BIG "null:size=2G,name=big"

/* A plain null device's default per-I/O limit, whatever null chose. */
static uint32_t plain_max_sectors(void)
{
	struct blkring_dev *dev = test_open(P);
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	return info.max_sectors;
}

static void test_capabilities(void)
{
	const uint32_t disc = BLKRING_FEAT_DISCARD, wz = BLKRING_FEAT_WRITE_ZEROES;
	const uint32_t all = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | disc | wz;
	const uint32_t poll = BLKRING_FEAT_POLL; /* null devices have a poll queue by default */

	check_caps("0 64 linear " DZ " 0", disc | wz | poll, 512, 64, UINT32_MAX >> 9, 0);
	check_caps("0 64 linear " DZ " 0\n64 64 linear " D " 0", disc | poll, 4096, 64, 1000, 0);
	check_caps("0 64 striped 2 8 " DZ " 0 " P " 0", poll, 512, 64, 0, 0);
	/* Targets without legs cannot poll, as in Linux. */
	check_caps("0 64 zero\n64 64 linear " DZ " 0", disc | wz, 512, 64, UINT32_MAX >> 9, 0);
	check_caps("0 64 zero\n64 64 error", all, 512, UINT32_MAX >> 9, UINT32_MAX >> 9, 0);
	check_caps("0 64 linear " P " 0\n64 64 flakey " RO " 0 1 0", poll, 512, plain_max_sectors(),
	           0, 1);
}

static void check_hints(const char *table, uint32_t io_min, uint32_t io_opt)
{
	struct blkring_dev *dev;
	uint32_t min = 0, opt = 0;

	if (blkring_vol_create(table, NULL, &dev))
		TEST_FAIL("%s: %s", table, blkring_last_error());
	CHECK_EQ(blkring_dev_io_hints(dev, &min, &opt), 0);
	if (min != io_min || opt != io_opt)
		TEST_FAIL("%s: io_min %u io_opt %u, expected %u %u", table, min, opt, io_min,
		          io_opt);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Linux's stacking: io_min the largest, io_opt the least common multiple;
 * a stripe's own hints are its chunk and its row. */
static void test_io_hints(void)
{
	uint32_t min, opt;

	check_hints("0 64 linear " P " 0", 512, 0);
	check_hints("0 64 linear " D " 0", 4096, 0);
	check_hints("0 256 striped 2 64 " P " 0 " D " 0", 32768, 65536);
	check_hints("0 768 striped 3 64 " P " 0 " P " 64 " P " 128", 32768, 98304);
	/* Two striped targets of rows 64 KiB and 96 KiB: their lcm, 192 KiB. */
	check_hints("0 256 striped 2 64 " P " 0 " P " 128\n"
	            "256 768 striped 3 64 " P " 256 " P " 512 " P " 768",
	            32768, 196608);
	/* A row past 4 GiB has no io_opt. */
	check_hints("0 8388608 striped 2 4194304 " BIG " 0 " BIG " 0", 1U << 31, 0);
	check_hints("0 64 zero", 512, 0);
	CHECK_EQ(blkring_dev_io_hints(NULL, &min, &opt), -EINVAL);
}

static void test_read_only_leg(void)
{
	struct blkring_dev *dev;
	char buf[512] = {0};

	CHECK_EQ(blkring_vol_create("0 64 zero\n64 64 linear " RO " 0", NULL, &dev), 0);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 0), -EBADF);
	CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), 512);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static const struct test_case cases[] = {
    {"bad-tables", test_bad_tables, 0},
    {"nothing-half-built", test_nothing_half_built, 0},
    {"file-errors", test_file_errors, 0},
    {"deep-nesting", test_deep_nesting, 0},
    {"cycles", test_cycles, 0},
    {"load-cycles", test_load_cycles, 0},
    {"relative-paths", test_relative_paths, 0},
    {"capabilities", test_capabilities, 0},
    {"io-hints", test_io_hints, 0},
    {"read-only-leg", test_read_only_leg, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
