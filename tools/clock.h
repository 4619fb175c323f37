/* SPDX-License-Identifier: MIT */
/*
 * The bench's clock: nanoseconds from the TSC, calibrated once against
 * CLOCK_MONOTONIC (fio's clocksource=cpu), so a stamp costs a few
 * instructions instead of a ~22 ns clock_gettime call.  Where the TSC is
 * not invariant (no constant_tsc and nonstop_tsc in /proc/cpuinfo), or on
 * request, every stamp is a clock_gettime call instead.
 */
#ifndef BLKRING_TOOLS_CLOCK_H
#define BLKRING_TOOLS_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#else
#define BENCH_HAVE_TSC 0
#endif

#include "compiler.h"

enum { CLOCK_SRC_CPU, CLOCK_SRC_GETTIME };

struct bench_clock {
	bool tsc;          /* stamps come from the TSC */
	uint64_t base_tsc; /* TSC at calibration: time zero */
	uint64_t mult;     /* nanoseconds per tick, times 2^32 */
	uint64_t base_ns;  /* CLOCK_MONOTONIC at time zero */
	uint64_t tsc_hz;   /* calibrated frequency, 0 without TSC */
};

extern struct bench_clock bench_clock;

/*
 * Picks the clock source (CLOCK_SRC_*): the TSC only where it is invariant.
 * Returns the source in use; *why says why the TSC was not taken (NULL when
 * it was).
 */
int clock_init(int want, const char **why);
bool clock_tsc_invariant(const char *cpuinfo_path);
bool clock_kernel_trusts_tsc(const char *available_path);

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds since clock_init(). */
static inline uint64_t clock_now_ns(void)
{
#if BENCH_HAVE_TSC
	if (likely(bench_clock.tsc)) {
		uint64_t t = __rdtsc() - bench_clock.base_tsc;

		return (uint64_t)(((unsigned __int128)t * bench_clock.mult) >> 32);
	}
#endif
	return clock_mono_ns() - bench_clock.base_ns;
}

/* Sleeps ns nanoseconds (a signal may end it early). */
static inline void clock_sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};

	if (ns)
		nanosleep(&ts, NULL);
}

#endif
