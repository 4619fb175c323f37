// SPDX-License-Identifier: MIT
/*
 * nbdkit-blkring-plugin: any blkring device or volume over NBD.
 *
 *   nbdkit blkring spec=null:size=1G,memory_backed=1
 *   nbdkit blkring table=my.table        (SIGHUP reloads the table)
 *
 * Every callback runs on an nbdkit worker thread and does its I/O on that
 * thread's own ring (ring.c); the device is shared by all connections.
 */
#define NBDKIT_API_VERSION 2
#include <errno.h>
#include <nbdkit-plugin.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

/* The errno NBD carries for a library error (NBD has few). */
int plug_nbd_errno(int err)
{
	switch (err) {
	case -EBADF:
		return EPERM; /* a read-only device */
	case -EINVAL:
		return EINVAL;
	case -ENOSPC:
		return ENOSPC;
	case -EOPNOTSUPP:
		return ENOTSUP;
	default:
		return EIO;
	}
}

static int reply(const char *op, int ret)
{
	if (!ret)
		return 0;
	nbdkit_set_error(plug_nbd_errno(ret));
	/* A client asks for a fast zero expecting a refusal where there is none. */
	if (ret != -EOPNOTSUPP || strcmp(op, "zero"))
		nbdkit_error("%s: %s", op, strerror(-ret));
	return -1;
}

static int blkring_plugin_config(const char *key, const char *value)
{
	return plug_config(key, value);
}

static int blkring_plugin_config_complete(void)
{
	return plug_config_complete();
}

static void blkring_plugin_dump_plugin(void)
{
	printf("blkring_version=%s\n", BLKRING_VERSION_STRING);
}

/* nbdkit forks to daemonise after config_complete: threads (devices',
 * rings') are started here, in the process that serves. */
static int blkring_plugin_after_fork(void)
{
	if (plug_rings_init() < 0) {
		nbdkit_error("pthread_key_create failed");
		return -1;
	}
	if (plug_open_device() < 0)
		return -1;
	return plug_reload_start();
}

/* After the last connection: its workers, and their rings, are gone. */
static void blkring_plugin_cleanup(void)
{
	plug_reload_stop();
	plug_rings_exit();
	plug_close_device();
}

static void blkring_plugin_unload(void)
{
	plug_free_config();
}

static void *blkring_plugin_open(int readonly)
{
	(void)readonly;
	return NBDKIT_HANDLE_NOT_NEEDED;
}

static int info_or_error(struct blkring_dev_info *info)
{
	int ret = plug_info(info);

	if (ret < 0) {
		nbdkit_error("device info: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

static int has_feature(unsigned feature)
{
	struct blkring_dev_info info;

	if (info_or_error(&info) < 0)
		return -1;
	return (info.features & feature) != 0;
}

static int64_t blkring_plugin_get_size(void *h)
{
	struct blkring_dev_info info;

	(void)h;
	if (info_or_error(&info) < 0)
		return -1;
	return (int64_t)info.size;
}

/* NBD's preferred block size: the device's minimum I/O size (a striped
 * volume's chunk), where it is a power of two within the protocol's range
 * (512 bytes to 32 MiB), else the logical block. */
static uint32_t preferred_size(uint32_t lbs, uint32_t io_min)
{
	uint32_t pref = io_min > 512 ? io_min : 512;

	if ((pref & (pref - 1)) || pref > (32U << 20))
		pref = lbs;
	return pref > lbs ? pref : lbs;
}

static int blkring_plugin_block_size(void *h, uint32_t *minimum, uint32_t *preferred,
                                     uint32_t *maximum)
{
	struct blkring_dev_info info;
	uint32_t io_min, io_opt;

	(void)h;
	if (info_or_error(&info) < 0 || blkring_dev_io_hints(plug.dev, &io_min, &io_opt) < 0)
		return -1;
	*minimum = info.logical_block_size;
	*preferred = preferred_size(info.logical_block_size, io_min);
	*maximum = 0xffffffff; /* the library splits to the device's limits */
	return 0;
}

static int blkring_plugin_can_write(void *h)
{
	struct blkring_dev_info info;

	(void)h;
	if (info_or_error(&info) < 0)
		return -1;
	return !info.read_only && !plug.readonly;
}

static int blkring_plugin_can_flush(void *h)
{
	(void)h;
	return has_feature(BLKRING_FEAT_FLUSH);
}

/* Without a volatile cache a write is durable when it completes. */
static int blkring_plugin_can_fua(void *h)
{
	struct blkring_dev_info info;

	(void)h;
	if (info_or_error(&info) < 0)
		return -1;
	if ((info.features & (BLKRING_FEAT_FUA | BLKRING_FEAT_FLUSH)) == BLKRING_FEAT_FLUSH)
		return NBDKIT_FUA_EMULATE;
	return NBDKIT_FUA_NATIVE;
}

static int blkring_plugin_can_trim(void *h)
{
	(void)h;
	return has_feature(BLKRING_FEAT_DISCARD);
}

/* Every device zeroes: by its offload, or the library writes zero pages. */
static int blkring_plugin_can_zero(void *h)
{
	(void)h;
	return 1;
}

/* A fast zero is refused up front where only the zero-page fallback exists. */
static int blkring_plugin_can_fast_zero(void *h)
{
	(void)h;
	return 1;
}

/* Connections share one device, and blkring devices are coherent within a process. */
static int blkring_plugin_can_multi_conn(void *h)
{
	(void)h;
	return 1;
}

static int blkring_plugin_pread(void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	(void)flags;
	return reply("pread", plug_read(buf, count, offset));
}

static int blkring_plugin_pwrite(void *h, const void *buf, uint32_t count, uint64_t offset,
                                 uint32_t flags)
{
	(void)h;
	return reply("pwrite", plug_write(buf, count, offset, flags & NBDKIT_FLAG_FUA));
}

static int blkring_plugin_flush(void *h, uint32_t flags)
{
	(void)h;
	(void)flags;
	return reply("flush", plug_flush());
}

/* FUA on a trim or a zero: a flush once it is done (where there is a cache). */
static int fua_flush(int ret, uint32_t flags)
{
	if (ret || !(flags & NBDKIT_FLAG_FUA) || has_feature(BLKRING_FEAT_FLUSH) != 1)
		return ret;
	return plug_flush();
}

static int blkring_plugin_trim(void *h, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	return reply("trim", fua_flush(plug_discard(count, offset), flags));
}

static unsigned zero_flags(uint32_t flags)
{
	return (flags & NBDKIT_FLAG_MAY_TRIM ? 0 : BLKRING_ZERO_NOUNMAP) |
	       (flags & NBDKIT_FLAG_FAST_ZERO ? BLKRING_ZERO_NOFALLBACK : 0);
}

static int blkring_plugin_zero(void *h, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	return reply("zero", fua_flush(plug_write_zeroes(count, offset, zero_flags(flags)), flags));
}

static struct nbdkit_plugin plugin = {
    .name = "blkring",
    .longname = "blkring: the Linux block I/O path in userspace",
    .version = BLKRING_VERSION_STRING,
    .description = "Serves any blkring device or device-mapper volume",
    .config = blkring_plugin_config,
    .config_complete = blkring_plugin_config_complete,
    .config_help = "spec=SPEC     a blkring device spec (null:..., file:..., table:...)\n"
                   "table=FILE    a dmsetup table; SIGHUP reloads it\n"
                   "readonly=1    open the device read-only\n"
                   "sqpoll=1      each ring gets a submission thread\n"
                   "poll=1        polled rings (IOPOLL), for devices with poll queues\n"
                   "depth=N       ring entries (default 64)",
    .dump_plugin = blkring_plugin_dump_plugin,
    .after_fork = blkring_plugin_after_fork,
    .cleanup = blkring_plugin_cleanup,
    .unload = blkring_plugin_unload,
    .open = blkring_plugin_open,
    .get_size = blkring_plugin_get_size,
    .block_size = blkring_plugin_block_size,
    .can_write = blkring_plugin_can_write,
    .can_flush = blkring_plugin_can_flush,
    .can_fua = blkring_plugin_can_fua,
    .can_trim = blkring_plugin_can_trim,
    .can_zero = blkring_plugin_can_zero,
    .can_fast_zero = blkring_plugin_can_fast_zero,
    .can_multi_conn = blkring_plugin_can_multi_conn,
    .pread = blkring_plugin_pread,
    .pwrite = blkring_plugin_pwrite,
    .flush = blkring_plugin_flush,
    .trim = blkring_plugin_trim,
    .zero = blkring_plugin_zero,
};

NBDKIT_REGISTER_PLUGIN(plugin)
