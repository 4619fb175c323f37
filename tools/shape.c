// SPDX-License-Identifier: MIT
/*
 * fio's workload shapes (shape.h): where each I/O of a shaped job goes and
 * how long it is.  Positions are kept as fio keeps them, per file and
 * direction, from the start of the job's window on the file: its region,
 * or with strided zones the zone under way.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "job.h"
#include "plan.h"
#include "shape.h"

#define NO_START UINT64_MAX                   /* fio's last_start before a file's first I/O */
#define GOLDEN_RATIO_64 0x61C8864680B583EBULL /* fio's __hash_u64() */
#define ZIPF_MAX_GEN 10000000ULL              /* fio's cap on zeta's terms */
#define GAUSS_ITERS 12                        /* fio's draws per normal value */
#define SHAPE_STREAM (1ULL << 32)             /* seed streams after plan.c's */

/* fio's zipf, pareto and normal over one window's blocks. */
struct dist_gen {
	uint64_t nr;  /* blocks */
	uint64_t off; /* fio's rand_off: where its hottest value lands */
	uint64_t rng;
	double zetan, zeta2, eta, alpha; /* zipf */
	double power;                    /* pareto */
	int64_t stddev;                  /* normal, in blocks */
};

struct shape_file {
	uint64_t zone;                      /* strided: the zone's start, from the region's */
	uint64_t last_end[BENCH_DDIR_NR];   /* fio's last_pos */
	uint64_t last_start[BENCH_DDIR_NR]; /* fio's last_start, or NO_START */
	struct dist_gen dist[BENCH_DDIR_NR];
};

struct shape {
	uint64_t min_bs[BENCH_DDIR_NR], max_bs[BENCH_DDIR_NR];
	struct shape_file *files;
	bool random, strided;
	uint64_t skip;             /* sequential modes: rw=MODE:N's hole */
	bool back;                 /* rw=MODE:-N: the hole goes backwards */
	uint64_t seq_nr, seq_left; /* random modes: rw=MODE:N, fio's ddir_seq_nr */
	uint64_t zonerange;
	uint64_t zone_bytes; /* fio's: moved in the zone under way */
	uint64_t rng;        /* sizes, percentage_random, zones */
};

bool shape_wanted(const struct job *j)
{
	const struct job_opts *o = j->o;
	const struct rw_mode *m = &rw_modes[o->rw.mode];

	if ((opts_strided(o) && j->nr_files == 1) || (m->random ? o->rw.nr > 1 : o->rw.nr > 0) ||
	    (m->random && o->random_distribution.kind != DIST_RANDOM))
		return true;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		if ((m->ddirs & (1U << d)) && (opts_min_bs(o, d) != opts_max_bs(o, d) ||
		                               (m->random && o->percentage_random[d] < 100)))
			return true;
	return false;
}

/* fio's __rand() / FRAND32_MAX: 32 random bits as 0 to 1. */
static double unit_rand(uint64_t *rng)
{
	return (double)(uint32_t)(rng_next(rng) >> 32) / (double)UINT32_MAX;
}

/* lib/zipf.c's zeta over at most ZIPF_MAX_GEN terms. */
static double zipf_zetan(double theta, uint64_t nr)
{
	uint64_t n = nr < ZIPF_MAX_GEN ? nr : ZIPF_MAX_GEN;
	double z = 0;

	for (uint64_t i = 0; i < n; i++)
		z += pow(1.0 / (double)(i + 1), theta);
	return z;
}

/* zipf_init(), pareto_init() and gauss_init(), with zeta given. */
static void dist_init(struct dist_gen *g, const struct rand_dist *rd, uint64_t nr, uint64_t rng,
                      double zetan)
{
	double theta = rd->value;

	*g = (struct dist_gen){.nr = nr, .rng = rng};
	g->off = rd->center >= 0 ? (uint64_t)((double)nr * rd->center)
	                         : (uint32_t)(rng_next(&g->rng) >> 32);
	if (rd->kind == DIST_ZIPF) {
		g->zetan = zetan;
		g->zeta2 = 1.0 + pow(0.5, theta);
		g->alpha = 1.0 / (1.0 - theta);
		g->eta = (1.0 - pow(2.0 / (double)nr, 1.0 - theta)) / (1.0 - g->zeta2 / zetan);
	} else if (rd->kind == DIST_PARETO) {
		g->power = log(rd->value) / log(1.0 - rd->value);
	} else {
		/* fio's center for normal is where the middle of its bell goes. */
		int64_t shift = rd->center >= 0 ? (int64_t)((double)nr * (rd->center - 0.5)) : 0;

		g->stddev = (int64_t)ceil((double)nr * rd->value / 100.0);
		if (g->stddev > (int64_t)(nr / 2))
			g->stddev = (int64_t)(nr / 2);
		g->off = shift < 0 ? nr - (uint64_t)-shift % nr : (uint64_t)shift;
	}
}

static uint64_t zipf_next(struct dist_gen *g)
{
	double u = unit_rand(&g->rng), z = u * g->zetan;

	if (z < 1.0)
		return 0;
	if (z < g->zeta2)
		return 1;
	return (uint64_t)((double)g->nr * pow(g->eta * u - g->eta + 1.0, g->alpha));
}

static uint64_t normal_next(struct dist_gen *g)
{
	uint64_t sum = 0;
	int64_t dev;

	for (int i = 0; i < GAUSS_ITERS; i++)
		sum += rng_below(&g->rng, g->nr + 1);
	sum = (sum + GAUSS_ITERS - 1) / GAUSS_ITERS;
	if (!g->stddev)
		return sum;
	dev = (int64_t)((double)g->stddev * ((uint32_t)(rng_next(&g->rng) >> 32) / 4294967296.0)) -
	      g->stddev / 2;
	/* Halved until it stays on the device, as fio does (and never to 0,
	 * where fio would loop forever). */
	while (dev && (uint64_t)((int64_t)sum + dev) >= g->nr)
		dev /= 2;
	return sum + (uint64_t)dev;
}

/* A block of the window, fio's way: a value of the distribution, hashed
 * so that neighbouring values land apart, then shifted. */
static uint64_t dist_next(struct dist_gen *g, unsigned kind)
{
	uint64_t v = kind == DIST_ZIPF ? zipf_next(g)
	             : kind == DIST_PARETO
	                 ? (uint64_t)((double)(g->nr - 1) * pow(unit_rand(&g->rng), g->power))
	                 : normal_next(g);

	return (v * GOLDEN_RATIO_64 + g->off) % g->nr;
}

/* fio's zoned distributions: a zone by its share of the accesses, then a
 * uniform block in it (fio draws these without its random map). */
static uint64_t zoned_next(struct shape *s, const struct zone_table *t, bool absolute, uint64_t nr,
                           uint64_t bs)
{
	const struct zone_span *z;
	uint64_t first, n;

	if (!t->set)
		return rng_below(&s->rng, nr);
	z = &t->at[rng_below(&s->rng, 100)];
	first = absolute ? z->start / bs : z->start * nr / 100;
	n = absolute ? z->end / bs - first : nr * (z->end - z->start) / 100;
	return first + rng_below(&s->rng, n);
}

static uint64_t rand_block(struct job *j, struct job_file *f, struct shape_file *sf, unsigned d)
{
	const struct rand_dist *rd = &j->o->random_distribution;
	struct offset_gen *g = &f->gen[d];

	switch (rd->kind) {
	case DIST_RANDOM:
		return j->gen_kind == GEN_PERM ? gen_perm(g) : gen_random(g);
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		return zoned_next(j->shape, &rd->zones[d], rd->kind == DIST_ZONED_ABS, g->nr_blocks,
		                  j->shape->min_bs[d]);
	default:
		return dist_next(&sf->dist[d], rd->kind);
	}
}

/* fio's fio_file_reset(): positions from the window's start, and a new
 * pass of the random map. */
static void file_restart(struct job_file *f, struct shape_file *sf)
{
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		sf->last_end[d] = 0;
		sf->last_start[d] = NO_START;
		gen_new_pass(&f->gen[d]);
	}
}

/*
 * fio's strided zones: zonesize bytes in a zone, then on to the one
 * zonerange plus zoneskip further (back to the region's start past the
 * device's end); every zonerange bytes in a zone start over at its start.
 */
static void zone_step(struct job *j, struct job_file *f, struct shape_file *sf, unsigned d)
{
	struct shape *s = j->shape;

	if (s->zone_bytes >= j->o->zonesize) {
		uint64_t step = s->zonerange + j->o->zoneskip;

		s->zone_bytes = 0;
		/* Overflow-safe: zoneskip may be as large as a uint64_t. */
		if (step < s->zonerange || step >= f->dev_size - f->start - sf->zone)
			sf->zone = 0;
		else
			sf->zone += step;
	}
	if (sf->last_end[d] >= s->zonerange)
		sf->last_end[d] = 0;
	if (!(s->zone_bytes % s->zonerange))
		file_restart(f, sf);
}

/*
 * fio's get_next_seq_offset(): where the last I/O ended, plus the hole of
 * rw=MODE:N once past the window's start; false at the device's end.  A
 * hole that takes the position (from the window's start) past the device's
 * size goes round to the window's start; fio's takes its offset= as the
 * new relative position there, which is not copied.
 */
static bool seq_pos(const struct shape *s, const struct job_file *f, const struct shape_file *sf,
                    unsigned d, uint64_t *pos)
{
	uint64_t last = sf->last_end[d];

	if (f->start + sf->zone + last >= f->dev_size)
		return false;
	if (last && s->skip && !s->back) {
		/* Compared, not added: a skip near 2^64 must not wrap. */
		last = s->skip >= f->dev_size - last ? 0 : last + s->skip;
	} else if (last && s->skip) {
		/* fio's: back from the last end, or from the region's end once
		 * that would go before its start. */
		uint64_t top = f->len < f->dev_size ? f->len : f->dev_size;

		last = last >= s->skip ? last - s->skip : top >= s->skip ? top - s->skip : 0;
	}
	*pos = last;
	return true;
}

/* Whether a random job's I/O takes a random offset (percentage_random). */
static bool rand_turn(struct shape *s, const struct job_opts *o, unsigned d)
{
	return o->percentage_random[d] == 100 || rng_below(&s->rng, 100) < o->percentage_random[d];
}

/*
 * fio's get_next_block(): a random job takes a random offset every
 * rw=MODE:N I/Os (or at percentage_random's share), and between them goes
 * on sequentially (or, rw_sequencer=identical, repeats the last offset);
 * a sequential position past the end takes a random one instead.
 */
static bool next_pos(struct job *j, struct job_file *f, struct shape_file *sf, unsigned d,
                     uint64_t *pos)
{
	struct shape *s = j->shape;
	bool hit = !--s->seq_left;

	if (hit)
		s->seq_left = s->seq_nr;
	if (!s->random)
		return seq_pos(s, f, sf, d, pos);
	if (!hit && j->o->rw_sequencer == RW_SEQ_IDENTICAL) {
		*pos = sf->last_start[d] == NO_START ? 0 : sf->last_start[d];
		return true;
	}
	if ((hit && rand_turn(s, j->o, d)) || !seq_pos(s, f, sf, d, pos))
		*pos = rand_block(j, f, sf, d) * s->min_bs[d];
	return true;
}

/* fio's pick from a bssplit: the first size, in their order, whose running
 * share covers r and that fits. */
static uint64_t split_pick(const struct bs_split *split, uint32_t r, uint64_t room)
{
	uint64_t v = 0, total = 0;

	for (unsigned i = 0; i < split->nr; i++) {
		v = split->e[i].bs;
		total += split->e[i].pct;
		if (r / total <= UINT32_MAX / 100 && v <= room)
			break;
	}
	return v;
}

/* fio's get_next_buflen(): a size of the direction's, drawn until one fits
 * in room (the smallest does), aligned to the smallest or with
 * bs_unaligned to the device's logical block. */
static bool next_len(struct job *j, const struct job_file *f, unsigned d, uint64_t room,
                     uint32_t *len)
{
	struct shape *s = j->shape;
	const struct bs_split *split = &j->o->bssplit[d];
	uint64_t min = s->min_bs[d], max = s->max_bs[d], align = j->o->bs_unaligned ? f->lbs : min;
	uint64_t v;

	if (room < min)
		return false;
	*len = (uint32_t)min;
	if (min == max)
		return true;
	do {
		uint32_t r = (uint32_t)(rng_next(&s->rng) >> 32);

		v = split->nr ? split_pick(split, r, room)
		              : min + (uint64_t)((double)max * (r / 4294967296.0));
		v -= v % align;
		if (v > max)
			v = max;
	} while (v > room);
	*len = (uint32_t)v;
	return true;
}

/* One try at the next I/O: its offset, then a length that stays in the
 * region.  As fio's, strided zones with one block size go on to the
 * device's end; sizes drawn must fit in the region (fio's io_u_fits()). */
static bool shape_try(struct job *j, struct job_file *f, struct shape_file *sf, unsigned d,
                      struct io_unit *io, uint64_t most)
{
	struct shape *s = j->shape;
	uint64_t base, pos, end, room;
	uint32_t len;

	if (s->strided)
		zone_step(j, f, sf, d);
	base = f->start + sf->zone;
	if (!next_pos(j, f, sf, d, &pos) || pos >= f->len || base + pos >= f->dev_size)
		return false;
	end = s->strided && s->min_bs[d] == s->max_bs[d] ? f->dev_size : f->start + f->len;
	room = end - (base + pos) < most ? end - (base + pos) : most;
	if (!next_len(j, f, d, room, &len))
		return false;
	sf->last_start[d] = pos;
	sf->last_end[d] = pos + len;
	s->zone_bytes += len;
	io->offset = base + pos;
	io->len = len;
	return true;
}

bool shape_next(struct job *j, struct job_file *f, unsigned d, struct io_unit *io, uint64_t most)
{
	struct shape_file *sf = &j->shape->files[f - j->files];

	if (shape_try(j, f, sf, d, io, most))
		return true;
	if (!j->o->time_based && !j->o->io_size)
		return false;
	/* A timed job, or one with more bytes to move, goes round again:
	 * from the first zone, as fio's next loop. */
	sf->zone = 0;
	j->shape->zone_bytes = 0;
	file_restart(f, sf);
	return shape_try(j, f, sf, d, io, most);
}

uint64_t shape_min_bs(const struct job *j, unsigned d)
{
	return j->shape->min_bs[d];
}

void shape_rewind(struct job *j)
{
	struct shape *s = j->shape;

	for (unsigned k = 0; k < j->nr_files; k++) {
		s->files[k].zone = 0;
		file_restart(&j->files[k], &s->files[k]);
	}
	s->zone_bytes = 0;
	s->seq_left = 1;
}

/*
 * Random offsets are whole smallest blocks of the window: the region, or a
 * zone.  fio's distributions are set up per file; a zeta already summed
 * for as many blocks is taken again (summing it can take a second).
 */
static void shape_gens(struct job *j, uint64_t seed)
{
	const struct rand_dist *rd = &j->o->random_distribution;
	struct shape *s = j->shape;
	uint64_t zeta_nr = 0;
	double zetan = 0;

	for (unsigned k = 0; k < j->nr_files; k++) {
		struct job_file *f = &j->files[k];
		uint64_t window = s->strided ? s->zonerange : f->len;

		for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
			uint64_t nr = window / s->min_bs[d];

			gen_init(&f->gen[d], j->gen_kind, nr,
			         plan_seed(seed, j->number, k * (BENCH_DDIR_NR + 1) + d));
			if (rd->kind < DIST_ZIPF || rd->kind > DIST_NORMAL || !nr ||
			    !(j->ddirs & (1U << d)))
				continue;
			if (rd->kind == DIST_ZIPF && nr != zeta_nr) {
				zetan = zipf_zetan(rd->value, nr);
				zeta_nr = nr;
			}
			dist_init(
			    &s->files[k].dist[d], rd, nr,
			    plan_seed(seed, j->number, SHAPE_STREAM + 1 + k * BENCH_DDIR_NR + d),
			    zetan);
		}
	}
}

int shape_setup(struct job *j, uint64_t seed)
{
	const struct job_opts *o = j->o;
	struct shape *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->files = calloc(j->nr_files, sizeof(*s->files));
	if (!s->files) {
		free(s);
		return -ENOMEM;
	}
	s->random = rw_modes[o->rw.mode].random;
	s->skip = s->random ? 0 : o->rw.nr;
	s->back = o->rw.back;
	s->seq_nr = s->random ? o->rw.nr : 1;
	s->strided = opts_strided(o) && j->nr_files == 1;
	s->zonerange = opts_zonerange(o);
	s->rng = plan_seed(seed, j->number, SHAPE_STREAM);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		s->min_bs[d] = opts_min_bs(o, d);
		s->max_bs[d] = opts_max_bs(o, d);
	}
	j->shape = s;
	shape_gens(j, seed);
	shape_rewind(j);
	return 0;
}

void shape_free(struct job *j)
{
	if (!j->shape)
		return;
	free(j->shape->files);
	free(j->shape);
	j->shape = NULL;
}
