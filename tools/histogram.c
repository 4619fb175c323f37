// SPDX-License-Identifier: MIT
#include "histogram.h"

uint64_t hist_value(unsigned idx)
{
	unsigned shift;

	if (idx < 2 * HIST_VAL)
		return idx;
	shift = (idx >> HIST_BITS) - 1;
	return (1ULL << (shift + HIST_BITS)) + ((uint64_t)(idx & (HIST_VAL - 1)) << shift) +
	       (1ULL << (shift - 1));
}

uint64_t hist_lower(unsigned idx)
{
	unsigned shift;

	if (idx < 2 * HIST_VAL)
		return idx;
	shift = (idx >> HIST_BITS) - 1;
	return (1ULL << (shift + HIST_BITS)) + ((uint64_t)(idx & (HIST_VAL - 1)) << shift);
}

uint64_t hist_total(const struct hist *h)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < HIST_NR; i++)
		total += h->bucket[i];
	return total;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned i = 0; i < HIST_NR; i++)
		dst->bucket[i] += src->bucket[i];
}

uint64_t hist_percentiles(const struct hist *h, const double *plist, unsigned n, uint64_t *out)
{
	uint64_t total = hist_total(h), sum = 0;
	unsigned j = 0;

	if (!total)
		return 0;
	/* long double, as fio compares, so ranks at exact multiples agree. */
	for (unsigned i = 0; i < HIST_NR && j < n; i++) {
		sum += h->bucket[i];
		while (j < n && (long double)sum >= (long double)plist[j] / 100.0L * total)
			out[j++] = hist_value(i);
	}
	return total;
}
