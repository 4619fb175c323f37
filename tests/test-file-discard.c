// SPDX-License-Identifier: MIT
/*
 * file devices: discard and write zeroes.  On loop devices the discarded
 * and zeroed ranges read back as zeros and nothing else changes, through
 * the kernel's command and fallocate as through the forced ioctl
 * fallbacks, with the same result; zram takes the command's fallback by
 * itself.  On regular files: punches, zeroing that keeps the allocation,
 * and the fallocate modes each filesystem can do.
 */
#include "drivers/file.h"
#include "test-file-util.h"

#define IMG (8U << 20)

struct range {
	uint64_t off, len;
};

static const struct range ranges[] = {
    {0, 4096}, {65536, 1 << 20}, {3 << 20, 12288}, {(5 << 20) + 8192, 4096}, {IMG - 4096, 4096},
};

static void fill_device(struct blkring_dev *dev, uint64_t seed)
{
	char *buf = tf_alloc(IMG);

	tf_fill(buf, IMG, 0, seed);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, IMG, 0), IMG);
	free(buf);
}

static bool in_ranges(uint64_t off)
{
	for (unsigned i = 0; i < ARRAY_SIZE(ranges); i++)
		if (off >= ranges[i].off && off < ranges[i].off + ranges[i].len)
			return true;
	return false;
}

/* The ranges read as zeros, everything else as the pattern; returns the image. */
static char *check_image(struct blkring_dev *dev, uint64_t seed)
{
	char *buf = tf_alloc(IMG);

	CHECK_EQ(blkring_dev_pread(dev, buf, IMG, 0), IMG);
	for (uint64_t off = 0; off < IMG; off += 512) {
		if (in_ranges(off)) {
			if (!tf_is_zero(buf + off, 512))
				TEST_FAIL("offset %llu: not zero", (unsigned long long)off);
		} else if (!tf_check_pattern(buf + off, 512, off, seed)) {
			TEST_FAIL("offset %llu: pattern lost", (unsigned long long)off);
		}
	}
	return buf;
}

typedef int (*range_op)(struct blkring_dev *dev, uint64_t off, uint64_t len, unsigned flags);

static void flag_end(struct blkring_bio *bio)
{
	atomic_store((_Atomic int *)bio->private, 1);
}

/* A command as a ring's worker pool issues it (blocking allowed, but not a
 * blocking call's bio): the driver's own path, not the caller's ioctl. */
static int issue_cmd(struct blkring_dev *dev, const struct blkring_sqe *sqe)
{
	struct blkring_bio bio;
	_Atomic int done = 0;
	int ret;

	blkring__bio_init(&bio, dev, REQ_OP_DISCARD, 0, 0);
	bio.private = (void *)&done;
	bio.end_io = flag_end;
	ret = blkring__blkdev_uring_cmd(sqe, &bio, 0);
	if (ret)
		return ret;
	while (!atomic_load(&done))
		usleep(100);
	return bio.status;
}

static int op_discard(struct blkring_dev *dev, uint64_t off, uint64_t len, unsigned flags)
{
	struct blkring_sqe sqe;

	(void)flags;
	blkring_prep_cmd_discard(&sqe, 0, off, len);
	return issue_cmd(dev, &sqe);
}

static int op_blocking_discard(struct blkring_dev *dev, uint64_t off, uint64_t len, unsigned flags)
{
	(void)flags;
	return blkring_dev_discard(dev, off, len);
}

/* Fills, applies op over the ranges, checks; returns the image read back. */
static char *apply(const char *spec, range_op op, unsigned flags)
{
	struct blkring_dev *dev = tf_open("%s", spec);
	char *img;

	fill_device(dev, 42);
	for (unsigned i = 0; i < ARRAY_SIZE(ranges); i++)
		CHECK_EQ(op(dev, ranges[i].off, ranges[i].len, flags), 0);
	img = check_image(dev, 42);
	CHECK_EQ(blkring_dev_close(dev), 0);
	return img;
}

/* The command and the forced fallback leave the same bytes. */
static void compare_paths(const char *with, const char *without, range_op op, unsigned flags)
{
	char *a = apply(with, op, flags), *b = apply(without, op, flags);

	CHECK(!memcmp(a, b, IMG));
	free(a);
	free(b);
}

static void test_loop_discard(void)
{
	char with[64], without[96];
	struct blkring_dev *dev;
	struct file_dev *fd;

	snprintf(with, sizeof(with), "%s", tf_loop(0));
	snprintf(without, sizeof(without), "file:%s,discard_cmd=0", tf_loop(0));
	compare_paths(with, without, op_discard, 0);

	/* The command was the path taken: no blocking thread was needed. */
	dev = tf_open("%s", with);
	fd = dev->private;
	CHECK_EQ(op_discard(dev, 0, 4096, 0), 0);
	CHECK(atomic_load(&fd->discard_cmd));
	CHECK(!fd->blocking.started);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* The blocking call is ioctl(BLKDISCARD) in the caller's thread: the same
 * bytes, and the device's blocking thread never starts. */
static void test_loop_blocking_discard(void)
{
	char spec[64];
	struct blkring_dev *dev;
	char *a, *b;

	snprintf(spec, sizeof(spec), "%s", tf_loop(0));
	a = apply(spec, op_discard, 0);
	b = apply(spec, op_blocking_discard, 0);
	CHECK(!memcmp(a, b, IMG));
	free(a);
	free(b);
	dev = tf_open("%s", spec);
	CHECK_EQ(blkring_dev_discard(dev, 0, 4096), 0);
	CHECK(!((struct file_dev *)dev->private)->blocking.started);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static int op_zeroes(struct blkring_dev *dev, uint64_t off, uint64_t len, unsigned flags)
{
	return blkring_dev_write_zeroes(dev, off, len, flags);
}

static void loop_zeroes(unsigned flags)
{
	char with[64], without[96];

	snprintf(with, sizeof(with), "%s", tf_loop(0));
	snprintf(without, sizeof(without), "file:%s,zero_falloc=0", tf_loop(0));
	compare_paths(with, without, op_zeroes, flags);
}

static void test_loop_zeroes(void)
{
	loop_zeroes(0);
}

static void test_loop_zeroes_nounmap(void)
{
	loop_zeroes(BLKRING_ZERO_NOUNMAP);
}

static void test_loop_zeroes_nofallback(void)
{
	loop_zeroes(BLKRING_ZERO_NOFALLBACK);
}

static void test_loop_zeroes_nounmap_nofallback(void)
{
	loop_zeroes(BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK);
}

/* The ring's first issue is non-blocking: the driver takes it anyway, the
 * kernel does the blocking part. */
static void test_loop_nonblocking_issue(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct blkring_sqe sqe;
	struct blkring_bio bio;
	_Atomic int done = 0;
	char *buf = tf_alloc(8192);

	fill_device(dev, 7);
	blkring_prep_cmd_discard(&sqe, 0, 4096, 4096);
	blkring__bio_init(&bio, dev, REQ_OP_DISCARD, 0, 0);
	bio.private = (void *)&done;
	bio.end_io = flag_end;
	CHECK_EQ(blkring__blkdev_uring_cmd(&sqe, &bio, BLKRING_ISSUE_NONBLOCK), 0);
	while (!atomic_load(&done))
		usleep(100);
	CHECK_EQ(bio.status, 0);
	CHECK_EQ(blkring_dev_pread(dev, buf, 8192, 0), 8192);
	CHECK(tf_check_pattern(buf, 4096, 0, 7));
	CHECK(tf_is_zero(buf + 4096, 4096));
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* zram discards, but not with non-blocking bios: the command answers
 * -EOPNOTSUPP and the driver falls back to BLKDISCARD for good. */
static void test_zram_discard_fallback(void)
{
	const char *zram = tf_zram();
	char with[64], without[96];
	struct blkring_dev *dev;
	struct file_dev *fd;

	snprintf(with, sizeof(with), "%s", zram);
	snprintf(without, sizeof(without), "file:%s,discard_cmd=0", zram);
	dev = tf_open("%s", with);
	fd = dev->private;
	CHECK(atomic_load(&fd->discard_cmd));
	CHECK_EQ(op_discard(dev, 0, 4096, 0), 0);
	CHECK(!atomic_load(&fd->discard_cmd));
	CHECK(fd->blocking.started);
	CHECK_EQ(blkring_dev_close(dev), 0);
	compare_paths(with, without, op_discard, 0);
}

/* ---- regular files ---- */

static uint64_t blocks(const char *path)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	return (uint64_t)st.st_blocks;
}

static void file_discard(const char *dir)
{
	const char *path = tf_path(dir, "discard.img");
	char spec[400];
	uint64_t before;
	char *img;

	snprintf(spec, sizeof(spec), "file:%s,size=8M", path);
	img = apply(spec, op_discard, 0);
	free(img);
	before = blocks(path);
	CHECK(before < IMG / 512); /* the ranges were punched out */
}

static void test_file_discard(void)
{
	file_discard(tf.tmp_dir);
}

static void test_tmpfs_discard(void)
{
	file_discard(tf.shm_dir);
}

/* Zeroes keep the allocation with NOUNMAP and give it back without. */
static void file_zeroes(const char *dir, unsigned flags, enum file_zero_mode expect_min)
{
	const char *path = tf_path(dir, "zeroes.img");
	struct blkring_dev *dev = tf_open("file:%s,size=8M", path);
	struct file_dev *fd = dev->private;
	uint64_t full;
	char *img;

	fill_device(dev, 42);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	full = blocks(path);
	for (unsigned i = 0; i < ARRAY_SIZE(ranges); i++)
		CHECK_EQ(blkring_dev_write_zeroes(dev, ranges[i].off, ranges[i].len, flags), 0);
	img = check_image(dev, 42);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	if (flags & BLKRING_ZERO_NOUNMAP) {
		CHECK(blocks(path) >= full); /* ext4 may add an extent block */
		CHECK(atomic_load(&fd->nounmap_mode) >= expect_min);
	} else {
		CHECK(blocks(path) < full);
		CHECK_EQ(atomic_load(&fd->nounmap_mode), ZERO_WRITE_ZEROES); /* untried */
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(img);
	unlink(path);
}

static void test_file_zeroes(void)
{
	file_zeroes(tf.tmp_dir, 0, ZERO_WRITE_ZEROES);
	file_zeroes(tf.tmp_dir, BLKRING_ZERO_NOFALLBACK, ZERO_WRITE_ZEROES);
}

static void test_file_zeroes_nounmap(void)
{
	file_zeroes(tf.tmp_dir, BLKRING_ZERO_NOUNMAP, ZERO_WRITE_ZEROES);
	file_zeroes(tf.tmp_dir, BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK, ZERO_WRITE_ZEROES);
}

static void test_tmpfs_zeroes(void)
{
	file_zeroes(tf.shm_dir, 0, ZERO_WRITE_ZEROES);
}

/* tmpfs has neither WRITE_ZEROES nor ZERO_RANGE: punch, then allocate. */
static void test_tmpfs_zeroes_nounmap(void)
{
	file_zeroes(tf.shm_dir, BLKRING_ZERO_NOUNMAP, ZERO_PUNCH_ALLOC);
}

/* A range beyond the per-bio maximum is split, and all of it is punched. */
static void test_huge_discard(void)
{
	const char *path = tf_path(tf.shm_dir, "huge.img");
	struct blkring_dev *dev = tf_open("file:%s,size=5G", path);
	char *buf = tf_alloc(4096);

	tf_fill(buf, 4096, 0, 1);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 4ULL << 30), 4096);
	CHECK_EQ(blkring_dev_discard(dev, 0, 5ULL << 30), 0);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 4ULL << 30), 4096);
	CHECK(tf_is_zero(buf, 4096));
	CHECK_EQ(blocks(path), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	unlink(path);
	free(buf);
}

static void test_range_errors(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.tmp_dir, "r.img"));

	CHECK_EQ(blkring_dev_discard(dev, 1 << 20, 4096), -EINVAL);
	CHECK_EQ(blkring_dev_discard(dev, 0, 0), -EINVAL);
	CHECK_EQ(blkring_dev_discard(dev, 100, 512), -EINVAL);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, (1 << 20) + 4096, 0), -EINVAL);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, 1U << 7), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static const struct test_case cases[] = {
    {"loop_discard", test_loop_discard, 0},
    {"loop_blocking_discard", test_loop_blocking_discard, 0},
    {"loop_zeroes", test_loop_zeroes, 0},
    {"loop_zeroes_nounmap", test_loop_zeroes_nounmap, 0},
    {"loop_zeroes_nofallback", test_loop_zeroes_nofallback, 0},
    {"loop_zeroes_nounmap_nofallback", test_loop_zeroes_nounmap_nofallback, 0},
    {"loop_nonblocking_issue", test_loop_nonblocking_issue, 0},
    {"zram_discard_fallback", test_zram_discard_fallback, 0},
    {"file_discard", test_file_discard, 0},
    {"tmpfs_discard", test_tmpfs_discard, 0},
    {"file_zeroes", test_file_zeroes, 0},
    {"file_zeroes_nounmap", test_file_zeroes_nounmap, 0},
    {"tmpfs_zeroes", test_tmpfs_zeroes, 0},
    {"tmpfs_zeroes_nounmap", test_tmpfs_zeroes_nounmap, 0},
    {"huge_discard", test_huge_discard, 0},
    {"range_errors", test_range_errors, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	tf_setup();
	tf_add_loop(16 << 20, 512);
	tf_add_zram(16 << 20);
	return tf_main(cases, argc, argv);
}
