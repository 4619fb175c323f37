/* SPDX-License-Identifier: MIT */
/*
 * What the file driver's tests share: scratch directories, loop devices and
 * zram devices that the test program's parent process creates before its
 * cases run (each case is a forked child) and removes after them, also when
 * a case fails or the program is interrupted.  Loop devices are attached
 * with LO_FLAGS_AUTOCLEAR and held open by the parent, so the kernel
 * detaches them even if the parent dies.
 */
#ifndef BLKRING_TESTS_TEST_FILE_UTIL_H
#define BLKRING_TESTS_TEST_FILE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "test.h"

#define TF_MAX_LOOPS 4

struct tf_loop {
	char path[32]; /* /dev/loopN, "" when none */
	char backing[256];
	int fd;        /* the parent's: keeps the autoclear device attached */
	char why[128]; /* why there is none */
};

struct tf_env {
	char tmp_dir[64]; /* on the root filesystem */
	char shm_dir[64]; /* tmpfs */
	struct tf_loop loops[TF_MAX_LOOPS];
	unsigned nr_loops;
	int zram; /* zram device number, -1 when none */
	char zram_why[128];
};

static struct tf_env tf;

static inline void tf_rm_tree(const char *dir)
{
	char cmd[128];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cleanup: %s failed\n", cmd);
}

/* Where a case may mount a small filesystem; unmounted at cleanup. */
static inline const char *tf_mount_dir(void)
{
	static char path[96];

	snprintf(path, sizeof(path), "%s/mnt", tf.tmp_dir);
	return path;
}

static inline void tf_cleanup(void)
{
	for (unsigned i = 0; i < tf.nr_loops; i++)
		if (tf.loops[i].fd >= 0)
			close(tf.loops[i].fd);
	if (tf.zram >= 0) {
		FILE *f = fopen("/sys/class/zram-control/hot_remove", "we");

		if (f) {
			fprintf(f, "%d\n", tf.zram);
			fclose(f);
		}
	}
	if (tf.tmp_dir[0])
		umount2(tf_mount_dir(), MNT_DETACH);
	tf_rm_tree(tf.tmp_dir);
	tf_rm_tree(tf.shm_dir);
}

static inline void tf_on_signal(int sig)
{
	tf_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline int tf_make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Attaches a sparse file of `size` bytes as a loop device of `block_size`. */
static inline void tf_add_loop(uint64_t size, unsigned block_size)
{
	struct tf_loop *l = &tf.loops[tf.nr_loops++];
	char dir[sizeof(tf.tmp_dir)];
	struct loop_config cfg;
	int ctl, bfd;

	l->fd = -1;
	memcpy(dir, tf.tmp_dir, sizeof(dir));
	snprintf(l->backing, sizeof(l->backing), "%s/loop%u.img", dir, tf.nr_loops - 1);
	if (geteuid()) {
		snprintf(l->why, sizeof(l->why), "loop devices need root");
		return;
	}
	if (tf_make_file(l->backing, size)) {
		snprintf(l->why, sizeof(l->why), "cannot create the loop backing file");
		return;
	}
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	bfd = open(l->backing, O_RDWR | O_CLOEXEC);
	for (int tries = 0; ctl >= 0 && bfd >= 0 && tries < 16 && l->fd < 0; tries++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (n < 0)
			break;
		snprintf(l->path, sizeof(l->path), "/dev/loop%d", n);
		l->fd = open(l->path, O_RDWR | O_CLOEXEC);
		if (l->fd < 0)
			break;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (uint32_t)bfd;
		cfg.block_size = block_size;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (!ioctl(l->fd, LOOP_CONFIGURE, &cfg))
			break;
		close(l->fd);
		l->fd = -1;
		if (errno != EBUSY)
			break;
	}
	if (l->fd < 0) {
		snprintf(l->why, sizeof(l->why), "attaching a loop device: %s", strerror(errno));
		l->path[0] = '\0';
	}
	if (ctl >= 0)
		close(ctl);
	if (bfd >= 0)
		close(bfd);
}

/* A zram device of `size` bytes: discards it takes only blocking. */
static inline void tf_add_zram(uint64_t size)
{
	FILE *f = fopen("/sys/class/zram-control/hot_add", "re");
	char path[64];

	tf.zram = -1;
	if (!f || fscanf(f, "%d", &tf.zram) != 1) {
		snprintf(tf.zram_why, sizeof(tf.zram_why), "no zram here (root and the module)");
		tf.zram = -1;
	}
	if (f)
		fclose(f);
	if (tf.zram < 0)
		return;
	snprintf(path, sizeof(path), "/sys/block/zram%d/disksize", tf.zram);
	f = fopen(path, "we");
	if (!f || fprintf(f, "%llu\n", (unsigned long long)size) < 0 || fclose(f)) {
		snprintf(tf.zram_why, sizeof(tf.zram_why), "cannot size zram%d", tf.zram);
		f = NULL;
	}
}

static inline void tf_setup(void)
{
	strcpy(tf.tmp_dir, "/tmp/blkring-file.XXXXXX");
	strcpy(tf.shm_dir, "/dev/shm/blkring-file.XXXXXX");
	tf.zram = -1;
	if (!mkdtemp(tf.tmp_dir) || !mkdtemp(tf.shm_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	signal(SIGINT, tf_on_signal);
	signal(SIGTERM, tf_on_signal);
	signal(SIGHUP, tf_on_signal);
}

/* Runs the cases with the environment set up, and always cleans up. */
static inline int tf_main(const struct test_case *cases, int argc, char **argv)
{
	int ret = test_main(cases, argc, argv);

	tf_cleanup();
	return ret;
}

static inline const char *tf_loop(unsigned i)
{
	if (!tf.loops[i].path[0])
		SKIP("%s", tf.loops[i].why);
	return tf.loops[i].path;
}

static inline const char *tf_zram(void)
{
	static char path[32];

	if (tf.zram < 0 || tf.zram_why[0])
		SKIP("%s", tf.zram_why);
	snprintf(path, sizeof(path), "/dev/zram%d", tf.zram);
	return path;
}

/* A path in a scratch directory. */
static inline const char *tf_path(const char *dir, const char *name)
{
	static char paths[8][320];
	static unsigned next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

static inline struct blkring_dev *tf_open(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline struct blkring_dev *tf_open(const char *fmt, ...)
{
	char spec[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(spec, sizeof(spec), fmt, ap);
	va_end(ap);
	return test_open(spec);
}

static inline void *tf_alloc(size_t size)
{
	void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);

	CHECK(p);
	return p;
}

/* A pattern that tells every 8 bytes of every device offset apart. */
static inline void tf_fill(void *buf, size_t len, uint64_t offset, uint64_t seed)
{
	uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		p[i] = (offset + i * 8) * 0x9e3779b97f4a7c15ULL ^ seed;
}

static inline int tf_check_pattern(const void *buf, size_t len, uint64_t offset, uint64_t seed)
{
	const uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		if (p[i] != ((offset + i * 8) * 0x9e3779b97f4a7c15ULL ^ seed))
			return 0;
	return 1;
}

static inline int tf_is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

#endif
