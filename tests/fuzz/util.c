// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"

#define MAX_KEEP 16

static char scratch[PATH_MAX];
static struct {
	char *name, *text;
} keep[MAX_KEEP];
static unsigned nr_keep;

static bool is_kept(const char *name)
{
	for (unsigned i = 0; i < nr_keep; i++)
		if (!strcmp(keep[i].name, name))
			return true;
	return false;
}

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	f = fopen(path, "w");
	FUZZ_CHECK(f, "cannot create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void remove_files(bool all)
{
	DIR *d = opendir(scratch);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (all || !is_kept(e->d_name))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

static void scratch_remove(void)
{
	remove_files(true);
	rmdir(scratch);
}

void fuzz_scratch_enter(const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	char name[PATH_MAX];

	if (scratch[0])
		return;
	snprintf(scratch, sizeof(scratch), "%s/blkring-fuzz-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
	         tag);
	if (!mkdtemp(scratch))
		FUZZ_BUG("scratch directory %s: %s", scratch, strerror(errno));
	/* Specs compare canonical (absolute, resolved) paths. */
	if (!realpath(scratch, name))
		FUZZ_BUG("realpath %s: %s", scratch, strerror(errno));
	strcpy(scratch, name);
	atexit(scratch_remove);
}

void fuzz_scratch_keep(const char *name, const char *text)
{
	FUZZ_CHECK(nr_keep < MAX_KEEP, "more than %d kept files", MAX_KEEP);
	keep[nr_keep].name = strdup(name);
	keep[nr_keep].text = strdup(text);
	write_file(name, keep[nr_keep].text);
	nr_keep++;
}

/* Kept files are written again: a spec's size= may have grown one. */
void fuzz_scratch_clean(void)
{
	remove_files(false);
	for (unsigned i = 0; i < nr_keep; i++)
		write_file(keep[i].name, keep[i].text);
}

const char *fuzz_scratch_dir(void)
{
	return scratch;
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s;

	if (memchr(data, '\0', size))
		return NULL;
	s = malloc(size + 1);
	if (!s)
		return NULL;
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The end of the spec item at p: an unescaped comma or the end. */
static const char *item_end(const char *p)
{
	for (; *p && *p != ','; p++)
		if (*p == '\\' && p[1])
			p++;
	return p;
}

char *fuzz_in_scratch(const char *spec)
{
	const char *colon = strchr(spec, ':');
	const char *path = spec[0] == '.' ? spec : colon ? colon + 1 : NULL;
	const char *end = path ? item_end(path) : NULL;
	char *out;

	/* The library's rule: the first item is a path when it has no '='
	 * or starts with '.'; an empty one is no path. */
	if (!path || end == path || (path[0] != '.' && memchr(path, '=', (size_t)(end - path))))
		return strdup(spec);
	if (asprintf(&out, "%.*s%s/%s", (int)(path - spec), spec, scratch, path) < 0)
		return NULL;
	return out;
}

/* A path may start an item, a table column or a line, and only as "./". */
static bool paths_stay_here(const char *text)
{
	if (strstr(text, ".."))
		return false;
	for (const char *p = strchr(text, '/'); p; p = strchr(p + 1, '/')) {
		if (p == text || p[-1] != '.')
			return false;
		if (p - 1 != text && !strchr(",: \t\r\n", p[-2]))
			return false;
	}
	return true;
}

/* The value after every "KEY=", as the library reads numbers: is any over max? */
static bool value_over(const char *text, const char *key, unsigned long long max)
{
	size_t klen = strlen(key);

	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		const char *val = p + klen + 1;
		unsigned long long v;
		char *end;
		int shift = 0;

		if ((p != text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
		    p[klen] != '=')
			continue;
		if (!isdigit((unsigned char)*val))
			continue; /* not a number: the library refuses it */
		/* The library's numbers: 0x is hex, a leading 0 is not octal. */
		errno = 0;
		v = strtoull(val, &end,
		             val[0] == '0' && (val[1] == 'x' || val[1] == 'X') ? 16 : 10);
		if (errno)
			return true;
		switch (toupper((unsigned char)*end)) {
		case 'T':
			shift += 10;
			/* fallthrough */
		case 'G':
			shift += 10;
			/* fallthrough */
		case 'M':
			shift += 10;
			/* fallthrough */
		case 'K':
			shift += 10;
		}
		if (v > max >> shift)
			return true;
	}
	return false;
}

bool fuzz_text_safe(const char *text)
{
	if (!paths_stay_here(text))
		return false;
	if (strcasestr(text, "memory_backed") && value_over(text, "size", FUZZ_MAX_MEM_SIZE))
		return false;
	return !value_over(text, "completion_nsec", FUZZ_MAX_NSEC) &&
	       !value_over(text, "spin_nsec", FUZZ_MAX_NSEC);
}
