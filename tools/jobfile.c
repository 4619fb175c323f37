// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jobfile.h"
#include "text.h"

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* A comment starts a line, or follows white space: "bs=4k ; why". */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++) {
		if ((*p == ';' || *p == '#') && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

static int parse_line(char *line, const char *where, char *section, size_t section_len,
                      jobfile_fn fn, void *ctx)
{
	char *eq, *key;

	strip_comment(line);
	line = trim(line);
	if (!*line)
		return 0;
	if (*line == '[') {
		char *close = strchr(line, ']');
		char *name;

		if (!close || close[1])
			return tool_error(-EINVAL, "%s: expected a section header like [name]",
			                  where);
		*close = '\0';
		name = trim(line + 1);
		if (!*name)
			return tool_error(-EINVAL, "%s: the section has no name", where);
		if (strlen(name) >= section_len)
			return tool_error(-EINVAL, "%s: section name longer than %zu characters",
			                  where, section_len - 1);
		strcpy(section, name);
		return fn(ctx, section, NULL, NULL, where);
	}
	if (!*section)
		return tool_error(-EINVAL,
		                  "%s: '%s' comes before any section: start with [global] or "
		                  "[jobname]",
		                  where, line);
	eq = strchr(line, '=');
	if (eq)
		*eq = '\0';
	key = trim(line);
	if (!*key)
		return tool_error(-EINVAL, "%s: expected key=value, found no key", where);
	return fn(ctx, section, key, eq ? trim(eq + 1) : NULL, where);
}

int jobfile_parse_text(const char *name, char *text, jobfile_fn fn, void *ctx)
{
	char section[256] = "";
	char where[1100];
	unsigned lineno = 0;
	char *line = text;

	while (line) {
		char *next = strchr(line, '\n');
		int ret;

		if (next)
			*next++ = '\0';
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", name, lineno);
		ret = parse_line(line, where, section, sizeof(section), fn, ctx);
		if (ret)
			return ret;
		line = next;
	}
	return 0;
}

/* Far more than any job file: what is larger is not one (/dev/zero). */
#define JOBFILE_MAX_BYTES (1U << 20)

static int check_no_nul(const char *path, const char *text, size_t len)
{
	unsigned line = tool_nul_line(text, len);

	if (line)
		return tool_error(-EINVAL, "%s:%u: a NUL byte (a job file is text)", path, line);
	return 0;
}

int jobfile_parse(const char *path, jobfile_fn fn, void *ctx)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len;
	int ret;

	if (!f)
		return tool_error(-errno, "%s: cannot open the job file: %s", path,
		                  strerror(errno));
	ret = tool_read_text(f, JOBFILE_MAX_BYTES, &text, &len);
	fclose(f);
	if (ret == -EFBIG)
		return tool_error(ret, "%s: larger than %u bytes: not a job file", path,
		                  JOBFILE_MAX_BYTES);
	if (ret)
		return tool_error(ret, "%s: cannot read the job file: %s", path, strerror(-ret));
	ret = check_no_nul(path, text, len) ?: jobfile_parse_text(path, text, fn, ctx);
	free(text);
	return ret;
}
