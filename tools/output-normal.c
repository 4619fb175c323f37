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

/*
 * fio's: KiB/s (kB/s with kb_base=1000, the numbers the same), or MiB/s
 * (whole numbers for min and max) once the mean is above kb_base^2.  fio
 * 3.33's unit_base never reaches this line.
 */
static void show_samples(FILE *f, const struct dir_stats *ds, uint64_t group_bw, unsigned kb_base)
{
	const struct sample_stat *bw = &ds->bw, *io = &ds->iops;
	uint64_t base = kb_base == KB_BASE_1000 ? 1000 : 1024, div = 1;
	double mean = bw->mean, dev = sample_stddev(bw);
	const char *unit = kb_base == KB_BASE_1000 ? "kB" : "KiB";

	if (bw->n && mean > (double)(base * base)) {
		div = base;
		unit = "MiB";
	}
	if (bw->n)
		fprintf(f,
		        "   bw (%5s/s): min=%5" PRIu64 ", max=%5" PRIu64 ", per=%3.2f%%, "
		        "avg=%5.02f, stdev=%5.02f, samples=%" PRIu64 "\n",
		        unit, sample_min(bw) / div, bw->max / div,
		        sample_pct_of_group(bw, group_bw), mean / (double)div, dev / (double)div,
		        bw->n);
	if (io->n)
		fprintf(f,
		        "   iops        : min=%5" PRIu64 ", max=%5" PRIu64 ", avg=%5.02f, "
		        "stdev=%5.02f, samples=%" PRIu64 "\n",
		        sample_min(io), io->max, io->mean, sample_stddev(io), io->n);
}

/* fio's num2str of a rate or a size, in the units kb_base and unit_base
 * ask for: "BW=%s (%s)" shows the first, then the other prefixes. */
struct units {
	bool pow2; /* binary prefixes first (kb_base=1024) */
	bool bits; /* unit_base=1: bandwidth in bits */
};

static struct units opts_units(unsigned kb_base, unsigned unit_base)
{
	return (struct units){kb_base == KB_BASE_1024, unit_base == UNIT_BASE_BIT};
}

static void fmt_rate(char *buf, size_t len, uint64_t bytes_s, struct units u, bool first)
{
	size_t n;

	fmt_num(buf, len, (double)bytes_s * (u.bits ? 8.0 : 1.0), first ? u.pow2 : !u.pow2);
	n = strlen(buf);
	snprintf(buf + n, len - n, "%s", u.bits ? "bit/s" : "B/s");
}

static void fmt_size(char *buf, size_t len, uint64_t bytes, struct units u, bool first)
{
	size_t n;

	fmt_num(buf, len, (double)bytes, first ? u.pow2 : !u.pow2);
	n = strlen(buf);
	snprintf(buf + n, len - n, "B");
}

/* fio's order: the latencies, then slat, clat and lat percentiles as asked. */
static void show_dir(FILE *f, const struct report *r, const struct dir_view *v, uint64_t group_bw)
{
	const struct dir_stats *ds = v->ds;
	const struct job_opts *o = &r->def->o;
	struct units u = opts_units(o->kb_base, o->unit_base);
	char iops[32], bw[32], bw_alt[32], io[32];

	fmt_num(iops, sizeof(iops), view_iops(v), false);
	fmt_rate(bw, sizeof(bw), view_bw_bytes(v), u, true);
	fmt_rate(bw_alt, sizeof(bw_alt), view_bw_bytes(v), u, false);
	fmt_size(io, sizeof(io), ds->bytes, u, true);
	fprintf(f, "  %s: IOPS=%s, BW=%s (%s)(%s/%" PRIu64 "msec)\n", v->name, iops, bw, bw_alt, io,
	        view_runtime_ms(v));
	show_lat(f, "slat", &ds->slat);
	show_lat(f, "clat", &ds->clat);
	show_lat(f, " lat", &ds->lat);
	if (o->slat_percentiles && ds->slat.n)
		show_percentiles(f, "slat", &ds->slat_hist, &o->percentile_list);
	if (o->clat_percentiles)
		show_percentiles(f, "clat", &ds->clat_hist, &o->percentile_list);
	if (o->lat_percentiles)
		show_percentiles(f, " lat", &ds->lat_hist, &o->percentile_list);
	show_samples(f, ds, group_bw, o->kb_base);
}

/* unified_rw_reporting: mixed alone, or after the directions (both). */
static void show_dirs(FILE *f, const struct report *r, const struct group_summary *g)
{
	struct dir_view v;

	for (unsigned d = 0; !report_mixed_only(r) && d < BENCH_DDIR_NR; d++) {
		if (!report_dir_used(r, d))
			continue;
		v = report_view(r, d);
		show_dir(f, r, &v, g->agg_bw[d]);
	}
	if (!r->mixed)
		return;
	/* fio's mixed block is its first direction: its share is of the reads'. */
	v = report_mixed_view(r);
	show_dir(f, r, &v, g->agg_bw[DDIR_READ]);
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

/* fio's issued counts; mixed, all of them in the first (its sync count too). */
static void show_issued(FILE *f, const struct report *r)
{
	const struct job_stats *st = r->st;
	uint64_t total[FIO_DDIR_NR], shorts[FIO_DDIR_NR];
	bool mixed = report_mixed_only(r);

	for (unsigned d = 0; d < FIO_DDIR_NR; d++) {
		total[d] = mixed ? (d ? 0 : r->mixed->ios) : st->dir[d].ios;
		shorts[d] = mixed ? (d ? 0 : r->mixed->short_ios) : st->dir[d].short_ios;
	}
	fprintf(f,
	        "     issued rwts: total=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	        " short=%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",0 dropped=0,0,0,0\n",
	        total[0], total[1], total[2], st->sync_ios, shorts[0], shorts[1], shorts[2]);
}

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
	show_issued(f, r);
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
	show_dirs(f, r, g);
	if (r->st->sync_ios) {
		fprintf(f, "  fsync/fdatasync/sync_file_range:\n");
		show_lat(f, "sync", &r->st->sync_lat);
		show_percentiles(f, "sync", &r->st->sync_hist, &r->def->o.percentile_list);
	}
	show_misc(f, r);
	if (r->st->ss)
		show_steadystate(f, r->st->ss);
}

/* One "Run status group" line: bytes/s of the group, of its slowest and
 * fastest report, bytes, and their runtimes. */
struct group_line {
	uint64_t agg, min, max, bytes, min_run, max_run;
};

static void show_group_line(FILE *f, const char *label, const struct group_line *l, struct units u)
{
	char agg[32], agg_alt[32], min[32], max[32], min_alt[32], max_alt[32], io[32], io_alt[32];

	fmt_rate(agg, sizeof(agg), l->agg, u, true);
	fmt_rate(agg_alt, sizeof(agg_alt), l->agg, u, false);
	fmt_rate(min, sizeof(min), l->min, u, true);
	fmt_rate(max, sizeof(max), l->max, u, true);
	fmt_rate(min_alt, sizeof(min_alt), l->min, u, false);
	fmt_rate(max_alt, sizeof(max_alt), l->max, u, false);
	fmt_size(io, sizeof(io), l->bytes, u, true);
	fmt_size(io_alt, sizeof(io_alt), l->bytes, u, false);
	fprintf(f, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%" PRIu64 "-%" PRIu64 "msec\n",
	        label, agg, agg_alt, min, max, min_alt, max_alt, io, io_alt, l->min_run,
	        l->max_run);
}

static struct group_line group_line(const struct group_summary *g, unsigned d)
{
	return (struct group_line){g->agg_bw[d], g->min_bw[d],     g->max_bw[d],
	                           g->bytes[d],  g->min_run_ms[d], g->max_run_ms[d]};
}

/* fio's show_mixed_group_stats (unified_rw_reporting=both): the lines summed. */
static void show_group_mixed(FILE *f, const struct group_summary *g, struct units u)
{
	struct group_line m = {.min = UINT64_MAX, .min_run = UINT64_MAX};

	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		if (!g->nr[d])
			continue;
		m.agg += g->agg_bw[d];
		m.bytes += g->bytes[d];
		m.min = g->min_bw[d] < m.min ? g->min_bw[d] : m.min;
		m.max = g->max_bw[d] > m.max ? g->max_bw[d] : m.max;
		m.min_run = g->min_run_ms[d] < m.min_run ? g->min_run_ms[d] : m.min_run;
		m.max_run = g->max_run_ms[d] > m.max_run ? g->max_run_ms[d] : m.max_run;
	}
	if (m.max_run)
		show_group_line(f, "  MIXED", &m, u);
}

static void show_group(FILE *f, const struct group_summary *g)
{
	static const char *const labels[BENCH_DDIR_NR] = {"   READ", "  WRITE", "   TRIM",
	                                                  "   ZERO"};
	struct units u = opts_units(g->kb_base, g->unit_base);

	fprintf(f, "\nRun status group %u (all jobs):\n", g->groupid);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		struct group_line l = group_line(g, d);

		if (g->nr[d])
			show_group_line(f, g->unified == UNIFIED_MIXED ? "  MIXED" : labels[d], &l,
			                u);
	}
	if (g->unified == UNIFIED_BOTH)
		show_group_mixed(f, g, u);
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
