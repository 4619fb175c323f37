/* SPDX-License-Identifier: MIT */
/*
 * fio's timing options beyond rate and thinktime: rate_min and
 * rate_iops_min, rate_process=poisson, flow, latency_target, max_latency
 * and steadystate.  A job that uses none has no timing record (j->timing
 * NULL) and its loop never comes here.
 */
#ifndef BLKRING_TOOLS_TIMING_H
#define BLKRING_TOOLS_TIMING_H

#include <stdbool.h>
#include <stdint.h>

struct job;
struct job_opts;
struct io_unit;

/* In the job's thread, before its loop: the record, when an option needs one. */
int timing_setup(struct job *j);
/* Once the job is over: leaves its flow, and gives its results to its statistics. */
void timing_finish(struct job *j);
/* With the job's other records, once the results are printed. */
void timing_free(struct job *j);

/* At a tick of the measured run: rate_min's windows, steadystate's 1 s
 * samples and latency_target's depth steps.  Returns the time (a step
 * may wait for the I/Os in flight). */
uint64_t timing_tick(struct job *j, uint64_t now);
/* A read or write ended after lat ns (max_latency, latency_target). */
void timing_completed(struct job *j, const struct io_unit *io, uint64_t lat);
/* Whether the job's options look at each I/O's latency (timing_completed()). */
bool timing_per_io(const struct job_opts *o);

/* Paced jobs: whether the flow holds the next I/O back, how many of n the
 * flow and the Poisson schedule let go, and the wait of a held job. */
bool timing_holds(struct job *j);
unsigned timing_due(struct job *j, uint64_t now, unsigned n);
bool timing_poisson(const struct job *j); /* the rate's schedule is timing_due()'s */
bool timing_flow_held(const struct job *j);
uint64_t timing_flow_wait(struct job *j);

#endif
