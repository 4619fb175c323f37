/* SPDX-License-Identifier: MIT */
/*
 * fio's per-job logs, in fio 3.33's file names and formats, for the job
 * with fio's thread number N:
 *
 *   write_lat_log=NAME   NAME_slat.N.log, NAME_clat.N.log, NAME_lat.N.log (ns)
 *   write_bw_log=NAME    NAME_bw.N.log (KiB/s over an interval; per I/O,
 *                        fio's bytes * 10^6 / clat ns)
 *   write_iops_log=NAME  NAME_iops.N.log (I/Os per second; per I/O, 1)
 *
 * one line each: time (ms since measuring began), value, direction, block
 * size, 0, with the byte offset before the last column when log_offset=1
 * (the last column is fio's command priority, always 0 here).  With
 * log_avg_msec a line is a window's mean (or, log_max_value, its largest),
 * block size and offset 0, as fio writes them.
 *
 *   write_hist_log=NAME  NAME_clat_hist.N.log, every log_hist_msec: time,
 *                        direction, block size, then the completions of
 *                        the window in each of fio's 1856 clat buckets
 *
 * per_job_logs=0 drops ".N" and appends, as fio does.  Lines are formatted
 * into fixed buffers allocated when the logs open and written out as they
 * fill, so logging never allocates; jobs without the options never reach
 * this code.
 */
#ifndef BLKRING_TOOLS_LATLOG_H
#define BLKRING_TOOLS_LATLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histogram.h"

enum { LATLOG_SLAT, LATLOG_CLAT, LATLOG_LAT, LATLOG_BW, LATLOG_IOPS, LATLOG_HIST, LATLOG_NR };

/* What a job logs. */
struct log_spec {
	const char *name[LATLOG_NR]; /* each log's prefix; NULL: not written */
	unsigned number;             /* fio's thread number */
	bool per_job;                /* per_job_logs */
	bool offsets;                /* log_offset */
	bool log_max;                /* log_max_value */
	unsigned avg_msec, hist_msec;
};

struct lat_log;

/* The file of one log (NAME_clat.N.log): 0, or -ENAMETOOLONG with a message. */
int latlog_path(char *buf, size_t size, const char *name, unsigned kind, unsigned number,
                bool per_job);
/* 0, or a negative errno with the failing file named in tool_last_error(). */
int latlog_open(struct lat_log **out, const struct log_spec *spec);
/* One value of one log (averaged with log_avg_msec); elapsed_ns is since measuring began. */
void latlog_add(struct lat_log *l, unsigned kind, uint64_t elapsed_ns, uint64_t value,
                unsigned ddir, uint32_t bs, uint64_t offset);
/* After each completion of direction ddir: a histogram line when log_hist_msec is up. */
void latlog_hist(struct lat_log *l, uint64_t elapsed_ns, unsigned ddir, uint32_t bs,
                 const struct hist *clat);
/* The windows still open logged at elapsed_ns, what is buffered written
 * out; 0 or the first write error (with its file named). */
int latlog_close(struct lat_log *l, uint64_t elapsed_ns);

#endif
