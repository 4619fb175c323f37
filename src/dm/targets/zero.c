// SPDX-License-Identifier: MIT
/* zero: reads return zeros, writes, discards and zeroes are dropped
 * (Linux's dm-zero; write zeroes is accepted too, trivially true here). */
#include "dm/dm.h"

static int zero_map(struct dm_target *ti, struct blkring_bio *clone)
{
	(void)ti;
	if (clone->op == REQ_OP_READ) {
		struct blkring_bio_iter it;

		blkring__bio_iter_init(&it, clone);
		blkring__bio_iter_zero(&it, clone->size);
	}
	blkring__bio_endio(clone, 0);
	return DM_MAPIO_SUBMITTED;
}

const struct dm_target_type blkring__dm_zero = {
    .name = "zero",
    .ctr = blkring__dm_ctr_no_args,
    .map = zero_map,
};
