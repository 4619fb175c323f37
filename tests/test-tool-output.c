// SPDX-License-Identifier: MIT
/*
 * Output from known statistics: the JSON document has fio's keys with
 * fio's types and values that follow from the samples; the normal text has
 * fio's lines.
 */
#include <json-c/json.h>
#include <math.h>

#include "../tools/jobs.h"
#include "../tools/output.h"
#include "test.h"

struct fixture {
	struct bench_cfg cfg;
	struct job_def def;
	struct job_stats st[2];
	struct report r[2];
};

/* 1000 reads of 4 KiB in one second, clat i*100 ns, lat 50 ns more. */
static void fill(struct fixture *fx)
{
	struct job_stats *st = &fx->st[0];
	struct dir_stats *d = &st->dir[DDIR_READ];
	struct run_opts run;

	memset(fx, 0, sizeof(*fx));
	opts_defaults(&fx->def.o, &run);
	strcpy(fx->def.o.name, "job1");
	strcpy(fx->def.o.filename, "null:");
	fx->def.o.iodepth = 8;
	CHECK_EQ(kvlist_set(&fx->def.given, "rw", "read"), 0);
	CHECK_EQ(kvlist_set(&fx->cfg.global_given, "bs", "4k"), 0);
	job_stats_init(st);
	for (uint64_t i = 1; i <= 1000; i++) {
		lat_add(&d->clat, i * 100);
		lat_add(&d->lat, i * 100 + 50);
		hist_add(&d->clat_hist, i * 100);
		hist_add(&d->lat_hist, i * 100 + 50);
	}
	lat_add_n(&d->slat, 50, 1000);
	sample_add(&d->bw, 4000);
	sample_add(&d->iops, 1000);
	d->ios = 1000;
	d->bytes = 1000 * 4096;
	st->runtime_ns = 1000000000;
	st->depth_map[3] = 1000;
	st->issued = 1000;
	st->submit_map[1] = 250;
	st->submits = 250;
	st->complete_map[2] = 125;
	st->completes = 125;
	fx->r[0].st = st;
	fx->r[0].def = &fx->def;
	fx->r[0].nr_jobs = 1;
	fx->r[0].tid = 1234;
	fx->r[0].run_sum_ns = st->runtime_ns;
}

static json_object *render(struct fixture *fx, unsigned nr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_object *root;

	CHECK(f);
	CHECK_EQ(output_json(f, fx->r, nr, &fx->cfg, 1700000000, 1000000000), 0);
	fclose(f);
	root = json_tokener_parse(buf);
	if (!root)
		TEST_FAIL("not JSON: %s", buf);
	free(buf);
	return root;
}

static json_object *get(json_object *o, const char *key, json_type type)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		TEST_FAIL("no key '%s'", key);
	if (json_object_get_type(v) != type)
		TEST_FAIL("'%s' is a %s, fio has a %s", key,
		          json_type_to_name(json_object_get_type(v)), json_type_to_name(type));
	return v;
}

static void check_keys(json_object *o, const char *const *keys, json_type type)
{
	for (; *keys; keys++)
		get(o, *keys, type);
}

static void check_lat(json_object *dir, const char *key, bool percentiles)
{
	static const char *const ints[] = {"min", "max", "N", NULL};
	static const char *const dbls[] = {"mean", "stddev", NULL};
	json_object *l = get(dir, key, json_type_object), *p;

	check_keys(l, ints, json_type_int);
	check_keys(l, dbls, json_type_double);
	if (json_object_object_get_ex(l, "percentile", &p) != percentiles)
		TEST_FAIL("%s: percentile %s", key, percentiles ? "missing" : "unexpected");
}

static void check_dir(json_object *job, const char *name, bool clat_pct, bool lat_pct)
{
	static const char *const ints[] = {"io_bytes", "io_kbytes",    "bw_bytes",   "bw",
	                                   "runtime",  "total_ios",    "short_ios",  "drop_ios",
	                                   "bw_min",   "bw_max",       "bw_samples", "iops_min",
	                                   "iops_max", "iops_samples", NULL};
	static const char *const dbls[] = {"iops",      "bw_agg",      "bw_mean", "bw_dev",
	                                   "iops_mean", "iops_stddev", NULL};
	json_object *dir = get(job, name, json_type_object);

	check_keys(dir, ints, json_type_int);
	check_keys(dir, dbls, json_type_double);
	check_lat(dir, "slat_ns", false);
	check_lat(dir, "clat_ns", clat_pct);
	check_lat(dir, "lat_ns", lat_pct);
}

static void test_json_keys(void)
{
	static const char *const job_ints[] = {
	    "groupid", "error", "eta",           "elapsed",        "job_runtime",    "ctx",
	    "majf",    "minf",  "latency_depth", "latency_target", "latency_window", NULL};
	static const char *const job_dbls[] = {"usr_cpu", "sys_cpu", "latency_percentile", NULL};
	static const char *const job_objs[] = {
	    "job options", "iodepth_level", "iodepth_submit", "iodepth_complete",
	    "latency_ns",  "latency_us",    "latency_ms",     NULL};
	struct fixture fx;
	json_object *root, *jobs, *job, *sync;

	fill(&fx);
	root = render(&fx, 1);
	CHECK(!strcmp(json_object_get_string(get(root, "blkring version", json_type_string)),
	              "blkring-" BLKRING_VERSION_STRING));
	CHECK_EQ(json_object_get_int64(get(root, "timestamp", json_type_int)), 1700000000);
	get(root, "timestamp_ms", json_type_int);
	get(root, "time", json_type_string);
	get(get(root, "global options", json_type_object), "bs", json_type_string);
	jobs = get(root, "jobs", json_type_array);
	CHECK_EQ(json_object_array_length(jobs), 1);
	job = json_object_array_get_idx(jobs, 0);
	CHECK(!strcmp(json_object_get_string(get(job, "jobname", json_type_string)), "job1"));
	check_keys(job, job_ints, json_type_int);
	check_keys(job, job_dbls, json_type_double);
	check_keys(job, job_objs, json_type_object);
	CHECK(!json_object_object_get_ex(job, "total_err", NULL));
	check_dir(job, "read", true, false);
	/* directions without samples have no percentiles, as in fio */
	check_dir(job, "write", false, false);
	check_dir(job, "trim", false, false);
	sync = get(job, "sync", json_type_object);
	get(sync, "total_ios", json_type_int);
	check_lat(sync, "lat_ns", false);
	json_object_put(root);
	kvlist_free(&fx.def.given);
	kvlist_free(&fx.cfg.global_given);
}

static int64_t jint(json_object *o, const char *path)
{
	char buf[128], *save, *key;
	json_object *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (key = strtok_r(buf, "/", &save); key; key = strtok_r(NULL, "/", &save))
		if (!json_object_object_get_ex(v, key, &v))
			TEST_FAIL("no %s", path);
	return json_object_get_int64(v);
}

static double jdbl(json_object *o, const char *path)
{
	char buf[128], *save, *key;
	json_object *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (key = strtok_r(buf, "/", &save); key; key = strtok_r(NULL, "/", &save))
		if (!json_object_object_get_ex(v, key, &v))
			TEST_FAIL("no %s", path);
	return json_object_get_double(v);
}

static void test_json_values(void)
{
	struct fixture fx;
	json_object *root, *job;

	fill(&fx);
	fx.def.o.lat_percentiles = true;
	fx.def.o.continue_on_error = COE_READ;
	fx.r[0].st->total_err = 3;
	fx.r[0].st->first_error = 5;
	root = render(&fx, 1);
	job = json_object_array_get_idx(get(root, "jobs", json_type_array), 0);
	CHECK_EQ(jint(job, "read/io_bytes"), 4096000);
	CHECK_EQ(jint(job, "read/io_kbytes"), 4000);
	CHECK_EQ(jint(job, "read/bw_bytes"), 4096000);
	CHECK_EQ(jint(job, "read/bw"), 4000);
	CHECK(jdbl(job, "read/iops") == 1000.0);
	CHECK_EQ(jint(job, "read/runtime"), 1000);
	CHECK_EQ(jint(job, "read/total_ios"), 1000);
	CHECK_EQ(jint(job, "write/runtime"), 0);
	CHECK_EQ(jint(job, "read/clat_ns/min"), 100);
	CHECK_EQ(jint(job, "read/clat_ns/max"), 100000);
	CHECK(jdbl(job, "read/clat_ns/mean") == 50050.0);
	CHECK(fabs(jdbl(job, "read/clat_ns/stddev") - 28881.943) < 0.01);
	CHECK_EQ(jint(job, "read/clat_ns/N"), 1000);
	/* the 500th sample, 50000 ns, is in [49664, 50176): its middle */
	CHECK_EQ(jint(job, "read/clat_ns/percentile/50.000000"), 49920);
	CHECK_EQ(jint(job, "read/clat_ns/percentile/99.990000"), 99840);
	/* the 10th total latency, 1050 ns, is in [1040, 1056) */
	CHECK_EQ(jint(job, "read/lat_ns/percentile/1.000000"), 1048);
	CHECK_EQ(jint(job, "read/slat_ns/N"), 1000);
	CHECK_EQ(jint(job, "read/slat_ns/max"), 50);
	CHECK(jdbl(job, "read/bw_agg") == 100.0);
	CHECK(jdbl(job, "iodepth_level/8") == 100.0);
	CHECK(jdbl(job, "iodepth_submit/4") == 100.0);
	CHECK(jdbl(job, "iodepth_complete/8") == 100.0);
	CHECK_EQ(jint(job, "total_err"), 3);
	CHECK_EQ(jint(job, "first_error"), 5);
	CHECK_EQ(jint(job, "latency_depth"), 8);
	CHECK_EQ(jint(job, "elapsed"), 1);
	json_object_put(root);
	kvlist_free(&fx.def.given);
	kvlist_free(&fx.cfg.global_given);
}

static void test_normal(void)
{
	static const char *const lines[] = {
	    "job1: (groupid=0, jobs=1): err= 0: pid=1234: ",
	    "  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(4000KiB/1000msec)\n",
	    "    slat (nsec): min=50, max=50, avg=50.00, stdev=0.00\n",
	    "    clat (nsec): min=100, max=100000, avg=50050.00, stdev=28881.94\n",
	    "     lat (nsec): min=150, max=100050, avg=50100.00, stdev=28881.94\n",
	    "    clat percentiles (nsec):\n",
	    "     |  1.00th=[ 1004],  5.00th=[ 5024], 10.00th=[10048], 20.00th=[20096],\n",
	    "     | 99.99th=[99840]\n",
	    "   bw (  KiB/s): min= 4000, max= 4000, per=100.00%, avg=4000.00, stdev= 0.00, "
	    "samples=1\n",
	    "  IO depths    : 1=0.0%, 2=0.0%, 4=0.0%, 8=100.0%, 16=0.0%, 32=0.0%, >=64=0.0%\n",
	    "     issued rwts: total=1000,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n",
	    "Run status group 0 (all jobs):\n",
	    "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), "
	    "io=4000KiB (4096kB), run=1000-1000msec\n",
	    NULL,
	};
	struct fixture fx;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fill(&fx);
	CHECK_EQ(output_normal(f, fx.r, 1), 0);
	fclose(f);
	for (const char *const *l = lines; *l; l++)
		if (!strstr(buf, *l))
			TEST_FAIL("no line '%s' in:\n%s", *l, buf);
	CHECK(!strstr(buf, "WRITE:"));
	free(buf);
	kvlist_free(&fx.def.given);
	kvlist_free(&fx.cfg.global_given);
}

/* Two reports of two groups: per-group lines, and each job's group id. */
static void test_groups(void)
{
	struct fixture fx;
	json_object *root, *jobs;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fill(&fx);
	fx.st[1] = fx.st[0];
	fx.r[1] = fx.r[0];
	fx.r[1].st = &fx.st[1];
	fx.r[1].groupid = 1;
	fx.st[1].runtime_ns = 2000000000;
	fx.r[1].run_sum_ns = 2000000000;
	root = render(&fx, 2);
	jobs = get(root, "jobs", json_type_array);
	CHECK_EQ(json_object_array_length(jobs), 2);
	CHECK_EQ(jint(json_object_array_get_idx(jobs, 1), "groupid"), 1);
	CHECK_EQ(jint(json_object_array_get_idx(jobs, 1), "read/bw_bytes"), 2048000);
	json_object_put(root);
	f = open_memstream(&buf, &len);
	CHECK_EQ(output_normal(f, fx.r, 2), 0);
	fclose(f);
	CHECK(strstr(buf, "Run status group 0 (all jobs):\n   READ: bw=4000KiB/s"));
	CHECK(strstr(buf, "Run status group 1 (all jobs):\n   READ: bw=2000KiB/s"));
	free(buf);
	kvlist_free(&fx.def.given);
	kvlist_free(&fx.cfg.global_given);
}

static const struct test_case cases[] = {
    {"json_keys", test_json_keys, 0},
    {"json_values", test_json_values, 0},
    {"normal", test_normal, 0},
    {"groups", test_groups, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
