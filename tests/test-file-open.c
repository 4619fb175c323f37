// SPDX-License-Identifier: MIT
/*
 * file devices: specs, creation, canonical names, limits from the kernel,
 * and every error an open or a read-only device gives.
 */
#include <linux/fs.h>
#include <sys/sysmacros.h>

#include "drivers/file.h"
#include "test-file-util.h"

static void check_open_fails(int err, const char *expect_in_msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_open_fails(int err, const char *expect_in_msg, const char *fmt, ...)
{
	struct blkring_dev *dev = NULL;
	char spec[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(spec, sizeof(spec), fmt, ap);
	va_end(ap);
	CHECK_EQ(blkring_dev_open(spec, &dev), err);
	CHECK(dev == NULL);
	if (!strstr(blkring_last_error(), expect_in_msg))
		TEST_FAIL("open %s: message '%s' lacks '%s'", spec, blkring_last_error(),
		          expect_in_msg);
}

static void test_missing_file(void)
{
	const char *path = tf_path(tf.tmp_dir, "missing.img");

	check_open_fails(-ENOENT, path, "file:%s", path);
	check_open_fails(-ENOENT, "size=", "%s", path);
	CHECK_EQ(access(path, F_OK), -1);
	/* ro=1 never creates, whatever the size. */
	check_open_fails(-ENOENT, "ro=1 does not create one", "file:%s,size=1M,ro=1", path);
	path = tf_path(tf.tmp_dir, "nodir/x.img");
	check_open_fails(-ENOENT, "its directory does not exist", "file:%s,size=1M", path);
	/* A size no file can have: the reason, and nothing left behind. */
	path = tf_path(tf.tmp_dir, "huge.img");
	check_open_fails(-EFBIG, "cannot grow it to size=", "file:%s,size=16777215T", path);
	CHECK_EQ(access(path, F_OK), -1);
}

static void test_size_creates(void)
{
	const char *path = tf_path(tf.tmp_dir, "created.img");
	struct blkring_dev *dev = tf_open("file:%s,size=3M", path);
	struct blkring_dev_info info;
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 3 << 20);
	CHECK_EQ(st.st_blocks, 0); /* sparse */
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.size, 3 << 20);
	CHECK(!strcmp(info.type, "file"));
	CHECK_EQ(blkring_dev_close(dev), 0);

	/* Later opens take the file as it is; size= grows a shorter one. */
	dev = tf_open("%s", path);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.size, 3 << 20);
	CHECK_EQ(blkring_dev_close(dev), 0);
	dev = tf_open("file:%s,size=5M", path);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 5 << 20);
	CHECK_EQ(blkring_dev_close(dev), 0);
	/* A longer file is used up to size=. */
	dev = tf_open("file:%s,size=1M", path);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.size, 1 << 20);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 5 << 20);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A bare path, a relative one and file: name one device. */
static void test_canonical_spec(void)
{
	const char *path = tf_path(tf.tmp_dir, "canon.img");
	struct blkring_dev *a, *b, *c, *d;
	struct blkring_dev_info info;
	char expect[400];

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	a = tf_open("file:%s", path);
	b = tf_open("%s", path);
	CHECK_EQ(chdir(tf.tmp_dir), 0);
	c = tf_open("./canon.img");
	d = tf_open("file:../%s/canon.img", strrchr(tf.tmp_dir, '/') + 1);
	CHECK(a == b && b == c && c == d);
	CHECK_EQ(blkring_dev_info(a, &info), 0);
	snprintf(expect, sizeof(expect), "file:%s", path);
	CHECK(!strcmp(info.spec, expect));
	for (int i = 0; i < 4; i++)
		CHECK_EQ(blkring_dev_close(a), 0);
}

/* A file that size= creates gets the name it has once it exists. */
static void test_new_file_name(void)
{
	struct blkring_dev *a, *b;

	CHECK_EQ(chdir(tf.tmp_dir), 0);
	a = tf_open("./fresh.img,size=1M");
	b = tf_open("file:fresh.img,size=1M");
	CHECK(a == b);
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(b), 0);
}

static void test_not_a_file(void)
{
	check_open_fails(-EINVAL, "expected a regular file or a block device", "/dev/null");
	check_open_fails(-EISDIR, tf.tmp_dir, "file:%s", tf.tmp_dir);
	check_open_fails(-EINVAL, "expected file:PATH", "file:");
}

static void test_bad_keys(void)
{
	const char *path = tf_path(tf.tmp_dir, "keys.img");

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	check_open_fails(-EINVAL, "hw_queue_depth", "file:%s,hw_queue_depth=0", path);
	check_open_fails(-EINVAL, "io_workers", "file:%s,io_workers=5000", path);
	check_open_fails(-EINVAL, "spin_nsec", "file:%s,spin_nsec=2000000000", path);
	check_open_fails(-EINVAL, "hw_queue_depth", "file:%s,hw_queue_depth=100000", path);
	check_open_fails(-EINVAL, "unknown key 'bs'", "file:%s,bs=4096", path);
	check_open_fails(-EINVAL, "direct", "file:%s,direct=maybe", path);
	check_open_fails(-EINVAL, "block devices", "file:%s,discard_cmd=0", path);
	check_open_fails(-EINVAL, "block devices", "file:%s,zero_falloc=0", path);
	check_open_fails(-EINVAL, "size", "file:%s,size=12Q", path);
	check_open_fails(-EINVAL, "iopoll=1 needs direct=1", "file:%s,direct=0,iopoll=1", path);
}

static void test_too_small(void)
{
	const char *path = tf_path(tf.tmp_dir, "tiny.img");

	CHECK_EQ(tf_make_file(path, 100), 0);
	check_open_fails(-EINVAL, "smaller than one block", "file:%s", path);
}

static void test_read_only(void)
{
	const char *path = tf_path(tf.tmp_dir, "ro.img");
	struct blkring_dev *dev;
	struct blkring_dev_info info;
	char *buf = tf_alloc(4096);

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	dev = tf_open("file:%s,ro=1", path);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.read_only, 1);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_discard(dev, 0, 4096), -EBADF);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, BLKRING_ZERO_NOUNMAP), -EBADF);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	check_open_fails(-EINVAL, "ro=1", "file:%s,ro=1,size=2M", path);
	free(buf);
}

/* A file the process may not write: the kernel's error, and the path. */
static void test_permission(void)
{
	const char *path = tf_path(tf.tmp_dir, "noperm.img");

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	CHECK_EQ(chmod(path, 0444), 0);
	if (!geteuid())
		CHECK_EQ(setresuid(65534, 65534, 65534), 0); /* root writes anything */
	check_open_fails(-EACCES, path, "file:%s", path);
}

static void test_file_limits(void)
{
	const char *path = tf_path(tf.tmp_dir, "limits.img");
	struct blkring_dev *dev;
	struct blkring_dev_info info;
	struct statx stx;
	struct stat st;

	CHECK_EQ(tf_make_file(path, (1 << 20) + 700), 0);
	CHECK_EQ(stat(path, &st), 0);
	dev = tf_open("file:%s", path);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &stx), 0);
	if (stx.stx_mask & STATX_DIOALIGN)
		CHECK_EQ(info.logical_block_size, stx.stx_dio_offset_align);
	CHECK_EQ(info.size, ((1 << 20) + 700) & ~(uint64_t)(info.logical_block_size - 1));
	CHECK_EQ(info.physical_block_size, st.st_blksize);
	CHECK_EQ(info.discard_granularity, st.st_blksize);
	CHECK_EQ(info.features & ~BLKRING_FEAT_KERNEL_POLL,
	         BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD |
	             BLKRING_FEAT_WRITE_ZEROES | BLKRING_FEAT_POLL);
	CHECK(info.max_discard_sectors > 0);
	CHECK(info.max_write_zeroes_sectors > 0);
	CHECK_EQ(info.nr_hw_queues, 1);
	CHECK_EQ(info.nr_poll_queues, 1);
	CHECK_EQ(info.queue_depth, 128);
	CHECK_EQ(blkring_dev_close(dev), 0);

	dev = tf_open("file:%s,direct=0,hw_queue_depth=7", path);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.logical_block_size, 512);
	CHECK_EQ(info.size, (1 << 20) + 512);
	CHECK_EQ(info.queue_depth, 7);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* tmpfs reports no direct I/O alignment: it is probed, and 512 works. */
static void test_tmpfs_limits(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "l.img"));
	struct blkring_dev_info info;
	char *buf = tf_alloc(8192);

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.logical_block_size, 512);
	CHECK_EQ(blkring_dev_pwrite(dev, buf + 512, 512, 512), 512);
	CHECK_EQ(blkring_dev_pwrite(dev, buf + 1, 512, 512), -EINVAL);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 512, 256), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static uint64_t sysfs_queue(const char *devpath, const char *attr)
{
	char path[128];
	unsigned long long v = 0;
	struct stat st;
	FILE *f;

	CHECK_EQ(stat(devpath, &st), 0);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s", major(st.st_rdev),
	         minor(st.st_rdev), attr);
	f = fopen(path, "r");
	CHECK(f);
	CHECK_EQ(fscanf(f, "%llu", &v), 1);
	fclose(f);
	return v;
}

static void check_loop_limits(const char *loop, unsigned lbs)
{
	struct blkring_dev *dev = tf_open("%s", loop);
	struct blkring_dev_info info;
	uint64_t discard_max = sysfs_queue(loop, "discard_max_bytes");
	uint64_t zeroes_max = sysfs_queue(loop, "write_zeroes_max_bytes");
	char *buf = tf_alloc(8192);
	uint32_t io_min, io_opt;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.size, 32 << 20);
	CHECK_EQ(info.logical_block_size, lbs);
	CHECK_EQ(info.max_discard_sectors,
	         (discard_max >> 9 > UINT32_MAX >> 9 ? UINT32_MAX >> 9 : discard_max >> 9) &
	             ~(uint64_t)(lbs / 512 - 1));
	CHECK_EQ(info.max_write_zeroes_sectors,
	         (zeroes_max >> 9 > UINT32_MAX >> 9 ? UINT32_MAX >> 9 : zeroes_max >> 9) &
	             ~(uint64_t)(lbs / 512 - 1));
	CHECK_EQ(!!(info.features & BLKRING_FEAT_DISCARD), !!discard_max);
	CHECK_EQ(!!(info.features & BLKRING_FEAT_WRITE_ZEROES), !!zeroes_max);
	CHECK_EQ(info.discard_granularity, sysfs_queue(loop, "discard_granularity"));
	CHECK_EQ(blkring_dev_io_hints(dev, &io_min, &io_opt), 0);
	CHECK_EQ(io_min, sysfs_queue(loop, "minimum_io_size"));
	CHECK_EQ(io_opt, sysfs_queue(loop, "optimal_io_size"));
	CHECK_EQ(blkring_dev_pread(dev, buf, lbs, lbs), lbs);
	if (lbs > 512)
		CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);

	/* size= takes the device's first bytes, and no more than it has. */
	dev = tf_open("file:%s,size=16M", loop);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.size, 16 << 20);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 16 << 20), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);
	check_open_fails(-EINVAL, "beyond the device", "file:%s,size=64M", loop);
	free(buf);
}

static void test_loop_limits(void)
{
	check_loop_limits(tf_loop(0), 512);
}

static void test_loop_4k_limits(void)
{
	check_loop_limits(tf_loop(1), 4096);
}

/* The fallback keys: accepted on block devices, and the probe's answer. */
static void test_loop_discard_probe(void)
{
	const char *loop = tf_loop(0);
	struct blkring_dev *dev = tf_open("%s", loop);
	struct file_dev *fd = dev->private;

	CHECK(fd->bdev);
	CHECK(atomic_load(&fd->discard_cmd)); /* Linux 6.12+ */
	CHECK_EQ(blkring_dev_close(dev), 0);
	dev = tf_open("file:%s,discard_cmd=0,zero_falloc=0", loop);
	fd = dev->private;
	CHECK(!atomic_load(&fd->discard_cmd));
	CHECK(!fd->zero_falloc);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_loop_read_only(void)
{
	const char *loop = tf_loop(0);
	struct blkring_dev *dev = tf_open("file:%s,ro=1", loop);
	char *buf = tf_alloc(4096);

	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_discard(dev, 0, 4096), -EBADF);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static void set_kernel_ro(int fd, int ro)
{
	CHECK_EQ(ioctl(fd, BLKROSET, &ro), 0);
}

/* A block device the kernel marks read-only opens read-only: writes get
 * -EBADF up front, whatever their offset, not the kernel's -EPERM. */
static void test_loop_kernel_read_only(void)
{
	const char *loop = tf_loop(1);
	struct blkring_dev_info info;
	struct blkring_dev *dev;
	char *buf = tf_alloc(4096);
	int fd = open(loop, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	set_kernel_ro(fd, 1);
	dev = blkring_dev_open(loop, &dev) ? NULL : dev;
	set_kernel_ro(fd, 0); /* before any check can fail: later cases write */
	close(fd);
	if (!dev)
		TEST_FAIL("open %s: %s", loop, blkring_last_error());
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.read_only, 1);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 1), -EBADF);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static const struct test_case cases[] = {
    {"missing_file", test_missing_file, 0},
    {"size_creates", test_size_creates, 0},
    {"canonical_spec", test_canonical_spec, 0},
    {"new_file_name", test_new_file_name, 0},
    {"not_a_file", test_not_a_file, 0},
    {"bad_keys", test_bad_keys, 0},
    {"too_small", test_too_small, 0},
    {"read_only", test_read_only, 0},
    {"permission", test_permission, 0},
    {"file_limits", test_file_limits, 0},
    {"tmpfs_limits", test_tmpfs_limits, 0},
    {"loop_limits", test_loop_limits, 0},
    {"loop_4k_limits", test_loop_4k_limits, 0},
    {"loop_discard_probe", test_loop_discard_probe, 0},
    {"loop_read_only", test_loop_read_only, 0},
    {"loop_kernel_read_only", test_loop_kernel_read_only, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	tf_setup();
	tf_add_loop(32 << 20, 512);
	tf_add_loop(32 << 20, 4096);
	return tf_main(cases, argc, argv);
}
