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

struct io_unit {
	uint64_t start_ns; /* planned: fio's start_time */
	uint64_t issue_ns; /* submitted */
	uint64_t offset;
	uint32_t len;
	uint8_t ddir; /* DDIR_* or DDIR_SYNC */
	void *buf;
};

struct bench_engine;

typedef unsigned (*plan_fn)(struct job *j, struct io_unit **ios, unsigned n, uint64_t now);

struct job {
	/* Set before the thread starts. */
	const struct job_def *def;
	const struct job_opts *o;
	unsigned number; /* 1-based over all jobs, as fio's thread_number */
	struct blkring_dev *dev;
	uint64_t region_start, region_len;
	const struct bench_engine *engine;
	const _Atomic bool *stop; /* the run is being stopped */
	struct job_stats *st;

	/* The job thread's. */
	struct io_unit *ios;
	struct io_unit **free; /* stack of idle units */
	struct io_unit **batch;
	unsigned nr_free;
	unsigned depth, inflight;
	unsigned batch_submit, complete_min, complete_max;
	bool draining;
	plan_fn plan;
	unsigned ddirs, ddir; /* directions (bits), and the first */
	int gen_kind;
	struct offset_gen gen[BENCH_DDIR_NR];
	uint32_t bs[BENCH_DDIR_NR];
	bool single;                           /* one direction, fixed units: the lean planners */
	uint64_t short_missing[BENCH_DDIR_NR]; /* bytes short I/Os did not do */
	uint64_t ios_left;                     /* budget of one-direction planners */
	uint64_t bytes_left;                   /* budget of the general planner */
	uint64_t mix_rng;
	unsigned writes_since_sync;
	bool sync_due;
	void *engine_data;
	void *bufs;
	struct lat_log *log; /* write_lat_log; NULL without it */

	uint64_t now_ns; /* the last completion stamp an engine took */
	uint64_t begin_ns, start_ns, ramp_end_ns, end_ns, next_check_ns;
	bool ramping;
	uint64_t next_sample_ns, sample_ns, next_publish_ns;
	uint64_t sample_bytes[BENCH_DDIR_NR], sample_ios[BENCH_DDIR_NR];
	struct rusage ru_start;
	int tid;
	pthread_t thread;
	bool started;
	int done_fd; /* written once when the job is over */

	/* Read by the main thread while the job runs. */
	_Atomic uint64_t prog_ios[BENCH_DDIR_NR];
	_Atomic uint64_t prog_bytes;
	_Atomic bool finished;
};

static inline uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* Errors, short I/Os, flushes, and every I/O of a job that logs latencies. */
void job_complete_slow(struct job *j, struct io_unit *io, int res, uint64_t now);

/*
 * Accounts one completion: latencies and histograms.  Counts are not kept
 * per I/O: the histogram's total is the number of I/Os, and bytes follow
 * from the block size (job_count()).  The engine returns the unit to the
 * idle stack.
 */
static inline void dir_account(struct dir_stats *ds, const struct io_unit *io, uint64_t now)
{
	/* Invariant TSCs the kernel trusts are in step on every CPU, so
	 * stamps of one thread never run backwards. */
	uint64_t clat = now - io->issue_ns, lat = now - io->start_ns;

	lat_add_uncounted(&ds->clat, clat);
	lat_add_uncounted(&ds->lat, lat);
	hist_add(&ds->clat_hist, clat);
	hist_add(&ds->lat_hist, lat);
}

static inline void job_account(struct job *j, struct io_unit *io, int res, uint64_t now)
{
	if (unlikely((unsigned)res != io->len || io->ddir >= BENCH_DDIR_NR || j->log))
		job_complete_slow(j, io, res, now);
	else
		dir_account(&j->st->dir[io->ddir], io, now);
}

/* Brings the counts (ios, bytes, clat and lat N) up to date. */
void job_count(struct job *j);

/* Sets up a job in its thread, runs it to the end, and tears it down. */
void job_main(struct job *j);
/* Records a failure that stops the job (first one wins), with its message. */
void job_fail(struct job *j, int err, const char *what);

#endif
