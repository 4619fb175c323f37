// SPDX-License-Identifier: MIT
/* fio's buffer contents: the set-up fill, and the wrapper that refills or
 * scrambles each write. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "engine.h"
#include "job.h"
#include "pattern.h"

#define SECTOR 512

struct data {
	struct bench_engine engine; /* the job's engine with submit wrapped */
	const struct bench_engine *inner;
	const struct job_opts *o;
	uint32_t chunk;        /* buffer_compress_chunk, at most the smallest write */
	bool compress;         /* the fill of buffer_compress_percentage or dedupe_percentage */
	bool refill, scramble; /* what each write gets */
	uint64_t rng;          /* seeds of the blocks' data */
	uint64_t dedupe_rng;   /* draws which blocks repeat */
	uint64_t last_seed;    /* of the last block that was not a repeat */
};

static void fill_random(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w = rng_next(&seed);

		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		uint64_t w = rng_next(&seed);

		memcpy(p + i, &w, len - i);
	}
}

/* fio's compressible chunk: random bytes, then zeroes or buffer_pattern. */
static void fill_chunk(const struct data *d, uint8_t *p, size_t len, uint64_t seed)
{
	size_t rnd = len * (100 - d->o->compress_percentage) / 100;

	fill_random(p, rnd, seed);
	if (d->o->buffer_pattern.len)
		pattern_fill(&d->o->buffer_pattern, p + rnd, len - rnd, 0);
	else
		memset(p + rnd, 0, len - rnd);
}

/* fio's dedupe_mode=repeat: a repeat takes the last new block's seed. */
static uint64_t block_seed(struct data *d)
{
	unsigned pct = d->o->dedupe_percentage;

	if (pct && rng_below(&d->dedupe_rng, 100) < pct)
		return d->last_seed;
	d->last_seed = rng_next(&d->rng);
	return d->last_seed;
}

static void data_fill(struct data *d, uint8_t *p, size_t len)
{
	const struct job_opts *o = d->o;

	if (d->compress) {
		uint64_t seed = block_seed(d);

		for (size_t at = 0; at < len; at += d->chunk, seed += 0x9e3779b97f4a7c15ULL)
			fill_chunk(d, p + at, len - at < d->chunk ? len - at : d->chunk, seed);
	} else if (o->buffer_pattern.len) {
		pattern_fill(&o->buffer_pattern, p, len, 0);
	} else if (o->zero_buffers) {
		memset(p, 0, len);
	} else {
		fill_random(p, len, rng_next(&d->rng));
	}
}

/* fio's small_content_scramble: in every sector, the offset in one of its
 * cache lines and the time (t: seconds, nanoseconds) at the end of the first. */
static void scramble(struct io_unit *io, const uint64_t t[2])
{
	unsigned line = (unsigned)((t[1] ^ io->offset) & 7) * 64;
	uint8_t *p = io->buf, *end = p + (io->len & ~(uint32_t)(SECTOR - 1));
	uint64_t off = io->offset;

	for (; p < end; p += SECTOR, off += SECTOR) {
		memcpy(p + line, &off, sizeof(off));
		memcpy(p + 64 - 2 * sizeof(*t), t, 2 * sizeof(*t));
	}
}

static int data_submit(struct job *j, struct io_unit **ios, unsigned n)
{
	struct data *d = j->data;
	uint64_t now = j->issuing->start_ns;
	uint64_t t[2] = {now / 1000000000ULL, now % 1000000000ULL};

	for (unsigned i = 0; i < n; i++) {
		if (ios[i]->ddir != DDIR_WRITE)
			continue;
		if (d->refill)
			data_fill(d, ios[i]->buf, ios[i]->len);
		else
			scramble(ios[i], t);
	}
	return d->inner->submit(j, ios, n);
}

/* fio's rules: which options imply refill_buffers, which rule out scrambling. */
static void data_modes(struct data *d, const struct job *j)
{
	const struct job_opts *o = j->o;
	bool reads = j->ddirs & (1U << DDIR_READ);
	bool compress = o->compress_percentage && o->compress_percentage < 100;
	/* Given at all (0 too), either rules scrambling out, as fio's TD_F_COMPRESS. */
	bool given =
	    opt_is_set(o, "buffer_compress_percentage") || opt_is_set(o, "dedupe_percentage");

	d->refill = o->refill_buffers;
	if (o->buffer_pattern.len)
		d->refill = compress || reads;
	if (compress && !opt_is_set(o, "refill_buffers"))
		d->refill = true;
	if (o->dedupe_percentage)
		d->refill = true;
	d->scramble = !d->refill && o->scramble_buffers && !given && !o->buffer_pattern.len &&
	              !(o->zero_buffers && opt_is_set(o, "zero_buffers"));
}

static void data_init(struct data *d, const struct job *j)
{
	const struct job_opts *o = j->o;
	uint32_t min_bs = (uint32_t)opts_min_bs(o, DDIR_WRITE);

	memset(d, 0, sizeof(*d));
	d->o = o;
	d->rng = j->number;
	d->dedupe_rng = ~(uint64_t)j->number;
	d->last_seed = rng_next(&d->rng);
	d->compress = o->compress_percentage || o->dedupe_percentage;
	d->chunk =
	    o->compress_chunk && o->compress_chunk < min_bs ? (uint32_t)o->compress_chunk : min_bs;
	data_modes(d, j);
}

int data_setup(struct job *j)
{
	struct data init, *d;
	size_t unit = j->depth ? j->bufs_len / j->depth : 0;

	data_init(&init, j);
	for (unsigned i = 0; unit && i < j->depth; i++)
		data_fill(&init, j->ios[i].buf, unit);
	if (!(j->ddirs & (1U << DDIR_WRITE)) || j->o->verify || !(init.refill || init.scramble))
		return 0;
	d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = init;
	d->inner = j->engine;
	d->engine = *j->engine;
	d->engine.submit = data_submit;
	j->data = d;
	j->engine = &d->engine;
	return 0;
}

void data_teardown(struct job *j)
{
	if (!j->data)
		return;
	j->engine = j->data->inner;
	free(j->data);
	j->data = NULL;
}
