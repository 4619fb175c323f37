/* SPDX-License-Identifier: MIT */
/*
 * The command's own error text: what went wrong in an argument, a job file
 * or a run, with its place, for the subcommand to print.  Per thread, as a
 * job's thread reports its own.  Where a library call failed, the message
 * quotes blkring_last_error() for that call.
 */
#ifndef BLKRING_TOOLS_ERROR_H
#define BLKRING_TOOLS_ERROR_H

/* Records the message and returns err, so callers write `return tool_error(-EINVAL, ...)`. */
int tool_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *tool_last_error(void);

#endif
