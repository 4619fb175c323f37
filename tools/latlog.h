/* SPDX-License-Identifier: MIT */
/*
 * fio's per-I/O latency logs (write_lat_log=NAME): NAME_slat.N.log,
 * NAME_clat.N.log and NAME_lat.N.log for the job with fio's thread number
 * N, one line per I/O in fio's log format
 *
 *     time (ms since measuring began), latency (ns), direction, block size, 0
 *
 * with the byte offset before the last column when log_offset=1.  The last
 * column is fio's command priority, always 0 here.  Lines are formatted
 * into fixed buffers allocated when the log opens and written out as they
 * fill, so logging an I/O never allocates; jobs without the option never
 * reach this code.
 */
#ifndef BLKRING_TOOLS_LATLOG_H
#define BLKRING_TOOLS_LATLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { LATLOG_SLAT, LATLOG_CLAT, LATLOG_LAT, LATLOG_NR };

struct lat_log;

/* The file of one log (NAME_clat.N.log): 0, or -ENAMETOOLONG with a message. */
int latlog_path(char *buf, size_t size, const char *name, unsigned kind, unsigned number);
/* 0, or a negative errno with the failing file named in tool_last_error(). */
int latlog_open(struct lat_log **out, const char *name, unsigned number, bool offsets);
/* One line in one of the three logs; elapsed_ns is since measuring began. */
void latlog_add(struct lat_log *l, unsigned kind, uint64_t elapsed_ns, uint64_t value,
                unsigned ddir, uint32_t bs, uint64_t offset);
/* Writes out what is buffered and closes; 0 or the first write error (with its file named). */
int latlog_close(struct lat_log *l);

#endif
