// SPDX-License-Identifier: MIT
/*
 * file devices: a regular file or a block device driven through the
 * kernel's io_uring.  `file:PATH[,key=value...]`, or the bare PATH.
 *
 *   size=BYTES        create a missing regular file of this size (sparse), or
 *                     extend a shorter one; on a longer file or a block
 *                     device, use only the first BYTES.  Without it a missing
 *                     file is -ENOENT.
 *   direct=0|1        O_DIRECT (default 1): a block stack should not
 *                     double-cache.  direct=0 goes through the page cache.
 *   ro=0|1            open read-only: writes, discards, zeroes get -EBADF.
 *   hw_queue_depth=N  bios in flight at once per hardware queue (default 128,
 *                     as loop's); each kernel ring has as many entries.
 *   iopoll=0|1        polled I/O through IORING_SETUP_IOPOLL (default: where
 *                     the device polls, see kernel_polls()) or, with 0, by
 *                     looking at a kernel ring's CQ.
 *   discard_cmd=0|1   block devices: discard with BLOCK_URING_CMD_DISCARD
 *                     (default, where the kernel has it) or, with 0, with
 *                     ioctl(BLKDISCARD) on the blocking thread.
 *   io_workers=N      the most kernel io-wq workers that run a ring's
 *                     punted I/O (reads and writes the file cannot do
 *                     without blocking, e.g. on tmpfs): default one per
 *                     online CPU but one, at least 1, as a worker beyond
 *                     that only preempts the submitter; 0: the kernel's
 *                     own limit.  The kernel keeps it per thread, so the
 *                     rings of one thread share it.
 *   spin_nsec=N       with I/O in flight, a ring's owner watches its kernel
 *                     rings this long before it sleeps (default 20000; 0
 *                     sleeps at once, as the kernel's io_uring does); the
 *                     ring's first file device's value counts: see
 *                     ring_queue_spin() in file-queue.c.
 *   zero_falloc=0|1   block devices: write zeroes with fallocate (default)
 *                     or, with 0, with ioctl(BLKZEROOUT) on the blocking
 *                     thread.  The two 0s force the fallbacks, for tests and
 *                     comparisons.
 *
 * Limits come from the kernel: for block devices BLKGETSIZE64, BLKSSZGET,
 * BLKPBSZGET, BLKROGET and /sys/dev/block/MAJ:MIN/queue; for regular files the
 * filesystem (see file_limits()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drivers/file.h"
#include "lib/error.h"

#define FILE_DEFAULT_DEPTH 128
#define FILE_MAX_DEPTH 4096
#define FILE_DEFAULT_SPIN_NSEC 20000
#define FILE_MAX_SPIN_NSEC 1000000000ULL
/* The kernel splits to the device's own limits; splitting here first
 * would only add SQEs. */
#define FILE_MAX_SECTORS ((1U << 30) >> SECTOR_SHIFT)
#define FILE_MAX_RANGE_SECTORS (UINT32_MAX >> SECTOR_SHIFT)

static const char file_keys[] =
    "size, direct, ro, hw_queue_depth, iopoll, discard_cmd, zero_falloc, io_workers, spin_nsec";

struct file_conf {
	const char *path;
	uint64_t size; /* 0: not given */
	uint64_t depth, io_workers, spin_nsec;
	bool direct, ro, discard_cmd, zero_falloc, iopoll;
	bool bdev_keys;  /* discard_cmd or zero_falloc given */
	bool iopoll_key; /* iopoll given */
};

/* ---- the spec ---- */

static int parse_keys(struct blkring_spec *spec, struct file_conf *c)
{
	c->bdev_keys =
	    blkring__spec_str(spec, "discard_cmd") || blkring__spec_str(spec, "zero_falloc");
	c->iopoll_key = blkring__spec_str(spec, "iopoll");
	return blkring__spec_size(spec, "size", &c->size) ?:
	       blkring__spec_bool(spec, "direct", &c->direct) ?:
	       blkring__spec_bool(spec, "ro", &c->ro) ?:
	       blkring__spec_u64(spec, "hw_queue_depth", &c->depth) ?:
	       blkring__spec_bool(spec, "iopoll", &c->iopoll) ?:
	       blkring__spec_bool(spec, "discard_cmd", &c->discard_cmd) ?:
	       blkring__spec_bool(spec, "zero_falloc", &c->zero_falloc) ?:
	       blkring__spec_u64(spec, "io_workers", &c->io_workers) ?:
	       blkring__spec_u64(spec, "spin_nsec", &c->spin_nsec) ?:
	       blkring__spec_check_unused(spec, file_keys);
}

static int check_conf(const struct file_conf *c)
{
	if (!c->depth || c->depth > FILE_MAX_DEPTH)
		return blkring__error(-EINVAL,
		                      "file: bad value %" PRIu64 " for key 'hw_queue_depth': "
		                      "expected 1 to %u",
		                      c->depth, FILE_MAX_DEPTH);
	if (c->io_workers > FILE_MAX_DEPTH)
		return blkring__error(-EINVAL,
		                      "file: bad value %" PRIu64 " for key 'io_workers': "
		                      "expected 0 (the kernel's limit) to %u",
		                      c->io_workers, FILE_MAX_DEPTH);
	if (c->spin_nsec > FILE_MAX_SPIN_NSEC)
		return blkring__error(-EINVAL,
		                      "file: bad value %" PRIu64 " for key 'spin_nsec': "
		                      "expected 0 to %llu (one second)",
		                      c->spin_nsec, FILE_MAX_SPIN_NSEC);
	return 0;
}

/* ---- opening ---- */

static int open_error(const struct file_conf *c, int err)
{
	return blkring__error(err, "file: '%s': %s", c->path, strerror(-err));
}

/* A missing file: what would have created it, or why it was not. */
static int missing_error(const struct file_conf *c)
{
	const char *why = !c->size ? "no such file (give size= to create it)"
	                  : c->ro  ? "no such file (ro=1 does not create one)"
	                           : "its directory does not exist";

	return blkring__error(-ENOENT, "file: '%s': %s", c->path, why);
}

/* Opens PATH, creating it only when size= says how big.  O_DIRECT comes
 * once the kind of file is known, so that each refusal says what it is. */
static int open_path(const struct file_conf *c, bool *created)
{
	int flags = (c->ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	int fd = open(c->path, flags);

	*created = false;
	if (fd < 0 && errno == ENOENT && c->size && !c->ro) {
		fd = open(c->path, flags | O_CREAT | O_EXCL, 0644);
		*created = fd >= 0;
	}
	if (fd < 0)
		return errno == ENOENT ? missing_error(c) : open_error(c, -errno);
	return fd;
}

/* To size= bytes, sparse; a size no off_t holds is the file's too big. */
static int grow_file(struct file_dev *fd, const struct file_conf *c)
{
	int err = c->size > INT64_MAX ? EFBIG : ftruncate(fd->fd, (off_t)c->size) < 0 ? errno : 0;

	if (err)
		return blkring__error(-err, "file: '%s': cannot grow it to size=%" PRIu64 ": %s",
		                      c->path, c->size, strerror(err));
	return 0;
}

/* A regular file shorter than size= grows (sparse), as fio lays out its files. */
static int check_kind(struct file_dev *fd, const struct file_conf *c, struct stat *st)
{
	int ret;

	if (fstat(fd->fd, st) < 0)
		return open_error(c, -errno);
	if (S_ISBLK(st->st_mode)) {
		fd->bdev = true;
		return 0;
	}
	if (!S_ISREG(st->st_mode))
		return blkring__error(
		    -EINVAL, "file: '%s': expected a regular file or a block device", c->path);
	if (c->size > (uint64_t)st->st_size) {
		if (c->ro)
			return blkring__error(-EINVAL,
			                      "file: '%s': size=%" PRIu64
			                      " is beyond its end (%jd) "
			                      "and ro=1 cannot extend it",
			                      c->path, c->size, (intmax_t)st->st_size);
		ret = grow_file(fd, c);
		if (ret)
			return ret;
		st->st_size = (off_t)c->size;
	}
	return 0;
}

/* ---- limits ---- */

/* Reads one number from a block device's queue directory in sysfs (a
 * partition's queue is its disk's); 0 when it is absent. */
static uint64_t queue_attr(dev_t dev, const char *name)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s", major(dev), minor(dev), name);
	f = fopen(path, "re");
	if (!f) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/%s", major(dev),
		         minor(dev), name);
		f = fopen(path, "re");
	}
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static uint32_t sectors_of(uint64_t bytes)
{
	uint64_t s = bytes >> SECTOR_SHIFT;

	return s > FILE_MAX_RANGE_SECTORS ? FILE_MAX_RANGE_SECTORS : (uint32_t)s;
}

/* O_DIRECT alignment from statx (ext4, xfs, btrfs, block devices);
 * false when the filesystem does not report it (tmpfs). */
static bool statx_dio_align(int fd, uint32_t *offset_align, uint32_t *mem_align)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) < 0 ||
	    !(stx.stx_mask & STATX_DIOALIGN) || !stx.stx_dio_offset_align)
		return false;
	*offset_align = stx.stx_dio_offset_align;
	*mem_align = stx.stx_dio_mem_align ? stx.stx_dio_mem_align : stx.stx_dio_offset_align;
	return true;
}

/*
 * Otherwise: the smallest power of two from 512 to 4096 at which an O_DIRECT
 * read is accepted with offset, length and buffer aligned to it and to
 * nothing larger; 4096 (the page, which every implementation takes) when
 * none smaller is.
 */
static uint32_t probe_dio_align(int fd)
{
	char *buf = aligned_alloc(8192, 8192);
	uint32_t bs;

	if (!buf)
		return 4096;
	for (bs = SECTOR_SIZE; bs < 4096; bs <<= 1)
		if (pread(fd, buf + bs, bs, bs) >= 0)
			break;
	free(buf);
	return bs;
}

static void dio_limits(struct file_dev *fd, struct blkring_limits *lim)
{
	uint32_t offset_align, mem_align;

	if (!statx_dio_align(fd->fd, &offset_align, &mem_align))
		offset_align = mem_align = probe_dio_align(fd->fd);
	if (offset_align > lim->logical_block_size)
		lim->logical_block_size = offset_align;
	lim->dma_alignment = mem_align - 1;
}

static int bdev_limits(struct file_dev *fd, const struct file_conf *c, const struct stat *st)
{
	struct blkring_dev *dev = fd->dev;
	struct blkring_limits *lim = &dev->limits;
	uint64_t size, discard_max = queue_attr(st->st_rdev, "discard_max_bytes");
	uint64_t zeroes_max = queue_attr(st->st_rdev, "write_zeroes_max_bytes");
	int lbs = 0, ro = 0;
	unsigned pbs = 0, io_min = 0, io_opt = 0;

	if (ioctl(fd->fd, BLKGETSIZE64, &size) < 0 || ioctl(fd->fd, BLKSSZGET, &lbs) < 0 ||
	    ioctl(fd->fd, BLKPBSZGET, &pbs) < 0 || ioctl(fd->fd, BLKROGET, &ro) < 0 ||
	    ioctl(fd->fd, BLKIOMIN, &io_min) < 0 || ioctl(fd->fd, BLKIOOPT, &io_opt) < 0)
		return open_error(c, -errno);
	/* Marked read-only by the kernel (BLKROSET): writes get blkring's
	 * -EBADF up front, not the kernel's -EPERM from below. */
	dev->read_only |= ro != 0;
	if (c->size > size)
		return blkring__error(-EINVAL,
		                      "file: '%s': size=%" PRIu64 " is beyond the device's %" PRIu64
		                      " bytes",
		                      c->path, c->size, size);
	dev->size = c->size ? c->size : size;
	lim->logical_block_size = (uint32_t)lbs;
	lim->physical_block_size = pbs > (unsigned)lbs ? pbs : (uint32_t)lbs;
	lim->io_min = io_min;
	lim->io_opt = io_opt;
	if (fd->direct)
		dio_limits(fd, lim);
	lim->max_discard_sectors = sectors_of(discard_max);
	lim->discard_granularity = (uint32_t)queue_attr(st->st_rdev, "discard_granularity");
	if (lim->discard_granularity < lim->logical_block_size)
		lim->discard_granularity = lim->logical_block_size;
	lim->max_write_zeroes_sectors = sectors_of(zeroes_max);
	dev->features |=
	    (discard_max ? BLKRING_FEAT_DISCARD : 0) | (zeroes_max ? BLKRING_FEAT_WRITE_ZEROES : 0);
	return 0;
}

/*
 * Whether the filesystem punches holes: a punch past the end of the file
 * frees nothing and answers -EOPNOTSUPP where punching is not supported.
 * A read-only open cannot ask; its discards and zeroes fail with -EBADF
 * anyway.
 */
static bool file_punches(struct file_dev *fd, const struct stat *st)
{
	off_t end = (st->st_size + 4095) & ~(off_t)4095;

	if (fd->dev->read_only)
		return true;
	return !fallocate(fd->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, end, 4096);
}

/*
 * Regular files: with O_DIRECT the logical block size is the filesystem's
 * direct I/O alignment (statx, else probed, see probe_dio_align()), and
 * buffers must be aligned as statx says (else to that size); buffered, 512
 * and any buffer.  Discard and write zeroes are fallocate punches and
 * zeroing, offered when the filesystem punches holes.
 */
static int file_limits(struct file_dev *fd, const struct file_conf *c, const struct stat *st)
{
	struct blkring_dev *dev = fd->dev;
	struct blkring_limits *lim = &dev->limits;
	uint64_t size = c->size ? c->size : (uint64_t)st->st_size;

	if (fd->direct)
		dio_limits(fd, lim);
	dev->size = size & ~((uint64_t)lim->logical_block_size - 1);
	if (!dev->size)
		return blkring__error(-EINVAL,
		                      "file: '%s': smaller than one block (%u bytes); size= "
		                      "makes it bigger",
		                      c->path, lim->logical_block_size);
	lim->physical_block_size = (uint32_t)st->st_blksize;
	if (lim->physical_block_size < lim->logical_block_size)
		lim->physical_block_size = lim->logical_block_size;
	lim->discard_granularity = lim->physical_block_size;
	if (file_punches(fd, st)) {
		lim->max_discard_sectors = FILE_MAX_RANGE_SECTORS;
		lim->max_write_zeroes_sectors = FILE_MAX_RANGE_SECTORS;
		dev->features |= BLKRING_FEAT_DISCARD | BLKRING_FEAT_WRITE_ZEROES;
	}
	return 0;
}

/* An O_DIRECT read of the first block through an IOPOLL ring: the
 * filesystem can be polled unless it answers -EOPNOTSUPP. */
static bool iopoll_read_works(struct file_dev *fd)
{
	uint32_t len = fd->dev->limits.logical_block_size;
	void *buf = aligned_alloc(4096, len < 4096 ? 4096 : len);
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	bool ok = false;

	if (buf && !file_ring_init(1, &ring, IORING_SETUP_IOPOLL)) {
		io_uring_prep_read(io_uring_get_sqe(&ring), fd->fd, buf, len, 0);
		if (io_uring_submit_and_wait(&ring, 1) == 1 && !io_uring_peek_cqe(&ring, &cqe))
			ok = cqe->res != -EOPNOTSUPP;
		file_ring_exit(&ring);
	}
	free(buf);
	return ok;
}

/*
 * Polled I/O can poll the kernel when it is direct and the block device
 * under it has poll queues (sysfs io_poll: the device itself, or the one
 * a regular file's filesystem lives on) and, for a regular file, the
 * filesystem polls (tmpfs does not).  Otherwise the driver still offers
 * poll queues, unlike Linux: polling looks at a kernel ring's CQ.
 */
static bool kernel_polls(struct file_dev *fd, const struct stat *st)
{
	if (!fd->direct || queue_attr(fd->bdev ? st->st_rdev : st->st_dev, "io_poll") != 1)
		return false;
	return fd->bdev || iopoll_read_works(fd);
}

static int set_limits(struct file_dev *fd, const struct file_conf *c, const struct stat *st)
{
	struct blkring_dev *dev = fd->dev;
	int ret;

	dev->read_only = c->ro;
	dev->features = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_POLL;
	dev->limits.max_sectors = FILE_MAX_SECTORS;
	ret = fd->bdev ? bdev_limits(fd, c, st) : file_limits(fd, c, st);
	if (ret)
		return ret;
	fd->iopoll = c->iopoll_key ? c->iopoll : kernel_polls(fd, st);
	if (fd->iopoll)
		dev->features |= BLKRING_FEAT_KERNEL_POLL;
	return 0;
}

/* ---- the device ---- */

static void file_destroy(struct blkring_dev *dev)
{
	struct file_dev *fd = dev->private;

	if (!fd)
		return;
	file_shared_exit(fd);
	file_blocking_exit(&fd->blocking);
	if (fd->fd >= 0)
		close(fd->fd);
	free(fd);
	dev->private = NULL;
}

static const struct blkring_dev_ops file_ops = {
    .name = "file",
    .submit_bio = file_submit_bio,
    .poll = file_poll,
    .destroy = file_destroy,
};

static int setup(struct file_dev *fd, const struct file_conf *c)
{
	struct stat st;
	bool created;
	int ret;

	fd->fd = open_path(c, &created);
	if (fd->fd < 0)
		return fd->fd;
	ret = check_kind(fd, c, &st);
	if (!ret && !fd->bdev && c->bdev_keys)
		ret = blkring__error(
		    -EINVAL, "file: '%s': discard_cmd and zero_falloc are for block devices",
		    c->path);
	if (!ret && fd->direct && fcntl(fd->fd, F_SETFL, O_DIRECT) < 0)
		ret = errno == EINVAL
		          ? blkring__error(-EINVAL,
		                           "file: '%s': the filesystem refuses O_DIRECT "
		                           "(direct=0 goes through the page cache)",
		                           c->path)
		          : open_error(c, -errno);
	if (!ret)
		ret = set_limits(fd, c, &st);
	if (!ret && c->iopoll && !fd->direct)
		ret = blkring__error(-EINVAL, "file: '%s': iopoll=1 needs direct=1", c->path);
	if (!ret)
		ret = blkring__hctxs_init(fd->dev, 1, 1, fd->depth);
	if (!ret)
		ret = file_shared_init(fd);
	if (ret && created)
		unlink(c->path);
	return ret;
}

static uint64_t default_io_workers(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus > 2 ? (uint64_t)cpus - 1 : 1;
}

static int file_open(struct blkring_spec *spec, struct blkring_dev **devp)
{
	struct file_conf c = {
	    .path = spec->arg,
	    .depth = FILE_DEFAULT_DEPTH,
	    .io_workers = default_io_workers(),
	    .spin_nsec = FILE_DEFAULT_SPIN_NSEC,
	    .direct = true,
	    .discard_cmd = true,
	    .zero_falloc = true,
	};
	struct blkring_dev *dev;
	struct file_dev *fd;
	int ret = parse_keys(spec, &c) ?: check_conf(&c);

	if (ret)
		return ret;
	dev = blkring__dev_alloc(&file_ops);
	fd = calloc(1, sizeof(*fd));
	if (!dev || !fd) {
		free(dev);
		free(fd);
		return -ENOMEM;
	}
	*devp = dev;
	dev->private = fd;
	fd->dev = dev;
	fd->fd = -1;
	fd->direct = c.direct;
	fd->zero_falloc = c.zero_falloc;
	fd->depth = (unsigned)c.depth;
	fd->io_workers = (unsigned)c.io_workers;
	fd->spin_nsec = c.spin_nsec;
	atomic_init(&fd->discard_cmd, c.discard_cmd);
	atomic_init(&fd->nounmap_mode, ZERO_WRITE_ZEROES);
	file_blocking_init(&fd->blocking);
	return setup(fd, &c); /* on failure the registry calls file_destroy() */
}

/* A bare path: `/dev/loop0`, `./disk.img,direct=0`. */
static bool file_claims(const char *text)
{
	return text[0] == '/' || text[0] == '.';
}

const struct blkring_driver blkring__file_driver = {
    .type = "file",
    .arg = SPEC_ARG_PATH,
    .arg_name = "PATH",
    .claims = file_claims,
    .open = file_open,
};
