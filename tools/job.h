/* SPDX-License-Identifier: MIT */
/*
 * A running job: its I/O units, offset generators, budget, statistics, and
 * the per-I/O completion accounting the engines call.  Everything here but
 * the progress counters belongs to the job's own thread.
 */
#ifndef BLKRING_TOOLS_JOB_H
#define BLKRING_TOOLS_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "blkring.h"
#include "clock.h"
#include "jobs.h"
#include "plan.h"
#include "stats.h"

struct io_batch;

/* What a job is doing, for the progress line (fio's run states). */
enum { JOB_SETUP, JOB_RAMP, JOB_RUNNING, JOB_VERIFYING };

struct io_unit {
	struct io_batch *batch; /* the submission it went out in (async engines) */
	uint64_t offset;
	uint32_t len;
	uint16_t file; /* the job's file (index of j->files, and of the ring's devices) */
	uint8_t ddir;  /* DDIR_* or DDIR_SYNC */
	bool failed;   /* its last end was short or an error (job_complete() says so) */
	void *buf;
};

/*
 * One of a job's files (fio's): a device, the region the job uses on it,
 * and its offset generators.  Most jobs have one; fio's file lists and
 * nrfiles give more, which the general planner picks from by
 * file_service_type.
 */
struct job_file {
	char name[BENCH_PATH_MAX]; /* the spec or the path, for messages */
	struct blkring_dev *dev;
	uint64_t start, len; /* the region, bytes */
	uint64_t dev_size;   /* the device's bytes */
	uint32_t lbs;        /* the device's logical block size */
	uint64_t bytes_left; /* of this pass over the region (general planner) */
	struct offset_gen gen[BENCH_DDIR_NR];
};

/*
 * A submission of an async engine.  Its units share two stamps, so their
 * slat is one value and their clat and lat depend only on the reap that
 * ends them: a reap accounts each run of a submission's units as one count
 * (job_reaped()), which gives the statistics and histograms one sample per
 * unit would.
 */
struct io_batch {
	uint64_t start_ns; /* planned: fio's start_time */
	uint64_t issue_ns; /* submitted: fio's issue_time */
	uint32_t inflight; /* units not reaped yet */
};

struct bench_engine;
struct shape;

/* steadystate with group_reporting: as fio's, the group's jobs are judged
 * together, by the last of them with steadystate, on the sum of their
 * rates; a steady sum ends them all. */
struct ss_group {
	struct job *jobs;
	unsigned nr;
	_Atomic bool attained;
};

/* fio's start of a group: its jobs begin their I/O together, once every
 * one of them is set up (or has failed to be). */
struct start_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ready;    /* jobs through their setup */
	unsigned expected; /* jobs started; 0 while threads are still being started */
};

typedef unsigned (*plan_fn)(struct job *j, struct io_unit **ios, unsigned n);

struct job {
	/* Set before the thread starts. */
	const struct job_def *def;
	const struct job_opts *o;
	unsigned number; /* 1-based over all jobs, as fio's thread_number */
	unsigned clone;  /* among its definition's numjobs, from 0: fio's $jobnum */
	struct job_file *files;
	unsigned nr_files;
	uint64_t io_size; /* bytes of every file's region together */
	const struct bench_engine *engine;
	_Atomic bool *stop; /* the running jobs are being stopped; exitall sets it */
	struct job_stats *st;

	/* The job thread's. */
	struct io_unit *ios;
	struct io_unit **free; /* stack of idle units */
	struct io_unit **batch;
	unsigned nr_free;
	struct io_batch *batches;
	struct io_batch **free_batches; /* stack of idle records */
	unsigned nr_free_batches;
	struct io_batch *issuing; /* the record of the submission being queued */
	unsigned depth, inflight;
	unsigned batch_submit, complete_min, complete_max;
	bool draining;
	plan_fn plan;
	unsigned ddirs, ddir; /* directions (bits), and the first */
	int gen_kind;
	unsigned cur_file, file_ios_left; /* file_service_type: the file in use, I/Os left on it */
	uint32_t bs[BENCH_DDIR_NR];
	bool lean;           /* one direction, fixed units: the lean planners */
	struct shape *shape; /* fio's workload shapes (shape.h); NULL without them */
	/* Set once by job_setup(): lean, and nothing looks at single I/Os, so
	 * batches are prepared and accounted whole. */
	bool single;
	/* Every unit accounted by job_complete(): logs, shapes, latency checks. */
	bool account_each;
	/* Bytes the I/Os fell short of bs[d] each, bs[d] being the direction's
	 * largest: short transfers, and smaller blocks of a shaped job. */
	uint64_t short_missing[BENCH_DDIR_NR];
	uint64_t ios_left;       /* budget of one-direction planners */
	uint64_t number_left;    /* number_ios: reads and writes left */
	uint64_t io_bytes_left;  /* io_size: bytes left to plan */
	uint64_t rate_period_ns; /* rate, rate_iops: an I/O's share of a second */
	uint64_t next_issue_ns;  /* with a rate: when the next I/O is due */
	unsigned think_left;     /* thinktime: I/Os until the next pause */
	bool paced;              /* a rate or a thinktime: the loop's slow path */
	uint64_t mix_rng;
	unsigned writes_since_sync;
	bool sync_due;
	void *engine_data;
	struct verify *verify; /* verify=crc32c: the wrapped engine and what was written */
	struct data *data;     /* refilled or scrambled writes (data.h); NULL without */
	void *bufs;
	size_t bufs_len;
	struct lat_log *log; /* fio's write_*_log; NULL without them */
	/* What each completion logs (latencies, per-I/O bw and iops, the
	 * histogram), and whether each submission's slat is taken apart (its
	 * log, slat_percentiles). */
	bool log_lat, log_bw, log_iops, log_hist, slat_each;
	bool lat_hist; /* lat_percentiles: the total latency's histogram */
	/* rate_min, poisson, flow, latency_target, max_latency, steadystate
	 * (timing.h); NULL without them. */
	struct timing *timing;

	uint64_t now_ns; /* the last completion stamp an engine took */
	uint64_t start_ns, ramp_end_ns, end_ns, next_check_ns;
	bool ramping;
	uint64_t next_sample_ns, next_publish_ns; /* the sooner of bw's and iops' */
	/* Bandwidth and IOPS samples, each its own period (fio's bwavgtime,
	 * iopsavgtime, log_avg_msec); UINT64_MAX when taken per I/O. */
	uint64_t bw_period_ns, iops_period_ns;
	uint64_t bw_sample_ns, iops_sample_ns, next_bw_ns, next_iops_ns;
	uint64_t sample_bytes[BENCH_DDIR_NR], sample_ios[BENCH_DDIR_NR];
	struct rusage ru_start;
	uint64_t tw_wait_nr_start, tw_wait_ns_start; /* the ring's, when measuring began */
	int tid;
	pthread_t thread;
	bool started;
	int done_fd; /* written once when the job is over */
	struct start_gate *gate;
	struct ss_group *ss_group; /* NULL without group_reporting */

	uint64_t ramp_ios[BENCH_DDIR_NR], ramp_bytes[BENCH_DDIR_NR]; /* done before measuring */

	/* --status-interval: a copy of the statistics so far, written when
	 * snap_req moves on (the job's snap_gen says which it answered). */
	struct job_stats *snap;
	unsigned snap_gen;
	_Atomic unsigned snap_req, snap_done;

	/* Read by the main thread while the job runs (the progress line). */
	_Atomic unsigned state;                     /* JOB_* */
	_Atomic uint64_t prog_ios[BENCH_DDIR_NR];   /* since the start, ramp included */
	_Atomic uint64_t prog_bytes[BENCH_DDIR_NR]; /* the same */
	_Atomic uint64_t prog_measured;             /* bytes since measuring began */
	_Atomic uint64_t prog_start_ns;             /* when measuring began */
	_Atomic bool finished;
	/* steadystate: the last 1 s rates and how many there were, for the
	 * ss_group's judge. */
	_Atomic uint64_t ss_bw, ss_iops;
	_Atomic unsigned ss_seq;
};

static inline uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/*
 * Accounts one unit from its stamps, whatever its end: an error, a flush, a
 * short transfer, or a full one; and every unit of a job that logs
 * latencies, which it writes to the log.
 */
void job_complete(struct job *j, struct io_unit *io, int res, uint64_t start, uint64_t issue,
                  uint64_t now);

/* The total latency's histogram is read only with lat_percentiles, and kept
 * only then, as fio's add_lat_sample() does. */
static inline void dir_account_n(const struct job *j, struct dir_stats *ds, uint64_t clat,
                                 uint64_t lat, uint64_t n)
{
	lat_add_n(&ds->clat, clat, n);
	lat_add_n(&ds->lat, lat, n);
	hist_add_n(&ds->clat_hist, clat, n);
	if (unlikely(j->lat_hist))
		hist_add_n(&ds->lat_hist, lat, n);
}

/*
 * A reaped unit accounted on its own (several directions, or a result other
 * than the full length): job_reaped() leaves it out of its submission's sum.
 */
static inline void job_account(struct job *j, struct io_unit *io, int res, uint64_t now)
{
	struct io_batch *b = io->batch;

	/* Invariant TSCs the kernel trusts are in step on every CPU, so
	 * stamps of one thread never run backwards. */
	if (likely((unsigned)res == io->len && io->ddir < BENCH_DDIR_NR && !j->account_each))
		dir_account_n(j, &j->st->dir[io->ddir], now - b->issue_ns, now - b->start_ns, 1);
	else
		job_complete(j, io, res, b->start_ns, b->issue_ns, now);
}

/*
 * Ends n units of submission b reaped in a row, at the reap's stamp: `whole`
 * of them, full-length units of the job's one direction, are accounted here
 * as one sum (the others went through job_account()).  A submission's units
 * may come in several runs; its record is free once all have ended.
 */
static inline void job_reaped(struct job *j, struct io_batch *b, uint32_t n, uint32_t whole,
                              uint64_t now)
{
	if (whole)
		dir_account_n(j, &j->st->dir[j->ddir], now - b->issue_ns, now - b->start_ns, whole);
	b->inflight -= n;
	if (!b->inflight)
		j->free_batches[j->nr_free_batches++] = b;
}

/* Brings the I/O and byte counts up to date from the latency counts. */
void job_count(struct job *j);

/*
 * Runs a second phase of the job's I/O with another planner and
 * directions (fio's verify phase): no runtime limit, bandwidth samples of
 * its own; a stop request still ends it.  Returns how long it ran.
 */
uint64_t job_run_phase(struct job *j, plan_fn plan, unsigned ddirs);

/* Statistics start (again) here: at the job's start, or when ramp_time is over. */
void job_start_measuring(struct job *j, uint64_t now);
/* Reaps until nothing is in flight (fio's io_u_quiesce); returns the time. */
uint64_t job_quiesce(struct job *j);

/* Sets up a job in its thread, waits at its group's gate, runs it to the
 * end, and tears it down. */
void job_main(struct job *j);
void start_gate_init(struct start_gate *g);
/* The group's threads are started, `n` of them: the gate opens once they
 * are all ready. */
void start_gate_expect(struct start_gate *g, unsigned n);
void start_gate_destroy(struct start_gate *g);
/* Records a failure that stops the job (first one wins), with its message. */
void job_fail(struct job *j, int err, const char *what);

#endif
