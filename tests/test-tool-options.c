// SPDX-License-Identifier: MIT
/* The bench's option table: defaults, every value parser, every error text. */
#include <errno.h>
#include <unistd.h>

#include "../tools/clock.h"
#include "../tools/engine.h"
#include "../tools/error.h"
#include "../tools/job.h"
#include "../tools/options.h"
#include "../tools/verify.h"
#include "test.h"

static struct job_opts o;
static struct run_opts r;

static void set_ok(const char *name, const char *val)
{
	int ret = opt_set(&o, &r, name, val, "here", true, false);

	if (ret)
		TEST_FAIL("%s=%s: %d (%s)", name, val ? val : "(bare)", ret, tool_last_error());
}

/* Expects -EINVAL and the fragments in the message, which starts at the place. */
static void set_fails(const char *name, const char *val, bool cmdline, bool in_job,
                      const char *frag1, const char *frag2)
{
	int ret = opt_set(&o, &r, name, val, "job.fio:7", cmdline, in_job);
	const char *msg = tool_last_error();

	if (ret != -EINVAL)
		TEST_FAIL("%s=%s: %d, expected -EINVAL", name, val ? val : "(bare)", ret);
	if (strncmp(msg, "job.fio:7: ", 11) || !strstr(msg, frag1) ||
	    (frag2 && !strstr(msg, frag2)))
		TEST_FAIL("%s=%s: message '%s' lacks the place, '%s' or '%s'", name,
		          val ? val : "(bare)", msg, frag1, frag2 ? frag2 : "");
}

static void test_defaults(void)
{
	opts_defaults(&o, &r);
	CHECK(o.ioengine->engine == &engine_blkring);
	CHECK(!strcmp(rw_modes[o.rw.mode].name, "read"));
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		CHECK_EQ(o.bs[d], 4096);
	CHECK_EQ(o.iodepth, 1);
	CHECK_EQ(o.iodepth_batch_submit, 1);
	CHECK_EQ(o.iodepth_batch_complete_min, 1);
	CHECK_EQ(o.iodepth_batch_complete_max, 0);
	CHECK_EQ(o.numjobs, 1);
	CHECK(o.randrepeat);
	CHECK_EQ(o.randseed, 0xb1899bed);
	CHECK_EQ(o.rwmixread, 50);
	CHECK(!o.direct && !o.time_based && !o.norandommap && !o.stonewall);
	CHECK_EQ(o.continue_on_error, 0);
	CHECK_EQ(o.percentile_list.nr, 17);
	CHECK(o.percentile_list.p[0] == 1.0 && o.percentile_list.p[16] == 99.99);
	CHECK_EQ(r.output_format, FORMAT_NORMAL);
	CHECK_EQ(r.clocksource, CLOCK_SRC_CPU);
	CHECK_EQ(CPU_COUNT(&o.cpus_allowed), 0);
	for (unsigned i = 0; i < bench_nr_opts; i++)
		CHECK_EQ(o.set[i], 0);
}

static void test_sizes(void)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} ok[] = {
	    {"4096", 4096},
	    {"4k", 4096},
	    {"4K", 4096},
	    {"4Ki", 4096},
	    {"4kb", 4096},
	    {"1m", 1 << 20},
	    {"2g", 2ULL << 30},
	    {"1t", 1ULL << 40},
	    {"1p", 1ULL << 50},
	    {"0x1000", 4096},
	    {"512b", 512},
	    /* fio's kb_base=1024 takes the IEC spellings as decimal. */
	    {"4KiB", 4000},
	    {"1mib", 1000000},
	};

	opts_defaults(&o, &r);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		set_ok("size", ok[i].text);
		if (o.size.bytes != ok[i].bytes || o.size.pct)
			TEST_FAIL("size=%s gave %llu", ok[i].text,
			          (unsigned long long)o.size.bytes);
	}
	/* kb_base=1000, for the sizes after it: k decimal, KiB binary. */
	set_ok("kb_base", "1000");
	set_ok("size", "4k");
	CHECK_EQ(o.size.bytes, 4000);
	set_ok("size", "4KiB");
	CHECK_EQ(o.size.bytes, 4096);
	set_ok("size", "2g");
	CHECK_EQ(o.size.bytes, 2000000000);
	set_ok("kb_base", "1024");
	set_ok("size", "50%");
	CHECK_EQ(o.size.pct, 50);
	set_ok("offset", "100%");
	CHECK_EQ(o.offset.pct, 100);
	set_fails("size", "4q", true, true, "option 'size'", "'4q' is not a size");
	set_fails("size", "k", true, true, "'k' is not a size", NULL);
	set_fails("size", "-1", true, true, "'-1' is not a size", NULL);
	set_fails("size", "0", true, true, "'0' is out of range", NULL);
	set_fails("size", "0%", true, true, "'0%' is not a percentage", NULL);
	set_fails("size", "101%", true, true, "'101%' is not a percentage", NULL);
	set_fails("size", "99999999999t", true, true, "is not a size", NULL);
	set_fails("bs", "0", true, true, "option 'bs'", "'0' is out of range");
	set_fails("bs", "4k,8k,16k,32k", true, true, "more than 3 sizes", NULL);
}

static void test_bs_per_direction(void)
{
	opts_defaults(&o, &r);
	set_ok("bs", "8k");
	CHECK(o.bs[DDIR_READ] == 8192 && o.bs[DDIR_WRITE] == 8192 && o.bs[DDIR_TRIM] == 8192);
	/* fio: a direction without a value takes the last one given */
	set_ok("bs", "4k,16k");
	CHECK(o.bs[DDIR_READ] == 4096 && o.bs[DDIR_WRITE] == 16384 && o.bs[DDIR_TRIM] == 16384);
	set_ok("blocksize", "1k,2k,3k");
	CHECK(o.bs[DDIR_READ] == 1024 && o.bs[DDIR_WRITE] == 2048 && o.bs[DDIR_TRIM] == 3072);
	CHECK(opt_is_set(&o, "bs"));
	/* fio 3.33: an empty entry leaves its direction as it was; the last
	 * entry given also sets the ones after it. */
	set_ok("bs", "4k");
	set_ok("bs", "8k,,16k");
	CHECK(o.bs[DDIR_READ] == 8192 && o.bs[DDIR_WRITE] == 4096 && o.bs[DDIR_TRIM] == 16384);
	CHECK_EQ(o.bs[DDIR_ZERO], 16384);
	set_ok("bs", "4k");
	set_ok("bs", ",8k");
	CHECK(o.bs[DDIR_READ] == 4096 && o.bs[DDIR_WRITE] == 8192 && o.bs[DDIR_TRIM] == 8192);
	set_ok("bs", "16k,,");
	CHECK(o.bs[DDIR_READ] == 16384 && o.bs[DDIR_WRITE] == 8192 && o.bs[DDIR_TRIM] == 8192);
	set_fails("bs", "", true, true, "'' is not a size", NULL);
	set_fails("bs", "4k,,,", true, true, "more than 3 sizes", NULL);
	set_fails("bs", "4k,x", true, true, "'x' is not a size", NULL);
}

static void test_times(void)
{
	static const struct {
		const char *text;
		uint64_t us;
	} ok[] = {
	    {"10", 10000000ULL},    {"10s", 10000000ULL}, {"500ms", 500000ULL},
	    {"250us", 250ULL},      {"2m", 120000000ULL}, {"1h", 3600000000ULL},
	    {"1d", 86400000000ULL}, {"3sec", 3000000ULL}, {"0", 0},
	};

	opts_defaults(&o, &r);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		set_ok("runtime", ok[i].text);
		if (o.runtime_us != ok[i].us)
			TEST_FAIL("runtime=%s gave %llu us", ok[i].text,
			          (unsigned long long)o.runtime_us);
	}
	set_ok("timeout", "5");
	CHECK_EQ(o.runtime_us, 5000000);
	set_ok("ramp_time", "100ms");
	CHECK_EQ(o.ramp_time_us, 100000);
	set_fails("runtime", "10x", true, true, "option 'runtime'", "'10x' is not a time");
	set_fails("ramp_time", "1.5", true, true, "'1.5' is not a time", NULL);
	/* The longest time whose nanoseconds fit, and past it (it used to wrap). */
	set_ok("runtime", "106751d");
	CHECK_EQ(o.runtime_us, 106751ULL * 86400000000ULL);
	set_fails("runtime", "18446744073709551615us", true, true, "option 'runtime'",
	          "'18446744073709551615us' is too long (at most 106751d, about 292 years)");
	set_fails("runtime", "9223286400000001us", true, true, "is too long", NULL);
	set_fails("ramp_time", "106752d", true, true, "option 'ramp_time'",
	          "'106752d' is too long");
	set_fails("ramp_time", "999999999999h", true, true, "is too long", NULL);
}

static void test_bools_and_numbers(void)
{
	opts_defaults(&o, &r);
	set_ok("time_based", NULL);
	CHECK(o.time_based);
	set_ok("time_based", "0");
	CHECK(!o.time_based);
	set_ok("norandommap", "1");
	CHECK(o.norandommap);
	set_ok("iodepth", "128");
	CHECK_EQ(o.iodepth, 128);
	CHECK_EQ(o.iodepth_batch_submit, 1); /* unsigned: the next field untouched */
	set_ok("iodepth_batch", "16");
	CHECK_EQ(o.iodepth_batch_submit, 16);
	set_ok("iodepth_batch_complete", "4");
	CHECK_EQ(o.iodepth_batch_complete_min, 4);
	set_ok("randseed", "0x1234");
	CHECK_EQ(o.randseed, 0x1234);
	set_ok("randseed", "0xfedcba9876543210"); /* uint64_t: all 64 bits */
	CHECK(o.randseed == 0xfedcba9876543210ULL);
	set_ok("rwmixwrite", "30");
	CHECK_EQ(o.rwmixread, 70);
	set_ok("wait_for_previous", NULL);
	CHECK(o.stonewall);
	set_fails("time_based", "yes", true, true, "option 'time_based'", "'yes' is not 0 or 1");
	set_fails("iodepth", "0", true, true, "option 'iodepth'", "'0' is out of range (1 to");
	set_ok("iodepth", "4k"); /* fio's numbers take size suffixes */
	CHECK_EQ(o.iodepth, 4096);
	set_ok("rwmixread", "70%");
	CHECK_EQ(o.rwmixread, 70);
	set_ok("rwmixwrite", "20%");
	CHECK_EQ(o.rwmixread, 80);
	set_ok("threads", "1");
	CHECK(o.thread);
	set_ok("fileoffset", "8k");
	CHECK_EQ(o.offset.bytes, 8192);
	set_fails("iodepth", "4q", true, true, "'4q' is not a whole number", NULL);
	set_fails("rwmixread", "70%%", true, true, "'70%%' is not a percentage", NULL);
	set_fails("rwmixread", "101", true, true, "'101' is not a percentage (0 to 100", NULL);
	set_fails("numjobs", "", true, true, "'' is not a whole number", NULL);
	set_fails("iodepth", NULL, true, true, "option 'iodepth' needs a value", "iodepth=N");
}

static void test_choices(void)
{
	opts_defaults(&o, &r);
	set_ok("rw", "randrw");
	CHECK(rw_modes[o.rw.mode].random && rw_modes[o.rw.mode].ddirs == 3);
	set_ok("readwrite", "readwrite");
	CHECK(!rw_modes[o.rw.mode].random && rw_modes[o.rw.mode].ddirs == 3);
	set_ok("rw", "randwrite");
	CHECK(rw_modes[o.rw.mode].random && rw_modes[o.rw.mode].ddirs == 1U << DDIR_WRITE);
	set_ok("ioengine", "sync");
	CHECK(o.ioengine->engine == &engine_sync);
	set_fails("rw", "trimwrite", true, true, "option 'rw'",
	          "'trimwrite' is not one of read, write, randread");
	set_fails("ioengine", "spdk", true, true,
	          "'spdk' is not one of blkring, sync, io_uring, libaio, posixaio, psync", NULL);
	/* fio's engine names, each run by one of blkring's */
	set_ok("ioengine", "libaio");
	CHECK(o.ioengine->engine == &engine_blkring && !strcmp(o.ioengine->name, "libaio"));
	set_ok("ioengine", "pvsync2");
	CHECK(o.ioengine->engine == &engine_sync);
	set_ok("ioengine", "null");
	CHECK(o.ioengine->engine == &engine_blkring && o.ioengine->dev == ENGINE_DEV_NULL);
	set_ok("ioengine", "nbd");
	CHECK(o.ioengine->engine == &engine_blkring && o.ioengine->dev == ENGINE_DEV_NBD);
	set_ok("ioengine", "rbd");
	CHECK(o.ioengine->engine == &engine_blkring && o.ioengine->dev == ENGINE_DEV_RBD);
	set_ok("uri", "nbd+unix:///?socket=/tmp/s");
	CHECK_EQ(strcmp(o.uri, "nbd+unix:///?socket=/tmp/s"), 0);
	/* a kernel engine's option without a meaning here: any value */
	set_ok("registerfiles", "1");
	set_ok("cmdprio_percentage", "50");
	CHECK(opt_is_set(&o, "registerfiles"));
	set_ok("output-format", "json");
	CHECK_EQ(r.output_format, FORMAT_JSON);
	set_fails("output-format", "xml", true, false,
	          "'xml' is not one of normal, json, json+, terse", NULL);
	set_ok("output-format", "json,normal");
	CHECK_EQ(r.output_format, FORMAT_JSON | FORMAT_NORMAL);
	set_ok("output-format", "terse");
	CHECK_EQ(r.output_format, FORMAT_TERSE);
	set_ok("output-format", "json+");
	CHECK_EQ(r.output_format, FORMAT_JSON | FORMAT_JSON_PLUS);
	set_ok("terse-version", "3");
	set_fails("terse-version", "4", true, false,
	          "'4': blkring writes fio's terse version 3 only", NULL);
	set_ok("clocksource", "clock_gettime");
	CHECK_EQ(r.clocksource, CLOCK_SRC_GETTIME);
	set_fails("clocksource", "gettimeofday", true, false, "is not one of cpu, clock_gettime",
	          NULL);
}

/* A job whose first error is in already, so that another one only stops it. */
static void erring_job(struct job *j, struct job_stats *st)
{
	static struct job_file file = {.name = "null:", .len = 4096};

	memset(st, 0, sizeof(*st));
	st->error = EIO;
	*j = (struct job){.o = &o, .st = st, .files = &file, .nr_files = 1};
}

/* Whether the job goes on after a failed read or write, as job.c decides. */
static bool goes_on_after_io(unsigned ddir)
{
	static struct job_stats st;
	struct io_unit io = {.len = 4096, .ddir = (uint8_t)ddir};
	struct job j;

	erring_job(&j, &st);
	job_complete(&j, &io, -EIO, 0, 0, 0);
	return !j.draining;
}

/* A sync engine whose I/O ends as it is submitted, leaving the buffer as it was. */
static int ended_at_once(struct job *j, struct io_unit **ios, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		j->free[j->nr_free++] = ios[i];
	return 0;
}

/* Whether the job goes on after a block fails its check, as verify.c decides. */
static bool goes_on_after_verify(void)
{
	static const struct bench_engine engine = {
	    .name = "test", .sync = true, .submit = ended_at_once};
	static struct job_stats st;
	static char block[4096]; /* zeros: no verify header */
	struct io_unit io = {.len = sizeof(block), .ddir = DDIR_READ, .buf = block}, *ios = &io;
	struct io_unit *free[1];
	struct job j;
	bool on;

	erring_job(&j, &st);
	j.engine = &engine;
	j.ddirs = 1U << DDIR_READ;
	j.bs[DDIR_READ] = sizeof(block);
	j.free = free;
	/* Without verify_fatal a job checks on and fails at its end, whatever
	 * continue_on_error says: with it, continue_on_error decides. */
	o.verify_fatal = true;
	CHECK_EQ(verify_setup(&j), 0);
	CHECK_EQ(j.engine->submit(&j, &ios, 1), 0);
	on = !j.draining;
	verify_teardown(&j);
	o.verify_fatal = false;
	return on;
}

/* Each value as fio documents it, checked by what a job then does, not by
 * the bits options.c stores. */
static void test_continue_on_error(void)
{
	static const struct {
		const char *text;
		bool read, write, verify; /* goes on after such an error */
	} kinds[] = {
	    {"none", false, false, false}, {"0", false, false, false},
	    {"read", true, false, false},  {"write", false, true, false},
	    {"io", true, true, false},     {"verify", false, false, true},
	    {"all", true, true, true},     {"1", true, true, true},
	};

	opts_defaults(&o, &r);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		set_ok("continue_on_error", kinds[i].text);
		if (goes_on_after_io(DDIR_READ) != kinds[i].read ||
		    goes_on_after_io(DDIR_WRITE) != kinds[i].write ||
		    goes_on_after_verify() != kinds[i].verify)
			TEST_FAIL(
			    "continue_on_error=%s: goes on after read %d, write %d, verify %d",
			    kinds[i].text, goes_on_after_io(DDIR_READ),
			    goes_on_after_io(DDIR_WRITE), goes_on_after_verify());
	}
	set_fails("continue_on_error", "some", true, true,
	          "'some' is not one of none, read, write, io, verify, all", NULL);
}

static void test_percentiles(void)
{
	opts_defaults(&o, &r);
	set_ok("percentile_list", "99.9:50:1");
	CHECK_EQ(o.percentile_list.nr, 3);
	CHECK(o.percentile_list.p[0] == 1.0 && o.percentile_list.p[1] == 50.0 &&
	      o.percentile_list.p[2] == 99.9);
	set_ok("percentile_list", "100");
	CHECK_EQ(o.percentile_list.nr, 1);
	set_fails("percentile_list", "0:50", true, true, "is not a list of percentiles", NULL);
	set_fails("percentile_list", "50:100.5", true, true, "is not a list of percentiles", NULL);
	set_fails("percentile_list", "50,60", true, true, "is not a list of percentiles", NULL);
	set_fails("percentile_list", "1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20:21", true,
	          true, "more than 20 percentiles", NULL);
	/* a failed parse leaves the previous list */
	CHECK_EQ(o.percentile_list.nr, 1);
}

static void test_cpus(void)
{
	long nr = sysconf(_SC_NPROCESSORS_CONF);
	char text[32];

	opts_defaults(&o, &r);
	set_ok("cpus_allowed", "0");
	CHECK(CPU_ISSET(0, &o.cpus_allowed) && CPU_COUNT(&o.cpus_allowed) == 1);
	snprintf(text, sizeof(text), "0-%ld", nr - 1);
	set_ok("cpus_allowed", text);
	CHECK_EQ(CPU_COUNT(&o.cpus_allowed), nr);
	snprintf(text, sizeof(text), "0,%ld", nr);
	set_fails("cpus_allowed", text, true, true, "does not exist", NULL);
	set_fails("cpus_allowed", "1-0", true, true, "is not a CPU list", NULL);
	set_fails("cpus_allowed", "a", true, true, "is not a CPU list", NULL);
}

static void test_strings(void)
{
	char long_name[BENCH_NAME_MAX + 8];

	opts_defaults(&o, &r);
	set_ok("filename", "null:irqmode=none");
	CHECK(!strcmp(o.filename, "null:irqmode=none"));
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	set_fails("name", long_name, true, true, "longer than 255 characters", NULL);
	set_fails("filename", "", true, true, "the value is empty", NULL);
}

static void test_places(void)
{
	opts_defaults(&o, &r);
	set_fails("bogus", "1", true, true, "unknown option 'bogus'", "blkring bench --help");
	set_fails("verify_async", "2", true, true,
	          "option 'verify_async' is a fio option blkring does not support", NULL);
	set_fails("blockalign", NULL, false, true, "a fio option blkring does not support", NULL);
	set_fails("output", "x.txt", false, false, "'output' is taken on the command line only",
	          NULL);
	set_fails("output-format", "json", false, false, "on the command line only", NULL);
	set_fails("clocksource", "cpu", false, true, "'clocksource' applies to the whole run",
	          "[global]");
	/* whole-run options are fine in [global] */
	CHECK_EQ(opt_set(&o, &r, "clocksource", "cpu", "f:1", false, false), 0);
}

static void test_set_marks(void)
{
	opts_defaults(&o, &r);
	CHECK(!opt_is_set(&o, "direct"));
	set_ok("direct", "1");
	CHECK(opt_is_set(&o, "direct"));
	CHECK(!opt_is_set(&o, "randseed"));
	CHECK(!opt_is_set(&o, "no_such_option"));
}

static void test_help(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned lines = 0;

	CHECK(f);
	opts_help(f);
	fclose(f);
	/* one line per option, each naming it and saying what it does */
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		const struct bench_opt *opt = &bench_opts[lines++];
		char want[64];

		snprintf(want, sizeof(want), "  --%s=", opt->name);
		if (strncmp(line, want, strlen(want)) || !strstr(line, opt->help))
			TEST_FAIL("help line '%s' is not about %s", line, opt->name);
	}
	CHECK_EQ(lines, bench_nr_opts);
	free(buf);
}

/* A job's ring defers task work unless taskrun= says otherwise or it has an
 * SQ thread, as fio's io_uring engine asks of the kernel. */
static unsigned taskrun_flags(const char *sqthread_poll, const char *taskrun)
{
	struct blkring_params p;

	opts_defaults(&o, &r);
	if (sqthread_poll)
		set_ok("sqthread_poll", sqthread_poll);
	if (taskrun)
		set_ok("taskrun", taskrun);
	engine_blkring_params(&o, &p);
	return p.flags & (BLKRING_SETUP_DEFER_TASKRUN | BLKRING_SETUP_SQPOLL);
}

static void test_taskrun_default(void)
{
	CHECK_EQ(taskrun_flags(NULL, NULL), BLKRING_SETUP_DEFER_TASKRUN);
	CHECK_EQ(taskrun_flags("1", NULL), BLKRING_SETUP_SQPOLL);
	CHECK_EQ(taskrun_flags(NULL, "normal"), 0);
	CHECK_EQ(taskrun_flags("1", "defer"), BLKRING_SETUP_SQPOLL | BLKRING_SETUP_DEFER_TASKRUN);
	CHECK_EQ(taskrun_flags("0", "defer"), BLKRING_SETUP_DEFER_TASKRUN);
}

static const struct test_case cases[] = {
    {"defaults", test_defaults, 0},
    {"sizes", test_sizes, 0},
    {"bs_per_direction", test_bs_per_direction, 0},
    {"times", test_times, 0},
    {"bools_and_numbers", test_bools_and_numbers, 0},
    {"choices", test_choices, 0},
    {"continue_on_error", test_continue_on_error, 0},
    {"percentiles", test_percentiles, 0},
    {"cpus", test_cpus, 0},
    {"strings", test_strings, 0},
    {"places", test_places, 0},
    {"set_marks", test_set_marks, 0},
    {"help", test_help, 0},
    {"taskrun_default", test_taskrun_default, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
