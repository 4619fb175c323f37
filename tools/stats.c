// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "stats.h"

void lat_init(struct lat_stat *s)
{
	memset(s, 0, sizeof(*s));
	s->min = UINT64_MAX;
}

void lat_merge(struct lat_stat *dst, const struct lat_stat *src)
{
	dst->n += src->n;
	dst->min = src->min < dst->min ? src->min : dst->min;
	dst->max = src->max > dst->max ? src->max : dst->max;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}

uint64_t lat_min(const struct lat_stat *s)
{
	return s->n ? s->min : 0;
}

double lat_mean(const struct lat_stat *s)
{
	return s->n ? (double)s->sum / (double)s->n : 0.0;
}

double lat_stddev(const struct lat_stat *s)
{
	long double n = (long double)s->n, sum = (long double)s->sum, var;

	if (s->n < 2)
		return 0.0;
	var = ((long double)s->sumsq - sum * sum / n) / (n - 1);
	return var > 0 ? sqrt((double)var) : 0.0;
}

void sample_init(struct sample_stat *s)
{
	memset(s, 0, sizeof(*s));
	s->min = UINT64_MAX;
}

/* Welford's update, as fio's add_stat_sample(). */
void sample_add(struct sample_stat *s, uint64_t v)
{
	double delta = (double)v - s->mean;

	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->mean += delta / (double)(s->n + 1);
	s->s += delta * ((double)v - s->mean);
	s->n++;
}

void sample_sum(struct sample_stat *dst, const struct sample_stat *src)
{
	if (!src->n)
		return;
	if (!dst->n) {
		*dst = *src;
		return;
	}
	dst->n += src->n;
	dst->min += src->min;
	dst->max += src->max;
	dst->mean += src->mean;
	dst->s += src->s;
}

uint64_t sample_min(const struct sample_stat *s)
{
	return s->n ? s->min : 0;
}

double sample_stddev(const struct sample_stat *s)
{
	return s->n > 1 && s->s > 0 ? sqrt(s->s / (double)(s->n - 1)) : 0.0;
}

/* As fio's convert_agg_kbytes_percent(), which takes the mean as an int. */
double sample_pct_of_group(const struct sample_stat *bw, uint64_t group_bw)
{
	double pct;

	if (group_bw <= 1024)
		return 100.0;
	pct = (double)(int64_t)bw->mean * 100.0 / ((double)group_bw / 1024.0);
	return pct > 100.0 ? 100.0 : pct;
}

static void dir_stats_init(struct dir_stats *d)
{
	memset(d, 0, sizeof(*d));
	lat_init(&d->slat);
	lat_init(&d->clat);
	lat_init(&d->lat);
	sample_init(&d->bw);
	sample_init(&d->iops);
}

void job_stats_init(struct job_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		dir_stats_init(&st->dir[d]);
	lat_init(&st->sync_lat);
}

static void dir_stats_merge(struct dir_stats *dst, const struct dir_stats *src)
{
	dst->ios += src->ios;
	dst->bytes += src->bytes;
	dst->short_ios += src->short_ios;
	lat_merge(&dst->slat, &src->slat);
	lat_merge(&dst->clat, &src->clat);
	lat_merge(&dst->lat, &src->lat);
	sample_sum(&dst->bw, &src->bw);
	sample_sum(&dst->iops, &src->iops);
	hist_merge(&dst->clat_hist, &src->clat_hist);
	hist_merge(&dst->lat_hist, &src->lat_hist);
	hist_merge(&dst->slat_hist, &src->slat_hist);
}

/* Jobs of a group run side by side: the group's runtime is the longest. */
void job_stats_merge(struct job_stats *dst, const struct job_stats *src)
{
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		dir_stats_merge(&dst->dir[d], &src->dir[d]);
	dst->sync_ios += src->sync_ios;
	lat_merge(&dst->sync_lat, &src->sync_lat);
	hist_merge(&dst->sync_hist, &src->sync_hist);
	for (unsigned i = 0; i < DEPTH_MAP_NR; i++) {
		dst->depth_map[i] += src->depth_map[i];
		dst->submit_map[i] += src->submit_map[i];
		dst->complete_map[i] += src->complete_map[i];
	}
	dst->submits += src->submits;
	dst->completes += src->completes;
	dst->issued += src->issued;
	dst->total_err += src->total_err;
	if (!dst->first_error)
		dst->first_error = src->first_error;
	if (!dst->error)
		dst->error = src->error;
	if (src->runtime_ns > dst->runtime_ns)
		dst->runtime_ns = src->runtime_ns;
	if (src->verify_ns > dst->verify_ns)
		dst->verify_ns = src->verify_ns;
	dst->usr_ns += src->usr_ns;
	dst->sys_ns += src->sys_ns;
	dst->tw_wait_nr += src->tw_wait_nr;
	dst->tw_wait_ns += src->tw_wait_ns;
	/* fio's group takes these from its last job. */
	if (src->latency_depth)
		dst->latency_depth = src->latency_depth;
	if (src->ss)
		dst->ss = src->ss;
	dst->ctx += src->ctx;
	dst->majf += src->majf;
	dst->minf += src->minf;
}

const char *const lat_bucket_keys[LAT_MS_NR] = {"2",   "4",   "10",  "20",   "50",   "100",
                                                "250", "500", "750", "1000", "2000", ">=2000"};
static const uint64_t lat_bounds[LAT_NS_NR] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};

/* Index of the first bound above v (v < 1000), as fio's io_u_mark_lat_*. */
static unsigned lat_class(uint64_t v)
{
	unsigned i = 0;

	while (i < LAT_NS_NR - 1 && v >= lat_bounds[i])
		i++;
	return i;
}

void lat_buckets(const struct job_stats *st, struct lat_buckets *out)
{
	uint64_t total = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		total += st->dir[d].clat.n;
	if (!total)
		return;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		const struct hist *h = &st->dir[d].clat_hist;

		for (unsigned i = 0; i < HIST_NR; i++) {
			uint64_t v = hist_lower(i);
			double pct = 100.0 * (double)h->bucket[i] / (double)total;

			if (!h->bucket[i])
				continue;
			if (v < 1000)
				out->ns[lat_class(v)] += pct;
			else if (v < 1000000)
				out->us[lat_class(v / 1000)] += pct;
			else if (v < 1000000000)
				out->ms[lat_class(v / 1000000)] += pct;
			else
				out->ms[v < 2000000000 ? LAT_MS_NR - 2 : LAT_MS_NR - 1] += pct;
		}
	}
}

bool report_dir_used(const struct report *r, unsigned ddir)
{
	return (rw_modes[r->def->o.rw.mode].ddirs & (1U << ddir)) || r->st->dir[ddir].ios;
}

void report_cpu(const struct report *r, double *usr, double *sys)
{
	const struct job_stats *st = r->st;
	double run = (double)r->run_sum_ns;

	*usr = run > 0 ? 100.0 * (double)st->usr_ns / run : 0.0;
	*sys = run > 0 ? 100.0 * (double)st->sys_ns / run : 0.0;
}

/* As fio: a verify phase's time is read time, and only read time. */
uint64_t report_runtime_ns(const struct report *r, unsigned ddir)
{
	const struct job_stats *st = r->st;

	if (!report_dir_used(r, ddir))
		return 0;
	if (ddir != DDIR_READ || !st->verify_ns)
		return st->runtime_ns;
	return st->verify_ns +
	       ((rw_modes[r->def->o.rw.mode].ddirs & (1U << DDIR_READ)) ? st->runtime_ns : 0);
}

struct dir_view report_view(const struct report *r, unsigned ddir)
{
	return (struct dir_view){ddir_names[ddir], &r->st->dir[ddir], report_runtime_ns(r, ddir)};
}

struct dir_view report_mixed_view(const struct report *r)
{
	return (struct dir_view){"mixed", r->mixed, r->mixed_runtime_ns};
}

bool report_mixed_only(const struct report *r)
{
	return r->mixed && r->def->o.unified_rw_reporting == UNIFIED_MIXED;
}

/* fio's: whole microseconds, rounded up to milliseconds. */
uint64_t view_runtime_ms(const struct dir_view *v)
{
	return (v->runtime_ns / 1000 + 999) / 1000;
}

double view_iops(const struct dir_view *v)
{
	return v->runtime_ns ? (double)v->ds->ios * 1e9 / (double)v->runtime_ns : 0.0;
}

uint64_t view_bw_bytes(const struct dir_view *v)
{
	return v->runtime_ns
	           ? (uint64_t)((unsigned __int128)v->ds->bytes * 1000000000ULL / v->runtime_ns)
	           : 0;
}

uint64_t report_runtime_ms(const struct report *r, unsigned ddir)
{
	struct dir_view v = report_view(r, ddir);

	return view_runtime_ms(&v);
}

double report_iops(const struct report *r, unsigned ddir)
{
	struct dir_view v = report_view(r, ddir);

	return view_iops(&v);
}

uint64_t report_bw_bytes(const struct report *r, unsigned ddir)
{
	struct dir_view v = report_view(r, ddir);

	return view_bw_bytes(&v);
}

/* fio's sum_thread_stats into one direction: the runtime is the longest. */
int report_fold_mixed(struct report *r)
{
	if (r->def->o.unified_rw_reporting == UNIFIED_SPLIT)
		return 0;
	r->mixed = malloc(sizeof(*r->mixed));
	if (!r->mixed)
		return -ENOMEM;
	dir_stats_init(r->mixed);
	r->mixed_runtime_ns = 0;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		if (!report_dir_used(r, d))
			continue;
		dir_stats_merge(r->mixed, &r->st->dir[d]);
		if (report_runtime_ns(r, d) > r->mixed_runtime_ns)
			r->mixed_runtime_ns = report_runtime_ns(r, d);
	}
	return 0;
}

void report_release(struct report *r, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		free(r[i].mixed);
		r[i].mixed = NULL;
	}
}

static void group_add_dir(struct group_summary *g, unsigned d, const struct dir_view *v)
{
	uint64_t bw = view_bw_bytes(v), run = view_runtime_ms(v);

	g->bytes[d] += v->ds->bytes;
	if (!g->nr[d]++) {
		g->min_bw[d] = bw;
		g->min_run_ms[d] = run;
	}
	if (bw < g->min_bw[d])
		g->min_bw[d] = bw;
	if (bw > g->max_bw[d])
		g->max_bw[d] = bw;
	if (run < g->min_run_ms[d])
		g->min_run_ms[d] = run;
	if (run > g->max_run_ms[d])
		g->max_run_ms[d] = run;
	if (v->runtime_ns > g->runtime_ns[d])
		g->runtime_ns[d] = v->runtime_ns;
}

/* A mixed-only report counts in the group as its first direction, as in fio. */
static void group_add(struct group_summary *g, const struct report *r)
{
	struct dir_view v;

	g->unified |= r->def->o.unified_rw_reporting;
	g->kb_base = r->def->o.kb_base;
	g->unit_base = r->def->o.unit_base;
	if (report_mixed_only(r)) {
		v = report_mixed_view(r);
		group_add_dir(g, DDIR_READ, &v);
		return;
	}
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		if (!report_dir_used(r, d))
			continue;
		v = report_view(r, d);
		group_add_dir(g, d, &v);
	}
}

void group_summaries(const struct report *r, unsigned nr, struct group_summary *out,
                     unsigned *nr_groups)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nr; i++) {
		if (!n || out[n - 1].groupid != r[i].groupid) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n++].groupid = r[i].groupid;
		}
		group_add(&out[n - 1], &r[i]);
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
			out[i].agg_bw[d] = out[i].runtime_ns[d]
			                       ? (uint64_t)((unsigned __int128)out[i].bytes[d] *
			                                    1000000000ULL / out[i].runtime_ns[d])
			                       : 0;
	*nr_groups = n;
}

uint64_t ss_mean(const uint64_t *v, unsigned n)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : 0;
}
