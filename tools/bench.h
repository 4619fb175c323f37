/* SPDX-License-Identifier: MIT */
/* Subcommands of the `blkring` command. */
#ifndef BLKRING_TOOLS_BENCH_H
#define BLKRING_TOOLS_BENCH_H

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses, as the bench documents them. */
#define EXIT_CLEAN 0
#define EXIT_IO_ERROR 1
#define EXIT_USAGE 2
#define EXIT_INTERRUPTED 128 /* fio's, added to the others */

/* What `info` and `table check` take: one SPEC or FILE (noun), and
 * --output-format=normal|json, in any order. */
struct cmd_args_spec {
	const char *cmd;  /* for messages: "info", "table" */
	const char *noun; /* the one argument: "SPEC", "FILE" */
	void (*usage)(FILE *f);
};

/* 0, or 1 for --help, or -EINVAL after saying what is wrong (with the
 * usage when the argument is missing). */
int cmd_args(const struct cmd_args_spec *a, int argc, char **argv, const char **arg, bool *json);

int cmd_bench(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_table(int argc, char **argv);

#endif
