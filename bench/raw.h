/* SPDX-License-Identifier: MIT */
/* What the minimal client loops (nbd-raw.c, rbd-raw.c) share. */
#ifndef BLKRING_BENCH_RAW_H
#define BLKRING_BENCH_RAW_H

#include <stdint.h>
#include <time.h>

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64*: a block number below blocks, uniform enough for random I/O. */
static inline uint64_t next_block(uint64_t *rand, uint64_t blocks)
{
	*rand ^= *rand >> 12;
	*rand ^= *rand << 25;
	*rand ^= *rand >> 27;
	return (*rand * 2685821657736338717ULL) % blocks;
}

#endif
