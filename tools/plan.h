/* SPDX-License-Identifier: MIT */
/*
 * Where the next I/Os go.  Three offset generators, each a few
 * instructions and allocation-free:
 *  - sequential: the next block, wrapping at the region's end;
 *  - random with fio's random map (the default): every block once per pass
 *    over the region, in random order.  fio keeps a bitmap of blocks done;
 *    here the order is a bijection of a counter (multiply and xor-shift
 *    rounds on the next power of two, values beyond the region skipped),
 *    so no memory is needed and nothing is ever looked up twice;
 *  - random without the map (norandommap): independent draws, reduced to
 *    the region by a multiply, not a division.
 */
#ifndef BLKRING_TOOLS_PLAN_H
#define BLKRING_TOOLS_PLAN_H

#include <stdint.h>

#include "lib/compiler.h"

enum { GEN_SEQ, GEN_PERM, GEN_RANDOM };

struct offset_gen {
	uint64_t pos;       /* sequential: next block; permutation: counter */
	uint64_t nr_blocks; /* blocks in the region */
	uint64_t mask;      /* permutation domain minus one */
	uint64_t mul1, add1, mul2;
	unsigned shift;
	uint64_t key; /* draws the next pass's constants */
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

/* A new order for the next pass over the region. */
static inline void gen_new_pass(struct offset_gen *g)
{
	g->pos = 0;
	g->mul1 = rng_next(&g->key) | 1;
	g->add1 = rng_next(&g->key);
	g->mul2 = rng_next(&g->key) | 1;
}

static inline uint64_t gen_seq(struct offset_gen *g)
{
	uint64_t b = g->pos++;

	if (unlikely(g->pos == g->nr_blocks))
		g->pos = 0;
	return b;
}

static inline uint64_t gen_perm_mix(const struct offset_gen *g, uint64_t x)
{
	x = (x * g->mul1 + g->add1) & g->mask;
	x ^= x >> g->shift;
	x = (x * g->mul2) & g->mask;
	x ^= x >> g->shift;
	return x;
}

static inline uint64_t gen_perm(struct offset_gen *g)
{
	uint64_t b;

	do {
		if (unlikely(g->pos > g->mask))
			gen_new_pass(g);
		b = gen_perm_mix(g, g->pos++);
	} while (b >= g->nr_blocks);
	return b;
}

static inline uint64_t gen_random(struct offset_gen *g)
{
	return rng_below(&g->rng, g->nr_blocks);
}

struct job;
struct io_unit;
/* Picks the planner for a job's options and seeds its generators. */
void plan_setup(struct job *j, uint64_t seed);

#endif
