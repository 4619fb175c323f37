// SPDX-License-Identifier: MIT
/* error: every read, write, discard and write zeroes fails with -EIO
 * (Linux's dm-error; like it, a flush has nothing to fail on). */
#include <errno.h>
#include <stdio.h>

#include "dm/dm.h"

static int error_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	(void)argv;
	if (argc)
		return blkring__dm_target_error(ti, -EINVAL, "expected no arguments, got %u", argc);
	ti->features = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD |
	               BLKRING_FEAT_WRITE_ZEROES;
	ti->num_discard_clones = 1;
	return 0;
}

static int error_map(struct dm_target *ti, struct blkring_bio *clone)
{
	(void)ti;
	blkring__bio_endio(clone, -EIO);
	return DM_MAPIO_SUBMITTED;
}

static int error_status(struct dm_target *ti, char *buf, size_t len)
{
	(void)ti;
	return snprintf(buf, len, "%s", "");
}

const struct dm_target_type blkring__dm_error = {
    .name = "error",
    .ctr = error_ctr,
    .map = error_map,
    .status = error_status,
};
