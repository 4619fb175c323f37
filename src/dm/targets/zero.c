// SPDX-License-Identifier: MIT
/* zero: reads return zeros, writes, discards and zeroes are dropped
 * (Linux's dm-zero; write zeroes is accepted too, trivially true here). */
#include <errno.h>
#include <stdio.h>

#include "dm/dm.h"

static int zero_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	(void)argv;
	if (argc)
		return blkring__dm_target_error(ti, -EINVAL, "expected no arguments, got %u", argc);
	ti->features = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD |
	               BLKRING_FEAT_WRITE_ZEROES;
	ti->num_discard_clones = 1;
	return 0;
}

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

static int zero_status(struct dm_target *ti, char *buf, size_t len)
{
	(void)ti;
	return snprintf(buf, len, "%s", "");
}

const struct dm_target_type blkring__dm_zero = {
    .name = "zero",
    .ctr = zero_ctr,
    .map = zero_map,
    .status = zero_status,
};
