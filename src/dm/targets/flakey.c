// SPDX-License-Identifier: MIT
/*
 * flakey: `<device> <offset> <up seconds> <down seconds> [<#features>
 * <feature>...]` (Linux's dm-flakey).  A linear map while up; while down,
 * reads fail with error_reads, writes (flushes, discards and zeroes are
 * writes too) are dropped with drop_writes or fail with error_writes.
 * Without features, down means every I/O fails, as in Linux.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm/dm.h"
#include "lib/clock.h"

#define NSEC_PER_SEC 1000000000ULL

enum { DROP_WRITES = 1U << 0, ERROR_WRITES = 1U << 1, ERROR_READS = 1U << 2 };

static const char *const feature_names[] = {"drop_writes", "error_writes", "error_reads"};

/* The device and offset are the table's one leg. */
struct flakey_c {
	uint32_t up, down; /* seconds */
	unsigned flags;
	unsigned nr_features; /* as given, for status */
	uint64_t start_ns;
};

uint64_t (*blkring__dm_clock_ns)(void) = blkring__now_ns;

static int parse_feature(struct dm_target *ti, unsigned arg, unsigned *flags)
{
	const char *name = ti->argv[arg - 1];

	for (unsigned i = 0; i < ARRAY_SIZE(feature_names); i++) {
		if (strcmp(name, feature_names[i]))
			continue;
		if (*flags & (1U << i))
			return blkring__dm_arg_error(ti, arg, -EINVAL, "feature given twice");
		*flags |= 1U << i;
		if ((*flags & DROP_WRITES) && (*flags & ERROR_WRITES))
			return blkring__dm_arg_error(ti, arg, -EINVAL,
			                             "drop_writes and error_writes exclude each "
			                             "other");
		return 0;
	}
	return blkring__dm_arg_error(ti, arg, -EINVAL,
	                             "unknown feature; expected drop_writes, error_writes or "
	                             "error_reads");
}

static int parse_features(struct dm_target *ti, unsigned argc, struct flakey_c *fc)
{
	uint64_t n;
	int ret;

	if (argc == 4)
		return 0;
	ret = blkring__dm_arg_u64(ti, 5, ARRAY_SIZE(feature_names), "#features", &n);
	if (ret)
		return ret;
	if (argc != 5 + n)
		return blkring__dm_arg_error(
		    ti, 5, -EINVAL, "%llu features need %llu arguments in all, got %u",
		    (unsigned long long)n, (unsigned long long)(5 + n), argc);
	for (unsigned i = 0; i < n; i++) {
		ret = parse_feature(ti, 6 + i, &fc->flags);
		if (ret)
			return ret;
	}
	fc->nr_features = (unsigned)n;
	return 0;
}

static int parse_args(struct dm_target *ti, unsigned argc, struct flakey_c *fc)
{
	struct blkring_dev *dev;
	uint64_t start, up, down;
	int ret;

	if (argc < 4)
		return blkring__dm_target_error(ti, -EINVAL,
		                                "expected <device> <offset> <up seconds> <down "
		                                "seconds> [<#features> <feature>...], got %u "
		                                "arguments",
		                                argc);
	ret = blkring__dm_arg_u64(ti, 2, UINT64_MAX, "offset", &start) ?:
	      blkring__dm_arg_u64(ti, 3, UINT32_MAX, "up interval", &up) ?:
	      blkring__dm_arg_u64(ti, 4, UINT32_MAX, "down interval", &down) ?:
	      parse_features(ti, argc, fc);
	if (ret)
		return ret;
	if (!up && !down)
		return blkring__dm_arg_error(ti, 4, -EINVAL, "up and down intervals are both 0");
	fc->up = (uint32_t)up;
	fc->down = (uint32_t)down;
	if (!fc->flags)
		fc->flags = ERROR_READS | ERROR_WRITES;
	return blkring__dm_get_device(ti, 1, start, ti->len, &dev);
}

static int flakey_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct flakey_c *fc = calloc(1, sizeof(*fc));
	int ret;

	(void)argv;
	if (!fc)
		return -ENOMEM;
	ret = parse_args(ti, argc, fc);
	if (ret) {
		free(fc);
		return ret;
	}
	fc->start_ns = blkring__dm_clock_ns();
	ti->private = fc;
	ti->num_flush_clones = 1;
	ti->num_discard_clones = 1;
	return 0;
}

static void flakey_dtr(struct dm_target *ti)
{
	free(ti->private);
}

static bool flakey_down(const struct flakey_c *fc)
{
	uint64_t period = ((uint64_t)fc->up + fc->down) * NSEC_PER_SEC;
	uint64_t elapsed = blkring__dm_clock_ns() - fc->start_ns;

	return elapsed % period >= (uint64_t)fc->up * NSEC_PER_SEC;
}

static int flakey_map(struct dm_target *ti, struct blkring_bio *clone)
{
	struct flakey_c *fc = ti->private;

	if (flakey_down(fc)) {
		bool read = clone->op == REQ_OP_READ;

		if ((read && (fc->flags & ERROR_READS)) || (!read && (fc->flags & ERROR_WRITES))) {
			blkring__bio_endio(clone, -EIO);
			return DM_MAPIO_SUBMITTED;
		}
		if (!read && (fc->flags & DROP_WRITES)) {
			blkring__bio_endio(clone, 0);
			return DM_MAPIO_SUBMITTED;
		}
	}
	blkring__dm_remap_leg(ti, clone);
	return DM_MAPIO_REMAPPED;
}

static int flakey_status(struct dm_target *ti, char *buf, size_t len)
{
	struct flakey_c *fc = ti->private;
	const struct dm_leg *leg = &ti->legs[0];
	int n = snprintf(buf, len, "%s %llu %u %u", leg->dev->spec, (unsigned long long)leg->start,
	                 fc->up, fc->down);

	if (!fc->nr_features)
		return n;
	n += snprintf(buf ? buf + n : NULL, buf ? len - n : 0, " %u", fc->nr_features);
	for (unsigned i = 0; i < ARRAY_SIZE(feature_names); i++)
		if (fc->flags & (1U << i))
			n += snprintf(buf ? buf + n : NULL, buf ? len - n : 0, " %s",
			              feature_names[i]);
	return n;
}

const struct dm_target_type blkring__dm_flakey = {
    .name = "flakey",
    .ctr = flakey_ctr,
    .dtr = flakey_dtr,
    .map = flakey_map,
    .status = flakey_status,
};
