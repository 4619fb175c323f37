// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "output.h"
#include "progress.h"

#define NS_PER_S 1000000000ULL
/* fio's eta_interval_msec: a line a second, counted from the run's start. */
#define SHOW_NS 1000000000ULL

static uint64_t secs_up(uint64_t ns)
{
	return (ns + NS_PER_S - 1) / NS_PER_S;
}

/* fio's eta_to_str(): [DDd:][HHh:]MMm:SSs. */
static void fmt_eta(char *buf, size_t len, uint64_t s)
{
	uint64_t d = s / 86400, h = s / 3600 % 24;
	size_t n = 0;

	if (d)
		n += (size_t)snprintf(buf, len, "%02" PRIu64 "d:", d);
	if (d || h)
		n += (size_t)snprintf(buf + n, len - n, "%02" PRIu64 "h:", h);
	snprintf(buf + n, len - n, "%02" PRIu64 "m:%02" PRIu64 "s", s / 60 % 60, s % 60);
}

/* fio's letter for a running job: r/R read, w/W write, m/M mixed, d/D
 * trim (random/sequential); z/Z for blkring's write zeroes. */
static char rw_letter(const struct job_opts *o)
{
	const struct rw_mode *m = &rw_modes[o->rw.mode];
	unsigned rw = (1U << DDIR_READ) | (1U << DDIR_WRITE);
	char c;

	if ((m->ddirs & rw) == rw)
		c = o->rwmixread == 100 ? 'r' : !o->rwmixread ? 'w' : 'm';
	else if (m->ddirs & (1U << DDIR_READ))
		c = 'r';
	else if (m->ddirs & (1U << DDIR_WRITE))
		c = 'w';
	else if (m->ddirs & (1U << DDIR_TRIM))
		c = 'd';
	else
		c = 'z';
	return m->random ? c : (char)toupper(c);
}

static bool job_done(const struct job *j)
{
	return j->started && atomic_load_explicit(&j->finished, memory_order_acquire);
}

static unsigned job_state(const struct job *j)
{
	return atomic_load_explicit(&j->state, memory_order_relaxed);
}

/* fio's check_str_update(): P pending, I setting up, / ramp, V verify,
 * _ done, X failed. */
static char job_letter(const struct job *j)
{
	if (!j->started)
		return 'P';
	if (job_done(j))
		return j->st->error ? 'X' : '_';
	switch (job_state(j)) {
	case JOB_SETUP:
		return 'I';
	case JOB_RAMP:
		return '/';
	case JOB_VERIFYING:
		return 'V';
	default:
		return rw_letter(j->o);
	}
}

/* Runs of one letter, counted: "R(2),P(1)". */
static void run_string(char *buf, size_t len, const struct job *jobs, unsigned nr)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < nr && n < len;) {
		char c = job_letter(&jobs[i]);
		unsigned k = 1;

		while (i + k < nr && job_letter(&jobs[i + k]) == c)
			k++;
		n += (size_t)snprintf(buf + n, len - n, "%s%c(%u)", n ? "," : "", c, k);
		i += k;
	}
}

/* Bytes a job moves: its region, and again what a verify phase reads back. */
static uint64_t job_total_bytes(const struct job *j)
{
	const struct job_opts *o = j->o;
	unsigned ddirs = rw_modes[o->rw.mode].ddirs;

	if (!o->verify || !o->do_verify || !(ddirs & (1U << DDIR_WRITE)))
		return j->io_size;
	if (ddirs & (1U << DDIR_READ))
		return j->io_size + j->io_size * (100 - o->rwmixread) / 100;
	return 2 * j->io_size;
}

/*
 * A running job's seconds left, as fio's thread_eta() counts them: whole
 * seconds since it began measuring (rounded up), its share of bytes done
 * or, when time_based, of its runtime (whole seconds), capped by what is
 * left of the runtime.
 */
static uint64_t running_eta(const struct job *j, uint64_t now)
{
	uint64_t timeout = j->o->runtime_us / 1000000, total = job_total_bytes(j);
	uint64_t done = atomic_load_explicit(&j->prog_measured, memory_order_relaxed);
	uint64_t elapsed =
	    secs_up(now - atomic_load_explicit(&j->prog_start_ns, memory_order_relaxed));
	double perc = total ? (double)done / (double)total : 0.0;
	uint64_t eta;

	if (perc > 1.0)
		perc = 1.0;
	if (j->o->time_based && (!timeout || (double)elapsed / (double)timeout < perc))
		perc = timeout ? (double)elapsed / (double)timeout : 0.0;
	eta = perc > 0.0 ? (uint64_t)((double)elapsed / perc) - elapsed : timeout;
	if (j->o->runtime_us && eta > since(timeout, elapsed))
		eta = since(timeout, elapsed);
	return eta;
}

/* Seconds left of one job; before it runs, fio's only guess is its time
 * limit, ramp_time included. */
static uint64_t job_eta(const struct job *j, uint64_t now)
{
	const struct job_opts *o = j->o;
	uint64_t limit = o->runtime_us ? (o->runtime_us + o->ramp_time_us) / 1000000 : 0;

	if (job_done(j))
		return 0;
	if (!j->started || job_state(j) == JOB_SETUP)
		return limit;
	if (job_state(j) == JOB_RAMP)
		return since(limit, secs_up(now - atomic_load_explicit(&j->prog_start_ns,
		                                                       memory_order_relaxed)));
	return running_eta(j, now);
}

/* As fio: the longest job's, plus each later group's (its stonewall job's). */
static uint64_t run_eta(const struct job *jobs, unsigned nr, uint64_t now)
{
	uint64_t max = 0, later = 0;

	for (unsigned i = 0; i < nr; i++) {
		uint64_t eta = job_eta(&jobs[i], now);

		if (!jobs[i].started && jobs[i].o->stonewall)
			later += eta;
		else if (eta > max)
			max = eta;
	}
	return max + later;
}

struct prog_counts {
	unsigned running, ramping, files;
	uint64_t ios[BENCH_DDIR_NR], bytes[BENCH_DDIR_NR];
};

static void count_jobs(struct prog_counts *c, const struct job *jobs, unsigned nr)
{
	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < nr; i++) {
		const struct job *j = &jobs[i];

		if (!j->started)
			continue;
		for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
			c->ios[d] += atomic_load_explicit(&j->prog_ios[d], memory_order_relaxed);
			c->bytes[d] +=
			    atomic_load_explicit(&j->prog_bytes[d], memory_order_relaxed);
		}
		if (job_done(j) || job_state(j) == JOB_SETUP)
			continue;
		c->running++;
		if (job_state(j) == JOB_RAMP)
			c->ramping++;
		else
			c->files += j->nr_files;
	}
}

/* fio's gen_eta_str(): "[r=1.2GiB/s,w=..][r=300k,w=.. IOPS]" for the
 * directions that moved since the last line. */
static size_t rates(char *buf, size_t len, struct progress *p, const struct prog_counts *c,
                    uint64_t dt)
{
	static const char letters[BENCH_DDIR_NR] = {'r', 'w', 't', 'z'};
	char bw[BENCH_DDIR_NR][32], iops[BENCH_DDIR_NR][32];
	bool has[BENCH_DDIR_NR], any = false;
	size_t n = 0;

	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		uint64_t db = since(c->bytes[d], p->last_bytes[d]);
		uint64_t di = since(c->ios[d], p->last_ios[d]);
		/* fio's calc_rate(): whole KiB/s */
		uint64_t kib = dt ? (uint64_t)((unsigned __int128)db * NS_PER_S / dt / 1024) : 0;
		uint64_t rate = dt ? (uint64_t)((unsigned __int128)di * NS_PER_S / dt) : 0;

		has[d] = kib || rate;
		any |= has[d];
		fmt_num(bw[d], sizeof(bw[d]), (double)kib * 1024.0, true);
		fmt_num(iops[d], sizeof(iops[d]), (double)rate, false);
		p->last_bytes[d] = c->bytes[d];
		p->last_ios[d] = c->ios[d];
	}
	if (!any)
		return 0;
	for (unsigned pass = 0; pass < 2; pass++) {
		const char *sep = "[";

		for (unsigned d = 0; d < BENCH_DDIR_NR && n < len; d++) {
			if (!has[d])
				continue;
			n += (size_t)snprintf(buf + n, len - n, "%s%c=%s%s", sep, letters[d],
			                      pass ? iops[d] : bw[d], pass ? "" : "B/s");
			sep = ",";
		}
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, pass ? " IOPS]" : "]");
	}
	return n;
}

void progress_start(struct progress *p, FILE *f, uint64_t newline_ns)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->start_ns = p->last_ns = p->last_newline_ns = clock_now_ns();
	p->next_ns = p->start_ns + SHOW_NS;
	p->newline_ns = newline_ns;
}

int progress_wait_ms(const struct progress *p)
{
	uint64_t now = clock_now_ns();

	return now >= p->next_ns ? 0 : (int)((p->next_ns - now + 999999) / 1000000);
}

/* "[45.0%]", or fio's "-.-%" before there is an estimate. */
static void percent(char *buf, size_t len, struct progress *p, const struct prog_counts *c,
                    uint64_t elapsed_s, uint64_t eta_s)
{
	if ((!eta_s && !p->eta_good) || c->ramping == c->running) {
		snprintf(buf, len, "-.-%%");
		return;
	}
	p->eta_good = true;
	snprintf(buf, len, "%3.1f%%", 100.0 * (double)elapsed_s / (double)(elapsed_s + eta_s));
}

void progress_show(struct progress *p, struct job *jobs, unsigned nr)
{
	uint64_t now = clock_now_ns(), elapsed_s, eta_s;
	char line[1024], states[512], pct[16], eta[32];
	struct prog_counts c;
	int n, len;

	if (now < p->next_ns)
		return;
	p->next_ns += SHOW_NS * (1 + (now - p->next_ns) / SHOW_NS);
	count_jobs(&c, jobs, nr);
	n = snprintf(line, sizeof(line), "Jobs: %u (f=%u)", c.running, c.files);
	if (c.running) {
		elapsed_s = secs_up(now - p->start_ns);
		eta_s = run_eta(jobs, nr, now);
		run_string(states, sizeof(states), jobs, nr);
		percent(pct, sizeof(pct), p, &c, elapsed_s, eta_s);
		fmt_eta(eta, sizeof(eta), eta_s);
		n += snprintf(line + n, sizeof(line) - (size_t)n, ": [%s][%s]", states, pct);
		n += (int)rates(line + n, sizeof(line) - (size_t)n, p, &c, now - p->last_ns);
		snprintf(line + n, sizeof(line) - (size_t)n, "[eta %s]", eta);
	}
	p->last_ns = now;
	if (p->newline_due) {
		fputc('\n', p->f);
		p->width = 0;
		p->newline_due = false;
	}
	/* fio's: the line, blanks over what is left of the last one, and \r. */
	len = fprintf(p->f, "%s", line);
	if (len < p->width)
		fprintf(p->f, "%*s", p->width - len, "");
	fputc('\r', p->f);
	p->width = len;
	fflush(p->f);
	if (p->newline_ns && now - p->last_newline_ns > p->newline_ns) {
		p->last_newline_ns = now;
		p->newline_due = true;
	}
}

void progress_clear(struct progress *p)
{
	if (!p->width)
		return;
	fprintf(p->f, "%*s\r", p->width, "");
	fflush(p->f);
	p->width = 0;
}
