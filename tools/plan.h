/* SPDX-License-Identifier: MIT */
/*
 * Where the next I/Os go.  Three offset generators, each a few
 * instructions and allocation-free, walking the region in passes:
 *  - sequential: block after block, a pass per region;
 *  - random with fio's random map (the default): every block once per pass,
 *    in random order.  fio keeps a bitmap of blocks done; here a pass is a
 *    full-period generator over the next power of two, values beyond the
 *    region skipped (fio's random_generator=lfsr does the same with an
 *    LFSR): a linear congruential step x = a*x + c (mod 2^k), full-period
 *    since a = 1 (mod 4) and c is odd, seen through the bijection
 *    x ^ (x >> k/2), which folds its good high bits onto its weak low ones.
 *    Each pass draws new a, c and start;
 *  - random without the map (norandommap): independent draws, reduced to
 *    the region by a multiply, not a division; no passes.
 * A pass's end is counted (`left`), so the batch planners run their inner
 * loops with no check for it.
 */
#ifndef BLKRING_TOOLS_PLAN_H
#define BLKRING_TOOLS_PLAN_H

#include <stdint.h>

#include "compiler.h"

enum { GEN_SEQ, GEN_PERM, GEN_RANDOM };

struct offset_gen {
	uint64_t x;         /* sequential: the next block; random map: the state */
	uint64_t left;      /* values left in this pass */
	uint64_t nr_blocks; /* blocks in the region */
	uint64_t mask;      /* random map: its power of two minus one */
	uint64_t mul, add;  /* random map: this pass's step */
	unsigned shift;
	int kind;
	uint64_t key; /* draws each pass's step */
	uint64_t rng; /* norandommap state */
};

/* A fast 64-bit generator (Weyl sequence and a 128-bit multiply fold). */
static inline uint64_t rng_next(uint64_t *s)
{
	unsigned __int128 t;

	*s += 0xa0761d6478bd642fULL;
	t = (unsigned __int128)*s * (*s ^ 0xe7037ed1a0b428dbULL);
	return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

/* Uniform in [0, n) without a division (Lemire's multiply-shift). */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

void gen_init(struct offset_gen *g, int kind, uint64_t nr_blocks, uint64_t seed);
/* Starts the next pass over the region (a new order for the random map). */
void gen_new_pass(struct offset_gen *g);

/* The steps: the next value of the pass under way, which has one left. */
static inline uint64_t gen_seq_step(struct offset_gen *g)
{
	return g->x++;
}

static inline uint64_t gen_perm_step(struct offset_gen *g)
{
	uint64_t x = g->x, b;

	do {
		x = (x * g->mul + g->add) & g->mask;
		b = x ^ (x >> g->shift);
	} while (b >= g->nr_blocks);
	g->x = x;
	return b;
}

static inline uint64_t gen_random_step(struct offset_gen *g)
{
	return rng_below(&g->rng, g->nr_blocks);
}

/* One value at a time, passes included. */
static inline void gen_pass_check(struct offset_gen *g)
{
	if (unlikely(!g->left))
		gen_new_pass(g);
	g->left--;
}

static inline uint64_t gen_seq(struct offset_gen *g)
{
	gen_pass_check(g);
	return gen_seq_step(g);
}

static inline uint64_t gen_perm(struct offset_gen *g)
{
	gen_pass_check(g);
	return gen_perm_step(g);
}

static inline uint64_t gen_random(struct offset_gen *g)
{
	gen_pass_check(g);
	return gen_random_step(g);
}

/* fio's seeding: randseed stirred, then spread by the job's number; each
 * generator of a job takes a stream of its own. */
static inline uint64_t plan_seed(uint64_t seed, unsigned number, uint64_t stream)
{
	for (int i = 0; i < 4; i++)
		seed *= 0x9e370001ULL;
	return seed * number + stream;
}

struct job;
/* Picks the planner for a job's options and seeds its generators: 0, or
 * -ENOMEM (a shaped job's state). */
int plan_setup(struct job *j, uint64_t seed);

#endif
