// SPDX-License-Identifier: MIT
/* The `blkring` command: subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "blkring.h"
#include "compiler.h"

int cmd_serve(int argc, char **argv); /* serve.c */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
    {"bench", cmd_bench, "run fio-style jobs (blkring bench --help lists the options)"},
    {"info", cmd_info, "show a device's size, limits, features, queues and counters"},
    {"table", cmd_table, "check a device-mapper table and show its layout (table check FILE)"},
    {"serve", cmd_serve, "export a device or volume over NBD through nbdkit (serve --help)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: blkring COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n  --help     this text\n  --version  the version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_CLEAN;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("blkring-%s\n", BLKRING_VERSION_STRING);
		return EXIT_CLEAN;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "blkring: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
