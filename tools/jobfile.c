// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "jobfile.h"
#include "text.h"

/* Far more than any job file: what is larger is not one (/dev/zero). */
#define JOBFILE_MAX_BYTES (1U << 20)
/* Includes nest this deep at most: deeper is a file that includes itself. */
#define JOBFILE_MAX_DEPTH 16

struct jf_parser {
	jobfile_fn fn;
	void *ctx;
	char section[256];
	unsigned depth; /* of includes */
};

static int parse_text(struct jf_parser *p, const char *name, char *text);

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

/* fio's strip_blank_end(): a ';', then a '#', anywhere starts a comment. */
static void strip_comment(char *s)
{
	s[strcspn(s, ";")] = '\0';
	s[strcspn(s, "#")] = '\0';
}

/*
 * fio's ${VAR}: the environment variable's value, or nothing when it is
 * not set; a '$' without a braced name stays.  A new string (malloc).
 */
static char *expand_env(const char *s)
{
	size_t len = 0, cap = strlen(s) + 1;
	char *out = malloc(cap);

	while (out && *s) {
		const char *close = s[0] == '$' && s[1] == '{' ? strchr(s + 2, '}') : NULL;
		const char *add = s;
		size_t n = 1;
		char *name, *grown;

		if (close) {
			name = strndup(s + 2, (size_t)(close - s - 2));
			add = name ? getenv(name) : NULL;
			free(name);
			n = add ? strlen(add) : 0;
			s = close + 1;
		} else {
			s++;
		}
		if (len + n + 1 > cap) {
			cap = 2 * (len + n + 1);
			grown = realloc(out, cap);
			if (!grown)
				free(out);
			out = grown;
		}
		if (out && n)
			memcpy(out + len, add, n);
		len += n;
	}
	if (out)
		out[len] = '\0';
	return out;
}

static int check_no_nul(const char *path, const char *text, size_t len)
{
	unsigned line = tool_nul_line(text, len);

	if (line)
		return tool_error(-EINVAL, "%s:%u: a NUL byte (a job file is text)", path, line);
	return 0;
}

static int read_jobfile(const char *path, char **textp)
{
	FILE *f = fopen(path, "r");
	size_t len;
	int ret;

	if (!f)
		return tool_error(-errno, "%s: cannot open the job file: %s", path,
		                  strerror(errno));
	ret = tool_read_text(f, JOBFILE_MAX_BYTES, textp, &len);
	fclose(f);
	if (ret == -EFBIG)
		return tool_error(ret, "%s: larger than %u bytes: not a job file", path,
		                  JOBFILE_MAX_BYTES);
	if (ret)
		return tool_error(ret, "%s: cannot read the job file: %s", path, strerror(-ret));
	ret = check_no_nul(path, *textp, len);
	if (ret)
		free(*textp);
	return ret;
}

static int parse_file(struct jf_parser *p, const char *path)
{
	char *text;
	int ret = read_jobfile(path, &text);

	if (!ret) {
		ret = parse_text(p, path, text);
		free(text);
	}
	return ret;
}

/* An included file is a regular one: a FIFO or a terminal would wait. */
static int include_regular(const char *path, const char *where)
{
	struct stat st;

	if (stat(path, &st))
		return tool_error(-errno, "%s: include %s: %s", where, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return tool_error(-EINVAL, "%s: include %s: not a regular file", where, path);
	return 0;
}

/*
 * fio's `include FILE`: the file's options go into the section being read
 * (it may hold no sections).  A relative name that is not there from the
 * working directory is taken from the including file's directory, as fio
 * takes it.
 */
static int include_file(struct jf_parser *p, const char *from, const char *file, const char *where)
{
	const char *slash = strrchr(from, '/');
	char *path = NULL;
	int ret;

	if (p->depth == JOBFILE_MAX_DEPTH)
		return tool_error(-EINVAL, "%s: includes nest more than %u deep", where,
		                  JOBFILE_MAX_DEPTH);
	if (file[0] != '/' && access(file, F_OK) && slash &&
	    asprintf(&path, "%.*s%s", (int)(slash - from + 1), from, file) < 0)
		return -ENOMEM;
	ret = include_regular(path ? path : file, where);
	if (!ret) {
		p->depth++;
		ret = parse_file(p, path ? path : file);
		p->depth--;
	}
	free(path);
	return ret;
}

static int parse_section(struct jf_parser *p, char *line, const char *where)
{
	char *close = strchr(line, ']');
	char *name;

	if (p->depth)
		return tool_error(-EINVAL, "%s: an included file holds options, not sections",
		                  where);
	if (!close || close[1])
		return tool_error(-EINVAL, "%s: expected a section header like [name]", where);
	*close = '\0';
	name = trim(line + 1);
	if (!*name)
		return tool_error(-EINVAL, "%s: the section has no name", where);
	if (strlen(name) >= sizeof(p->section))
		return tool_error(-EINVAL, "%s: section name longer than %zu characters", where,
		                  sizeof(p->section) - 1);
	strcpy(p->section, name);
	return p->fn(p->ctx, p->section, NULL, NULL, where);
}

/* key=value or a bare key, its ${VAR}s expanded. */
static int parse_option(struct jf_parser *p, const char *line, const char *where)
{
	char *text = expand_env(line), *eq, *key;
	int ret;

	if (!text)
		return -ENOMEM;
	eq = strchr(text, '=');
	if (eq)
		*eq = '\0';
	key = trim(text);
	if (*key)
		ret = p->fn(p->ctx, p->section, key, eq ? trim(eq + 1) : NULL, where);
	else
		ret = tool_error(-EINVAL, "%s: expected key=value, found no key", where);
	free(text);
	return ret;
}

static int parse_line(struct jf_parser *p, const char *name, char *line, const char *where)
{
	strip_comment(line);
	line = trim(line);
	if (!*line)
		return 0;
	if (*line == '[')
		return parse_section(p, line, where);
	if (!*p->section)
		return tool_error(-EINVAL,
		                  "%s: '%s' comes before any section: start with [global] or "
		                  "[jobname]",
		                  where, line);
	if (!strncmp(line, "include", 7) && isspace((unsigned char)line[7]))
		return include_file(p, name, trim(line + 8), where);
	return parse_option(p, line, where);
}

static int parse_text(struct jf_parser *p, const char *name, char *text)
{
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
		ret = parse_line(p, name, line, where);
		if (ret)
			return ret;
		line = next;
	}
	return 0;
}

int jobfile_parse_text(const char *name, char *text, jobfile_fn fn, void *ctx)
{
	struct jf_parser p = {.fn = fn, .ctx = ctx};

	return parse_text(&p, name, text);
}

int jobfile_parse(const char *path, jobfile_fn fn, void *ctx)
{
	struct jf_parser p = {.fn = fn, .ctx = ctx};

	return parse_file(&p, path);
}
