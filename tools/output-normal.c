// SPDX-License-Identifier: MIT
/* fio's normal output: per-report blocks, then the "Run status group" lines. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"
#include "engine.h"
#include "output.h"

void fmt_num(char *buf, size_t len, double v, bool pow2)
{
	static const char *const p10[] = {"", "k", "M", "G", "T", "P", "E"};
	static const char *const p2[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	double base = pow2 ? 1024.0 : 1000.0;
	unsigned u = 0;
	int digits;

	while (v >= 9999.5 && u < 6) {
		v /= base;
		u++;
	}
	if (!u) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	digits = v >= 999.5 ? 4 : v >= 99.5 ? 3 : v >= 9.95 ? 2 : 1;
	snprintf(buf, len, "%.*f%s", digits < 3 ? 3 - digits : 0, v, (pow2 ? p2 : p10)[u]);
}

void output_header(FILE *f, const struct bench_cfg *cfg, unsigned nr_jobs)
{
	for (unsigned i = 0; i < cfg->nr_defs; i++) {
		const struct job_opts *o = &cfg->defs[i].o;
		char bs[FIO_DDIR_NR][2][32];

		/* fio's num2str: "4096B", "16.0KiB", each direction's smallest
		 * and largest. */
		for (unsigned d = 0; d < FIO_DDIR_NR; d++) {
			fmt_num(bs[d][0], sizeof(bs[d][0]), (double)opts_min_bs(o, d), true);
			fmt_num(bs[d][1], sizeof(bs[d][1]), (double)opts_max_bs(o, d), true);
		}
		fprintf(f,
		        "%s: (g=%u): rw=%s, bs=(R) %sB-%sB, (W) %sB-%sB, (T) %sB-%sB, "
		        "ioengine=%s, iodepth=%u\n",
		        o->name, cfg->defs[i].groupid, rw_modes[o->rw.mode].name, bs[0][0],
		        bs[0][1], bs[1][0], bs[1][1], bs[2][0], bs[2][1], o->ioengine->name,
		        o->iodepth);
		if (o->numjobs > 1)
			fprintf(f, "...\n");
	}
	fprintf(f, "blkring-%s\nStarting %u thread%s\n", BLKRING_VERSION_STRING, nr_jobs,
	        nr_jobs == 1 ? "" : "s");
}

/* fio's display_lat units: usec or msec once the smallest value is large. */
static const char *lat_scale(uint64_t *min, uint64_t *max, double *mean, double *dev)
{
	double div;
	const char *unit;

	if (*min > 1000000 && *mean > 1000000.0) {
		div = 1e6;
		unit = "msec";
	} else if (*min > 1000 && *mean > 1000.0) {
		div = 1e3;
		unit = "usec";
	} else {
		return "nsec";
	}
	*min = (uint64_t)(*min / div);
	*max = (uint64_t)(*max / div);
	*mean /= div;
	*dev /= div;
	return unit;
}

static void show_lat(FILE *f, const char *name, const struct lat_stat *s)
{
	uint64_t min = lat_min(s), max = s->max;
	double mean = lat_mean(s), dev = lat_stddev(s);
	const char *unit;

	if (!s->n)
		return;
	unit = lat_scale(&min, &max, &mean, &dev);
	fprintf(f, "    %s (%s): min=%" PRIu64 ", max=%" PRIu64 ", avg=%.2f, stdev=%.2f\n", name,
	        unit, min, max, mean, dev);
}

static void show_percentiles(FILE *f, const char *name, const struct hist *h,
                             const struct percentiles *pl)
{
	uint64_t v[BENCH_MAX_PERCENTILES], minv, maxv, div = 1;
	const char *unit = "nsec";
	int width = 5;

	if (!hist_percentiles(h, pl->p, pl->nr, v))
		return;
	minv = v[0];
	maxv = v[pl->nr - 1];
	if (minv > 2000000 && maxv > 99999999ULL) {
		div = 1000000;
		unit = "msec";
	} else if (minv > 2000 && maxv > 99999) {
		div = 1000;
		unit = "usec";
	}
	for (unsigned i = 0; i < pl->nr; i++)
		v[i] = (v[i] + div - 1) / div;
	if ((int)log10((double)v[pl->nr - 1] + 1) + 1 > width)
		width = (int)log10((double)v[pl->nr - 1] + 1) + 1;
	fprintf(f, "    %s percentiles (%s):\n     |", name, unit);
	for (unsigned i = 0; i < pl->nr; i++) {
		bool last = i == pl->nr - 1;

		if (i && !(i % 4))
			fprintf(f, "     |");
		fprintf(f, " %s%.2fth=[%*" PRIu64 "]%c", pl->p[i] < 10.0 ? " " : "", pl->p[i],
		        width, v[i], last ? '\n' : ',');
		if (!last && i % 4 == 3)
			fputc('\n', f);
	}
}

/* fio's: KiB/s, or MiB/s (whole numbers for min and max) once the mean
 * is above 1 GiB/s. */
static void show_samples(FILE *f, const struct dir_stats *ds, uint64_t group_bw)
{
	const struct sample_stat *bw = &ds->bw, *io = &ds->iops;
	uint64_t div = 1, min = sample_min(bw), max = bw->max;
	double mean = bw->mean, dev = sample_stddev(bw);
	const char *unit = "KiB";

	if (!bw->n)
		return;
	if (mean > 1024.0 * 1024.0) {
		div = 1024;
		unit = "MiB";
	}
	fprintf(f,
	        "   bw (%5s/s): min=%5" PRIu64 ", max=%5" PRIu64 ", per=%3.2f%%, avg=%5.02f, "
	        "stdev=%5.02f, samples=%" PRIu64 "\n",
	        unit, min / div, max / div, sample_pct_of_group(bw, group_bw), mean / (double)div,
	        dev / (double)div, bw->n);
	fprintf(f,
	        "   iops        : min=%5" PRIu64 ", max=%5" PRIu64 ", avg=%5.02f, stdev=%5.02f, "
	        "samples=%" PRIu64 "\n",
	        sample_min(io), io->max, io->mean, sample_stddev(io), io->n);
}

static void show_dir(FILE *f, const struct report *r, unsigned d, uint64_t group_bw)
{
	const struct dir_stats *ds = &r->st->dir[d];
	const struct job_opts *o = &r->def->o;
	char iops[32], bw2[32], bw10[32], io[32];

	fmt_num(iops, sizeof(iops), report_iops(r, d), false);
	fmt_num(bw2, sizeof(bw2), (double)report_bw_bytes(r, d), true);
	fmt_num(bw10, sizeof(bw10), (double)report_bw_bytes(r, d), false);
	fmt_num(io, sizeof(io), (double)ds->bytes, true);
	fprintf(f, "  %s: IOPS=%s, BW=%sB/s (%sB/s)(%sB/%" PRIu64 "msec)\n", ddir_names[d], iops,
	        bw2, bw10, io, report_runtime_ms(r, d));
	show_lat(f, "slat", &ds->slat);
	show_lat(f, "clat", &ds->clat);
	show_lat(f, " lat", &ds->lat);
	show_percentiles(f, "clat", &ds->clat_hist, &o->percentile_list);
	if (o->lat_percentiles)
		show_percentiles(f, " lat", &ds->lat_hist, &o->percentile_list);
	show_samples(f, ds, group_bw);
}

static void show_lat_line(FILE *f, const char *unit, const double *pct, unsigned nr)
{
	unsigned on_line = 0;

	for (unsigned i = 0; i < nr; i++) {
		if (pct[i] < 0.01)
			continue;
		if (!on_line)
			fprintf(f, "  lat (%s)   : ", unit);
		fprintf(f, "%s%s=%.2f%%", on_line ? ", " : "", lat_bucket_keys[i], pct[i]);
		if (++on_line == 5) {
			fputc('\n', f);
			on_line = 0;
		}
	}
	if (on_line)
		fputc('\n', f);
}

static void show_map(FILE *f, const char *label, const char *const *keys, const uint64_t *map,
                     uint64_t total)
{
	fprintf(f, "%s: ", label);
	for (unsigned i = 0; i < DEPTH_MAP_NR; i++)
		fprintf(f, "%s%s=%.1f%%", i ? ", " : "", keys[i],
		        total ? 100.0 * (double)map[i] / (double)total : 0.0);
	fputc('\n', f);
}

static const char *const depth_keys[DEPTH_MAP_NR] = {"1", "2", "4", "8", "16", "32", ">=64"};
static const char *const batch_keys[DEPTH_MAP_NR] = {"0", "4", "8", "16", "32", "64", ">=64"};

static void show_misc(FILE *f, const struct report *r)
{
	const struct job_stats *st = r->st;
	struct lat_buckets lb;
	double usr, sys;

	report_cpu(r, &usr, &sys);
	lat_buckets(st, &lb);
	show_lat_line(f, "nsec", lb.ns, LAT_NS_NR);
	show_lat_line(f, "usec", lb.us, LAT_US_NR);
	show_lat_line(f, "msec", lb.ms, LAT_MS_NR);
	fprintf(f,
	        "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%" PRIu64 ", majf=%" PRIu64
	        ", minf=%" PRIu64 "\n",
	        usr, sys, st->ctx, st->majf, st->minf);
	show_map(f, "  IO depths    ", depth_keys, st->depth_map, st->issued);
	show_map(f, "     submit    ", batch_keys, st->submit_map, st->submits);
	show_map(f, "     complete  ", batch_keys, st->complete_map, st->completes);
	fprintf(f,
	        "     issued rwts: total=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	        " short=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",0 dropped=0,0,0,0\n",
	        st->dir[0].ios, st->dir[1].ios, st->dir[2].ios, st->sync_ios, st->dir[0].short_ios,
	        st->dir[1].short_ios, st->dir[2].short_ios);
	if (st->dir[DDIR_ZERO].ios)
		fprintf(f, "     issued zero: total=%" PRIu64 " short=%" PRIu64 "\n",
		        st->dir[DDIR_ZERO].ios, st->dir[DDIR_ZERO].short_ios);
	fprintf(f,
	        "     latency   : target=%" PRIu64 ", window=%" PRIu64 ", percentile=%.2f%%, "
	        "depth=%u\n",
	        r->def->o.latency_target_us * 1000, r->def->o.latency_window_us,
	        r->def->o.latency_percentile, st->latency_depth ?: r->def->o.iodepth);
}

/* fio's steadystate line: its bandwidth in KiB shown in both bases. */
static void show_steadystate(FILE *f, const struct ss_result *ss)
{
	uint64_t kib = ss_mean(ss->bw, ss->dur) / 1024;
	char bw2[32], bw10[32], iops[32];

	fmt_num(bw2, sizeof(bw2), (double)kib * 1024.0, true);
	fmt_num(bw10, sizeof(bw10), (double)kib * 1000.0, false);
	fmt_num(iops, sizeof(iops), (double)ss_mean(ss->iops, ss->dur), false);
	fprintf(f, "  steadystate  : attained=%s, bw=%sB/s (%sB/s), iops=%s, %s%s=%.3f%s\n",
	        ss->state & SS_ATTAINED ? "yes" : "no", bw2, bw10, iops,
	        ss->state & SS_IOPS ? "iops" : "bw", ss->state & SS_SLOPE ? " slope" : " mean dev",
	        ss->criterion, ss->state & SS_PCT ? "%" : "");
}

static void show_report(FILE *f, const struct report *r, const struct group_summary *g)
{
	char when[64];
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime(&now));
	fprintf(f, "%s: (groupid=%u, jobs=%u): err=%2d: pid=%d: %s\n", r->def->o.name, r->groupid,
	        r->nr_jobs, r->st->error, r->tid, when);
	if (r->def->o.description[0])
		fprintf(f, "  Description  : [%s]\n", r->def->o.description);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		if (report_dir_used(r, d))
			show_dir(f, r, d, g->agg_bw[d]);
	if (r->st->sync_ios) {
		fprintf(f, "  fsync/fdatasync/sync_file_range:\n");
		show_lat(f, "sync", &r->st->sync_lat);
		show_percentiles(f, "sync", &r->st->sync_hist, &r->def->o.percentile_list);
	}
	show_misc(f, r);
	if (r->st->ss)
		show_steadystate(f, r->st->ss);
}

static void show_group(FILE *f, const struct group_summary *g)
{
	static const char *const labels[BENCH_DDIR_NR] = {"   READ", "  WRITE", "   TRIM",
	                                                  "   ZERO"};

	fprintf(f, "\nRun status group %u (all jobs):\n", g->groupid);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		char agg2[32], agg10[32], min2[32], max2[32], min10[32], max10[32], io2[32],
		    io10[32];

		if (!g->nr[d])
			continue;
		fmt_num(agg2, sizeof(agg2), (double)g->agg_bw[d], true);
		fmt_num(agg10, sizeof(agg10), (double)g->agg_bw[d], false);
		fmt_num(min2, sizeof(min2), (double)g->min_bw[d], true);
		fmt_num(max2, sizeof(max2), (double)g->max_bw[d], true);
		fmt_num(min10, sizeof(min10), (double)g->min_bw[d], false);
		fmt_num(max10, sizeof(max10), (double)g->max_bw[d], false);
		fmt_num(io2, sizeof(io2), (double)g->bytes[d], true);
		fmt_num(io10, sizeof(io10), (double)g->bytes[d], false);
		fprintf(
		    f,
		    "%s: bw=%sB/s (%sB/s), %sB/s-%sB/s (%sB/s-%sB/s), io=%sB (%sB), run=%" PRIu64
		    "-%" PRIu64 "msec\n",
		    labels[d], agg2, agg10, min2, max2, min10, max10, io2, io10, g->min_run_ms[d],
		    g->max_run_ms[d]);
	}
}

int output_normal(FILE *f, const struct report *r, unsigned nr)
{
	struct group_summary *groups = calloc(nr ? nr : 1, sizeof(*groups));
	unsigned nr_groups, gi = 0;

	if (!groups)
		return -ENOMEM;
	group_summaries(r, nr, groups, &nr_groups);
	fputc('\n', f);
	for (unsigned i = 0; i < nr; i++) {
		while (groups[gi].groupid != r[i].groupid)
			gi++;
		show_report(f, &r[i], &groups[gi]);
	}
	for (unsigned i = 0; i < nr_groups; i++)
		show_group(f, &groups[i]);
	free(groups);
	return 0;
}
