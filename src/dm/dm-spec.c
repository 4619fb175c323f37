// SPDX-License-Identifier: MIT
/*
 * The `table:PATH` spec driver: reads a dmsetup table file and creates the
 * volume it describes, its legs named relative to the file; tables may
 * nest, but not include themselves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "lib/error.h"
#include "lib/text.h"

#define MAX_TABLE_BYTES (1U << 20)
#define MAX_NESTING 32

/* Tables being opened on this thread, outermost first: a path already on
 * it is a table that includes itself. */
static _Thread_local const char *opening[MAX_NESTING];
static _Thread_local unsigned nr_opening;

/* A table in the looping one's directory goes by its relative name. */
static const char *short_name(const char *path, const char *dir, size_t dir_len)
{
	return strncmp(path, dir, dir_len) ? path : path + dir_len;
}

static int check_nesting(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
	char chain[400];
	size_t len = 0;
	unsigned i;

	for (i = 0; i < nr_opening && strcmp(opening[i], path); i++)
		;
	if (i == nr_opening && nr_opening < MAX_NESTING)
		return 0;
	if (i == nr_opening)
		return blkring__error(-ELOOP, "table:%s: tables nest deeper than %u", path,
		                      MAX_NESTING);
	for (unsigned j = i; j < nr_opening && len < sizeof(chain); j++)
		len += snprintf(chain + len, sizeof(chain) - len, "%s -> ",
		                short_name(opening[j], path, dir_len));
	return blkring__error(-ELOOP, "table:%s includes itself (%s%s)", path, chain,
	                      short_name(path, path, dir_len));
}

static int check_text(const char *path, const char *text, size_t len)
{
	unsigned line = blkring__nul_line(text, len);

	if (line)
		return blkring__error(-EINVAL, "%s:%u: a NUL byte: expected text", path, line);
	return 0;
}

static int read_table(const char *path, char **textp)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t len;
	int ret;

	if (!f)
		return blkring__error(-errno, "table:%s: cannot read: %s", path, strerror(errno));
	ret = blkring__read_text(f, MAX_TABLE_BYTES, &text, &len);
	fclose(f);
	if (ret == -EFBIG)
		return blkring__error(ret, "table:%s: larger than %u bytes", path, MAX_TABLE_BYTES);
	if (ret)
		return blkring__error(ret, "table:%s: cannot read: %s", path, strerror(-ret));
	ret = check_text(path, text, len);
	if (ret) {
		free(text);
		return ret;
	}
	*textp = text;
	return 0;
}

static int table_open_path(const char *path, bool ro, unsigned poll, struct blkring_dev **devp)
{
	char *text = NULL, *dir = strdup(path), *slash;
	int ret = dir ? read_table(path, &text) : -ENOMEM;

	if (ret) {
		free(dir);
		return ret;
	}
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	opening[nr_opening++] = path;
	ret = blkring__dm_create(text, path, slash ? dir : NULL, ro, poll, devp);
	nr_opening--;
	free(text);
	free(dir);
	return ret;
}

static int table_open(struct blkring_spec *spec, struct blkring_dev **devp)
{
	unsigned poll = DM_POLL_COOKIE; /* what Linux does today */
	bool ro = false;
	int ret = blkring__spec_bool(spec, "ro", &ro) ?:
		  blkring__spec_choice(spec, "poll", blkring__dm_poll_names, &poll) ?:
		  blkring__spec_check_unused(spec, "ro, poll") ?: check_nesting(spec->arg);

	if (ret)
		return ret;
	return table_open_path(spec->arg, ro, poll, devp);
}

const struct blkring_driver blkring__table_driver = {
    .type = "table",
    .arg = SPEC_ARG_PATH,
    .arg_name = "PATH",
    .open = table_open,
};
