/* SPDX-License-Identifier: MIT */
/* The monotonic clock in nanoseconds: deadlines, idle and spin limits. */
#ifndef BLKRING_LIB_CLOCK_H
#define BLKRING_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t blkring__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
