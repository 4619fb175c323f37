// SPDX-License-Identifier: MIT
/*
 * striped: `<#stripes> <chunk sectors> (<device> <offset>)...`, chunks
 * dealt round-robin over the devices (Linux's dm-stripe, with its rules:
 * target length divisible by #stripes, each stripe's width by the chunk,
 * non-power-of-two chunks allowed; chunks of at least one page as the dm
 * docs ask).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dm/dm.h"

#define MIN_CHUNK_SECTORS 8

/* Stripe n is the table's leg n: its device and offset. */
struct stripe_c {
	struct dm_stripe_geom geom;
	uint64_t width; /* sectors per stripe */
};

void blkring__stripe_map_sector(const struct dm_stripe_geom *g, uint64_t sector, uint32_t *stripe,
                                uint64_t *result)
{
	uint64_t chunk, offset;

	if (likely(g->chunk_shift >= 0)) {
		chunk = sector >> g->chunk_shift;
		offset = sector & (g->chunk - 1);
	} else {
		chunk = sector / g->chunk;
		offset = sector % g->chunk;
	}
	/* dm-stripe's stripes_shift: a power-of-two count needs no division. */
	if (likely(!(g->stripes & (g->stripes - 1)))) {
		*stripe = (uint32_t)(chunk & (g->stripes - 1));
		chunk >>= __builtin_ctz(g->stripes);
	} else {
		*stripe = (uint32_t)(chunk % g->stripes);
		chunk /= g->stripes;
	}
	*result = chunk * g->chunk + offset;
}

/* Where `sector` lands on stripe `target`: exactly, when it is that
 * stripe's; otherwise at the start of that stripe's next chunk at or
 * after it (dm-stripe's stripe_map_range_sector). */
static uint64_t range_sector(const struct dm_stripe_geom *g, uint64_t sector, uint32_t target)
{
	uint32_t stripe;
	uint64_t result;

	blkring__stripe_map_sector(g, sector, &stripe, &result);
	if (stripe == target)
		return result;
	result -= result % g->chunk;
	return target < stripe ? result + g->chunk : result;
}

bool blkring__stripe_map_range(const struct dm_stripe_geom *g, uint64_t sector, uint64_t len,
                               uint32_t stripe, uint64_t *begin, uint64_t *nr)
{
	uint64_t b = range_sector(g, sector, stripe), e = range_sector(g, sector + len, stripe);

	if (b >= e)
		return false;
	*begin = b;
	*nr = e - b;
	return true;
}

static int chunk_shift(uint32_t chunk)
{
	return (chunk & (chunk - 1)) ? -1 : __builtin_ctz(chunk);
}

/* The numbers first, as dm-stripe checks them, then the devices. */
static int check_geometry(struct dm_target *ti, unsigned argc, uint64_t *stripes, uint64_t *chunk)
{
	int ret;

	if (argc < 2)
		return blkring__dm_target_error(ti, -EINVAL,
		                                "expected <#stripes> <chunk sectors> "
		                                "(<device> <offset>)..., got %u arguments",
		                                argc);
	ret = blkring__dm_arg_u64(ti, 1, UINT32_MAX, "#stripes", stripes)
	          ?: blkring__dm_arg_u64(ti, 2, UINT32_MAX, "chunk sectors", chunk);
	if (ret)
		return ret;
	if (!*stripes)
		return blkring__dm_arg_error(ti, 1, -EINVAL, "#stripes must be at least 1");
	if (*chunk < MIN_CHUNK_SECTORS)
		return blkring__dm_arg_error(ti, 2, -EINVAL,
		                             "chunk must be at least %u sectors (one page)",
		                             MIN_CHUNK_SECTORS);
	if (ti->len % *stripes)
		return blkring__dm_arg_error(ti, 1, -EINVAL,
		                             "target length %llu is not divisible by #stripes",
		                             (unsigned long long)ti->len);
	if ((ti->len / *stripes) % *chunk)
		return blkring__dm_arg_error(ti, 2, -EINVAL,
		                             "the width of each stripe (%llu sectors) is not "
		                             "divisible by the chunk",
		                             (unsigned long long)(ti->len / *stripes));
	if (argc != 2 + 2 * *stripes)
		return blkring__dm_target_error(ti, -EINVAL,
		                                "%llu stripes need %llu arguments (<device> "
		                                "<offset> per stripe), got %u",
		                                (unsigned long long)*stripes,
		                                (unsigned long long)(2 + 2 * *stripes), argc);
	return 0;
}

static int open_stripes(struct dm_target *ti, struct stripe_c *sc)
{
	for (uint32_t i = 0; i < sc->geom.stripes; i++) {
		struct blkring_dev *dev;
		uint64_t start;
		int ret = blkring__dm_arg_u64(ti, 4 + 2 * i, UINT64_MAX, "offset", &start)
		              ?: blkring__dm_get_device(ti, 3 + 2 * i, start, sc->width, &dev);

		if (ret)
			return ret;
	}
	return 0;
}

static int stripe_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	uint64_t stripes, chunk;
	struct stripe_c *sc;
	int ret;

	(void)argv;
	ret = check_geometry(ti, argc, &stripes, &chunk);
	if (ret)
		return ret;
	sc = malloc(sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->geom = (struct dm_stripe_geom){.stripes = (uint32_t)stripes,
	                                   .chunk = (uint32_t)chunk,
	                                   .chunk_shift = chunk_shift(chunk)};
	sc->width = ti->len / stripes;
	ret = open_stripes(ti, sc);
	if (ret) {
		free(sc);
		return ret;
	}
	ti->private = sc;
	ti->max_io_len = (uint32_t)chunk;
	ti->num_flush_clones = (unsigned)stripes;
	ti->num_discard_clones = (unsigned)stripes;
	return 0;
}

static void stripe_dtr(struct dm_target *ti)
{
	free(ti->private);
}

/* Discards and write zeroes: clone n carries stripe n's part of the range. */
static int stripe_map_range(struct dm_target *ti, struct stripe_c *sc, struct blkring_bio *clone)
{
	unsigned n = dm_clone_nr(clone);
	uint64_t begin, nr;

	if (!blkring__stripe_map_range(&sc->geom, clone->sector - ti->begin,
	                               clone->size >> SECTOR_SHIFT, n, &begin, &nr)) {
		blkring__bio_endio(clone, 0);
		return DM_MAPIO_SUBMITTED;
	}
	clone->dev = ti->legs[n].dev;
	clone->sector = ti->legs[n].start + begin;
	clone->size = nr << SECTOR_SHIFT;
	return DM_MAPIO_REMAPPED;
}

/* Flushes go to clone n's stripe; discards and write zeroes carry stripe
 * n's part of the range.  Out of line: the read and write map saves no
 * registers then. */
static __attribute__((noinline)) int stripe_map_other(struct dm_target *ti,
                                                      struct blkring_bio *clone)
{
	if (clone->op == REQ_OP_FLUSH) {
		clone->dev = ti->legs[dm_clone_nr(clone)].dev;
		return DM_MAPIO_REMAPPED;
	}
	return stripe_map_range(ti, ti->private, clone);
}

static int stripe_map(struct dm_target *ti, struct blkring_bio *clone)
{
	struct stripe_c *sc = ti->private;
	uint32_t stripe;
	uint64_t result;

	if (unlikely(clone->op > REQ_OP_WRITE))
		return stripe_map_other(ti, clone);
	blkring__stripe_map_sector(&sc->geom, clone->sector - ti->begin, &stripe, &result);
	clone->dev = ti->legs[stripe].dev;
	clone->sector = ti->legs[stripe].start + result;
	return DM_MAPIO_REMAPPED;
}

static int stripe_status(struct dm_target *ti, char *buf, size_t len)
{
	struct stripe_c *sc = ti->private;
	int n = snprintf(buf, len, "%u %u", sc->geom.stripes, sc->geom.chunk);

	for (uint32_t i = 0; i < sc->geom.stripes; i++)
		n += snprintf(buf ? buf + n : NULL, buf ? len - n : 0, " %s %llu",
		              ti->legs[i].dev->spec, (unsigned long long)ti->legs[i].start);
	return n;
}

/* dm-stripe's: a chunk is the smallest I/O that keeps to one leg, a row
 * of chunks the one that keeps every leg busy. */
static void stripe_io_hints(struct dm_target *ti, struct blkring_limits *limits)
{
	struct stripe_c *sc = ti->private;
	uint64_t chunk = (uint64_t)sc->geom.chunk << SECTOR_SHIFT, row = chunk * sc->geom.stripes;

	if (chunk > UINT32_MAX)
		return;
	limits->io_min = (uint32_t)chunk;
	limits->io_opt = row <= UINT32_MAX ? (uint32_t)row : 0;
}

const struct dm_target_type blkring__dm_striped = {
    .name = "striped",
    .ctr = stripe_ctr,
    .dtr = stripe_dtr,
    .map = stripe_map,
    .status = stripe_status,
    .io_hints = stripe_io_hints,
};
