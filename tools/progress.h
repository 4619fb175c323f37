/* SPDX-License-Identifier: MIT */
/*
 * fio's live line, on a terminal or with --eta=always:
 *
 *     Jobs: 1 (f=1): [r(1)][45.0%][r=123MiB/s][r=31.5k IOPS][eta 00m:02s]
 *
 * running jobs and their open files, every job's state (fio's letters,
 * runs of one letter counted), the run's share done, bandwidth and IOPS
 * since the last line, and the time left, fio's way (thread_eta()).
 */
#ifndef BLKRING_TOOLS_PROGRESS_H
#define BLKRING_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"

struct progress {
	FILE *f;
	uint64_t start_ns, last_ns, next_ns;
	uint64_t last_ios[BENCH_DDIR_NR], last_bytes[BENCH_DDIR_NR];
	uint64_t newline_ns, last_newline_ns; /* --eta-newline; 0: never */
	bool eta_good;                        /* an estimate was shown: 0 s left is real */
	bool newline_due;
	int width; /* of the last line, to clear it */
};

/* Once per run, at its start. */
void progress_start(struct progress *p, FILE *f, uint64_t newline_ns);
/* The line for every job of the run (later groups' jobs are pending). */
void progress_show(struct progress *p, struct job *jobs, unsigned nr);
/* Milliseconds until the next line is due. */
int progress_wait_ms(const struct progress *p);
void progress_clear(struct progress *p);

#endif
