// SPDX-License-Identifier: MIT
/* error: every read, write, discard and write zeroes fails with -EIO
 * (Linux's dm-error; like it, a flush has nothing to fail on). */
#include <errno.h>

#include "dm/dm.h"

static int error_map(struct dm_target *ti, struct blkring_bio *clone)
{
	(void)ti;
	blkring__bio_endio(clone, -EIO);
	return DM_MAPIO_SUBMITTED;
}

const struct dm_target_type blkring__dm_error = {
    .name = "error",
    .ctr = blkring__dm_ctr_no_args,
    .map = error_map,
};
