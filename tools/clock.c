// SPDX-License-Identifier: MIT
/* TSC calibration against CLOCK_MONOTONIC, and the clock_gettime fallback. */
#include <stdio.h>
#include <string.h>

#include "clock.h"

struct bench_clock bench_clock;

/* Both flags mean the TSC ticks at one rate in every P- and C-state. */
bool clock_tsc_invariant(const char *cpuinfo_path)
{
	bool constant = false, nonstop = false;
	char line[4096];
	FILE *f = fopen(cpuinfo_path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
}

/*
 * The kernel drops "tsc" from its clock sources when it finds the CPUs'
 * TSCs out of step; without the file, the CPU flags decide alone.
 */
bool clock_kernel_trusts_tsc(const char *available_path)
{
	char line[512] = "";
	FILE *f = fopen(available_path, "r");
	bool ok;

	if (!f)
		return true;
	ok = fgets(line, sizeof(line), f) && strstr(line, "tsc");
	fclose(f);
	return ok;
}

#if BENCH_HAVE_TSC
/*
 * One (TSC, monotonic) pair: the TSC read between two clock reads, keeping
 * the tightest of a few tries so a preemption cannot skew the pair.
 */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = clock_mono_ns();
		uint64_t t = __rdtsc();
		uint64_t b = clock_mono_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

static bool clock_calibrate(void)
{
	struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};
	uint64_t tsc0, ns0, tsc1, ns1;

	clock_pair(&tsc0, &ns0);
	nanosleep(&pause, NULL);
	clock_pair(&tsc1, &ns1);
	if (tsc1 <= tsc0 || ns1 <= ns0)
		return false;
	bench_clock.tsc_hz =
	    (uint64_t)((unsigned __int128)(tsc1 - tsc0) * 1000000000ULL / (ns1 - ns0));
	/* Below 100 MHz something virtualises the TSC badly. */
	if (bench_clock.tsc_hz < 100000000ULL)
		return false;
	bench_clock.mult = (uint64_t)(((unsigned __int128)(ns1 - ns0) << 32) / (tsc1 - tsc0));
	bench_clock.base_tsc = tsc1;
	bench_clock.base_ns = ns1;
	return true;
}
#endif

int clock_init(int want, const char **why)
{
	memset(&bench_clock, 0, sizeof(bench_clock));
	bench_clock.base_ns = clock_mono_ns();
	*why = NULL;
	if (want == CLOCK_SRC_GETTIME) {
		*why = "clocksource=clock_gettime";
		return CLOCK_SRC_GETTIME;
	}
#if BENCH_HAVE_TSC
	if (!clock_tsc_invariant("/proc/cpuinfo")) {
		*why = "the TSC is not invariant (no constant_tsc and nonstop_tsc)";
		return CLOCK_SRC_GETTIME;
	}
	if (!clock_kernel_trusts_tsc(
	        "/sys/devices/system/clocksource/clocksource0/available_clocksource")) {
		*why = "the kernel does not list the TSC as a clock source";
		return CLOCK_SRC_GETTIME;
	}
	if (!clock_calibrate()) {
		*why = "the TSC did not calibrate against CLOCK_MONOTONIC";
		bench_clock.base_ns = clock_mono_ns();
		return CLOCK_SRC_GETTIME;
	}
	bench_clock.tsc = true;
	return CLOCK_SRC_CPU;
#else
	*why = "this CPU has no TSC";
	return CLOCK_SRC_GETTIME;
#endif
}
