/* SPDX-License-Identifier: MIT */
/*
 * fio's workload shapes, for the jobs that ask for one: block sizes drawn
 * per I/O (bsrange, bssplit, bs_unaligned), sequential offsets with holes
 * and random ones followed by sequential runs or repeats (rw=MODE:N,
 * rw_sequencer), a share of sequential I/O in random jobs
 * (percentage_random), skewed random offsets (random_distribution) and
 * strided zones (zonemode=strided).  Each step is fio's: io_u.c's
 * get_next_offset() and get_next_buflen(), lib/zipf.c's and lib/gauss.c's
 * distributions, on blkring's generators.  Jobs without these options
 * never come here; those with them take the general planner (plan.c),
 * which asks shape_next() for each I/O's offset and length.
 */
#ifndef BLKRING_TOOLS_SHAPE_H
#define BLKRING_TOOLS_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

struct job;
struct job_file;
struct io_unit;

/* Whether the job's options shape its I/O (before plan_setup()). */
bool shape_wanted(const struct job *j);
/* Sets up the job's shape from its options and seeds: 0 or -ENOMEM. */
int shape_setup(struct job *j, uint64_t seed);
void shape_free(struct job *j);
/* Every file from its start again: a new loop of the job. */
void shape_rewind(struct job *j);
/* The smallest I/O direction d takes (what a budget must hold for one). */
uint64_t shape_min_bs(const struct job *j, unsigned d);
/*
 * The next I/O of direction d on file f, at most `most` bytes: sets its
 * offset and length, or returns false when the file's offsets ran out for
 * this pass (a time_based job, or one with io_size, starts a new pass).
 */
bool shape_next(struct job *j, struct job_file *f, unsigned d, struct io_unit *io, uint64_t most);

#endif
