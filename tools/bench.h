/* SPDX-License-Identifier: MIT */
/* Subcommands of the `blkring` command. */
#ifndef BLKRING_TOOLS_BENCH_H
#define BLKRING_TOOLS_BENCH_H

/* Exit statuses, as the bench documents them. */
#define EXIT_CLEAN 0
#define EXIT_IO_ERROR 1
#define EXIT_USAGE 2

int cmd_bench(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_table(int argc, char **argv);

#endif
