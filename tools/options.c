// SPDX-License-Identifier: MIT
/* The option table and its value parsers. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "blkring.h"
#include "lib/error.h"
#include "options.h"

const char *const ddir_names[BENCH_DDIR_NR] = {"read", "write", "trim", "zero"};

#define R (1U << DDIR_READ)
#define W (1U << DDIR_WRITE)
#define T (1U << DDIR_TRIM)
#define Z (1U << DDIR_ZERO)
const struct rw_mode rw_modes[] = {
    {"read", R, false},      {"write", W, false},   {"randread", R, true},
    {"randwrite", W, true},  {"rw", R | W, false},  {"readwrite", R | W, false},
    {"randrw", R | W, true}, {"trim", T, false},    {"randtrim", T, true},
    {"zero", Z, false},      {"randzero", Z, true}, {NULL, 0, false},
};
#undef R
#undef W
#undef T
#undef Z

static const char *const engine_names[] = {"blkring", "sync", NULL};
static const char *const format_names[] = {"normal", "json", "json+", NULL};
static const char *const clock_names[] = {"cpu", "clock_gettime", NULL};
static const char *const taskrun_names[] = {"normal", "defer", NULL};
static const char *const verify_names[] = {"0", "crc32c", NULL};
const char *const poll_strategy_names[] = {"all", "cookie", NULL};

/* ---- value parsers: each explains what it expected ---- */

static int parse_u64(const char *s, uint64_t *out, char **end)
{
	int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, end, base);
	return errno ? -ERANGE : 0;
}

static int mul_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

/* fio's sizes: k, m, g, t, p are powers of 1024, with optional i and b. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmgtp";
	uint64_t v, mult = 1;
	char *end;
	const char *u;

	if (parse_u64(s, &v, &end))
		return -EINVAL;
	if (*end && (u = strchr(units, tolower((unsigned char)*end)))) {
		for (long i = 0; i <= u - units; i++)
			mult *= 1024;
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || mul_overflows(v, mult, out))
		return -EINVAL;
	return 0;
}

static int check_range(const struct bench_opt *opt, const char *val, uint64_t v)
{
	if (v < opt->min || v > opt->max)
		return blkring__error(-EINVAL, "'%s' is out of range (%" PRIu64 " to %" PRIu64 ")",
		                      val, opt->min, opt->max);
	return 0;
}

static int opt_uint(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v;
	char *end;

	if (parse_u64(val, &v, &end) || *end)
		return blkring__error(-EINVAL, "'%s' is not a whole number", val);
	if (check_range(opt, val, v))
		return -EINVAL;
	*(unsigned *)field = (unsigned)v;
	return 0;
}

static int opt_u64(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v;
	char *end;

	if (parse_u64(val, &v, &end) || *end)
		return blkring__error(-EINVAL, "'%s' is not a whole number", val);
	if (check_range(opt, val, v))
		return -EINVAL;
	*(uint64_t *)field = v;
	return 0;
}

static int opt_bool(const struct bench_opt *opt, const char *val, void *field)
{
	(void)opt;
	if (strcmp(val, "0") && strcmp(val, "1"))
		return blkring__error(-EINVAL, "'%s' is not 0 or 1", val);
	*(bool *)field = val[0] == '1';
	return 0;
}

static int size_error(const char *val)
{
	return blkring__error(
	    -EINVAL, "'%s' is not a size (bytes, with an optional k, m, g, t or p suffix)", val);
}

static int opt_size(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v;

	if (parse_size(val, &v))
		return size_error(val);
	if (check_range(opt, val, v))
		return -EINVAL;
	*(uint64_t *)field = v;
	return 0;
}

/* A size, or N% of the device. */
static int opt_size_pct(const struct bench_opt *opt, const char *val, void *field)
{
	struct size_pct *sp = field;
	size_t len = strlen(val);

	if (len > 1 && val[len - 1] == '%') {
		char num[32];
		uint64_t v;
		char *end;

		if (len >= sizeof(num))
			return size_error(val);
		memcpy(num, val, len - 1);
		num[len - 1] = '\0';
		if (parse_u64(num, &v, &end) || *end || v < 1 || v > 100)
			return blkring__error(-EINVAL, "'%s' is not a percentage from 1%% to 100%%",
			                      val);
		sp->pct = (unsigned)v;
		sp->bytes = 0;
		return 0;
	}
	sp->pct = 0;
	return opt_size(opt, val, &sp->bytes);
}

/*
 * bs=R[,W[,T]]: a direction without its own value takes the last one given;
 * write zeroes, which fio does not have, takes the trim size.
 */
static int opt_bs(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t *bs = field, v = 0;
	const char *p = val;
	char part[64];

	for (unsigned d = 0; d < FIO_DDIR_NR; d++) {
		if (*p) {
			size_t len = strcspn(p, ",");

			if (len >= sizeof(part))
				return size_error(val);
			memcpy(part, p, len);
			part[len] = '\0';
			if (parse_size(part, &v))
				return size_error(part);
			if (check_range(opt, part, v))
				return -EINVAL;
			p += len + (p[len] == ',');
		}
		bs[d] = v;
	}
	if (*p)
		return blkring__error(-EINVAL, "'%s' has more than %u sizes (read,write,trim)", val,
		                      FIO_DDIR_NR);
	bs[DDIR_ZERO] = bs[DDIR_TRIM];
	return 0;
}

#define US_PER_DAY 86400000000ULL

/* Microseconds in one of a time's unit: us, ms, s, m, h or d; seconds by default. */
static uint64_t time_unit_us(const char *suffix)
{
	static const struct {
		const char *suffix;
		uint64_t us;
	} units[] = {
	    {"", 1000000ULL},     {"s", 1000000ULL},    {"sec", 1000000ULL}, {"us", 1ULL},
	    {"usec", 1ULL},       {"ms", 1000ULL},      {"msec", 1000ULL},   {"m", 60000000ULL},
	    {"min", 60000000ULL}, {"h", 3600000000ULL}, {"d", US_PER_DAY},
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(suffix, units[i].suffix))
			return units[i].us;
	return 0;
}

/*
 * fio's times.  The job counts them in nanoseconds from a clock reading,
 * so a longer one than opt->max would wrap and end the job at once.
 */
static int opt_time(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v, unit, us;
	char *end;

	if (parse_u64(val, &v, &end) || !(unit = time_unit_us(end)))
		return blkring__error(-EINVAL,
		                      "'%s' is not a time (a whole number with us, ms, s, m, h or "
		                      "d; seconds without)",
		                      val);
	if (mul_overflows(v, unit, &us) || us > opt->max)
		return blkring__error(
		    -EINVAL, "'%s' is too long (at most %" PRIu64 "d, about %" PRIu64 " years)",
		    val, (uint64_t)(opt->max / US_PER_DAY),
		    (uint64_t)(opt->max / US_PER_DAY / 365));
	*(uint64_t *)field = us;
	return 0;
}

static int choice_error(const struct bench_opt *opt, const char *val)
{
	char list[256] = "";
	size_t len = 0;

	for (const char *const *c = opt->choices; *c && len < sizeof(list); c++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
		                        c == opt->choices ? "" : ", ", *c);
	return blkring__error(-EINVAL, "'%s' is not one of %s", val, list);
}

static int opt_choice(const struct bench_opt *opt, const char *val, void *field)
{
	for (unsigned i = 0; opt->choices[i]; i++) {
		if (!strcmp(val, opt->choices[i])) {
			*(unsigned *)field = i;
			return 0;
		}
	}
	return choice_error(opt, val);
}

static int opt_rw(const struct bench_opt *opt, const char *val, void *field)
{
	char list[256] = "";
	size_t len = 0;

	(void)opt;
	for (unsigned i = 0; rw_modes[i].name; i++) {
		if (!strcmp(val, rw_modes[i].name)) {
			*(unsigned *)field = i;
			return 0;
		}
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
		                        rw_modes[i].name);
	}
	return blkring__error(-EINVAL, "'%s' is not one of %s", val, list);
}

static int opt_str(const struct bench_opt *opt, const char *val, void *field)
{
	size_t len = strlen(val);

	if (!len)
		return blkring__error(-EINVAL, "the value is empty");
	if (len >= opt->max)
		return blkring__error(-EINVAL, "the value is longer than %" PRIu64 " characters",
		                      opt->max - 1);
	memcpy(field, val, len + 1);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* percentile_list=99:99.9: colon-separated, each above 0 and at most 100. */
static int opt_percentiles(const struct bench_opt *opt, const char *val, void *field)
{
	struct percentiles *pl = field;
	struct percentiles tmp = {.nr = 0};
	const char *p = val;

	(void)opt;
	while (*p) {
		char *end;
		double v;

		if (tmp.nr == BENCH_MAX_PERCENTILES)
			return blkring__error(-EINVAL, "'%s' has more than %u percentiles", val,
			                      BENCH_MAX_PERCENTILES);
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || (*end && *end != ':') || !(v > 0.0 && v <= 100.0))
			return blkring__error(-EINVAL,
			                      "'%s' is not a list of percentiles (numbers above 0 "
			                      "and at most 100, separated by ':')",
			                      val);
		tmp.p[tmp.nr++] = v;
		p = *end ? end + 1 : end;
	}
	if (!tmp.nr)
		return blkring__error(-EINVAL, "the list is empty");
	qsort(tmp.p, tmp.nr, sizeof(tmp.p[0]), cmp_double);
	*pl = tmp;
	return 0;
}

/* cpus_allowed=0-3,6: CPUs of this machine. */
static int opt_cpus(const struct bench_opt *opt, const char *val, void *field)
{
	long nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t set;
	const char *p = val;

	(void)opt;
	CPU_ZERO(&set);
	while (*p) {
		uint64_t lo, hi;
		char *end;

		if (parse_u64(p, &lo, &end))
			goto bad;
		hi = lo;
		if (*end == '-' && parse_u64(end + 1, &hi, &end))
			goto bad;
		if ((*end && *end != ',') || hi < lo)
			goto bad;
		if (hi >= (uint64_t)nr_cpus || hi >= CPU_SETSIZE)
			return blkring__error(-EINVAL,
			                      "CPU %" PRIu64 " does not exist (CPUs 0-%ld)", hi,
			                      nr_cpus - 1);
		for (uint64_t c = lo; c <= hi; c++)
			CPU_SET(c, &set);
		p = *end ? end + 1 : end;
	}
	if (!CPU_COUNT(&set))
		goto bad;
	*(cpu_set_t *)field = set;
	return 0;
bad:
	return blkring__error(-EINVAL, "'%s' is not a CPU list (e.g. 0-3,6)", val);
}

static int opt_coe(const struct bench_opt *opt, const char *val, void *field)
{
	static const struct {
		const char *name;
		unsigned mask;
	} kinds[] = {
	    {"none", 0},
	    {"0", 0},
	    {"read", COE_READ},
	    {"write", COE_WRITE},
	    {"io", COE_READ | COE_WRITE},
	    {"verify", COE_VERIFY},
	    {"all", COE_READ | COE_WRITE | COE_VERIFY},
	    {"1", COE_READ | COE_WRITE | COE_VERIFY},
	};

	(void)opt;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!strcmp(val, kinds[i].name)) {
			*(unsigned *)field = kinds[i].mask;
			return 0;
		}
	}
	return blkring__error(-EINVAL, "'%s' is not one of none, read, write, io, verify, all",
	                      val);
}

/* zero_flags=nounmap,nofallback: BLKRING_ZERO_* for write zeroes. */
static int opt_zero_flags(const struct bench_opt *opt, const char *val, void *field)
{
	static const struct {
		const char *name;
		unsigned flag;
	} flags[] = {
	    {"nounmap", BLKRING_ZERO_NOUNMAP},
	    {"nofallback", BLKRING_ZERO_NOFALLBACK},
	};
	const char *p = val;
	unsigned mask = 0;

	(void)opt;
	do {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
			if (len == strlen(flags[i].name) && !strncmp(p, flags[i].name, len))
				break;
		if (i == sizeof(flags) / sizeof(flags[0]))
			return blkring__error(-EINVAL,
			                      "'%.*s' is not a write zeroes flag (expected "
			                      "nounmap and/or nofallback, separated by ',')",
			                      (int)len, p);
		mask |= flags[i].flag;
		p += len;
	} while (*p++ == ',');
	*(unsigned *)field = mask;
	return 0;
}

/* rwmixwrite=N is rwmixread=100-N. */
static int opt_rwmixwrite(const struct bench_opt *opt, const char *val, void *field)
{
	unsigned v;

	if (opt_uint(opt, val, &v))
		return -EINVAL;
	*(unsigned *)field = 100 - v;
	return 0;
}

/* ---- the table ---- */

#define JOB(f) offsetof(struct job_opts, f)
#define RUN(f) offsetof(struct run_opts, f)
#define DEFAULT_PERCENTILES "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"

const struct bench_opt bench_opts[] = {
    {"name", NULL, "NAME", "job name; on the command line it starts a new job", NULL, opt_str,
     JOB(name), 0, 0, BENCH_NAME_MAX, NULL},
    {"filename", NULL, "SPEC", "device spec, e.g. null:irqmode=none", NULL, opt_str, JOB(filename),
     0, 0, BENCH_PATH_MAX, NULL},
    {"ioengine", NULL, "ENGINE", "blkring (a ring per job) or sync (one blocking call at a time)",
     "blkring", opt_choice, JOB(ioengine), 0, 0, 0, engine_names},
    {"rw", "readwrite", "MODE",
     "read, write, randread, randwrite, rw, randrw, trim, randtrim, zero, randzero", "read", opt_rw,
     JOB(rw), 0, 0, 0, NULL},
    {"zero_flags", NULL, "FLAG[,FLAG]",
     "write zeroes flags: nounmap (keep the range allocated), nofallback (fail rather than "
     "write zero pages)",
     NULL, opt_zero_flags, JOB(zero_flags), 0, 0, 0, NULL},
    {"bs", "blocksize", "SIZE[,SIZE[,SIZE]]", "block size (read,write,trim)", "4k", opt_bs, JOB(bs),
     0, 1, 1ULL << 30, NULL},
    {"iodepth", NULL, "N", "I/Os in flight per job", "1", opt_uint, JOB(iodepth), 0, 1, 65536,
     NULL},
    {"iodepth_batch_submit", "iodepth_batch", "N", "I/Os queued before a submit (0: iodepth)", "1",
     opt_uint, JOB(iodepth_batch_submit), 0, 0, 65536, NULL},
    {"iodepth_batch_complete_min", "iodepth_batch_complete", "N",
     "completions to wait for when the queue is full", "1", opt_uint,
     JOB(iodepth_batch_complete_min), 0, 0, 65536, NULL},
    {"iodepth_batch_complete_max", NULL, "N", "completions reaped at once (0: iodepth)", "0",
     opt_uint, JOB(iodepth_batch_complete_max), 0, 0, 65536, NULL},
    {"numjobs", NULL, "N", "clones of this job", "1", opt_uint, JOB(numjobs), 0, 1, 4096, NULL},
    {"thread", NULL, "BOOL", "jobs are threads (always; 0 is accepted with a note)", "1", opt_bool,
     JOB(thread), OPT_BARE, 0, 0, NULL},
    {"size", NULL, "SIZE|N%", "region of the device a job uses (default: from offset to the end)",
     NULL, opt_size_pct, JOB(size), 0, 1, UINT64_MAX, NULL},
    {"offset", NULL, "SIZE|N%", "start of the region", NULL, opt_size_pct, JOB(offset), 0, 0,
     UINT64_MAX, NULL},
    {"runtime", "timeout", "TIME", "stop after this long (seconds without a unit)", NULL, opt_time,
     JOB(runtime_us), 0, 0, BENCH_TIME_MAX_US, NULL},
    {"time_based", NULL, "BOOL", "run for runtime, going over the region again", "0", opt_bool,
     JOB(time_based), OPT_BARE, 0, 0, NULL},
    {"ramp_time", NULL, "TIME", "run this long before measuring", NULL, opt_time, JOB(ramp_time_us),
     0, 0, BENCH_TIME_MAX_US, NULL},
    {"randrepeat", NULL, "BOOL", "the same random offsets on every run", "1", opt_bool,
     JOB(randrepeat), OPT_BARE, 0, 0, NULL},
    {"randseed", NULL, "N", "seed of the random offsets", "0xb1899bed", opt_u64, JOB(randseed), 0,
     0, UINT64_MAX, NULL},
    {"norandommap", NULL, "BOOL", "random offsets may repeat before the region is covered", "0",
     opt_bool, JOB(norandommap), OPT_BARE, 0, 0, NULL},
    {"rwmixread", NULL, "PERCENT", "share of reads in rw and randrw", "50", opt_uint,
     JOB(rwmixread), 0, 0, 100, NULL},
    {"rwmixwrite", NULL, "PERCENT", "share of writes in rw and randrw", NULL, opt_rwmixwrite,
     JOB(rwmixread), 0, 0, 100, NULL},
    {"hipri", NULL, "BOOL", "polled I/O: a ring with BLKRING_SETUP_IOPOLL (blkring engine)", "0",
     opt_bool, JOB(hipri), OPT_BARE, 0, 0, NULL},
    {"poll_strategy", NULL, "all|cookie",
     "how a table: volume polls, overriding its spec's poll= (default: the spec's)", "cookie",
     opt_choice, JOB(poll_strategy), 0, 0, 0, poll_strategy_names},
    {"direct", NULL, "BOOL",
     "O_DIRECT on file devices (their spec defaults to 1); given, overrides the spec", "0",
     opt_bool, JOB(direct), OPT_BARE, 0, 0, NULL},
    {"fixedbufs", NULL, "BOOL",
     "the job's buffers registered with its ring; reads and writes as READ_FIXED/WRITE_FIXED", "0",
     opt_bool, JOB(fixedbufs), OPT_BARE, 0, 0, NULL},
    {"fsync", NULL, "N", "flush the device after every N writes", "0", opt_uint, JOB(fsync), 0, 0,
     UINT32_MAX, NULL},
    {"end_fsync", NULL, "BOOL", "flush the device when the job's writes are done", "0", opt_bool,
     JOB(end_fsync), OPT_BARE, 0, 0, NULL},
    {"cpus_allowed", NULL, "CPULIST", "CPUs the job's thread may run on, e.g. 0-1,3", NULL,
     opt_cpus, JOB(cpus_allowed), 0, 0, 0, NULL},
    {"group_reporting", NULL, "BOOL", "report each group's jobs as one", "0", opt_bool,
     JOB(group_reporting), OPT_BARE, 0, 0, NULL},
    {"percentile_list", NULL, "P:P:...", "completion latency percentiles to report",
     DEFAULT_PERCENTILES, opt_percentiles, JOB(percentile_list), 0, 0, 0, NULL},
    {"lat_percentiles", NULL, "BOOL", "report total latency percentiles too", "0", opt_bool,
     JOB(lat_percentiles), OPT_BARE, 0, 0, NULL},
    {"write_lat_log", NULL, "NAME", "per-I/O latency logs NAME_{slat,clat,lat}.N.log", NULL,
     opt_str, JOB(write_lat_log), 0, 0, BENCH_PATH_MAX - 32, NULL},
    {"log_offset", NULL, "BOOL", "latency log lines carry the I/O's offset", "0", opt_bool,
     JOB(log_offset), OPT_BARE, 0, 0, NULL},
    {"continue_on_error", NULL, "KIND", "none, read, write, io, verify or all", "none", opt_coe,
     JOB(continue_on_error), 0, 0, 0, NULL},
    {"verify", NULL, "METHOD", "0 or crc32c: written blocks carry a checked header; reads check it",
     "0", opt_choice, JOB(verify), 0, 0, 0, verify_names},
    {"do_verify", NULL, "BOOL", "with verify, read a write job's blocks back when it is done", "1",
     opt_bool, JOB(do_verify), OPT_BARE, 0, 0, NULL},
    {"stonewall", "wait_for_previous", "BOOL", "wait for the jobs before; starts a new group", "0",
     opt_bool, JOB(stonewall), OPT_BARE, 0, 0, NULL},
    {"sqthread_poll", NULL, "BOOL", "a ring thread consumes SQEs and posts CQEs (SQPOLL)", "0",
     opt_bool, JOB(sqthread_poll), OPT_BARE, 0, 0, NULL},
    {"sqthread_poll_cpu", NULL, "CPU", "CPU of the SQPOLL thread", NULL, opt_uint,
     JOB(sqthread_poll_cpu), 0, 0, CPU_SETSIZE - 1, NULL},
    {"tw_prio", NULL, "BOOL", "completion task work runs before other task work (TW_PRIO)", "0",
     opt_bool, JOB(tw_prio), OPT_BARE, 0, 0, NULL},
    {"tw_issue", NULL, "BOOL", "every issue becomes task work (TW_ISSUE, a benchmark knob)", "0",
     opt_bool, JOB(tw_issue), OPT_BARE, 0, 0, NULL},
    {"taskrun", NULL, "MODE",
     "normal, or defer: task work runs only in waits (DEFER_TASKRUN); default defer, normal "
     "with sqthread_poll, as fio's io_uring engine asks",
     NULL, opt_choice, JOB(taskrun), 0, 0, 0, taskrun_names},
    {"clocksource", NULL, "SOURCE", "cpu (the TSC, where invariant) or clock_gettime", "cpu",
     opt_choice, RUN(clocksource), OPT_RUN, 0, 0, clock_names},
    {"output", NULL, "FILE", "write the results to FILE", NULL, opt_str, RUN(output),
     OPT_RUN | OPT_CMDLINE, 0, BENCH_PATH_MAX, NULL},
    {"output-format", NULL, "FORMAT", "normal, json, or json+ (json with histogram bins)", "normal",
     opt_choice, RUN(output_format), OPT_RUN | OPT_CMDLINE, 0, 0, format_names},
};

const unsigned bench_nr_opts = sizeof(bench_opts) / sizeof(bench_opts[0]);

_Static_assert(sizeof(bench_opts) / sizeof(bench_opts[0]) <= BENCH_MAX_OPTS,
               "BENCH_MAX_OPTS too small");

/* fio options blkring does not have: named as such rather than "unknown". */
static const char *const fio_only[] = {
    "allow_file_create",
    "allrandrepeat",
    "atomic",
    "buffer_compress_percentage",
    "buffer_pattern",
    "buffered",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "blockalign",
    "ba",
    "bwavgtime",
    "cgroup",
    "clat_percentiles",
    "cmdprio_percentage",
    "cpumask",
    "cpus_allowed_policy",
    "create_fsync",
    "create_on_open",
    "create_serialize",
    "disable_bw_measurement",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "end_fsync_on_close",
    "exitall",
    "exitall_on_error",
    "exec_prerun",
    "exec_postrun",
    "fadvise_hint",
    "fallocate",
    "fdatasync",
    "file_service_type",
    "filename_format",
    "filesize",
    "fill_device",
    "flow",
    "flow_id",
    "gtod_reduce",
    "gtod_cpu",
    "hipri_percentage",
    "hugepage-size",
    "ignore_error",
    "invalidate",
    "io_size",
    "io_limit",
    "io_submit_mode",
    "iodepth_low",
    "iomem",
    "mem",
    "iomem_align",
    "iopsavgtime",
    "ioscheduler",
    "kb_base",
    "lat_log",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "lockfile",
    "log_avg_msec",
    "log_hist_msec",
    "loops",
    "max_latency",
    "new_group",
    "nice",
    "nrfiles",
    "number_ios",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "offset_increment",
    "openfiles",
    "overwrite",
    "percentage_random",
    "pre_read",
    "prio",
    "prioclass",
    "random_distribution",
    "random_generator",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_process",
    "readonly",
    "refill_buffers",
    "registerfiles",
    "replay_redirect",
    "rw_sequencer",
    "scramble_buffers",
    "serialize_overlap",
    "significant_figures",
    "slat_percentiles",
    "startdelay",
    "steadystate",
    "sync",
    "thinktime",
    "thinktime_blocks",
    "thinktime_spin",
    "trim_backlog",
    "trim_percentage",
    "uid",
    "gid",
    "unified_rw_reporting",
    "unit_base",
    "unlink",
    "unlink_each_loop",
    "uncached",
    "verify_async",
    "verify_backlog",
    "verify_fatal",
    "verify_interval",
    "verify_offset",
    "verify_pattern",
    "verify_state_load",
    "verify_state_save",
    "wait_for",
    "write_bw_log",
    "write_hist_log",
    "write_iolog",
    "write_iops_log",
    "read_iolog",
    "zero_buffers",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "eta",
    "eta-newline",
    "status-interval",
    "section",
    "minimal",
    "terse",
    "cmdhelp",
    "enghelp",
    "debug",
    "parse-only",
    "server",
    "client",
    "daemonize",
    "alloc-size",
    "max-jobs",
    "idle-prof",
    "inflate-log",
    "trigger",
    "aux-path",
    NULL,
};

const struct bench_opt *opt_find(const char *name)
{
	for (unsigned i = 0; i < bench_nr_opts; i++) {
		const struct bench_opt *o = &bench_opts[i];

		if (!strcmp(name, o->name) || (o->alias && !strcmp(name, o->alias)))
			return o;
	}
	return NULL;
}

bool opt_is_fio_only(const char *name)
{
	for (const char *const *n = fio_only; *n; n++)
		if (!strcmp(name, *n))
			return true;
	return false;
}

static void *opt_field(const struct bench_opt *opt, struct job_opts *o, struct run_opts *r)
{
	return (char *)((opt->flags & OPT_RUN) ? (void *)r : (void *)o) + opt->off;
}

void opts_defaults(struct job_opts *o, struct run_opts *r)
{
	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < bench_nr_opts; i++) {
		const struct bench_opt *opt = &bench_opts[i];

		/* The table's defaults are valid option text: parsing cannot fail. */
		if (opt->def)
			opt->parse(opt, opt->def, opt_field(opt, o, r));
	}
	CPU_ZERO(&o->cpus_allowed);
}

int opt_set(struct job_opts *o, struct run_opts *r, const char *name, const char *val,
            const char *where, bool cmdline, bool in_job)
{
	const struct bench_opt *opt = opt_find(name);
	char why[512];

	if (!opt) {
		if (opt_is_fio_only(name))
			return blkring__error(
			    -EINVAL, "%s: option '%s' is a fio option blkring does not support",
			    where, name);
		return blkring__error(-EINVAL,
		                      "%s: unknown option '%s' ('blkring bench --help' lists them)",
		                      where, name);
	}
	if ((opt->flags & OPT_CMDLINE) && !cmdline)
		return blkring__error(-EINVAL, "%s: option '%s' is taken on the command line only",
		                      where, name);
	if ((opt->flags & OPT_RUN) && in_job)
		return blkring__error(
		    -EINVAL,
		    "%s: option '%s' applies to the whole run: give it in [global] "
		    "or on the command line",
		    where, name);
	if (!val) {
		if (!(opt->flags & OPT_BARE))
			return blkring__error(-EINVAL, "%s: option '%s' needs a value (%s=%s)",
			                      where, name, name, opt->arg);
		val = "1";
	}
	if (opt->parse(opt, val, opt_field(opt, o, r))) {
		snprintf(why, sizeof(why), "%s", blkring_last_error());
		return blkring__error(-EINVAL, "%s: option '%s': %s", where, name, why);
	}
	if (!(opt->flags & OPT_RUN))
		o->set[opt_index(opt)] = 1;
	return 0;
}

bool opt_is_set(const struct job_opts *o, const char *name)
{
	const struct bench_opt *opt = opt_find(name);

	return opt && o->set[opt_index(opt)];
}

void opts_help(FILE *f)
{
	for (unsigned i = 0; i < bench_nr_opts; i++) {
		const struct bench_opt *opt = &bench_opts[i];
		char lhs[64];

		snprintf(lhs, sizeof(lhs), "--%s=%s", opt->name, opt->arg);
		fprintf(f, "  %-36s %s", lhs, opt->help);
		if (opt->def && strcmp(opt->def, "0"))
			fprintf(f, " [%s]", opt->def);
		if (opt->alias)
			fprintf(f, " (also %s)", opt->alias);
		fputc('\n', f);
	}
}
