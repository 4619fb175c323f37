// SPDX-License-Identifier: MIT
/*
 * fio's JSON structure, key for key, with json-c: top-level version,
 * timestamps, "global options" and "jobs"; each job (or merged group) with
 * its options, read/write/trim objects (and "zero", shaped as trim, for
 * write zeroes jobs), sync, CPU and depth maps, and latency buckets; json+
 * adds the histogram bins.  Numbers fio prints as floats are json doubles
 * here too.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"
#include "output.h"

/* Shorthands: every add goes through these so a failed allocation shows. */
struct jb {
	bool oom;
	bool plus; /* json+: histogram bins beside each percentile list */
};

static json_object *jadd(struct jb *b, json_object *parent, const char *key, json_object *v)
{
	if (!v || json_object_object_add(parent, key, v))
		b->oom = true;
	return v;
}

static void jint(struct jb *b, json_object *o, const char *key, int64_t v)
{
	jadd(b, o, key, json_object_new_int64(v));
}

static void jdbl(struct jb *b, json_object *o, const char *key, double v)
{
	jadd(b, o, key, json_object_new_double(v));
}

static void jstr(struct jb *b, json_object *o, const char *key, const char *v)
{
	jadd(b, o, key, json_object_new_string(v));
}

static json_object *jobj(struct jb *b, json_object *parent, const char *key)
{
	return jadd(b, parent, key, json_object_new_object());
}

static void json_kvlist(struct jb *b, json_object *o, const char *key, const struct kvlist *l)
{
	json_object *opts = jobj(b, o, key);

	for (unsigned i = 0; opts && i < l->nr; i++)
		jstr(b, opts, l->v[i].key, l->v[i].val);
}

/* fio's json+ "bins": each non-empty bucket's count, keyed by the value it stands for. */
static void json_bins(struct jb *b, json_object *o, const struct hist *h)
{
	json_object *bins = jobj(b, o, "bins");

	for (unsigned i = 0; bins && i < HIST_NR; i++) {
		char key[24];

		if (!h->bucket[i])
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, hist_value(i));
		jint(b, bins, key, (int64_t)h->bucket[i]);
	}
}

static void json_percentiles(struct jb *b, json_object *o, const struct hist *h,
                             const struct percentiles *pl)
{
	uint64_t v[BENCH_MAX_PERCENTILES];
	json_object *p;

	if (!hist_percentiles(h, pl->p, pl->nr, v))
		return;
	p = jobj(b, o, "percentile");
	for (unsigned i = 0; p && i < pl->nr; i++) {
		char key[32];

		snprintf(key, sizeof(key), "%f", pl->p[i]);
		jint(b, p, key, (int64_t)v[i]);
	}
	if (b->plus)
		json_bins(b, o, h);
}

static json_object *json_lat(struct jb *b, json_object *o, const char *key,
                             const struct lat_stat *s)
{
	json_object *l = jobj(b, o, key);

	if (!l)
		return NULL;
	jint(b, l, "min", (int64_t)lat_min(s));
	jint(b, l, "max", (int64_t)s->max);
	jdbl(b, l, "mean", lat_mean(s));
	jdbl(b, l, "stddev", lat_stddev(s));
	jint(b, l, "N", (int64_t)s->n);
	return l;
}

static void json_dir(struct jb *b, json_object *job, const struct report *r,
                     const struct dir_view *v, uint64_t group_bw)
{
	const struct dir_stats *ds = v->ds;
	const struct job_opts *o = &r->def->o;
	json_object *dir = jobj(b, job, v->name), *l;
	uint64_t bw = view_bw_bytes(v);

	if (!dir)
		return;
	jint(b, dir, "io_bytes", (int64_t)ds->bytes);
	jint(b, dir, "io_kbytes", (int64_t)(ds->bytes / 1024));
	jint(b, dir, "bw_bytes", (int64_t)bw);
	jint(b, dir, "bw", (int64_t)(bw / 1024));
	jdbl(b, dir, "iops", view_iops(v));
	jint(b, dir, "runtime", (int64_t)view_runtime_ms(v));
	jint(b, dir, "total_ios", (int64_t)ds->ios);
	jint(b, dir, "short_ios", (int64_t)ds->short_ios);
	/* blkring never drops a queued I/O. */
	jint(b, dir, "drop_ios", 0);
	l = json_lat(b, dir, "slat_ns", &ds->slat);
	if (l && o->slat_percentiles)
		json_percentiles(b, l, &ds->slat_hist, &o->percentile_list);
	l = json_lat(b, dir, "clat_ns", &ds->clat);
	if (l && o->clat_percentiles)
		json_percentiles(b, l, &ds->clat_hist, &o->percentile_list);
	l = json_lat(b, dir, "lat_ns", &ds->lat);
	if (l && o->lat_percentiles)
		json_percentiles(b, l, &ds->lat_hist, &o->percentile_list);
	jint(b, dir, "bw_min", (int64_t)sample_min(&ds->bw));
	jint(b, dir, "bw_max", (int64_t)ds->bw.max);
	jdbl(b, dir, "bw_agg", ds->bw.n ? sample_pct_of_group(&ds->bw, group_bw) : 0.0);
	jdbl(b, dir, "bw_mean", ds->bw.mean);
	jdbl(b, dir, "bw_dev", sample_stddev(&ds->bw));
	jint(b, dir, "bw_samples", (int64_t)ds->bw.n);
	jint(b, dir, "iops_min", (int64_t)sample_min(&ds->iops));
	jint(b, dir, "iops_max", (int64_t)ds->iops.max);
	jdbl(b, dir, "iops_mean", ds->iops.mean);
	jdbl(b, dir, "iops_stddev", sample_stddev(&ds->iops));
	jint(b, dir, "iops_samples", (int64_t)ds->iops.n);
	/* blkring's: the mean wait of the ring's task-work completions, which
	 * the ring does not split by direction. */
	jdbl(b, dir, "tw_wait_ns",
	     ds->ios && r->st->tw_wait_nr ? (double)r->st->tw_wait_ns / (double)r->st->tw_wait_nr
	                                  : 0.0);
}

static void json_map(struct jb *b, json_object *job, const char *key, const char *const *keys,
                     const uint64_t *map, uint64_t total)
{
	json_object *m = jobj(b, job, key);

	for (unsigned i = 0; m && i < DEPTH_MAP_NR; i++)
		jdbl(b, m, keys[i], total ? 100.0 * (double)map[i] / (double)total : 0.0);
}

static void json_buckets(struct jb *b, json_object *job, const char *key, const double *pct,
                         unsigned nr)
{
	json_object *m = jobj(b, job, key);

	for (unsigned i = 0; m && i < nr; i++)
		jdbl(b, m, lat_bucket_keys[i], pct[i]);
}

static const char *const depth_keys[DEPTH_MAP_NR] = {"1", "2", "4", "8", "16", "32", ">=64"};
static const char *const batch_keys[DEPTH_MAP_NR] = {"0", "4", "8", "16", "32", "64", ">=64"};

static void json_sync(struct jb *b, json_object *job, const struct report *r)
{
	const struct job_stats *st = r->st;
	json_object *sync = jobj(b, job, "sync"), *l;

	if (!sync)
		return;
	jint(b, sync, "total_ios", (int64_t)st->sync_ios);
	l = json_lat(b, sync, "lat_ns", &st->sync_lat);
	if (l)
		json_percentiles(b, l, &st->sync_hist, &r->def->o.percentile_list);
}

/*
 * fio's three directions always (write zeroes when the job has it) and
 * sync; unified_rw_reporting=mixed has "mixed" alone, both has it last.
 */
static void json_dirs(struct jb *b, json_object *job, const struct report *r,
                      const struct group_summary *g)
{
	struct dir_view v;

	for (unsigned d = 0; !report_mixed_only(r) && d < BENCH_DDIR_NR; d++) {
		if (d >= FIO_DDIR_NR && !report_dir_used(r, d))
			continue;
		v = report_view(r, d);
		json_dir(b, job, r, &v, g->agg_bw[d]);
	}
	if (!report_mixed_only(r))
		json_sync(b, job, r);
	if (r->mixed) {
		v = report_mixed_view(r);
		json_dir(b, job, r, &v, g->agg_bw[DDIR_READ]);
	}
}

static void json_misc(struct jb *b, json_object *job, const struct report *r)
{
	const struct job_stats *st = r->st;
	struct lat_buckets lb;
	double usr, sys;

	jint(b, job, "job_runtime", (int64_t)(r->run_sum_ns / 1000000));
	report_cpu(r, &usr, &sys);
	jdbl(b, job, "usr_cpu", usr);
	jdbl(b, job, "sys_cpu", sys);
	jint(b, job, "ctx", (int64_t)st->ctx);
	jint(b, job, "majf", (int64_t)st->majf);
	jint(b, job, "minf", (int64_t)st->minf);
	json_map(b, job, "iodepth_level", depth_keys, st->depth_map, st->issued);
	json_map(b, job, "iodepth_submit", batch_keys, st->submit_map, st->submits);
	json_map(b, job, "iodepth_complete", batch_keys, st->complete_map, st->completes);
	lat_buckets(st, &lb);
	json_buckets(b, job, "latency_ns", lb.ns, LAT_NS_NR);
	json_buckets(b, job, "latency_us", lb.us, LAT_US_NR);
	json_buckets(b, job, "latency_ms", lb.ms, LAT_MS_NR);
	if (r->def->o.continue_on_error) {
		jint(b, job, "total_err", (int64_t)st->total_err);
		jint(b, job, "first_error", st->first_error);
	}
	/* fio's: the target in ns, the window in us; without a target the
	 * depth is iodepth. */
	jint(b, job, "latency_depth", st->latency_depth ?: r->def->o.iodepth);
	jint(b, job, "latency_target", (int64_t)(r->def->o.latency_target_us * 1000));
	jdbl(b, job, "latency_percentile", r->def->o.latency_percentile);
	jint(b, job, "latency_window", (int64_t)r->def->o.latency_window_us);
}

/* fio's ring order: from head once attained or while filling, else from
 * the sample before it. */
static void ss_array(struct jb *b, json_object *data, const char *key, const struct ss_result *ss,
                     const uint64_t *v)
{
	json_object *a = jadd(b, data, key, json_object_new_array());
	bool from_head = (ss->state & SS_ATTAINED) || !(ss->state & SS_BUFFER_FULL);
	unsigned first = from_head ? ss->head : ss->head ? ss->head - 1 : ss->dur - 1;

	for (unsigned i = 0; a && i < ss->dur; i++)
		if (json_object_array_add(a,
		                          json_object_new_int64((int64_t)v[(first + i) % ss->dur])))
			b->oom = true;
}

/* fio's "steadystate" block, its keys and formats. */
static void json_steadystate(struct jb *b, json_object *job, const struct ss_result *ss)
{
	json_object *o = jobj(b, job, "steadystate"), *data;
	const char *pct = ss->state & SS_PCT ? "%" : "";
	char text[64];

	if (!o)
		return;
	snprintf(text, sizeof(text), "%s%s:%f%s", ss->state & SS_IOPS ? "iops" : "bw",
	         ss->state & SS_SLOPE ? "_slope" : "", (float)ss->limit, pct);
	jstr(b, o, "ss", text);
	jint(b, o, "duration", ss->dur);
	jint(b, o, "attained", !!(ss->state & SS_ATTAINED));
	snprintf(text, sizeof(text), "%f%s", (float)ss->criterion, pct);
	jstr(b, o, "criterion", text);
	jdbl(b, o, "max_deviation", ss->deviation);
	jdbl(b, o, "slope", ss->slope);
	data = jobj(b, o, "data");
	if (!data)
		return;
	jint(b, data, "bw_mean", (int64_t)ss_mean(ss->bw, ss->dur));
	jint(b, data, "iops_mean", (int64_t)ss_mean(ss->iops, ss->dur));
	ss_array(b, data, "iops", ss, ss->iops);
	ss_array(b, data, "bw", ss, ss->bw);
}

static void json_job(struct jb *b, json_object *jobs, const struct report *r,
                     const struct group_summary *g, uint64_t elapsed_ns)
{
	json_object *job = json_object_new_object();

	if (!job || json_object_array_add(jobs, job)) {
		json_object_put(job);
		b->oom = true;
		return;
	}
	jstr(b, job, "jobname", r->def->o.name);
	jint(b, job, "groupid", r->groupid);
	jint(b, job, "error", r->st->error);
	jint(b, job, "eta", 0);
	/* fio's: the whole run's, in seconds rounded up. */
	jint(b, job, "elapsed", (int64_t)((elapsed_ns + 999999999) / 1000000000));
	json_kvlist(b, job, "job options", &r->def->given);
	json_dirs(b, job, r, g);
	json_misc(b, job, r);
	if (r->def->o.description[0])
		jstr(b, job, "desc", r->def->o.description);
	if (r->st->ss)
		json_steadystate(b, job, r->st->ss);
}

static json_object *json_build(struct jb *b, const struct report *r, unsigned nr,
                               const struct group_summary *groups, const struct bench_cfg *cfg,
                               time_t when, uint64_t elapsed_ns)
{
	json_object *root = json_object_new_object(), *jobs;
	char text[64];
	unsigned gi = 0;

	if (!root)
		return NULL;
	jstr(b, root, "blkring version", "blkring-" BLKRING_VERSION_STRING);
	jint(b, root, "timestamp", (int64_t)when);
	jint(b, root, "timestamp_ms", (int64_t)when * 1000);
	strftime(text, sizeof(text), "%a %b %e %H:%M:%S %Y", localtime(&when));
	jstr(b, root, "time", text);
	if (cfg->global_given.nr)
		json_kvlist(b, root, "global options", &cfg->global_given);
	jobs = jadd(b, root, "jobs", json_object_new_array());
	for (unsigned i = 0; jobs && i < nr; i++) {
		while (groups[gi].groupid != r[i].groupid)
			gi++;
		json_job(b, jobs, &r[i], &groups[gi], elapsed_ns);
	}
	return root;
}

int output_json(FILE *f, const struct report *r, unsigned nr, const struct bench_cfg *cfg,
                time_t when, uint64_t elapsed_ns)
{
	struct group_summary *groups = calloc(nr ? nr : 1, sizeof(*groups));
	struct jb b = {.plus = cfg->run.output_format & FORMAT_JSON_PLUS};
	json_object *root;
	unsigned nr_groups;
	int ret = 0;

	if (!groups)
		return -ENOMEM;
	group_summaries(r, nr, groups, &nr_groups);
	/* fio prints its floats with six decimals. */
	json_c_set_serialization_double_format("%.6f", JSON_C_OPTION_THREAD);
	root = json_build(&b, r, nr, groups, cfg, when, elapsed_ns);
	if (!root || b.oom)
		ret = -ENOMEM;
	else
		fprintf(f, "%s\n",
		        json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
		                                                 JSON_C_TO_STRING_SPACED |
		                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	free(groups);
	return ret;
}
