// SPDX-License-Identifier: MIT
/*
 * file devices: data written through blkring reads back, on regular files
 * (root filesystem and tmpfs) and loop devices, direct and buffered; what
 * the kernel sees is what was written; iovec windows, many bios in flight,
 * flush and FUA; short transfers and kernel errors.
 */
#include <pthread.h>
#include <sys/statvfs.h>

#include "drivers/file.h"
#include "test-file-util.h"

#define IO_SIZE (8U << 20)

/* Writes a pattern in pieces of several sizes, then reads all of it back. */
static void roundtrip(struct blkring_dev *dev, uint64_t seed)
{
	static const uint32_t sizes[] = {4096, 512 << 10, 8192, 1 << 20, 65536};
	char *buf = tf_alloc(IO_SIZE), *out = tf_alloc(IO_SIZE);
	struct blkring_dev_info info;
	uint64_t off = 0;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK(info.size >= IO_SIZE);
	tf_fill(buf, IO_SIZE, 0, seed);
	for (unsigned i = 0; off < IO_SIZE; i++) {
		uint32_t n = sizes[i % ARRAY_SIZE(sizes)];

		if (n > IO_SIZE - off)
			n = (uint32_t)(IO_SIZE - off);
		CHECK_EQ(blkring_dev_pwrite(dev, buf + off, n, off), n);
		off += n;
	}
	CHECK_EQ(blkring_dev_flush(dev), 0);
	memset(out, 0xa5, IO_SIZE);
	CHECK_EQ(blkring_dev_pread(dev, out, IO_SIZE, 0), IO_SIZE);
	CHECK(tf_check_pattern(out, IO_SIZE, 0, seed));
	for (uint64_t o = 0; o < IO_SIZE; o += 1 << 20) {
		memset(out, 0, 4096);
		CHECK_EQ(blkring_dev_pread(dev, out, 4096, o + 4096), 4096);
		CHECK(tf_check_pattern(out, 4096, o + 4096, seed));
	}
	free(buf);
	free(out);
}

/* What the kernel reads from the path, bypassing every cache. */
static void kernel_sees(const char *path, uint64_t off, size_t len, uint64_t seed)
{
	char *buf = tf_alloc(len);
	int fd = open(path, O_RDONLY | O_DIRECT);

	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	CHECK(tf_check_pattern(buf, len, off, seed));
	close(fd);
	free(buf);
}

static void file_roundtrip(const char *dir, const char *name, bool direct)
{
	const char *path = tf_path(dir, name);
	struct blkring_dev *dev = tf_open("file:%s,size=16M,direct=%d", path, direct);

	roundtrip(dev, 0x1234 + direct);
	CHECK_EQ(blkring_dev_close(dev), 0);
	kernel_sees(path, 0, IO_SIZE, 0x1234 + direct);
}

static void test_file_direct(void)
{
	file_roundtrip(tf.tmp_dir, "direct.img", true);
}

static void test_file_buffered(void)
{
	file_roundtrip(tf.tmp_dir, "buffered.img", false);
}

static void test_tmpfs_direct(void)
{
	file_roundtrip(tf.shm_dir, "direct.img", true);
}

static void test_tmpfs_buffered(void)
{
	file_roundtrip(tf.shm_dir, "buffered.img", false);
}

static void loop_roundtrip(const char *loop, bool direct)
{
	struct blkring_dev *dev = tf_open("%s,direct=%d", loop, direct);

	roundtrip(dev, 0x777 + direct);
	CHECK_EQ(blkring_dev_close(dev), 0);
	kernel_sees(loop, 0, IO_SIZE, 0x777 + direct);
}

static void test_loop_direct(void)
{
	loop_roundtrip(tf_loop(0), true);
}

static void test_loop_buffered(void)
{
	loop_roundtrip(tf_loop(0), false);
}

/* A buffer the kernel would refuse with O_DIRECT is fine buffered. */
static void test_buffered_any_buffer(void)
{
	struct blkring_dev *dev =
	    tf_open("file:%s,size=1M,direct=0", tf_path(tf.tmp_dir, "unaligned.img"));
	char *buf = tf_alloc(8192);

	char *pattern = tf_alloc(4096);

	tf_fill(pattern, 4096, 512, 9);
	memcpy(buf + 3, pattern, 4096);
	CHECK_EQ(blkring_dev_pwrite(dev, buf + 3, 4096, 512), 4096);
	memset(buf, 0, 8192);
	CHECK_EQ(blkring_dev_pread(dev, buf + 1, 4096, 512), 4096);
	CHECK(!memcmp(buf + 1, pattern, 4096));
	free(pattern);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

struct sync_bio {
	struct blkring_bio bio;
	_Atomic int done;
};

static void sync_bio_end(struct blkring_bio *bio)
{
	atomic_store(&((struct sync_bio *)bio->private)->done, 1);
}

static int sync_bio_wait(struct sync_bio *sb)
{
	while (!atomic_load(&sb->done))
		usleep(100);
	return sb->bio.status;
}

/* A window into an iovec array that starts inside a segment and ends inside
 * another (a split child or a volume's clone): exactly its bytes move. */
static void test_iovec_window(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.tmp_dir, "vec.img"));
	char *a = tf_alloc(8192), *b = tf_alloc(4096), *c = tf_alloc(8192), *out = tf_alloc(16384);
	struct iovec vec[3] = {{a, 8192}, {b, 4096}, {c, 8192}};
	struct sync_bio sb = {.done = 0};

	tf_fill(out, 16384, 0, 5);
	memcpy(a + 4096, out, 4096);
	memcpy(b, out + 4096, 4096);
	memcpy(c, out + 8192, 8192);
	memset(out, 0xee, 16384);
	CHECK_EQ(blkring_dev_pwrite(dev, out, 16384, 0), 16384);
	blkring__bio_init(&sb.bio, dev, REQ_OP_WRITE, 0, 12288);
	sb.bio.vec = vec;
	sb.bio.nr_vecs = 3;
	sb.bio.vec_skip = 4096;
	sb.bio.end_io = sync_bio_end;
	sb.bio.private = &sb;
	CHECK_EQ(blkring__submit_bio(&sb.bio), 0);
	CHECK_EQ(sync_bio_wait(&sb), 0);
	CHECK_EQ(blkring_dev_pread(dev, out, 16384, 0), 16384);
	CHECK(tf_check_pattern(out, 12288, 0, 5));
	for (int i = 12288; i < 16384; i++)
		CHECK_EQ((unsigned char)out[i], 0xee);

	/* And reading into such a window. */
	memset(a, 0, 8192);
	memset(b, 0, 4096);
	memset(c, 0, 8192);
	blkring__bio_init(&sb.bio, dev, REQ_OP_READ, 0, 12288);
	atomic_store(&sb.done, 0);
	sb.bio.vec = vec;
	sb.bio.nr_vecs = 3;
	sb.bio.vec_skip = 4096;
	sb.bio.end_io = sync_bio_end;
	sb.bio.private = &sb;
	CHECK_EQ(blkring__submit_bio(&sb.bio), 0);
	CHECK_EQ(sync_bio_wait(&sb), 0);
	CHECK(tf_check_pattern(a + 4096, 4096, 0, 5));
	CHECK(tf_check_pattern(b, 4096, 4096, 5));
	CHECK(tf_check_pattern(c, 4096, 8192, 5));
	CHECK(tf_is_zero(c + 4096, 4096));
	CHECK(tf_is_zero(a, 4096));
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(a);
	free(b);
	free(c);
	free(out);
}

#define MANY 512

/* Far more bios than the queue depth: the rest wait for tags, all end. */
static void test_many_in_flight(void)
{
	struct blkring_dev *dev =
	    tf_open("file:%s,size=4M,hw_queue_depth=4", tf_path(tf.shm_dir, "many.img"));
	struct sync_bio *sb = calloc(MANY, sizeof(*sb));
	char *buf = tf_alloc(MANY * 4096);

	CHECK(sb);
	tf_fill(buf, MANY * 4096, 0, 77);
	for (int i = 0; i < MANY; i++) {
		blkring__bio_init(&sb[i].bio, dev, REQ_OP_WRITE, (uint64_t)i * 4096, 4096);
		blkring__bio_set_buf(&sb[i].bio, buf + i * 4096, 4096);
		sb[i].bio.end_io = sync_bio_end;
		sb[i].bio.private = &sb[i];
		CHECK_EQ(blkring__submit_bio(&sb[i].bio), 0);
	}
	for (int i = 0; i < MANY; i++)
		CHECK_EQ(sync_bio_wait(&sb[i]), 0);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	memset(buf, 0, MANY * 4096);
	CHECK_EQ(blkring_dev_pread(dev, buf, MANY * 4096, 0), MANY * 4096);
	CHECK(tf_check_pattern(buf, MANY * 4096, 0, 77));
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(sb);
	free(buf);
}

struct writer {
	struct blkring_dev *dev;
	int id;
};

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	char *buf = tf_alloc(65536);

	for (int i = 0; i < 64; i++) {
		uint64_t off = ((uint64_t)w->id * 64 + i) * 65536;

		tf_fill(buf, 65536, off, 3);
		CHECK_EQ(blkring_dev_pwrite(w->dev, buf, 65536, off), 65536);
	}
	free(buf);
	return NULL;
}

/* Blocking calls from many threads share the device's kernel ring. */
static void test_threads(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=16M", tf_path(tf.shm_dir, "threads.img"));
	struct writer w[4];
	pthread_t t[4];
	char *buf = tf_alloc(16 << 20);

	for (int i = 0; i < 4; i++) {
		w[i] = (struct writer){dev, i};
		pthread_create(&t[i], NULL, writer_thread, &w[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(blkring_dev_pread(dev, buf, 16 << 20, 0), 16 << 20);
	CHECK(tf_check_pattern(buf, 16 << 20, 0, 3));
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* FUA writes and flushes reach the kernel and count. */
static void test_fua_and_flush(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.tmp_dir, "fua.img"));
	struct blkring_dev_info info;
	struct sync_bio sb = {.done = 0};
	char *buf = tf_alloc(4096);

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK(info.features & BLKRING_FEAT_FUA);
	CHECK(info.features & BLKRING_FEAT_FLUSH);
	tf_fill(buf, 4096, 8192, 1);
	blkring__bio_init(&sb.bio, dev, REQ_OP_WRITE, 8192, 4096);
	blkring__bio_set_buf(&sb.bio, buf, 4096);
	sb.bio.flags = BIO_FUA;
	sb.bio.end_io = sync_bio_end;
	sb.bio.private = &sb;
	CHECK_EQ(blkring__submit_bio(&sb.bio), 0);
	CHECK_EQ(sync_bio_wait(&sb), 0);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.ios[BLKRING_DIR_WRITE], 1);
	CHECK_EQ(info.ios[BLKRING_DIR_FLUSH], 2);
	CHECK_EQ(blkring_dev_close(dev), 0);
	kernel_sees(tf_path(tf.tmp_dir, "fua.img"), 8192, 4096, 1);
	free(buf);
}

/* The file shrank under the device: the read gets what exists, then no
 * progress, and ends with -EIO rather than a short result. */
static void test_file_shrank(void)
{
	const char *path = tf_path(tf.tmp_dir, "shrink.img");
	struct blkring_dev *dev = tf_open("file:%s,size=1M", path);
	char *buf = tf_alloc(65536);

	CHECK_EQ(truncate(path, 512 << 10), 0);
	CHECK_EQ(blkring_dev_pread(dev, buf, 65536, (512 << 10) - 4096), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* A full filesystem: the kernel's -ENOSPC comes back as it is, after the
 * part that fit was written. */
static void test_enospc(void)
{
	const char *mnt = tf_mount_dir();
	const char *path = tf_path(mnt, "big.img");
	struct blkring_dev *dev;
	char *buf = tf_alloc(1 << 20);

	CHECK_EQ(mkdir(mnt, 0755), 0);
	if (mount("blkring-test", mnt, "tmpfs", 0, "size=256k"))
		SKIP("mounting a small tmpfs: %s", strerror(errno));
	dev = tf_open("file:%s,size=4M", path);
	tf_fill(buf, 1 << 20, 0, 2);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 1 << 20, 0), -ENOSPC);
	CHECK_EQ(blkring_dev_close(dev), 0);
	umount2(mnt, MNT_DETACH);
	free(buf);
}

static const struct test_case cases[] = {
    {"file_direct", test_file_direct, 0},
    {"file_buffered", test_file_buffered, 0},
    {"tmpfs_direct", test_tmpfs_direct, 0},
    {"tmpfs_buffered", test_tmpfs_buffered, 0},
    {"loop_direct", test_loop_direct, 0},
    {"loop_buffered", test_loop_buffered, 0},
    {"buffered_any_buffer", test_buffered_any_buffer, 0},
    {"iovec_window", test_iovec_window, 0},
    {"many_in_flight", test_many_in_flight, 0},
    {"threads", test_threads, 0},
    {"fua_and_flush", test_fua_and_flush, 0},
    {"file_shrank", test_file_shrank, 0},
    {"enospc", test_enospc, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	tf_setup();
	tf_add_loop(32 << 20, 512);
	return tf_main(cases, argc, argv);
}
