/* SPDX-License-Identifier: MIT */
/* The one-line live display on a terminal: IOPS, elapsed and remaining time. */
#ifndef BLKRING_TOOLS_PROGRESS_H
#define BLKRING_TOOLS_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include "job.h"

struct progress {
	FILE *f;
	uint64_t start_ns, last_ns;
	uint64_t last_ios[BENCH_DDIR_NR];
	uint64_t planned_ns; /* expected length of the group, 0 when unknown */
	int width;           /* of the last line, to clear it */
};

void progress_start(struct progress *p, FILE *f, struct job *jobs, unsigned nr);
void progress_show(struct progress *p, struct job *jobs, unsigned nr);
void progress_clear(struct progress *p);

#endif
