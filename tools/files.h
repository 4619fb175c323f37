/* SPDX-License-Identifier: MIT */
/*
 * A job's files, as fio names them: filename= is one device spec when the
 * text before its first ':' is a spec type the library knows (null:,
 * file:, table:, ...; or a URI), and otherwise fio's file list (names
 * separated by ':', "\:" for a ':' in one); without a filename, nrfiles
 * files NAME.JOB.FILE.  Relative names are taken under directory= (or
 * the working directory).  A file that is missing or shorter than the
 * job's region is laid out first, as fio's extend_file() does.
 */
#ifndef BLKRING_TOOLS_FILES_H
#define BLKRING_TOOLS_FILES_H

#include <stdbool.h>

struct job;

/* Whether a filename= value is one device spec rather than fio's list. */
bool files_is_spec(const char *text);
/* Builds, lays out (not with readonly: fio's --readonly) and opens job j's
 * files (clone: its index among its definition's numjobs, fio's $jobnum),
 * checking the job against each; 0, or -EINVAL with the message in
 * tool_last_error(). */
int job_files_open(struct job *j, unsigned clone, bool readonly);
/* Closes what job_files_open() opened, even after it failed. */
void job_files_close(struct job *j);

#endif
