// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <string.h>

#include "output.h"
#include "progress.h"

static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	uint64_t s = ns / 1000000000ULL;

	if (s >= 3600)
		snprintf(buf, len, "%02" PRIu64 "h:%02" PRIu64 "m:%02" PRIu64 "s", s / 3600,
		         s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%02" PRIu64 "m:%02" PRIu64 "s", s / 60, s % 60);
}

void progress_start(struct progress *p, FILE *f, struct job *jobs, unsigned nr)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->start_ns = p->last_ns = clock_now_ns();
	/* Time-limited groups know their length; size-limited ones do not. */
	for (unsigned i = 0; i < nr; i++) {
		const struct job_opts *o = jobs[i].o;
		uint64_t ns = (o->ramp_time_us + o->runtime_us) * 1000;

		if (!o->runtime_us) {
			p->planned_ns = 0;
			break;
		}
		if (ns > p->planned_ns)
			p->planned_ns = ns;
	}
}

void progress_show(struct progress *p, struct job *jobs, unsigned nr)
{
	uint64_t now = clock_now_ns(), ios[BENCH_DDIR_NR] = {0}, dt = now - p->last_ns;
	char rate[BENCH_DDIR_NR][32], el[32], eta[32] = "--m:--s";
	unsigned running = 0;
	int len;

	for (unsigned i = 0; i < nr; i++) {
		running += jobs[i].started &&
		           !atomic_load_explicit(&jobs[i].finished, memory_order_relaxed);
		for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
			ios[d] += atomic_load_explicit(&jobs[i].prog_ios[d], memory_order_relaxed);
	}
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		/* A ramp_time reset makes counters go back: show 0, not garbage. */
		uint64_t delta = ios[d] >= p->last_ios[d] ? ios[d] - p->last_ios[d] : 0;

		fmt_num(rate[d], sizeof(rate[d]), dt ? (double)delta * 1e9 / (double)dt : 0.0,
		        false);
		p->last_ios[d] = ios[d];
	}
	p->last_ns = now;
	fmt_time(el, sizeof(el), now - p->start_ns);
	if (p->planned_ns)
		fmt_time(eta, sizeof(eta),
		         p->planned_ns > now - p->start_ns ? p->planned_ns - (now - p->start_ns)
		                                           : 0);
	/* fio adds t= for trims; blkring z= for write zeroes. */
	len = fprintf(p->f, "\rJobs: %u: [r=%s,w=%s%s%s%s%s IOPS][elapsed %s][eta %s]", running,
	              rate[0], rate[1], ios[DDIR_TRIM] ? ",t=" : "",
	              ios[DDIR_TRIM] ? rate[DDIR_TRIM] : "", ios[DDIR_ZERO] ? ",z=" : "",
	              ios[DDIR_ZERO] ? rate[DDIR_ZERO] : "", el, eta);
	if (len < p->width)
		fprintf(p->f, "%*s", p->width - len, "");
	p->width = len;
	fflush(p->f);
}

void progress_clear(struct progress *p)
{
	if (!p->width)
		return;
	fprintf(p->f, "\r%*s\r", p->width, "");
	fflush(p->f);
	p->width = 0;
}
