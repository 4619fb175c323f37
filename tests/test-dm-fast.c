// SPDX-License-Identifier: MIT
/*
 * The one-clone path of volumes (a read or write inside one piece of one
 * target): counted on the volume and on its leg, refused whole when the
 * leg refuses a BIO_NOWAIT clone, checked again where a chunk leaves the
 * legs' logical blocks or a leg is a volume whose limits changed, and
 * clones ending on a device thread after the thread that took them exited.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dm/dm.h"
#include "test.h"

#define FA "null:irqmode=none,size=1M,name=fa"
#define FB "null:irqmode=none,size=1M,name=fb"
/* One tag, held 50 ms: a second BIO_NOWAIT bio finds none. */
#define SLOW "null:irqmode=timer,completion_nsec=50000000,hw_queue_depth=1,size=1M,name=slow"
#define LATE "null:irqmode=timer,completion_nsec=20000000,size=1M,name=late"
#define K4A "null:irqmode=none,bs=4096,size=1M,name=k4a"
#define K4B "null:irqmode=none,bs=4096,size=1M,name=k4b"

static void check_counts(struct blkring_dev *dev, unsigned dir, uint64_t ios, uint64_t bytes)
{
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	if (info.ios[dir] != ios || info.bytes[dir] != bytes)
		TEST_FAIL("%s, direction %u: %llu I/Os and %llu bytes, expected %llu and %llu",
		          info.spec, dir, (unsigned long long)info.ios[dir],
		          (unsigned long long)info.bytes[dir], (unsigned long long)ios,
		          (unsigned long long)bytes);
}

/* Every I/O counts once on the volume and once on the leg it went to, as
 * Linux counts on dm-0 and on sda; a split counts each piece on its leg. */
static void test_counts(void)
{
	struct blkring_dev *a = test_open(FA), *b = test_open(FB);
	struct blkring_dev *lin = test_vol("0 2040 linear " FA " 8", NULL);
	struct blkring_dev *str = test_vol("0 2048 striped 2 128 " FA " 0 " FB " 0", NULL);
	char buf[8192] = {0};

	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(blkring_dev_pread(lin, buf, 4096, i * 8192), 4096);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(blkring_dev_pwrite(lin, buf, 4096, i * 4096), 4096);
	check_counts(lin, BLKRING_DIR_READ, 10, 10 * 4096);
	check_counts(lin, BLKRING_DIR_WRITE, 6, 6 * 4096);
	check_counts(a, BLKRING_DIR_READ, 10, 10 * 4096);
	check_counts(a, BLKRING_DIR_WRITE, 6, 6 * 4096);
	check_counts(b, BLKRING_DIR_READ, 0, 0);

	/* Chunks 0 and 2 are leg a's, 1 and 3 leg b's; the last read spans
	 * chunks 0 and 1: one I/O on the volume, a piece on each leg. */
	CHECK_EQ(blkring_dev_pread(str, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_pread(str, buf, 4096, 128 * 512), 4096);
	CHECK_EQ(blkring_dev_pread(str, buf, 4096, 256 * 512 + 4096), 4096);
	CHECK_EQ(blkring_dev_pread(str, buf, 4096, 3 * 128 * 512), 4096);
	CHECK_EQ(blkring_dev_pread(str, buf, 8192, 124 * 512), 8192);
	check_counts(str, BLKRING_DIR_READ, 5, 4 * 4096 + 8192);
	check_counts(a, BLKRING_DIR_READ, 10 + 3, 10 * 4096 + 2 * 4096 + 2048);
	check_counts(b, BLKRING_DIR_READ, 3, 2 * 4096 + 6144);

	CHECK_EQ(blkring_dev_close(str), 0);
	CHECK_EQ(blkring_dev_close(lin), 0);
	CHECK_EQ(blkring_dev_close(b), 0);
	CHECK_EQ(blkring_dev_close(a), 0);
}

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

static int submit_read(struct blkring_bio *bio, struct blkring_dev *dev, void *buf, uint64_t offset,
                       uint8_t flags, struct done *d)
{
	blkring__bio_init(bio, dev, REQ_OP_READ, offset, 4096);
	blkring__bio_set_buf(bio, buf, 4096);
	bio->flags = flags;
	bio->end_io = count_end;
	bio->private = d;
	return blkring__submit_bio(bio);
}

/* The leg refuses a BIO_NOWAIT clone (no tag): the original is refused
 * whole, nothing issued, nothing counted, nothing ended. */
static void test_nowait_refused_by_leg(void)
{
	struct blkring_dev *dev = test_vol("0 2048 linear " SLOW " 0", NULL);
	struct blkring_dev *leg = test_open(SLOW);
	static char buf[2][4096];
	struct blkring_bio bio[2];
	struct done d[2] = {0};

	CHECK_EQ(submit_read(&bio[0], dev, buf[0], 0, BIO_NOWAIT, &d[0]), 0);
	CHECK_EQ(submit_read(&bio[1], dev, buf[1], 4096, BIO_NOWAIT, &d[1]), -EAGAIN);
	while (!atomic_load(&d[0].calls))
		usleep(1000);
	CHECK_EQ(d[0].status, 0);
	CHECK_EQ(atomic_load(&d[1].calls), 0);
	check_counts(dev, BLKRING_DIR_READ, 1, 4096);
	check_counts(leg, BLKRING_DIR_READ, 1, 4096);
	CHECK_EQ(blkring_dev_close(leg), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A non-power-of-two chunk of whole 4k blocks (24 sectors) keeps every
 * aligned read on the legs' blocks, chunk boundaries included; one that
 * would cut a block (12) does not load (test-dm-table). */
static void test_chunk_on_leg_blocks(void)
{
	struct blkring_dev *dev = test_vol("0 96 striped 2 24 " K4A " 0 " K4B " 0", NULL);
	char buf[8192];

	for (uint64_t sector = 0; sector < 96; sector += 8)
		CHECK_EQ(blkring_dev_pread(dev, buf, 4096, sector * 512), 4096);
	/* Across the boundary of chunks 0 and 1: two clones. */
	CHECK_EQ(blkring_dev_pread(dev, buf, 8192, 16 * 512), 8192);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A leg that is a volume is checked on every I/O as any device is: a
 * reload that gives it 4k blocks fails the outer volume's 512-byte reads,
 * one that shrinks it fails reads past its new end (-EINVAL, as any I/O
 * past a device's end), though the outer table allowed both. */
static void test_volume_leg_reloaded(void)
{
	char dir[] = "/tmp/blkring-dm-fast-XXXXXX", path[64], spec[80], table[128];
	struct blkring_dev *inner, *outer;
	char buf[4096];
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/inner.table", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("0 2048 linear " FA " 0\n", f);
	fclose(f);
	snprintf(spec, sizeof(spec), "table:%s", path);
	inner = test_open(spec);
	snprintf(table, sizeof(table), "0 2048 linear %s 0", spec);
	outer = test_vol(table, NULL);
	CHECK_EQ(blkring_dev_pread(outer, buf, 512, 512), 512);
	CHECK_EQ(blkring_vol_load(inner, "0 2048 linear " K4A " 0", NULL), 0);
	CHECK_EQ(blkring_vol_resume(inner), 0);
	CHECK_EQ(blkring_dev_pread(outer, buf, 512, 512), -EINVAL);
	CHECK_EQ(blkring_dev_pread(outer, buf, 4096, 4096), 4096);
	CHECK_EQ(blkring_vol_load(inner, "0 1024 linear " FA " 0", NULL), 0);
	CHECK_EQ(blkring_vol_resume(inner), 0);
	CHECK_EQ(blkring_dev_pread(outer, buf, 4096, 1500 * 512), -EINVAL);
	CHECK_EQ(blkring_dev_pread(outer, buf, 4096, 1000 * 512), 4096);
	CHECK_EQ(blkring_dev_close(outer), 0);
	CHECK_EQ(blkring_dev_close(inner), 0);
	CHECK_EQ(remove(path), 0);
	CHECK_EQ(rmdir(dir), 0);
}

#define EXIT_IOS 16

struct exiter {
	struct blkring_dev *dev;
	struct blkring_bio bio[EXIT_IOS];
	char buf[EXIT_IOS][4096];
	struct done d;
};

static void *exiter_main(void *arg)
{
	struct exiter *e = arg;

	for (unsigned i = 0; i < EXIT_IOS; i++)
		CHECK_EQ(submit_read(&e->bio[i], e->dev, e->buf[i], i * 4096, 0, &e->d), 0);
	return NULL;
}

/* A thread takes clones and exits before they end: they end on the
 * device's thread, and the exited thread's clone cache goes with the last
 * (the sanitizers see a leak or a use after free otherwise).  Twice, so
 * the second thread may reuse the first one's slot. */
static void test_clones_outlive_thread(void)
{
	struct exiter *e = calloc(1, sizeof(*e));

	CHECK(e);
	e->dev = test_vol("0 2048 linear " LATE " 0", NULL);
	for (unsigned round = 0; round < 2; round++) {
		pthread_t th;

		atomic_store(&e->d.calls, 0);
		CHECK_EQ(pthread_create(&th, NULL, exiter_main, e), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		while (atomic_load(&e->d.calls) < EXIT_IOS)
			usleep(1000);
		CHECK_EQ(e->d.status, 0);
	}
	check_counts(e->dev, BLKRING_DIR_READ, 2 * EXIT_IOS, 2 * EXIT_IOS * 4096);
	CHECK_EQ(blkring_dev_close(e->dev), 0);
	free(e);
}

static const struct test_case cases[] = {
    {"counts", test_counts, 0},
    {"nowait-refused-by-leg", test_nowait_refused_by_leg, 0},
    {"chunk-on-leg-blocks", test_chunk_on_leg_blocks, 0},
    {"volume-leg-reloaded", test_volume_leg_reloaded, 0},
    {"clones-outlive-thread", test_clones_outlive_thread, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
