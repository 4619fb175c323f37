// SPDX-License-Identifier: MIT
/*
 * linear: `<device> <offset>`, a range of one device (Linux's dm-linear).
 * The table's one leg is all it keeps: the device and the offset.
 */
#include <errno.h>
#include <stdio.h>

#include "dm/dm.h"

static int linear_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct blkring_dev *dev;
	uint64_t start;
	int ret;

	(void)argv;
	if (argc != 2)
		return blkring__dm_target_error(
		    ti, -EINVAL, "expected 2 arguments (<device> <offset>), got %u", argc);
	ret = blkring__dm_arg_u64(ti, 2, UINT64_MAX, "offset", &start)
	          ?: blkring__dm_get_device(ti, 1, start, ti->len, &dev);
	if (ret)
		return ret;
	ti->num_flush_clones = 1;
	ti->num_discard_clones = 1;
	return 0;
}

static int linear_map(struct dm_target *ti, struct blkring_bio *clone)
{
	blkring__dm_remap_leg(ti, clone);
	return DM_MAPIO_REMAPPED;
}

static int linear_status(struct dm_target *ti, char *buf, size_t len)
{
	const struct dm_leg *leg = &ti->legs[0];

	return snprintf(buf, len, "%s %llu", leg->dev->spec, (unsigned long long)leg->start);
}

const struct dm_target_type blkring__dm_linear = {
    .name = "linear",
    .ctr = linear_ctr,
    .map = linear_map,
    .status = linear_status,
};
