/* SPDX-License-Identifier: MIT */
/*
 * Latency histogram with fio's log-linear layout (FIO_IO_U_PLAT_BITS = 6):
 * values below 128 ns have a bucket each; above, every power of two is cut
 * into 64 equal buckets, so a bucket's midpoint is within 1/128 of any value
 * in it.  29 groups reach 2^34 ns (17 s); longer values land in the last
 * bucket.  Fixed size, so adding a sample never allocates, and the bucket
 * numbers are fio's, so percentiles and json+ bins read the same.
 */
#ifndef BLKRING_TOOLS_HISTOGRAM_H
#define BLKRING_TOOLS_HISTOGRAM_H

#include <stdint.h>

#include "compiler.h"

#define HIST_BITS 6
#define HIST_VAL (1U << HIST_BITS)
#define HIST_GROUPS 29
#define HIST_NR (HIST_GROUPS * HIST_VAL)

struct hist {
	uint64_t bucket[HIST_NR];
};

/*
 * ns | 64 has its top bit at 6 or above, so the shift is 0 below 128 ns
 * (the index is the value) and drops six bits less than the top one above.
 */
static inline unsigned hist_index(uint64_t ns)
{
	unsigned shift = (unsigned)(63 ^ __builtin_clzll(ns | HIST_VAL)) - HIST_BITS;
	unsigned idx = (shift << HIST_BITS) + (unsigned)(ns >> shift);

	return likely(idx < HIST_NR) ? idx : HIST_NR - 1;
}

static inline void hist_add_n(struct hist *h, uint64_t ns, uint64_t n)
{
	h->bucket[hist_index(ns)] += n;
}

static inline void hist_add(struct hist *h, uint64_t ns)
{
	hist_add_n(h, ns, 1);
}

/* The value a bucket stands for: its midpoint, as fio's plat_idx_to_val. */
uint64_t hist_value(unsigned idx);
/* The smallest value that falls into bucket idx. */
uint64_t hist_lower(unsigned idx);
uint64_t hist_total(const struct hist *h);
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * Percentiles as fio computes them: for each p of the ascending list, the
 * value of the first bucket where the running count reaches p% of all
 * samples.  Returns the number of samples; out is untouched when zero.
 */
uint64_t hist_percentiles(const struct hist *h, const double *plist, unsigned n, uint64_t *out);

#endif
