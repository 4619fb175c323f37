// SPDX-License-Identifier: MIT
/*
 * A job's thread: set-up, the I/O loop (fio's do_io: fill the queue in
 * batches of iodepth_batch_submit, reap when it is full), the periodic
 * checks (stop, ramp, runtime, bandwidth samples), and teardown.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "data.h"
#include "engine.h"
#include "error.h"
#include "job.h"
#include "latlog.h"
#include "shape.h"
#include "timing.h"
#include "verify.h"

#define TICK_NS 1000000ULL      /* stop requests: every millisecond */
#define PUBLISH_NS 100000000ULL /* progress counters: every 100 ms */
#define SAMPLE_NS 500000000ULL  /* bandwidth and IOPS samples: fio's bwavgtime */

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void job_fail(struct job *j, int err, const char *what)
{
	if (err < 0)
		err = -err;
	if (!j->st->error) {
		j->st->error = err;
		fprintf(stderr, "blkring: job '%s': %s: %s (%s)\n", j->o->name, what,
		        strerrorname_np(err) ? strerrorname_np(err) : "?", strerror(err));
	}
	j->draining = true;
}

static void job_io_error(struct job *j, struct io_unit *io, int err)
{
	unsigned kind = io->ddir == DDIR_READ ? COE_READ : COE_WRITE;
	char what[BENCH_PATH_MAX + 128];

	/* fio's fill_device: a full file system ends the job, as its size would. */
	if (j->o->fill_device && (err == ENOSPC || err == EDQUOT)) {
		j->draining = true;
		return;
	}
	j->st->total_err++;
	if (!j->st->first_error)
		j->st->first_error = err;
	if (j->o->continue_on_error & kind)
		return;
	if (io->ddir == DDIR_SYNC)
		snprintf(what, sizeof(what), "fsync error on %s", j->files[io->file].name);
	else
		snprintf(what, sizeof(what), "%s error at offset %llu, buflen %u on %s",
		         ddir_names[io->ddir], (unsigned long long)io->offset, io->len,
		         j->files[io->file].name);
	job_fail(j, err, what);
}

/*
 * fio's per-I/O bandwidth and IOPS (write_bw_log, write_iops_log without
 * log_avg_msec): each I/O is a sample of the results too, bytes * 10^6 /
 * clat ns and 1, as fio's add_bw_sample and add_iops_sample count them.
 */
static void job_log_rates(struct job *j, struct dir_stats *ds, const struct io_unit *io, uint64_t t,
                          uint64_t clat)
{
	if (j->log_bw) {
		uint64_t rate = clat ? (uint64_t)io->len * 1000000 / clat : 0;

		sample_add(&ds->bw, rate);
		latlog_add(j->log, LATLOG_BW, t, rate, io->ddir, io->len, io->offset);
	}
	if (j->log_iops) {
		sample_add(&ds->iops, 1);
		latlog_add(j->log, LATLOG_IOPS, t, 1, io->ddir, io->len, io->offset);
	}
}

/* The I/Os the histograms count, so each per-I/O log has total_ios lines. */
static void job_log_completion(struct job *j, const struct io_unit *io, uint64_t start,
                               uint64_t issue, uint64_t now)
{
	struct dir_stats *ds = &j->st->dir[io->ddir];
	uint64_t t = since(now, j->start_ns), clat = since(now, issue);

	if (!j->log || j->ramping)
		return;
	if (j->log_lat) {
		latlog_add(j->log, LATLOG_CLAT, t, clat, io->ddir, io->len, io->offset);
		latlog_add(j->log, LATLOG_LAT, t, since(now, start), io->ddir, io->len, io->offset);
	}
	job_log_rates(j, ds, io, t, clat);
	if (j->log_hist)
		latlog_hist(j->log, t, io->ddir, io->len, &ds->clat_hist);
}

/* Each unit's slat: its log line, and slat_percentiles' histogram. */
static void job_slat_each(struct job *j, struct io_unit **ios, unsigned n, uint64_t start,
                          uint64_t now)
{
	uint64_t t = since(now, j->start_ns);
	bool log = j->log_lat && !j->ramping;

	for (unsigned i = 0; i < n; i++) {
		if (ios[i]->ddir >= BENCH_DDIR_NR)
			continue;
		if (j->o->slat_percentiles)
			hist_add(&j->st->dir[ios[i]->ddir].slat_hist, now - start);
		if (log)
			latlog_add(j->log, LATLOG_SLAT, t, now - start, ios[i]->ddir, ios[i]->len,
			           ios[i]->offset);
	}
}

void job_complete(struct job *j, struct io_unit *io, int res, uint64_t start, uint64_t issue,
                  uint64_t now)
{
	struct dir_stats *ds;

	/* Discard and write zeroes are commands: they end with 0, not a count. */
	if (!res && (io->ddir == DDIR_TRIM || io->ddir == DDIR_ZERO))
		res = (int)io->len;
	if (res < 0) {
		io->failed = true;
		job_io_error(j, io, -res);
		return;
	}
	if (io->ddir == DDIR_SYNC) {
		j->st->sync_ios++;
		lat_add(&j->st->sync_lat, since(now, issue));
		hist_add(&j->st->sync_hist, since(now, issue));
		return;
	}
	ds = &j->st->dir[io->ddir];
	if (unlikely((unsigned)res != j->bs[io->ddir])) {
		j->short_missing[io->ddir] += j->bs[io->ddir] - (unsigned)res;
		/* Short: fewer bytes than asked, counted as an I/O of that size. */
		if ((unsigned)res != io->len) {
			io->failed = true;
			ds->short_ios++;
		}
	}
	dir_account_n(j, ds, since(now, issue), since(now, start), 1);
	job_log_completion(j, io, start, issue, now);
	if (unlikely(j->timing))
		timing_completed(j, io, since(now, start));
}

void job_count(struct job *j)
{
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		struct dir_stats *ds = &j->st->dir[d];

		ds->ios = ds->clat.n;
		ds->bytes = ds->ios * j->bs[d] - j->short_missing[d];
	}
}

/* ---- measuring ---- */

static void job_reset_budget(struct job *j)
{
	bool unlimited = j->o->time_based;

	j->ios_left = unlimited ? UINT64_MAX : j->files[0].len / j->bs[j->ddir];
	for (unsigned k = 0; k < j->nr_files; k++)
		j->files[k].bytes_left = unlimited ? UINT64_MAX : j->files[k].len;
	j->number_left = j->o->number_ios ? j->o->number_ios : UINT64_MAX;
	/* fio's io_size: the files go round until the job's bytes are done. */
	if (j->o->io_size && !unlimited) {
		j->ios_left = j->o->io_size / j->bs[j->ddir];
		for (unsigned k = 0; k < j->nr_files; k++)
			j->files[k].bytes_left = UINT64_MAX;
		j->io_bytes_left = j->o->io_size;
	} else {
		j->io_bytes_left = UINT64_MAX;
	}
	if (j->ios_left > j->number_left)
		j->ios_left = j->number_left;
}

/* The engine's ring-wide task-work waits so far (none without a ring): read
 * when measuring starts and when the job ends, never per I/O. */
static void job_tw_wait(struct job *j, uint64_t *nr, uint64_t *ns)
{
	*nr = *ns = 0;
	if (j->engine->tw_wait)
		j->engine->tw_wait(j, nr, ns);
}

/* The ring's task-work waits since measuring began. */
static void job_tw_wait_since(struct job *j, struct job_stats *st)
{
	job_tw_wait(j, &st->tw_wait_nr, &st->tw_wait_ns);
	st->tw_wait_nr -= j->tw_wait_nr_start;
	st->tw_wait_ns -= j->tw_wait_ns_start;
}

/* Bandwidth and IOPS samples start over from now, from the counts so far. */
static void job_samples_reset(struct job *j, uint64_t now)
{
	job_count(j);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		j->sample_bytes[d] = j->st->dir[d].bytes;
		j->sample_ios[d] = j->st->dir[d].ios;
	}
	j->bw_sample_ns = j->iops_sample_ns = now;
	j->next_bw_ns = j->bw_period_ns == UINT64_MAX ? UINT64_MAX : now + j->bw_period_ns;
	j->next_iops_ns = j->iops_period_ns == UINT64_MAX ? UINT64_MAX : now + j->iops_period_ns;
	j->next_sample_ns = min_u64(j->next_bw_ns, j->next_iops_ns);
}

/* Statistics start here: at the job's start, or when ramp_time is over. */
void job_start_measuring(struct job *j, uint64_t now)
{
	struct job_stats *st = j->st;
	int error = st->error, first_error = st->first_error;
	uint64_t total_err = st->total_err;

	job_count(j);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		j->ramp_ios[d] += st->dir[d].ios;
		j->ramp_bytes[d] += st->dir[d].bytes;
	}
	job_stats_init(st);
	memset(j->short_missing, 0, sizeof(j->short_missing));
	st->error = error;
	st->first_error = first_error;
	st->total_err = total_err;
	j->ramping = false;
	j->start_ns = now;
	j->end_ns = j->o->runtime_us ? now + j->o->runtime_us * 1000 : UINT64_MAX;
	job_samples_reset(j, now);
	job_reset_budget(j);
	getrusage(RUSAGE_THREAD, &j->ru_start);
	job_tw_wait(j, &j->tw_wait_nr_start, &j->tw_wait_ns_start);
	atomic_store_explicit(&j->prog_start_ns, now, memory_order_relaxed);
	atomic_store_explicit(&j->state, JOB_RUNNING, memory_order_relaxed);
}

/*
 * One interval's rate of each direction, in KiB/s or I/Os per second, to
 * the results and to the log (of the directions that moved, as fio logs).
 */
static void job_sample_rates(struct job *j, uint64_t now, bool bw)
{
	uint64_t dt = now - (bw ? j->bw_sample_ns : j->iops_sample_ns);

	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		struct dir_stats *ds = &j->st->dir[d];
		uint64_t *last = bw ? &j->sample_bytes[d] : &j->sample_ios[d];
		uint64_t moved = (bw ? ds->bytes : ds->ios) - *last;
		uint64_t rate = (uint64_t)((unsigned __int128)moved * 1000000000ULL / dt);

		if (!(j->ddirs & (1U << d)))
			continue;
		rate = bw ? rate / 1024 : rate;
		sample_add(bw ? &ds->bw : &ds->iops, rate);
		if (j->log && moved)
			latlog_add(j->log, bw ? LATLOG_BW : LATLOG_IOPS, since(now, j->start_ns),
			           rate, d, 0, 0);
		*last += moved;
	}
}

static void job_sample(struct job *j, uint64_t now)
{
	job_count(j);
	if (now >= j->next_bw_ns) {
		job_sample_rates(j, now, true);
		j->bw_sample_ns = now;
		j->next_bw_ns = now + j->bw_period_ns;
	}
	if (now >= j->next_iops_ns) {
		job_sample_rates(j, now, false);
		j->iops_sample_ns = now;
		j->next_iops_ns = now + j->iops_period_ns;
	}
	j->next_sample_ns = min_u64(j->next_bw_ns, j->next_iops_ns);
}

/* Counts that never go back, ramp_time included, so the display's rates
 * carry on across the end of the ramp. */
static void job_publish(struct job *j)
{
	uint64_t measured = 0;

	job_count(j);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		const struct dir_stats *ds = &j->st->dir[d];

		atomic_store_explicit(&j->prog_ios[d], j->ramp_ios[d] + ds->ios,
		                      memory_order_relaxed);
		atomic_store_explicit(&j->prog_bytes[d], j->ramp_bytes[d] + ds->bytes,
		                      memory_order_relaxed);
		measured += ds->bytes;
	}
	atomic_store_explicit(&j->prog_measured, measured, memory_order_relaxed);
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000;
}

/* The thread's CPU time and faults since measuring began. */
static void job_rusage(const struct job *j, struct job_stats *st)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	st->usr_ns = tv_ns(ru.ru_utime) - tv_ns(j->ru_start.ru_utime);
	st->sys_ns = tv_ns(ru.ru_stime) - tv_ns(j->ru_start.ru_stime);
	st->ctx =
	    (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw - j->ru_start.ru_nvcsw - j->ru_start.ru_nivcsw);
	st->majf = (uint64_t)(ru.ru_majflt - j->ru_start.ru_majflt);
	st->minf = (uint64_t)(ru.ru_minflt - j->ru_start.ru_minflt);
}

/* --status-interval's copy: the statistics so far, runtime up to now (a
 * verify phase's own time is counted when it ends). */
static void job_snapshot(struct job *j, uint64_t now)
{
	job_count(j);
	*j->snap = *j->st;
	if (atomic_load_explicit(&j->state, memory_order_relaxed) == JOB_RUNNING)
		j->snap->runtime_ns = since(now, j->start_ns);
	job_rusage(j, j->snap);
	job_tw_wait_since(j, j->snap);
	j->snap_gen = atomic_load_explicit(&j->snap_req, memory_order_relaxed);
	atomic_store_explicit(&j->snap_done, j->snap_gen, memory_order_release);
}

/* Everything that is not per batch: at most every TICK_NS, or at a
 * deadline.  Returns the time (timing's steps may wait). */
static uint64_t job_tick(struct job *j, uint64_t now)
{
	uint64_t next = now + TICK_NS;

	/* Acquire: the main thread is done with the last copy it asked for. */
	if (unlikely(j->snap) &&
	    atomic_load_explicit(&j->snap_req, memory_order_acquire) != j->snap_gen)
		job_snapshot(j, now);

	if (atomic_load_explicit(j->stop, memory_order_relaxed))
		j->draining = true;
	if (j->ramping && now >= j->ramp_end_ns)
		job_start_measuring(j, now);
	if (j->ramping) {
		next = min_u64(next, j->ramp_end_ns);
	} else {
		/* As fio's: no sample for the interval that ends the run. */
		if (now >= j->end_ns)
			j->draining = true;
		else if (now >= j->next_sample_ns)
			job_sample(j, now);
		if (unlikely(j->timing))
			now = timing_tick(j, now);
		next = min_u64(min_u64(next, j->end_ns), j->next_sample_ns);
	}
	if (now >= j->next_publish_ns) {
		job_publish(j);
		j->next_publish_ns = now + PUBLISH_NS;
	}
	j->next_check_ns = next;
	return now;
}

/* ---- the I/O loop ---- */

static void job_unplan(struct job *j, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		j->free[j->nr_free++] = j->batch[i];
	j->inflight -= n;
	j->free_batches[j->nr_free_batches++] = j->issuing;
}

/* The slat of a submission of several directions (or of a job that logs
 * each unit's): a sum per direction. */
static void job_slat_mixed(struct job *j, struct io_unit **ios, unsigned n, struct io_batch *b,
                           uint64_t now)
{
	uint64_t cnt[BENCH_DDIR_NR + 1] = {0};

	if (unlikely(j->slat_each))
		job_slat_each(j, ios, n, b->start_ns, now);
	for (unsigned i = 0; i < n; i++)
		cnt[ios[i]->ddir]++;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		if (cnt[d])
			lat_add_n(&j->st->dir[d].slat, now - b->start_ns, cnt[d]);
}

/* Every unit of a batch was planned at b's start and submitted at `now`. */
static void job_submitted(struct job *j, struct io_unit **ios, unsigned n, struct io_batch *b,
                          uint64_t now)
{
	struct job_stats *st = j->st;

	st->depth_map[depth_bucket(j->inflight)] += n;
	st->submit_map[batch_bucket(n)]++;
	st->submits++;
	st->issued += n;
	if (j->engine->sync) {
		/* Done inside submit: one completion batch per submission. */
		st->complete_map[batch_bucket(n)]++;
		st->completes++;
		j->free_batches[j->nr_free_batches++] = b;
		return;
	}
	b->issue_ns = now;
	b->inflight = n;
	if (j->single) {
		lat_add_n(&st->dir[j->ddir].slat, now - b->start_ns, n);
		return;
	}
	job_slat_mixed(j, ios, n, b, now);
}

#define RATE_CATCH_UP_NS 100000000ULL /* how far behind a job may catch up */

/* How many of n are due; the schedule moves on by them.  A job that fell
 * behind catches up, as fio's does; more than 100 ms behind (a slow
 * device) it takes up again from now. */
static unsigned rate_due(struct job *j, uint64_t now, unsigned n)
{
	uint64_t due;

	if (now - j->next_issue_ns > RATE_CATCH_UP_NS)
		j->next_issue_ns = now - j->rate_period_ns;
	due = (now - j->next_issue_ns) / j->rate_period_ns + 1;
	if (n > due)
		n = (unsigned)due;
	j->next_issue_ns += n * j->rate_period_ns;
	return n;
}

/* A paced job's batch: what its rate allows, up to its next pause. */
static __attribute__((noinline)) unsigned pace_batch(struct job *j, uint64_t now, unsigned n)
{
	if (j->rate_period_ns && !timing_poisson(j))
		n = rate_due(j, now, n);
	if (unlikely(j->timing))
		n = timing_due(j, now, n);
	return n < j->think_left ? n : j->think_left;
}

/*
 * Plans and submits a batch.  Batches in flight are fewer than units in
 * flight, so with room for a unit there is an idle record.
 */
static uint64_t job_issue(struct job *j, uint64_t now)
{
	unsigned n = j->depth - j->inflight;
	struct io_batch *b;
	uint64_t t;
	int ret;

	if (n > j->batch_submit)
		n = j->batch_submit;
	if (unlikely(j->paced))
		n = pace_batch(j, now, n);
	n = j->plan(j, j->batch, n);
	if (!n) {
		j->draining = true;
		return now;
	}
	b = j->issuing = j->free_batches[--j->nr_free_batches];
	b->start_ns = now;
	j->inflight += n;
	ret = j->engine->submit(j, j->batch, n);
	if (unlikely(ret < 0)) {
		job_unplan(j, n);
		job_fail(j, ret, "submitting I/O");
		return now;
	}
	t = clock_now_ns();
	job_submitted(j, j->batch, n, b, t);
	if (unlikely(j->paced))
		j->think_left -= n;
	return t;
}

static uint64_t job_reap(struct job *j)
{
	unsigned min = j->draining ? j->inflight : j->complete_min;
	int n;

	if (min > j->inflight)
		min = j->inflight;
	if (!min)
		min = 1;
	n = j->engine->reap(j, min, j->complete_max);
	if (unlikely(n < 0)) {
		/* The ring's exit settles what is still in flight. */
		job_fail(j, n, "reaping completions");
		j->inflight = 0;
		return clock_now_ns();
	}
	j->st->complete_map[batch_bucket((unsigned)n)]++;
	j->st->completes++;
	return j->now_ns;
}

/* With a rate, before the next I/O is due: reap what is in flight, or
 * sleep until it is due (or the next tick). */
static uint64_t rate_wait(struct job *j, uint64_t now)
{
	if (j->inflight)
		return job_reap(j);
	clock_sleep_ns(min_u64(j->next_issue_ns, j->next_check_ns) - now);
	return clock_now_ns();
}

/* fio's thinktime, once the I/Os before it ended: spin, then sleep. */
static uint64_t think(struct job *j, uint64_t now)
{
	const struct job_opts *o = j->o;
	uint64_t spin_end = now + o->thinktime_spin_us * 1000;

	while (now < spin_end)
		now = clock_now_ns();
	if (o->thinktime_us > o->thinktime_spin_us)
		clock_sleep_ns((o->thinktime_us - o->thinktime_spin_us) * 1000);
	j->think_left = j->o->thinktime_blocks;
	return clock_now_ns();
}

/* A paced job waits: for its flow (looked at first, so that what it lets
 * go is fresh), for its next pause, or for its rate.  Out of line, as the
 * other paced steps, so that the loop of unpaced jobs stays as it is. */
static __attribute__((noinline)) bool pace_holds(struct job *j, uint64_t now)
{
	bool flow_holds = unlikely(j->timing) && timing_holds(j);

	return flow_holds || !j->think_left || (j->rate_period_ns && now < j->next_issue_ns);
}

static __attribute__((noinline)) uint64_t pace_wait(struct job *j, uint64_t now)
{
	if (!j->think_left)
		return j->inflight ? job_reap(j) : think(j, now);
	if (unlikely(j->timing) && timing_flow_held(j))
		return timing_flow_wait(j);
	return rate_wait(j, now);
}

/* Issues and reaps until the planner has nothing left and nothing is in flight. */
static uint64_t job_run_io(struct job *j, uint64_t now)
{
	j->next_check_ns = now;
	for (;;) {
		if (unlikely(now >= j->next_check_ns))
			now = job_tick(j, now);
		if (!j->draining && j->inflight < j->depth) {
			if (unlikely(j->paced) && pace_holds(j, now))
				now = pace_wait(j, now);
			else
				now = job_issue(j, now);
			continue;
		}
		if (!j->inflight)
			break;
		now = job_reap(j);
	}
	job_publish(j);
	return now;
}

uint64_t job_quiesce(struct job *j)
{
	uint64_t now = clock_now_ns();

	while (j->inflight)
		now = job_reap(j);
	return now;
}

static void job_loop(struct job *j)
{
	uint64_t now = clock_now_ns();

	job_start_measuring(j, now);
	if (j->o->ramp_time_us) {
		j->ramping = true;
		j->ramp_end_ns = now + j->o->ramp_time_us * 1000;
		atomic_store_explicit(&j->state, JOB_RAMP, memory_order_relaxed);
	}
	j->next_issue_ns = now;
	j->think_left = j->o->thinktime_us ? j->o->thinktime_blocks : UINT_MAX;
	now = job_run_io(j, now);
	/* fio's loops: the same I/O again, counted in the same results. */
	for (unsigned l = 1; l < j->o->loops && now < j->end_ns && !j->st->error &&
	                     !atomic_load_explicit(j->stop, memory_order_relaxed);
	     l++) {
		job_reset_budget(j);
		if (j->shape)
			shape_rewind(j);
		j->draining = false;
		now = job_run_io(j, now);
	}
	j->st->runtime_ns = since(now, j->start_ns);
}

/* fio's startdelay: the job waits before it starts, and a stop ends the
 * wait; true when it is to run. */
static bool job_start_delay(struct job *j)
{
	uint64_t end = clock_now_ns() + j->o->startdelay_us * 1000;

	/* In slices of 10 ms, so that a stop is seen. */
	while (!atomic_load_explicit(j->stop, memory_order_relaxed)) {
		uint64_t now = clock_now_ns();

		if (now >= end)
			return true;
		clock_sleep_ns(min_u64(end - now, 10000000ULL));
	}
	return false;
}

uint64_t job_run_phase(struct job *j, plan_fn plan, unsigned ddirs)
{
	uint64_t start = clock_now_ns(), now;

	job_samples_reset(j, start);
	j->plan = plan;
	j->ddirs = ddirs;
	j->ddir = (unsigned)__builtin_ctz(ddirs);
	j->draining = false;
	j->ramping = false;
	j->think_left = UINT_MAX; /* the verify pass does not pause */
	j->end_ns = UINT64_MAX;
	atomic_store_explicit(&j->state, JOB_VERIFYING, memory_order_relaxed);
	now = job_run_io(j, start);
	return since(now, start);
}

/* ---- set-up and teardown ---- */

static uint64_t job_max_bs(const struct job *j)
{
	uint64_t max = 0;

	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		if ((j->ddirs & (1U << d)) && opts_max_bs(j->o, d) > max)
			max = opts_max_bs(j->o, d);
	return max;
}

static unsigned clamp_batch(unsigned v, unsigned depth)
{
	return !v || v > depth ? depth : v;
}

/*
 * Data buffer bytes per unit.  Discard and write zeroes carry no data, so
 * a job that only trims or zeroes needs none, unless fixedbufs registers
 * them all the same (verify takes reads or writes, which carry data).
 */
static uint64_t job_buf_bs(const struct job *j)
{
	unsigned data = (1U << DDIR_READ) | (1U << DDIR_WRITE);

	if (!(j->ddirs & data) && !j->o->fixedbufs && !j->o->verify)
		return 0;
	return job_max_bs(j);
}

/* What the buffers hold is data_setup()'s. */
static int job_alloc_bufs(struct job *j, uint64_t bs)
{
	if (!bs)
		return 0;
	if (posix_memalign(&j->bufs, 4096, j->depth * bs))
		return -ENOMEM;
	j->bufs_len = j->depth * bs;
	return 0;
}

static int job_alloc(struct job *j)
{
	uint64_t bs = job_buf_bs(j);

	j->ios = calloc(j->depth, sizeof(*j->ios));
	j->free = calloc(j->depth, sizeof(*j->free));
	j->batch = calloc(j->depth, sizeof(*j->batch));
	j->batches = calloc(j->depth, sizeof(*j->batches));
	j->free_batches = calloc(j->depth, sizeof(*j->free_batches));
	if (!j->ios || !j->free || !j->batch || !j->batches || !j->free_batches ||
	    job_alloc_bufs(j, bs))
		return -ENOMEM;
	for (unsigned i = 0; i < j->depth; i++) {
		j->ios[i].buf = bs ? (char *)j->bufs + i * bs : NULL;
		j->free[i] = &j->ios[i];
		j->free_batches[i] = &j->batches[i];
	}
	j->nr_free = j->depth;
	j->nr_free_batches = j->depth;
	return 0;
}

static uint64_t job_seed_base(const struct job *j)
{
	uint64_t seed = j->o->randseed;

	if (!j->o->randrepeat && !opt_is_set(j->o, "randseed") &&
	    getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed ^= clock_mono_ns();
	return seed;
}

/* One I/O's share of a second under fio's rate or rate_iops (0: none). */
static uint64_t rate_period(const struct job_opts *o, unsigned d, uint64_t bs)
{
	if (o->rate_iops[d])
		return 1000000000ULL / o->rate_iops[d] ?: 1;
	if (o->rate[d])
		return bs * 1000000000ULL / o->rate[d] ?: 1;
	return 0;
}

/* fio's logs of the job, as its init.c sets them up: the latency logs fio
 * measures, a per-I/O bw or iops log unless log_avg_msec averages it. */
static void job_log_spec(const struct job *j, struct log_spec *s)
{
	const struct job_opts *o = j->o;
	const char *lat = opts_log_name(o, "write_lat_log");

	*s = (struct log_spec){.number = j->number,
	                       .per_job = o->per_job_logs,
	                       .offsets = o->log_offset,
	                       .log_max = o->log_max_value,
	                       .avg_msec = o->log_avg_msec,
	                       .hist_msec = o->log_hist_msec};
	s->name[LATLOG_SLAT] = o->gtod_reduce || o->disable_slat ? NULL : lat;
	s->name[LATLOG_CLAT] = o->gtod_reduce || o->disable_clat ? NULL : lat;
	s->name[LATLOG_LAT] = o->gtod_reduce || o->disable_lat ? NULL : lat;
	s->name[LATLOG_BW] = opts_log_name(o, "write_bw_log");
	s->name[LATLOG_IOPS] = opts_log_name(o, "write_iops_log");
	s->name[LATLOG_HIST] = opts_log_name(o, "write_hist_log");
}

/* fio's gtod_reduce(): no per-I/O iops with every time stamp left out. */
static bool job_reduced(const struct job_opts *o)
{
	return o->gtod_reduce || (o->disable_clat && o->disable_slat && o->disable_bw);
}

/* The logs, what each completion writes to them, and the sample periods. */
static int job_open_logs(struct job *j)
{
	const struct job_opts *o = j->o;
	struct log_spec s;
	bool any = false;
	int ret;

	job_log_spec(j, &s);
	for (unsigned k = 0; k < LATLOG_NR; k++)
		any |= s.name[k] != NULL;
	j->bw_period_ns = j->iops_period_ns = SAMPLE_NS;
	if (!any)
		return 0;
	ret = latlog_open(&j->log, &s);
	if (ret)
		return ret;
	if (s.name[LATLOG_BW])
		j->bw_period_ns = o->log_avg_msec ? o->log_avg_msec * 1000000ULL : UINT64_MAX;
	if (s.name[LATLOG_IOPS])
		j->iops_period_ns = o->log_avg_msec ? o->log_avg_msec * 1000000ULL : UINT64_MAX;
	/* stats=0: fio measures nothing, so its logs stay empty. */
	j->log_lat = o->stats && (s.name[LATLOG_SLAT] || s.name[LATLOG_CLAT] || s.name[LATLOG_LAT]);
	j->log_bw = o->stats && j->bw_period_ns == UINT64_MAX && !o->disable_bw;
	j->log_iops = o->stats && j->iops_period_ns == UINT64_MAX && !job_reduced(o);
	j->log_hist = o->stats && s.name[LATLOG_HIST] && o->log_hist_msec && !o->disable_clat &&
	              !o->gtod_reduce;
	return 0;
}

/* Logs, slat percentiles, latency checks and verify's mixed reads look at
 * single I/Os: the general accounting (and preparation) for them. */
static void job_choose_accounting(struct job *j)
{
	const struct job_opts *o = j->o;
	bool logs = j->log_lat || j->log_bw || j->log_iops || j->log_hist;
	bool checks = timing_per_io(o);

	j->slat_each = (j->log_lat || o->slat_percentiles) && o->stats;
	j->lat_hist = o->lat_percentiles;
	j->single = j->lean && !logs && !j->slat_each && !checks && !j->verify;
	j->account_each = logs || j->shape || checks;
}

static int job_setup(struct job *j)
{
	const struct job_opts *o = j->o;
	int ret;

	j->ddirs = rw_modes[o->rw.mode].ddirs;
	j->depth = j->engine->sync ? 1 : o->iodepth;
	j->batch_submit = clamp_batch(o->iodepth_batch_submit, j->depth);
	j->complete_max = clamp_batch(o->iodepth_batch_complete_max, j->depth);
	j->complete_min = o->iodepth_batch_complete_min < j->complete_max
	                      ? o->iodepth_batch_complete_min
	                      : j->complete_max;
	if (CPU_COUNT(&o->cpus_allowed)) {
		ret = pthread_setaffinity_np(pthread_self(), sizeof(o->cpus_allowed),
		                             &o->cpus_allowed);
		if (ret) {
			job_fail(j, ret, "applying cpus_allowed");
			return -ret;
		}
	}
	ret = job_alloc(j);
	if (ret) {
		job_fail(j, ret, "allocating I/O buffers");
		return ret;
	}
	ret = plan_setup(j, job_seed_base(j));
	if (ret) {
		job_fail(j, ret, "setting up the workload's shape");
		return ret;
	}
	j->rate_period_ns = rate_period(o, j->ddir, j->bs[j->ddir]);
	j->paced = j->rate_period_ns || o->thinktime_us;
	ret = data_setup(j);
	if (ret) {
		job_fail(j, ret, "setting up the buffers' data");
		return ret;
	}
	if (o->verify) {
		ret = verify_setup(j);
		if (ret) {
			job_fail(j, ret, ret == -EINVAL ? tool_last_error() : "setting up verify");
			return ret;
		}
	}
	ret = job_open_logs(j);
	if (ret) {
		job_fail(j, ret, tool_last_error());
		return ret;
	}
	job_choose_accounting(j);
	ret = j->engine->init ? j->engine->init(j) : 0;
	if (ret)
		return ret;
	/* After the engine's set-up, which sizes the ring by the full depth. */
	ret = timing_setup(j);
	if (ret)
		job_fail(j, ret, "setting up rate_min, flow, latency_target or steadystate");
	return ret;
}

/* fio's gtod_reduce and disable_{lat,clat,slat}: the latencies they leave
 * out read as nothing measured, once the job's counts are final. */
static void job_drop_disabled(struct job *j)
{
	const struct job_opts *o = j->o;

	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		struct dir_stats *ds = &j->st->dir[d];

		if (o->gtod_reduce || o->disable_slat) {
			memset(&ds->slat, 0, sizeof(ds->slat));
			memset(&ds->slat_hist, 0, sizeof(ds->slat_hist));
		}
		if (o->gtod_reduce || o->disable_clat) {
			memset(&ds->clat, 0, sizeof(ds->clat));
			memset(&ds->clat_hist, 0, sizeof(ds->clat_hist));
		}
		if (o->gtod_reduce || o->disable_lat) {
			memset(&ds->lat, 0, sizeof(ds->lat));
			memset(&ds->lat_hist, 0, sizeof(ds->lat_hist));
		}
	}
}

static void job_finish(struct job *j)
{
	int ret;

	for (unsigned k = 0;
	     j->o->end_fsync && (j->ddirs & (1U << DDIR_WRITE)) && !j->st->error && k < j->nr_files;
	     k++) {
		ret = blkring_dev_flush(j->files[k].dev);
		if (ret)
			job_fail(j, ret, "end_fsync");
	}
	job_rusage(j, j->st);
	job_tw_wait_since(j, j->st);
	job_drop_disabled(j);
}

static void job_teardown(struct job *j)
{
	int ret;

	if (j->engine->exit)
		j->engine->exit(j);
	timing_finish(j);
	ret = latlog_close(j->log, since(clock_now_ns(), j->start_ns));
	if (ret)
		job_fail(j, ret, tool_last_error());
	j->log = NULL;
	if (j->verify)
		verify_teardown(j);
	data_teardown(j);
	shape_free(j);
	free(j->ios);
	free(j->free);
	free(j->batch);
	free(j->batches);
	free(j->free_batches);
	free(j->bufs);
	j->ios = NULL;
	j->free = j->batch = NULL;
	j->batches = NULL;
	j->free_batches = NULL;
	j->bufs = NULL;
}

void start_gate_init(struct start_gate *g)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->ready = g->expected = 0;
}

void start_gate_destroy(struct start_gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

static void start_gate_check(struct start_gate *g)
{
	if (g->expected && g->ready == g->expected)
		pthread_cond_broadcast(&g->cond);
}

void start_gate_expect(struct start_gate *g, unsigned n)
{
	pthread_mutex_lock(&g->lock);
	g->expected = n;
	start_gate_check(g);
	pthread_mutex_unlock(&g->lock);
}

static void start_gate_pass(struct start_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->ready++;
	start_gate_check(g);
	while (!g->expected || g->ready < g->expected)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

void job_main(struct job *j)
{
	bool set_up;

	j->tid = (int)gettid();
	set_up = !job_setup(j);
	start_gate_pass(j->gate);
	if (set_up && job_start_delay(j)) {
		/* verify_only: a writing job only checks what it wrote before. */
		if (!j->o->verify_only || !(j->ddirs & (1U << DDIR_WRITE)))
			job_loop(j);
		if (j->verify)
			verify_phase(j);
		job_finish(j);
	}
	/* fio's exitall: the jobs running beside this one end too. */
	if (j->o->exitall || (j->o->exitall_on_error && j->st->error))
		atomic_store(j->stop, true);
	job_teardown(j);
}
