// SPDX-License-Identifier: MIT
/*
 * fio's terse output, version 3 (--minimal, --output-format=terse): one
 * line of ';'-separated fields per report, fio 3.33's fields in fio's
 * order and units (show_thread_status_terse_all): general, read, write
 * (no trim in version 3), CPU, depths, latency buckets, and the error
 * counts with continue_on_error.  Latencies are microseconds, bandwidth
 * KiB/s, runtime ms.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"
#include "output.h"

/* As fio's terse percentile list: always this many fields. */
#define TERSE_PERCENTILES 20

/* min;max;mean;dev in microseconds, or zeros without samples. */
static void terse_lat(FILE *f, const struct lat_stat *s)
{
	if (!s->n) {
		fprintf(f, ";0;0;0.000000;0.000000");
		return;
	}
	fprintf(f, ";%" PRIu64 ";%" PRIu64 ";%f;%f", s->min / 1000, s->max / 1000,
	        lat_mean(s) / 1000.0, lat_stddev(s) / 1000.0);
}

/* The percentiles of completion latency (total latency with
 * lat_percentiles, none with clat_percentiles=0), "p%=usec", the list
 * padded with "0%=0". */
static void terse_percentiles(FILE *f, const struct dir_stats *ds, const struct job_opts *o)
{
	const struct hist *h = o->lat_percentiles ? &ds->lat_hist : &ds->clat_hist;
	const struct percentiles *pl = &o->percentile_list;
	uint64_t v[BENCH_MAX_PERCENTILES] = {0};
	unsigned nr = o->lat_percentiles || o->clat_percentiles ? pl->nr : 0;

	hist_percentiles(h, pl->p, pl->nr, v);
	for (unsigned i = 0; i < TERSE_PERCENTILES; i++) {
		if (i < nr)
			fprintf(f, ";%f%%=%" PRIu64, pl->p[i], v[i] / 1000);
		else
			fprintf(f, ";0%%=0");
	}
}

/* fio's terse share of the group: the group's KiB/s in whole KiB. */
static double terse_pct_of_group(const struct sample_stat *bw, uint64_t group_bw)
{
	double pct;

	if (!group_bw)
		return 100.0;
	pct = bw->mean * 100.0 / (double)(group_bw / 1024);
	return pct > 100.0 ? 100.0 : pct;
}

static void terse_dir(FILE *f, const struct report *r, const struct dir_view *v, uint64_t group_bw)
{
	const struct dir_stats *ds = v->ds;
	uint64_t ms = view_runtime_ms(v), bw = 0, iops = 0;

	if (ms) {
		bw = 1000 * ds->bytes / ms / 1024;
		iops = 1000 * ds->ios / ms;
	}
	fprintf(f, ";%" PRIu64 ";%" PRIu64 ";%" PRIu64 ";%" PRIu64, ds->bytes >> 10, bw, iops, ms);
	terse_lat(f, &ds->slat);
	terse_lat(f, &ds->clat);
	terse_percentiles(f, ds, &r->def->o);
	terse_lat(f, &ds->lat);
	if (ds->bw.n)
		fprintf(f, ";%" PRIu64 ";%" PRIu64 ";%f%%;%f;%f", ds->bw.min, ds->bw.max,
		        terse_pct_of_group(&ds->bw, group_bw), ds->bw.mean, sample_stddev(&ds->bw));
	else
		fprintf(f, ";0;0;0.000000%%;0.000000;0.000000");
}

/* Reads and writes; mixed in their place, or after them with both. */
static void terse_dirs(FILE *f, const struct report *r, const struct group_summary *g)
{
	struct dir_view v;

	for (unsigned d = DDIR_READ; !report_mixed_only(r) && d <= DDIR_WRITE; d++) {
		v = report_view(r, d);
		terse_dir(f, r, &v, g->agg_bw[d]);
	}
	if (r->mixed) {
		v = report_mixed_view(r);
		terse_dir(f, r, &v, g->agg_bw[DDIR_READ]);
	}
}

/* CPU, depths and latency buckets (fio folds the nanosecond ones into
 * the first microsecond bucket). */
static void terse_misc(FILE *f, const struct report *r)
{
	const struct job_stats *st = r->st;
	struct lat_buckets lb;
	double usr, sys, ns = 0.0;

	report_cpu(r, &usr, &sys);
	fprintf(f, ";%f%%;%f%%;%" PRIu64 ";%" PRIu64 ";%" PRIu64, usr, sys, st->ctx, st->majf,
	        st->minf);
	for (unsigned i = 0; i < DEPTH_MAP_NR; i++)
		fprintf(f, ";%3.1f%%",
		        st->issued ? 100.0 * (double)st->depth_map[i] / (double)st->issued : 0.0);
	lat_buckets(st, &lb);
	for (unsigned i = 0; i < LAT_NS_NR; i++)
		ns += lb.ns[i];
	for (unsigned i = 0; i < LAT_US_NR; i++)
		fprintf(f, ";%3.2f%%", lb.us[i] + (i ? 0.0 : ns));
	for (unsigned i = 0; i < LAT_MS_NR; i++)
		fprintf(f, ";%3.2f%%", lb.ms[i]);
	if (r->def->o.continue_on_error)
		fprintf(f, ";%" PRIu64 ";%d", st->total_err, st->first_error);
}

int output_terse(FILE *f, const struct report *r, unsigned nr)
{
	struct group_summary *groups = calloc(nr ? nr : 1, sizeof(*groups));
	unsigned nr_groups, gi = 0;

	if (!groups)
		return -ENOMEM;
	group_summaries(r, nr, groups, &nr_groups);
	for (unsigned i = 0; i < nr; i++) {
		while (groups[gi].groupid != r[i].groupid)
			gi++;
		fprintf(f, "3;blkring-%s;%s;%u;%d", BLKRING_VERSION_STRING, r[i].def->o.name,
		        r[i].groupid, r[i].st->error);
		terse_dirs(f, &r[i], &groups[gi]);
		terse_misc(f, &r[i]);
		if (r[i].def->o.description[0])
			fprintf(f, ";%s", r[i].def->o.description);
		fputc('\n', f);
	}
	free(groups);
	return 0;
}
