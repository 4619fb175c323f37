// SPDX-License-Identifier: MIT
/* linear: `<device> <offset>`, a range of one device (Linux's dm-linear). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dm/dm.h"

struct linear_c {
	struct blkring_dev *dev;
	uint64_t start;
};

static int linear_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct linear_c *lc;
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
	lc = malloc(sizeof(*lc));
	if (!lc)
		return -ENOMEM;
	*lc = (struct linear_c){.dev = dev, .start = start};
	ti->private = lc;
	ti->num_flush_clones = 1;
	ti->num_discard_clones = 1;
	return 0;
}

static void linear_dtr(struct dm_target *ti)
{
	free(ti->private);
}

static int linear_map(struct dm_target *ti, struct blkring_bio *clone)
{
	struct linear_c *lc = ti->private;

	clone->dev = lc->dev;
	if (clone->op != REQ_OP_FLUSH)
		clone->sector = lc->start + (clone->sector - ti->begin);
	return DM_MAPIO_REMAPPED;
}

static int linear_status(struct dm_target *ti, char *buf, size_t len)
{
	struct linear_c *lc = ti->private;

	return snprintf(buf, len, "%s %llu", lc->dev->spec, (unsigned long long)lc->start);
}

const struct dm_target_type blkring__dm_linear = {
    .name = "linear",
    .ctr = linear_ctr,
    .dtr = linear_dtr,
    .map = linear_map,
    .status = linear_status,
};
