/* SPDX-License-Identifier: MIT */
/* Results as fio prints them: its normal text, or its JSON structure. */
#ifndef BLKRING_TOOLS_OUTPUT_H
#define BLKRING_TOOLS_OUTPUT_H

#include <stdio.h>
#include <time.h>

#include "jobs.h"
#include "stats.h"

/* fio's "name: (g=0): rw=..., bs=..., ioengine=..., iodepth=..." lines. */
void output_header(FILE *f, const struct bench_cfg *cfg, unsigned nr_jobs);
/* Both return 0, or -ENOMEM. */
int output_normal(FILE *f, const struct report *r, unsigned nr);
/* when: the time stamp; elapsed_ns: the run's length so far. */
int output_json(FILE *f, const struct report *r, unsigned nr, const struct bench_cfg *cfg,
                time_t when, uint64_t elapsed_ns);

/* fio's terse version 3 lines; 0, or -ENOMEM. */
int output_terse(FILE *f, const struct report *r, unsigned nr);

/* fio's num2str: at most four significant characters and a unit prefix. */
void fmt_num(char *buf, size_t len, double v, bool pow2);

#endif
