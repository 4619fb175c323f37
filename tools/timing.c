// SPDX-License-Identifier: MIT
/*
 * fio's rate_min, rate_process=poisson, flow, latency_target, max_latency
 * and steadystate (timing.h), with fio 3.33's rules: its backend.c,
 * io_u.c, flow.c and steadystate.c are the reference for what each does.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "job.h"
#include "timing.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define RATE_SETTLE_NS (2 * NS_PER_S)    /* fio lets a job run 2 s before rate_min counts */
#define SS_SAMPLE_NS NS_PER_S            /* fio's STEADYSTATE_MSEC */
#define SS_WAIT_NS (NS_PER_S / 10)       /* a group judge's wait for the others' sample */
#define POISSON_CATCH_UP_NS 100000000ULL /* as the linear schedule's (job.c) */

/* The jobs of one flow_id: their I/Os so far (from 1, as fio's) and weights. */
struct flow {
	struct flow *next;
	unsigned id, refs;
	_Atomic uint64_t count;
	_Atomic unsigned weight;
};

static struct flow *flows;
static pthread_mutex_t flows_lock = PTHREAD_MUTEX_INITIALIZER;

struct timing {
	/* rate_min, rate_iops_min: where each direction's window began. */
	bool rate_check;
	bool rate_started[BENCH_DDIR_NR];
	uint64_t rate_ns[BENCH_DDIR_NR], rate_bytes[BENCH_DDIR_NR], rate_ios[BENCH_DDIR_NR];
	bool poisson;
	uint64_t poisson_rng;
	struct flow *flow;
	uint64_t flow_count;   /* this job's I/Os in the flow */
	unsigned flow_allowed; /* I/Os the flow let go at the last look */
	bool lat_counted;      /* latencies are measured (not disable_lat) */
	uint64_t max_lat_ns[BENCH_DDIR_NR];
	/* latency_target: fio's latency_qd, _low and _high, its cycle and
	 * the I/Os over the target in it. */
	uint64_t target_ns;
	unsigned qd, qd_low, qd_high, max_qd, stable;
	uint64_t cycle_ns, cycle_ios, done_ios, failed;
	bool quiesce, end_run;
	/* steadystate: the samples, fio's sums over them, and the last counts. */
	struct ss_result ss;
	unsigned tail;
	uint64_t sum_y, sum_x, sum_x_sq, sum_xy, oldest_y;
	uint64_t ss_ramp_ns, ss_epoch_ns, ss_next_ns, ss_prev_ns, ss_prev_ios, ss_prev_bytes;
	bool ss_judge;   /* judges its ss_group (or itself, without one) */
	bool ss_waiting; /* for the group's others to take the same sample */
	uint64_t ss_bw, ss_iops, ss_wait_end_ns;
};

static bool any_set(const uint64_t *v)
{
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		if (v[d])
			return true;
	return false;
}

bool timing_per_io(const struct job_opts *o)
{
	return o->latency_target_us || any_set(o->max_latency_us);
}

static bool timing_wanted(const struct job *j)
{
	const struct job_opts *o = j->o;

	return any_set(o->rate_min) || any_set(o->rate_iops_min) || o->flow ||
	       (o->rate_process == RATE_PROCESS_POISSON && j->rate_period_ns) || timing_per_io(o) ||
	       o->ss_dur_us;
}

/* ---- flow ---- */

static int flow_join(struct timing *t, unsigned id, unsigned weight)
{
	struct flow *f;

	pthread_mutex_lock(&flows_lock);
	for (f = flows; f && f->id != id; f = f->next)
		;
	if (!f && (f = calloc(1, sizeof(*f)))) {
		f->id = id;
		atomic_init(&f->count, 1);
		f->next = flows;
		flows = f;
	}
	if (f) {
		f->refs++;
		atomic_fetch_add(&f->weight, weight);
	}
	pthread_mutex_unlock(&flows_lock);
	t->flow = f;
	return f ? 0 : -ENOMEM;
}

/* As fio's flow_put: the job's I/Os and weight leave the flow with it. */
static void flow_leave(struct timing *t, unsigned weight)
{
	struct flow *f = t->flow, **p;

	pthread_mutex_lock(&flows_lock);
	atomic_fetch_sub(&f->count, t->flow_count);
	atomic_fetch_sub(&f->weight, weight);
	if (!--f->refs) {
		for (p = &flows; *p != f; p = &(*p)->next)
			;
		*p = f->next;
		free(f);
	}
	pthread_mutex_unlock(&flows_lock);
	t->flow = NULL;
}

/* fio's flow_threshold_exceeded for each of the next I/Os: the job's share
 * of the flow's I/Os may not pass its share of the weights. */
static unsigned flow_allowance(const struct job *j, const struct timing *t)
{
	double share = (double)j->o->flow / (double)atomic_load(&t->flow->weight);
	uint64_t shared = atomic_load(&t->flow->count);
	unsigned k = 0;

	while (k < j->batch_submit && (double)(t->flow_count + k) / (double)(shared + k) <= share)
		k++;
	return k;
}

bool timing_holds(struct job *j)
{
	struct timing *t = j->timing;

	if (!t->flow)
		return false;
	t->flow_allowed = flow_allowance(j, t);
	return !t->flow_allowed;
}

bool timing_flow_held(const struct job *j)
{
	return j->timing->flow && !j->timing->flow_allowed;
}

/* fio's: with flow_sleep, let the I/Os end and sleep; else look again. */
uint64_t timing_flow_wait(struct job *j)
{
	if (j->o->flow_sleep_us) {
		job_quiesce(j);
		clock_sleep_ns(j->o->flow_sleep_us * 1000);
	} else {
		sched_yield();
	}
	return clock_now_ns();
}

static unsigned flow_take(struct timing *t, unsigned n)
{
	if (n > t->flow_allowed)
		n = t->flow_allowed;
	atomic_fetch_add(&t->flow->count, n);
	t->flow_count += n;
	t->flow_allowed -= n;
	return n;
}

/* ---- rate_process=poisson ---- */

/* An exponential gap of mean `mean` ns: fio's -log(U) times the mean, U in (0, 1]. */
static uint64_t poisson_gap(struct timing *t, uint64_t mean)
{
	double u = (double)((rng_next(&t->poisson_rng) >> 11) + 1) * 0x1p-53;

	return (uint64_t)((double)mean * -log(u));
}

/* The I/Os of n that are due, each with its own gap after the one before. */
static unsigned poisson_due(struct job *j, struct timing *t, uint64_t now, unsigned n)
{
	unsigned due = 0;

	if (now - j->next_issue_ns > POISSON_CATCH_UP_NS)
		j->next_issue_ns = now;
	while (due < n && j->next_issue_ns <= now) {
		j->next_issue_ns += poisson_gap(t, j->rate_period_ns);
		due++;
	}
	return due;
}

unsigned timing_due(struct job *j, uint64_t now, unsigned n)
{
	struct timing *t = j->timing;

	if (t->poisson)
		n = poisson_due(j, t, now, n);
	return t->flow ? flow_take(t, n) : n;
}

bool timing_poisson(const struct job *j)
{
	return j->timing && j->timing->poisson;
}

/* ---- rate_min, rate_iops_min ---- */

/* fio's __check_min_rate, failing with its message: true when it failed. */
static bool rate_missed(struct job *j, struct timing *t, unsigned d, uint64_t ms)
{
	const struct job_opts *o = j->o;
	const struct dir_stats *ds = &j->st->dir[d];
	char what[192];
	uint64_t got;

	if (o->rate_min[d]) {
		got = (ds->bytes - t->rate_bytes[d]) * 1000 / ms;
		if (got >= o->rate_min[d])
			return false;
		snprintf(what, sizeof(what),
		         "check_min_rate: rate_min=%" PRIu64 "B/s not met, got %" PRIu64 "B/s",
		         o->rate_min[d], got);
	} else {
		got = (ds->ios - t->rate_ios[d]) * 1000 / ms;
		if (got >= o->rate_iops_min[d])
			return false;
		snprintf(what, sizeof(what),
		         "check_min_rate: rate_iops_min=%" PRIu64 " not met, got %" PRIu64 " IOPS",
		         o->rate_iops_min[d], got);
	}
	job_fail(j, EIO, what);
	return true;
}

/* Each direction's rate over the rate_cycle since its last look, from 2 s on. */
static void rate_check(struct job *j, struct timing *t, uint64_t now)
{
	const struct job_opts *o = j->o;
	bool counted = false;

	if (now - j->start_ns < RATE_SETTLE_NS)
		return;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		uint64_t ms = (now - t->rate_ns[d]) / NS_PER_MS;

		if (!o->rate_min[d] && !o->rate_iops_min[d])
			continue;
		if (t->rate_started[d] && (ms < o->rate_cycle_ms || !ms))
			continue;
		if (!counted) {
			job_count(j);
			counted = true;
		}
		if (!j->st->dir[d].bytes)
			continue;
		if (t->rate_started[d] && rate_missed(j, t, d, ms))
			return;
		t->rate_started[d] = true;
		t->rate_ns[d] = now;
		t->rate_bytes[d] = j->st->dir[d].bytes;
		t->rate_ios[d] = j->st->dir[d].ios;
	}
}

/* ---- max_latency, latency_target ---- */

static void lat_fatal(struct job *j, const struct io_unit *io, uint64_t lat, uint64_t max)
{
	char what[BENCH_PATH_MAX + 192];

	snprintf(what, sizeof(what),
	         "max latency exceeded: latency of %" PRIu64 " nsec exceeds specified max (%" PRIu64
	         " nsec): %s %s %" PRIu64 " %u",
	         lat, max, j->files[io->file].name, ddir_names[io->ddir], io->offset, io->len);
	job_fail(j, ETIMEDOUT, what);
}

static void lat_new_cycle(struct timing *t, uint64_t now)
{
	t->cycle_ns = now;
	t->cycle_ios = t->done_ios;
	t->failed = 0;
}

/* fio's __lat_target_failed: halfway down to the last depth that met the
 * target; false at depth 1, where there is nowhere to go. */
static bool lat_step_down(struct job *j, struct timing *t)
{
	if (t->qd == 1)
		return false;
	t->qd_high = t->qd;
	if (t->qd == t->qd_low)
		t->qd_low--;
	t->qd = (t->qd + t->qd_low) / 2;
	t->stable = 0;
	j->depth = t->qd;
	return true;
}

/* fio's lat_target_success: double up until a depth fails, then bisect;
 * a depth that stays gets one more window measured on its own, and ends
 * the job (not with latency_run). */
static uint64_t lat_step_up(struct job *j, struct timing *t, uint64_t now)
{
	unsigned qd = t->qd;

	t->qd_low = qd;
	/* fio's: three successes just below the failing depth try it again. */
	if (qd + 1 == t->qd_high && ++t->stable >= 3) {
		t->qd_high++;
		t->stable = 0;
	}
	t->qd = t->qd_high != t->max_qd ? (qd + t->qd_high) / 2 : qd * 2;
	if (t->qd > t->max_qd)
		t->qd = t->max_qd;
	j->depth = t->qd;
	if (!j->o->latency_run && t->qd == qd) {
		if (t->end_run) {
			j->draining = true;
		} else {
			now = job_quiesce(j);
			t->end_run = true;
			job_start_measuring(j, now);
		}
	}
	lat_new_cycle(t, now);
	return now;
}

/* fio's lat_target_check, once latency_window has passed. */
static uint64_t lat_check(struct job *j, struct timing *t, uint64_t now)
{
	uint64_t ios = t->done_ios - t->cycle_ios;

	/* The first window starts with the job's first I/Os (after startdelay). */
	if (!t->cycle_ns) {
		lat_new_cycle(t, now);
		return now;
	}
	if (now - t->cycle_ns < j->o->latency_window_us * 1000)
		return now;
	/* No I/O in the window counts as a miss, as fio's 0/0 does. */
	if (ios && 100.0 * (double)(ios - t->failed) / (double)ios >= j->o->latency_percentile)
		return lat_step_up(j, t, now);
	if (lat_step_down(j, t)) {
		now = job_quiesce(j);
		lat_new_cycle(t, now);
	}
	return now;
}

/* latency_target's steps, at the tick (fio looks after every reap). */
static uint64_t lat_tick(struct job *j, struct timing *t, uint64_t now)
{
	/* A step down waits for the deeper queue's I/Os, as fio's quiesce. */
	while (t->quiesce) {
		t->quiesce = false;
		now = job_quiesce(j);
		lat_new_cycle(t, now);
	}
	return j->draining ? now : lat_check(j, t, now);
}

/* An I/O over the target: at the 100th percentile a step down at once (at
 * depth 1 the job fails), else a miss counted in the window. */
static void lat_missed(struct job *j, struct timing *t, const struct io_unit *io, uint64_t lat)
{
	if (j->o->latency_percentile < 100.0) {
		t->failed++;
		return;
	}
	if (!lat_step_down(j, t))
		lat_fatal(j, io, lat, t->target_ns);
	else
		t->quiesce = true;
}

void timing_completed(struct job *j, const struct io_unit *io, uint64_t lat)
{
	struct timing *t = j->timing;

	t->done_ios++;
	if (!t->lat_counted || io->ddir >= BENCH_DDIR_NR)
		return;
	if (t->max_lat_ns[io->ddir] && lat > t->max_lat_ns[io->ddir])
		lat_fatal(j, io, lat, t->max_lat_ns[io->ddir]);
	if (t->target_ns && lat > t->target_ns)
		lat_missed(j, t, io, lat);
}

/* ---- steadystate ---- */

static uint64_t ss_y(const struct timing *t, unsigned i)
{
	return t->ss.state & SS_IOPS ? t->ss.iops[i] : t->ss.bw[i];
}

/* The ring moves on by a sample (fio's head and tail). */
static void ss_advance(struct timing *t)
{
	t->tail = (t->tail + 1) % t->ss.dur;
	if (t->tail <= t->ss.head)
		t->ss.head = (t->ss.head + 1) % t->ss.dur;
}

static bool ss_full(struct timing *t)
{
	return (t->ss.state & SS_BUFFER_FULL) || t->tail - t->ss.head == t->ss.dur - 1;
}

/* fio's steadystate_slope: the least-squares slope of the window, by the
 * sums it keeps (the x values taken as evenly spaced). */
static bool ss_slope(struct timing *t)
{
	struct ss_result *ss = &t->ss;
	uint64_t v = ss_y(t, t->tail);

	if (!ss_full(t))
		return false;
	if (!(ss->state & SS_BUFFER_FULL)) {
		t->sum_y = 0;
		for (unsigned i = 0; i < ss->dur; i++) {
			t->sum_y += ss_y(t, i);
			t->sum_xy += i * ss_y(t, (ss->head + i) % ss->dur);
		}
		ss->state |= SS_BUFFER_FULL;
	} else {
		t->sum_y = t->sum_y - t->oldest_y + v;
		t->sum_xy = t->sum_xy - t->sum_y + ss->dur * v;
	}
	t->oldest_y = ss_y(t, ss->head);
	ss->slope = ((double)t->sum_xy - (double)t->sum_x * (double)t->sum_y / ss->dur) /
	            ((double)t->sum_x_sq - (double)t->sum_x * (double)t->sum_x / ss->dur);
	/* fio divides by the mean in whole units. */
	ss->criterion =
	    ss->state & SS_PCT ? 100.0 * ss->slope / (double)(t->sum_y / ss->dur) : ss->slope;
	return fabs(ss->criterion) < ss->limit;
}

/* fio's steadystate_deviation: the largest distance of a sample from the mean. */
static bool ss_deviation(struct timing *t)
{
	struct ss_result *ss = &t->ss;
	double mean;

	if (!ss_full(t))
		return false;
	if (!(ss->state & SS_BUFFER_FULL)) {
		t->sum_y = 0;
		for (unsigned i = 0; i < ss->dur; i++)
			t->sum_y += ss_y(t, i);
		ss->state |= SS_BUFFER_FULL;
	} else {
		t->sum_y = t->sum_y - t->oldest_y + ss_y(t, t->tail);
	}
	t->oldest_y = ss_y(t, ss->head);
	mean = (double)t->sum_y / ss->dur;
	ss->deviation = 0.0;
	for (unsigned i = 0; i < ss->dur; i++)
		ss->deviation = fmax(ss->deviation, fabs((double)ss_y(t, i) - mean));
	ss->criterion = ss->state & SS_PCT ? 100.0 * ss->deviation / mean : ss->deviation;
	return ss->criterion < ss->limit;
}

/* The group's judge: the last of its jobs with steadystate, as fio's. */
static bool ss_judges(const struct job *j)
{
	const struct ss_group *g = j->ss_group;

	for (unsigned i = g ? g->nr : 0; i-- > 0;)
		if (g->jobs[i].o->ss_dur_us)
			return &g->jobs[i] == j;
	return true;
}

/* The judge's sample: its own rates and the same sample of the group's
 * others still running; false while one of them has not taken it yet,
 * unless `late` (one that started late, or is stuck, gives its last). */
static bool ss_group_sum(const struct job *j, bool late, uint64_t *bw, uint64_t *iops)
{
	const struct ss_group *g = j->ss_group;
	unsigned seq = g ? atomic_load_explicit(&j->ss_seq, memory_order_relaxed) : 0;

	for (unsigned i = 0; g && i < g->nr; i++) {
		const struct job *p = &g->jobs[i];
		unsigned pseq;

		if (p == j || !p->o->ss_dur_us ||
		    atomic_load_explicit(&p->finished, memory_order_relaxed))
			continue;
		pseq = atomic_load_explicit(&p->ss_seq, memory_order_acquire);
		if (pseq < seq && !late)
			return false;
		if (!pseq)
			continue;
		*bw += atomic_load_explicit(&p->ss_bw, memory_order_relaxed);
		*iops += atomic_load_explicit(&p->ss_iops, memory_order_relaxed);
	}
	return true;
}

static void ss_attained(struct job *j, struct timing *t)
{
	t->ss.state |= SS_ATTAINED;
	j->draining = true;
	if (j->ss_group)
		atomic_store_explicit(&j->ss_group->attained, true, memory_order_relaxed);
}

/* A 1 s sample of the job's IOPS and bandwidth, once ss_ramp is over; a
 * steady window ends the job (or its group) as fio's does. */
static void ss_sample(struct job *j, struct timing *t, uint64_t now)
{
	struct ss_result *ss = &t->ss;
	uint64_t ios = 0, bytes = 0, ms = (now - t->ss_prev_ns) / NS_PER_MS ?: 1, bw, iops;

	job_count(j);
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++) {
		ios += j->st->dir[d].ios;
		bytes += j->st->dir[d].bytes;
	}
	bw = 1000 * (bytes - t->ss_prev_bytes) / ms;
	iops = 1000 * (ios - t->ss_prev_ios) / ms;
	t->ss_prev_ns = now;
	t->ss_prev_ios = ios;
	t->ss_prev_bytes = bytes;
	/* fio's: samples start a second after ss_ramp. */
	if (!(ss->state & SS_RAMP_OVER) && now - j->start_ns >= t->ss_ramp_ns + NS_PER_S)
		ss->state |= SS_RAMP_OVER;
	if (!(ss->state & SS_RAMP_OVER))
		return;
	if (j->ss_group) {
		atomic_store_explicit(&j->ss_bw, bw, memory_order_relaxed);
		atomic_store_explicit(&j->ss_iops, iops, memory_order_relaxed);
		atomic_fetch_add_explicit(&j->ss_seq, 1, memory_order_release);
	}
	t->ss_bw = bw;
	t->ss_iops = iops;
	t->ss_waiting = t->ss_judge;
	t->ss_wait_end_ns = now + SS_WAIT_NS;
}

/* The judge's look at a window, once its group's sample is in (or it has
 * waited SS_WAIT_NS for it). */
static void ss_judge(struct job *j, struct timing *t, uint64_t now)
{
	struct ss_result *ss = &t->ss;
	uint64_t bw = t->ss_bw, iops = t->ss_iops;

	if (!ss_group_sum(j, now >= t->ss_wait_end_ns, &bw, &iops))
		return;
	t->ss_waiting = false;
	ss->bw[t->tail] = bw;
	ss->iops[t->tail] = iops;
	if (ss->state & SS_SLOPE ? ss_slope(t) : ss_deviation(t))
		ss_attained(j, t);
	else
		ss_advance(t);
}

/* Samples every second of the measured run; a new start (latency_target's
 * final run) starts them from nothing. */
static void ss_tick(struct job *j, struct timing *t, uint64_t now)
{
	if (t->ss_epoch_ns != j->start_ns) {
		t->ss_epoch_ns = t->ss_prev_ns = j->start_ns;
		t->ss_next_ns = j->start_ns + SS_SAMPLE_NS;
		t->ss_prev_ios = t->ss_prev_bytes = 0;
	}
	if (t->ss.state & SS_ATTAINED)
		return;
	if (j->ss_group && atomic_load_explicit(&j->ss_group->attained, memory_order_relaxed)) {
		ss_attained(j, t);
		return;
	}
	if (now >= t->ss_next_ns) {
		ss_sample(j, t, now);
		t->ss_next_ns += SS_SAMPLE_NS;
	}
	if (t->ss_waiting)
		ss_judge(j, t, now);
}

uint64_t timing_tick(struct job *j, uint64_t now)
{
	struct timing *t = j->timing;

	if (t->rate_check)
		rate_check(j, t, now);
	if (t->ss.dur)
		ss_tick(j, t, now);
	return t->target_ns ? lat_tick(j, t, now) : now;
}

/* ---- set-up ---- */

static int ss_setup(const struct job_opts *o, struct timing *t)
{
	struct ss_result *ss = &t->ss;
	uint64_t dur = o->ss_dur_us / 1000000;

	ss->dur = (unsigned)dur;
	ss->limit = o->steadystate.limit;
	ss->state = o->steadystate.state | (o->ss_ramp_us ? 0 : SS_RAMP_OVER);
	ss->bw = calloc(dur, sizeof(*ss->bw));
	ss->iops = calloc(dur, sizeof(*ss->iops));
	t->ss_ramp_ns = o->ss_ramp_us * 1000;
	t->sum_x = dur * (dur - 1) / 2;
	t->sum_x_sq = (dur - 1) * dur * (2 * dur - 1) / 6;
	t->ss_epoch_ns = UINT64_MAX;
	return ss->bw && ss->iops ? 0 : -ENOMEM;
}

/* fio's lat_target_init: start at depth 1. */
static void lat_setup(struct job *j, struct timing *t)
{
	t->target_ns = j->o->latency_target_us * 1000;
	t->max_qd = j->depth;
	t->qd = t->qd_low = 1;
	t->qd_high = j->depth;
	j->depth = 1;
}

int timing_setup(struct job *j)
{
	const struct job_opts *o = j->o;
	struct timing *t;

	if (!timing_wanted(j))
		return 0;
	t = j->timing = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->rate_check = any_set(o->rate_min) || any_set(o->rate_iops_min);
	t->poisson = o->rate_process == RATE_PROCESS_POISSON && j->rate_period_ns;
	t->poisson_rng = o->randseed ^ ((uint64_t)j->number * 0x9e3779b97f4a7c15ULL);
	t->lat_counted = !o->disable_lat && !o->gtod_reduce;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		t->max_lat_ns[d] = o->max_latency_us[d] * 1000;
	if (o->latency_target_us)
		lat_setup(j, t);
	if (o->flow) {
		j->paced = true;
		if (flow_join(t, o->flow_id, o->flow))
			return -ENOMEM;
	}
	t->ss_judge = ss_judges(j);
	return o->ss_dur_us ? ss_setup(o, t) : 0;
}

void timing_finish(struct job *j)
{
	struct timing *t = j->timing;

	if (!t)
		return;
	if (t->flow)
		flow_leave(t, j->o->flow);
	if (t->target_ns)
		j->st->latency_depth = t->qd;
	if (t->ss.dur)
		j->st->ss = &t->ss;
}

void timing_free(struct job *j)
{
	if (!j->timing)
		return;
	free(j->timing->ss.bw);
	free(j->timing->ss.iops);
	free(j->timing);
	j->timing = NULL;
}
