// SPDX-License-Identifier: MIT
/* The arguments `blkring info` and `blkring table check` share. */
#include <errno.h>
#include <string.h>

#include "bench.h"

int cmd_args(const struct cmd_args_spec *a, int argc, char **argv, const char **arg, bool *json)
{
	*arg = NULL;
	*json = false;
	/* --help wins wherever it stands, whatever else is wrong. */
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "--output-format=json")) {
			*json = true;
		} else if (!strcmp(s, "--output-format=normal")) {
			*json = false;
		} else if (!strncmp(s, "--output-format=", 16)) {
			fprintf(stderr,
			        "blkring: %s: --output-format: '%s' is not one of normal, json\n",
			        a->cmd, s + 16);
			return -EINVAL;
		} else if (s[0] == '-' && s[1]) {
			fprintf(stderr, "blkring: %s: unknown option '%s'\n", a->cmd, s);
			return -EINVAL;
		} else if (*arg) {
			fprintf(stderr, "blkring: %s: one %s only ('%s' is a second)\n", a->cmd,
			        a->noun, s);
			return -EINVAL;
		} else {
			*arg = s;
		}
	}
	if (!*arg) {
		a->usage(stderr);
		return -EINVAL;
	}
	return 0;
}
