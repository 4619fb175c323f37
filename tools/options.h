/* SPDX-License-Identifier: MIT */
/*
 * The bench's options: one table (options.c) drives parsing, defaults,
 * --help and the "job options" of the JSON output.  Names, values and
 * meanings are fio's.  Adding an option is one table row, a field here,
 * and its use.
 */
#ifndef BLKRING_TOOLS_OPTIONS_H
#define BLKRING_TOOLS_OPTIONS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pattern.h"

#define BENCH_MAX_OPTS 240
#define BENCH_MAX_PERCENTILES 20 /* fio's FIO_IO_U_LIST_MAX_LEN */
#define BENCH_NAME_MAX 256
#define BENCH_PATH_MAX 1024
/* runtime and ramp_time: whole days whose nanoseconds fit in an int64_t, so a
 * clock reading plus one cannot wrap (106751 days, about 292 years). */
#define BENCH_TIME_MAX_US (106751ULL * 86400000000ULL)

/*
 * Data directions, in fio's order (its JSON has read, write, trim), then
 * blkring's write zeroes, reported as "zero" with the fields of fio's trim.
 */
enum { DDIR_READ, DDIR_WRITE, DDIR_TRIM, DDIR_ZERO, BENCH_DDIR_NR };
/* An I/O that is not data: a flush from fsync=N. */
#define DDIR_SYNC BENCH_DDIR_NR
/* Directions fio has: bs=R,W,T takes a size for each. */
#define FIO_DDIR_NR DDIR_ZERO

extern const char *const ddir_names[BENCH_DDIR_NR]; /* "read", "write", "trim", "zero" */

/* rw= values. */
struct rw_mode {
	const char *name;
	unsigned ddirs; /* 1 << DDIR_* */
	bool random;
};
extern const struct rw_mode rw_modes[];

/* rw=MODE[:N]: the mode, and fio's offset modifier after the ':'. */
struct rw_opt {
	unsigned mode; /* index in rw_modes */
	/* Random modes: I/Os per new random offset (1: every one); sequential
	 * modes: bytes skipped after each I/O, backwards with `back`. */
	uint64_t nr;
	bool back;
};
enum { RW_SEQ_SEQUENTIAL, RW_SEQ_IDENTICAL };                    /* rw_sequencer= */
enum { RANDGEN_TAUSWORTHE, RANDGEN_LFSR, RANDGEN_TAUSWORTHE64 }; /* random_generator= */
enum { ZONEMODE_NONE, ZONEMODE_STRIDED };                        /* zonemode= */

#define BENCH_MAX_BSSPLIT 64 /* fio's BSSPLIT_MAX */
/* bssplit for one direction: its block sizes and their shares, in fio's
 * order (shares ascending); nr 0: bsrange or bs decides. */
struct bs_split {
	struct bs_share {
		uint64_t bs;
		unsigned pct;
	} e[BENCH_MAX_BSSPLIT];
	unsigned nr;
	unsigned over; /* the shares' sum when over 100% (fio's draw stops at 100) */
};
/* bsrange for one direction; min 0: not given. */
struct bs_range {
	uint64_t min, max;
};

/* random_distribution=: fio's kinds. */
enum { DIST_RANDOM, DIST_ZIPF, DIST_PARETO, DIST_NORMAL, DIST_ZONED, DIST_ZONED_ABS };
#define BENCH_MAX_ZONES 256 /* fio's ZONESPLIT_MAX */
/* A direction's zoned distribution as fio indexes it: for each 1% of the
 * accesses, where they go (percent of the region; bytes for zoned_abs). */
struct zone_table {
	struct zone_span {
		uint64_t start, end;
	} at[100];
	bool set;
};
struct rand_dist {
	unsigned kind; /* DIST_* */
	double value;  /* zipf's theta, pareto's power, normal's deviation in percent */
	double center; /* 0 to 1, or -1: fio's default */
	struct zone_table zones[BENCH_DDIR_NR];
};

enum { TASKRUN_NORMAL, TASKRUN_DEFER };             /* taskrun=: when task work runs */
enum { RATE_PROCESS_LINEAR, RATE_PROCESS_POISSON }; /* rate_process= */
enum { SUBMIT_INLINE, SUBMIT_OFFLOAD };             /* io_submit_mode= */
/* steadystate=: fio's criterion bits (its FIO_SS_*), and its run's states. */
#define SS_IOPS (1U << 0)
#define SS_BW (1U << 1)
#define SS_SLOPE (1U << 2)
#define SS_ATTAINED (1U << 3)
#define SS_RAMP_OVER (1U << 4)
#define SS_PCT (1U << 6)
#define SS_BUFFER_FULL (1U << 7)
struct ss_opt {
	unsigned state; /* SS_* */
	double limit;   /* the criterion's bound: percent with SS_PCT */
};
enum { VERIFY_NONE }; /* verify: else an index into verify_kinds[] (verify.c) */
/* --output-format's formats: any of them, printed terse, JSON, normal, as fio does. */
#define FORMAT_NORMAL (1U << 0)
#define FORMAT_JSON (1U << 1)
#define FORMAT_JSON_PLUS (1U << 2)                      /* JSON with histogram bins */
#define FORMAT_TERSE (1U << 3)                          /* fio's terse version 3 */
enum { POLL_STRATEGY_ALL, POLL_STRATEGY_COOKIE };       /* the table key poll='s values */
enum { UNIFIED_SPLIT, UNIFIED_MIXED, UNIFIED_BOTH };    /* unified_rw_reporting= */
enum { KB_BASE_1024, KB_BASE_1000 };                    /* kb_base= */
enum { UNIT_BASE_AUTO, UNIT_BASE_BYTE, UNIT_BASE_BIT }; /* unit_base=0, 8, 1 */
extern const char *const poll_strategy_names[];         /* "all", "cookie" */

/* file_service_type: how a job with several files picks the next one. */
enum { FILE_SERVICE_ROUNDROBIN, FILE_SERVICE_SEQUENTIAL, FILE_SERVICE_RANDOM };
struct file_service {
	unsigned type; /* FILE_SERVICE_* */
	unsigned nr;   /* I/Os before the next pick */
};

/* continue_on_error: what kinds of error a job keeps going after. */
#define COE_READ (1U << 0)
#define COE_WRITE (1U << 1)
#define COE_VERIFY (1U << 2)

/* A size or offset: bytes, or a percentage of the device. */
struct size_pct {
	uint64_t bytes;
	unsigned pct; /* 1..100, or 0 for bytes */
};

struct percentiles {
	double p[BENCH_MAX_PERCENTILES]; /* ascending */
	unsigned nr;
};

struct engine_name;

/* Everything one job is told. */
struct job_opts {
	char name[BENCH_NAME_MAX];
	char description[BENCH_NAME_MAX]; /* fio's: shown with the job's results */
	char filename[BENCH_PATH_MAX];    /* one device spec, or fio's file list */
	bool filename_generated; /* none given: fio's NAME.JOB.FILE (filename shows the first) */
	char directory[BENCH_PATH_MAX]; /* fio's: where the list's relative names are */
	unsigned nrfiles;               /* files of a job without a filename */
	uint64_t filesize;              /* each file's size; 0: size / files */
	struct file_service file_service;
	const struct engine_name *ioengine; /* as given; ->engine runs the job */
	/* fio's nbd and rbd engines' options, which make the job's spec. */
	char uri[BENCH_PATH_MAX];
	char pool[BENCH_NAME_MAX], rbdname[BENCH_NAME_MAX], clientname[BENCH_NAME_MAX];
	struct rw_opt rw;
	unsigned rw_sequencer; /* RW_SEQ_*: the I/Os between random offsets */
	uint64_t bs[BENCH_DDIR_NR];
	struct bs_range bsrange[BENCH_DDIR_NR];
	struct bs_split bssplit[BENCH_DDIR_NR];
	bool bs_unaligned; /* bsrange sizes in device blocks, not in its minimum */
	unsigned iodepth;
	unsigned iodepth_batch_submit;
	unsigned iodepth_batch_complete_min;
	unsigned iodepth_batch_complete_max; /* 0: iodepth */
	unsigned numjobs;
	bool thread;
	struct size_pct size, offset;
	struct size_pct offset_increment; /* fio's: each clone starts this much after the last */
	unsigned zonemode;                /* ZONEMODE_* */
	uint64_t zonesize, zonerange, zoneskip;
	bool fill_device; /* fio's: a write's ENOSPC or EDQUOT ends the job cleanly */
	uint64_t runtime_us, ramp_time_us;
	uint64_t startdelay_us; /* the job waits this long before it starts */
	unsigned loops;         /* runs of the job's I/O, measured together */
	uint64_t number_ios;    /* reads and writes at most; 0: as size says */
	uint64_t io_size;       /* bytes to move, going round the region; 0: size */
	/* fio's rate and rate_iops, per direction (0: none); one-direction
	 * jobs only. */
	uint64_t rate[BENCH_DDIR_NR], rate_iops[BENCH_DDIR_NR];
	/* fio's thinktime: after thinktime_blocks I/Os, let them end, then
	 * pause (spinning for thinktime_spin of it). */
	uint64_t thinktime_us, thinktime_spin_us;
	unsigned thinktime_blocks;
	/* fio's rate_min and rate_iops_min per direction (0: none), checked
	 * over every rate_cycle milliseconds once the job has run 2 s. */
	uint64_t rate_min[BENCH_DDIR_NR], rate_iops_min[BENCH_DDIR_NR];
	unsigned rate_cycle_ms;
	unsigned rate_process; /* RATE_PROCESS_* */
	/* fio's flow: jobs of one flow_id issue I/O in the ratio of their
	 * weights (0: not in a flow); a held job sleeps flow_sleep. */
	unsigned flow, flow_id;
	uint64_t flow_sleep_us;
	/* fio's latency_target: the job probes for the deepest queue whose
	 * latencies meet it (0: none), over latency_window each. */
	uint64_t latency_target_us, latency_window_us;
	double latency_percentile;
	bool latency_run;
	uint64_t max_latency_us[BENCH_DDIR_NR]; /* an I/O's lat above it fails the job */
	struct ss_opt steadystate;
	uint64_t ss_dur_us, ss_ramp_us; /* 0: no steady-state detection */
	unsigned io_submit_mode;        /* SUBMIT_*: submission is inline here whatever it says */
	bool new_group; /* fio's: a new reporting group, run beside the jobs before */
	bool exitall, exitall_on_error; /* fio's: this job's end ends the others running */
	/* fio's: latencies left out (gtod_reduce: all three). */
	bool gtod_reduce, disable_lat, disable_clat, disable_slat;
	bool time_based;
	bool randrepeat;
	uint64_t randseed;
	bool norandommap;
	unsigned random_generator; /* RANDGEN_* */
	struct rand_dist random_distribution;
	unsigned percentage_random[BENCH_DDIR_NR];
	unsigned rwmixread;
	bool direct;
	bool fixedbufs;
	bool nowait;          /* reads and writes with BLKRING_RWF_NOWAIT */
	unsigned force_async; /* every Nth SQE with BLKRING_SQE_ASYNC; 0: none */
	bool hipri;
	unsigned poll_strategy; /* POLL_STRATEGY_*: applies only when given */
	unsigned fsync;
	bool end_fsync;
	cpu_set_t cpus_allowed;
	bool group_reporting;
	struct percentiles percentile_list;
	bool lat_percentiles;
	bool clat_percentiles, slat_percentiles;
	bool stats;                    /* 0: the job is measured for nothing and not reported */
	unsigned unified_rw_reporting; /* UNIFIED_* */
	unsigned kb_base, unit_base;   /* KB_BASE_*, UNIT_BASE_*: the normal output's units */
	/* fio's logs: a prefix each, given (or the job's name when given bare)
	 * when its bit in o->set is; opts_log_name() says which. */
	char write_lat_log[BENCH_PATH_MAX];
	char write_bw_log[BENCH_PATH_MAX], write_iops_log[BENCH_PATH_MAX];
	char write_hist_log[BENCH_PATH_MAX];
	unsigned log_avg_msec;  /* 0: bw and iops per I/O, latencies per I/O */
	unsigned log_hist_msec; /* 0: no histogram lines */
	bool log_offset, log_max_value, per_job_logs;
	bool disable_bw;            /* fio's disable_bw_measurement: no per-I/O bandwidth */
	unsigned continue_on_error; /* COE_* */
	bool stonewall;
	bool sqthread_poll;         /* BLKRING_SETUP_SQPOLL */
	unsigned sqthread_poll_cpu; /* with sqthread_poll: BLKRING_SETUP_SQ_AFF when given */
	bool tw_prio;               /* BLKRING_SETUP_TW_PRIO */
	bool tw_issue;              /* BLKRING_SETUP_TW_ISSUE */
	unsigned taskrun;           /* TASKRUN_* */
	unsigned zero_flags;        /* BLKRING_ZERO_* of rw=zero|randzero */
	unsigned verify;            /* VERIFY_NONE, or its index in verify_kinds[] */
	bool do_verify;
	bool verify_fatal, verify_only;
	uint64_t verify_interval, verify_offset;
	struct data_pattern verify_pattern; /* with %o formats */
	/* verify_backlog: check the written blocks every this many writes,
	 * verify_backlog_batch of them (0: verify_backlog). */
	uint64_t verify_backlog;
	unsigned verify_backlog_batch;
	bool verify_state_save, verify_state_load; /* fio's state files (verify.c) */
	bool experimental_verify;                  /* accepted with a note */
	/* fio's buffer contents (data.c). */
	struct data_pattern buffer_pattern;
	unsigned compress_percentage, dedupe_percentage;
	uint64_t compress_chunk;
	bool refill_buffers, scramble_buffers, zero_buffers;
	uint8_t set[BENCH_MAX_OPTS]; /* given explicitly, by table index */
	/* Where each given option was set ("FILE:LINE", "command line"), for
	 * messages about it; the strings are the bench_cfg's. */
	const char *where[BENCH_MAX_OPTS];
};

enum { ETA_AUTO, ETA_ALWAYS, ETA_NEVER }; /* --eta: when the live line shows */

/* Options for the whole run rather than one job. */
struct run_opts {
	char output[BENCH_PATH_MAX];
	unsigned output_format;      /* FORMAT_* */
	unsigned terse_version;      /* 3, the one blkring writes */
	unsigned clocksource;        /* CLOCK_SRC_* */
	unsigned eta;                /* ETA_* */
	uint64_t eta_newline_us;     /* a new live line this often; 0: one line */
	uint64_t status_interval_us; /* the results so far this often; 0: at the end only */
};

struct bench_opt;
typedef int (*opt_parse_fn)(const struct bench_opt *opt, const char *val, void *field);

/* Where an option may appear. */
#define OPT_RUN (1U << 0)        /* whole run: command line or [global] */
#define OPT_CMDLINE (1U << 1)    /* command line only */
#define OPT_BARE (1U << 2)       /* a bare key means 1 */
#define OPT_BARE_EMPTY (1U << 3) /* a bare key means an empty value (fio's write_*_log) */

/* A row of the table, written with designated initialisers as fio's are. */
struct bench_opt {
	const char *name;
	const char *alias;
	const char *arg; /* the value's shape, for --help */
	const char *help;
	const char *def; /* default, as option text; NULL: zero */
	opt_parse_fn parse;
	size_t off, size; /* the field, in struct job_opts (struct run_opts with OPT_RUN) */
	unsigned flags;
	/* Accepted range, both ends included: of a number, or of each size
	 * in a list (bs=); a string's most characters in maxval. */
	uint64_t minval, maxval;
	const char *const *choices; /* choices: accepted words, in field order */
	/* An option of a kernel engine whose meaning cannot exist here: any
	 * value is accepted, and a job that sets it gets this note. */
	const char *note;
};

extern const struct bench_opt bench_opts[];
extern const unsigned bench_nr_opts;

const struct bench_opt *opt_find(const char *name);
static inline unsigned opt_index(const struct bench_opt *opt)
{
	return (unsigned)(opt - bench_opts);
}
/* True when name is an option fio has and blkring does not. */
bool opt_is_fio_only(const char *name);
/* The smallest and the largest block of direction d: bssplit's, else
 * bsrange's, else bs. */
uint64_t opts_min_bs(const struct job_opts *o, unsigned d);
uint64_t opts_max_bs(const struct job_opts *o, unsigned d);
/* The largest (smallest: the smallest) of the job's directions' smallest
 * blocks: a region holds the largest, fio rounds offsets to the smallest. */
uint64_t opts_unit(const struct job_opts *o, bool smallest);
/* Whether the job asks for fio's strided zones, and their size: zonerange,
 * or zonesize without it. */
bool opts_strided(const struct job_opts *o);
uint64_t opts_zonerange(const struct job_opts *o);

void opts_defaults(struct job_opts *o, struct run_opts *r);
/*
 * Sets one option from its text (val NULL for a bare key).  `where` names
 * the place ("job.fio:12", "command line") in the message that
 * tool_last_error() returns on failure.  In a job section (in_job),
 * whole-run options are refused.
 */
int opt_set(struct job_opts *o, struct run_opts *r, const char *name, const char *val,
            const char *where, bool cmdline, bool in_job);
bool opt_is_set(const struct job_opts *o, const char *name);
/* A log option's prefix: its value, the job's name when given bare, NULL when not given. */
const char *opts_log_name(const struct job_opts *o, const char *name);
/* One line per option. */
void opts_help(FILE *f);
/* fio's --cmdhelp: "all" lists every option with its help, a name shows
 * that option; -EINVAL for a name that is none. */
int opts_cmdhelp(FILE *f, const char *name);

#endif
