/* SPDX-License-Identifier: MIT */
/*
 * What a job measures, and the reports built from it (one per job, or one
 * per group with group_reporting).  Samples are nanoseconds; sums are kept
 * exactly (128-bit sums of squares), so merging jobs loses nothing.
 */
#ifndef BLKRING_TOOLS_STATS_H
#define BLKRING_TOOLS_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "histogram.h"
#include "options.h"

struct lat_stat {
	uint64_t n, min, max, sum;
	unsigned __int128 sumsq;
};

/*
 * n samples of one value: a submission's units share their stamps.  New
 * extremes are rare once a run is under way, so they are branches, not
 * conditional stores.
 */
static inline void lat_add_n(struct lat_stat *s, uint64_t v, uint64_t n)
{
	/* v * n fits 64 bits, as the sum needs: one widening multiply. */
	uint64_t vn = v * n;

	s->n += n;
	if (unlikely(v < s->min))
		s->min = v;
	if (unlikely(v > s->max))
		s->max = v;
	s->sum += vn;
	s->sumsq += (unsigned __int128)vn * v;
}

static inline void lat_add(struct lat_stat *s, uint64_t v)
{
	lat_add_n(s, v, 1);
}

void lat_init(struct lat_stat *s);
void lat_merge(struct lat_stat *dst, const struct lat_stat *src);
double lat_mean(const struct lat_stat *s);
/* Sample standard deviation (n - 1), as fio reports it. */
double lat_stddev(const struct lat_stat *s);
uint64_t lat_min(const struct lat_stat *s);

/*
 * Bandwidth or IOPS samples, one per interval, kept as fio's io_stat
 * (running mean and sum of squared deviations), because group_reporting
 * sums them as fio does: the group's mean, minimum and maximum are the
 * sums of its jobs', as the jobs ran side by side.
 */
struct sample_stat {
	uint64_t n, min, max;
	double mean, s;
};

void sample_init(struct sample_stat *s);
void sample_add(struct sample_stat *s, uint64_t v);
/* fio's sum_stat(pure_sum): every field added, the first taken as it is. */
void sample_sum(struct sample_stat *dst, const struct sample_stat *src);
uint64_t sample_min(const struct sample_stat *s);
/* Sample standard deviation (n - 1), as fio's calc_lat(). */
double sample_stddev(const struct sample_stat *s);

/* fio's "per=" and bw_agg: the mean's share of the group's bandwidth
 * (bytes/s), at most 100%; 100% for a group under 1 KiB/s. */
double sample_pct_of_group(const struct sample_stat *bw, uint64_t group_bw);

/* One direction of one job (read, write, trim). */
struct dir_stats {
	uint64_t ios, bytes, short_ios;
	struct lat_stat slat, clat, lat;
	struct sample_stat bw, iops; /* per-interval samples, KiB/s and I/O per s */
	struct hist clat_hist, lat_hist;
	struct hist slat_hist; /* slat_percentiles only */
};

/* fio's iodepth maps: 7 buckets each. */
#define DEPTH_MAP_NR 7

struct job_stats {
	struct dir_stats dir[BENCH_DDIR_NR];
	uint64_t sync_ios;
	struct lat_stat sync_lat;
	struct hist sync_hist;
	uint64_t depth_map[DEPTH_MAP_NR];  /* I/Os by queue depth at submission */
	uint64_t submit_map[DEPTH_MAP_NR]; /* submissions by batch size */
	uint64_t complete_map[DEPTH_MAP_NR];
	uint64_t submits, completes, issued;
	uint64_t total_err;
	int first_error;     /* errno, positive, of the first error */
	int error;           /* errno that stopped the job, 0 if none */
	uint64_t runtime_ns; /* measured: after ramp_time */
	uint64_t verify_ns;  /* the verify phase, which fio counts as read runtime */
	uint64_t usr_ns, sys_ns, ctx, majf, minf;
	/* The ring's completions run as task work while measured, and their
	 * wait in all: ring-wide, so every direction's. */
	uint64_t tw_wait_nr, tw_wait_ns;
	unsigned latency_depth;     /* latency_target: the depth it settled on; 0: iodepth */
	const struct ss_result *ss; /* steadystate's, when the job had it (the job's) */
};

/* fio's steady-state record: the last ss_dur samples, a ring from head. */
struct ss_result {
	unsigned state; /* SS_* */
	unsigned dur, head;
	double limit, slope, deviation, criterion;
	uint64_t *bw, *iops; /* bytes and I/Os per second */
};

/* The whole-unit mean of n samples, as fio's steadystate_*_mean. */
uint64_t ss_mean(const uint64_t *v, unsigned n);

void job_stats_init(struct job_stats *st);
void job_stats_merge(struct job_stats *dst, const struct job_stats *src);

static inline unsigned depth_bucket(unsigned depth)
{
	unsigned b = depth ? 31 - (unsigned)__builtin_clz(depth) : 0;

	return b < DEPTH_MAP_NR - 1 ? b : DEPTH_MAP_NR - 1;
}

/* fio's submit/complete buckets: 0, 1-4, 5-8, 9-16, 17-32, 33-64, more. */
static inline unsigned batch_bucket(unsigned n)
{
	unsigned b;

	if (n <= 4)
		return n ? 1 : 0;
	b = 32 - (unsigned)__builtin_clz(n - 1); /* 5-8 -> 3, 9-16 -> 4 ... */
	return b - 1 < DEPTH_MAP_NR - 1 ? b - 1 : DEPTH_MAP_NR - 1;
}

/* fio's latency_ns/us/ms tables: the upper bounds of each bucket. */
#define LAT_NS_NR 10
#define LAT_US_NR 10
#define LAT_MS_NR 12
extern const char *const lat_bucket_keys[LAT_MS_NR];

struct lat_buckets {
	double ns[LAT_NS_NR], us[LAT_US_NR], ms[LAT_MS_NR]; /* percent of I/Os */
};
/* Completion latencies, as fio's io_u_mark_latency() counts them, derived
 * from the clat histograms (each bucket is classed by its lowest value, so
 * a bucket straddling a bound counts below it). */
void lat_buckets(const struct job_stats *st, struct lat_buckets *out);

/*
 * A report: one job, or the jobs of a group merged (group_reporting) into
 * the first one's statistics.
 */
struct job_def;
struct report {
	const struct job_def *def; /* the first job's */
	unsigned groupid;
	unsigned nr_jobs;
	int tid;
	struct job_stats *st;
	uint64_t run_sum_ns; /* every job's measured time (and verify's): fio's total_run_time */
	/* unified_rw_reporting=mixed or both: every direction's statistics
	 * as one (report_fold_mixed()); NULL otherwise. */
	struct dir_stats *mixed;
	uint64_t mixed_runtime_ns;
};

/*
 * What one block of a report shows: a direction, or unified_rw_reporting's
 * "mixed", with its runtime.
 */
struct dir_view {
	const char *name;
	const struct dir_stats *ds;
	uint64_t runtime_ns;
};

struct dir_view report_view(const struct report *r, unsigned ddir);
struct dir_view report_mixed_view(const struct report *r);
/* Bandwidth (bytes/s), I/O rate and runtime (fio's ms) of a view. */
double view_iops(const struct dir_view *v);
uint64_t view_bw_bytes(const struct dir_view *v);
uint64_t view_runtime_ms(const struct dir_view *v);
/* unified_rw_reporting=mixed: the directions stand as one. */
bool report_mixed_only(const struct report *r);

/* Bandwidth, I/O rate, runtime in ns and ms of one direction. */
uint64_t report_runtime_ns(const struct report *r, unsigned ddir);
double report_iops(const struct report *r, unsigned ddir);
uint64_t report_bw_bytes(const struct report *r, unsigned ddir);
uint64_t report_runtime_ms(const struct report *r, unsigned ddir);
bool report_dir_used(const struct report *r, unsigned ddir);
/* fio's gen_mixed_ddir_stats_from_ts for a report whose job asks for it:
 * 0, or -ENOMEM.  report_release() frees what it took. */
int report_fold_mixed(struct report *r);
void report_release(struct report *r, unsigned nr);
/* User and system CPU, percent of the report's jobs' runtime. */
void report_cpu(const struct report *r, double *usr, double *sys);

/* A group's totals for the "Run status group" lines. */
struct group_summary {
	unsigned groupid;
	unsigned unified;            /* its jobs' unified_rw_reporting, or-ed as fio does */
	unsigned kb_base, unit_base; /* its last job's, as fio takes them */
	unsigned nr[BENCH_DDIR_NR];  /* reports with this direction */
	uint64_t bytes[BENCH_DDIR_NR];
	uint64_t min_bw[BENCH_DDIR_NR], max_bw[BENCH_DDIR_NR]; /* bytes/s, per report */
	uint64_t min_run_ms[BENCH_DDIR_NR], max_run_ms[BENCH_DDIR_NR];
	uint64_t runtime_ns[BENCH_DDIR_NR]; /* the longest */
	uint64_t agg_bw[BENCH_DDIR_NR];     /* bytes/s: all bytes over the longest runtime */
};

void group_summaries(const struct report *r, unsigned nr, struct group_summary *out,
                     unsigned *nr_groups);

#endif
