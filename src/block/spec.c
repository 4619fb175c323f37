// SPDX-License-Identifier: MIT
/*
 * Device specs: `TYPE:key=value,...`, or `TYPE:PATH,key=value,...` for
 * drivers that take a path, or a bare path (starting with `/` or `.`) for
 * the file driver.  `\,` puts a comma in a value, `\\` a backslash.  Every
 * error names the key and what it accepts, through blkring__error().
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blkdev.h"
#include "lib/error.h"
#include "lib/text.h"

/* Cuts the next item at an unescaped comma, unescaping in place. */
static char *next_item(char **cursor)
{
	char *item = *cursor, *in = item, *out = item;

	if (!item)
		return NULL;
	for (; *in && *in != ','; in++, out++) {
		if (*in == '\\' && (in[1] == ',' || in[1] == '\\'))
			in++;
		*out = *in;
	}
	*cursor = *in ? in + 1 : NULL;
	*out = '\0';
	return item;
}

static int add_kv(struct blkring_spec *spec, char *item, unsigned pos)
{
	char *eq = strchr(item, '=');

	if (!eq || eq == item)
		return blkring__error(-EINVAL, "%s: item %u '%s': expected key=value", spec->type,
		                      pos, item);
	*eq = '\0';
	for (unsigned i = 0; i < spec->nr; i++)
		if (!strcmp(spec->kv[i].key, item))
			return blkring__error(-EINVAL, "%s: key '%s' given twice", spec->type,
			                      item);
	if (spec->nr == BLKRING_SPEC_MAX_KEYS)
		return blkring__error(-EINVAL, "%s: more than %d keys", spec->type,
		                      BLKRING_SPEC_MAX_KEYS);
	spec->kv[spec->nr].key = item;
	spec->kv[spec->nr].val = eq + 1;
	spec->kv[spec->nr].used = false;
	spec->nr++;
	return 0;
}

/* The first item is the PATH (file and table) when it is not key=value, or
 * starts as a path does: a key never starts with '/' or '.'. */
static bool is_path(const char *item)
{
	return !strchr(item, '=') || item[0] == '/' || item[0] == '.';
}

static int parse_items(struct blkring_spec *spec, char *rest)
{
	char *item;
	int ret;

	for (unsigned pos = 1; (item = next_item(&rest)); pos++) {
		if (pos == 1 && is_path(item)) {
			if (!*item && !rest)
				return 0; /* "TYPE:" */
			spec->path = item;
			continue;
		}
		ret = add_kv(spec, item, pos);
		if (ret)
			return ret;
	}
	return 0;
}

int blkring__spec_parse(const char *text, struct blkring_spec *spec)
{
	char *colon;
	int ret;

	memset(spec, 0, sizeof(*spec));
	if (!text || !*text)
		return blkring__error(-EINVAL, "empty device spec: expected TYPE:key=value,...");
	if (blkring__ends_in_escape(text))
		return blkring__error(-EINVAL,
		                      "'%s': a '\\' at the end escapes nothing (write '\\\\' "
		                      "for a backslash)",
		                      text);
	spec->buf = strdup(text);
	if (!spec->buf)
		return -ENOMEM;
	if (text[0] == '/' || text[0] == '.') {
		spec->type = "file";
		ret = parse_items(spec, spec->buf);
	} else {
		spec->type = spec->buf;
		colon = strchr(spec->buf, ':');
		if (colon)
			*colon = '\0';
		ret = colon ? parse_items(spec, colon + 1) : 0;
	}
	if (!ret && !*spec->type)
		ret = blkring__error(-EINVAL, "'%s': no device type before ':'", text);
	if (ret)
		blkring__spec_free(spec);
	return ret;
}

void blkring__spec_free(struct blkring_spec *spec)
{
	free(spec->buf);
	memset(spec, 0, sizeof(*spec));
}

static const char *spec_take(struct blkring_spec *spec, const char *key)
{
	for (unsigned i = 0; i < spec->nr; i++) {
		if (!strcmp(spec->kv[i].key, key)) {
			spec->kv[i].used = true;
			return spec->kv[i].val;
		}
	}
	return NULL;
}

static int bad_value(struct blkring_spec *spec, const char *key, const char *val,
                     const char *expected)
{
	return blkring__error(-EINVAL, "%s: bad value '%s' for key '%s': expected %s", spec->type,
	                      val, key, expected);
}

/* Decimal or 0x-prefixed digits (a leading 0 is not octal: 010 is ten);
 * returns the end or NULL on overflow. */
static const char *parse_number(const char *s, uint64_t *out)
{
	int base = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
	char *end;

	if (!isdigit((unsigned char)*s))
		return NULL;
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno)
		return NULL;
	return end;
}

int blkring__spec_u64(struct blkring_spec *spec, const char *key, uint64_t *out)
{
	const char *val = spec_take(spec, key);
	const char *end;
	uint64_t v;

	if (!val)
		return 0;
	end = parse_number(val, &v);
	if (!end || *end)
		return bad_value(spec, key, val, "a non-negative integer");
	*out = v;
	return 0;
}

static int size_shift(char suffix)
{
	switch (suffix) {
	case 'K':
	case 'k':
		return 10;
	case 'M':
	case 'm':
		return 20;
	case 'G':
	case 'g':
		return 30;
	case 'T':
	case 't':
		return 40;
	}
	return -1;
}

int blkring__spec_size(struct blkring_spec *spec, const char *key, uint64_t *out)
{
	static const char expected[] =
	    "bytes with an optional K, M, G or T suffix (powers of 1024)";
	const char *val = spec_take(spec, key);
	const char *end;
	uint64_t v;
	int shift = 0;

	if (!val)
		return 0;
	end = parse_number(val, &v);
	if (end && *end)
		shift = end[1] ? -1 : size_shift(*end);
	if (!end || shift < 0 || (shift && v > UINT64_MAX >> shift))
		return bad_value(spec, key, val, expected);
	*out = v << shift;
	return 0;
}

int blkring__spec_bool(struct blkring_spec *spec, const char *key, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	const char *val = spec_take(spec, key);

	if (!val)
		return 0;
	for (unsigned i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(val, yes[i]) || !strcasecmp(val, no[i])) {
			*out = !strcasecmp(val, yes[i]);
			return 0;
		}
	}
	return bad_value(spec, key, val, "0 or 1 (or no/yes, false/true, off/on)");
}

int blkring__spec_choice(struct blkring_spec *spec, const char *key, const char *const *choices,
                         unsigned *out)
{
	const char *val = spec_take(spec, key);
	char expected[256];
	size_t len = 0;
	unsigned n;

	if (!val)
		return 0;
	for (n = 0; choices[n]; n++) {
		if (!strcmp(val, choices[n]) ||
		    (isdigit((unsigned char)val[0]) && !val[1] && (unsigned)(val[0] - '0') == n)) {
			*out = n;
			return 0;
		}
	}
	for (unsigned i = 0; i < n && len < sizeof(expected); i++)
		len += snprintf(expected + len, sizeof(expected) - len, "%s%s", i ? "|" : "",
		                choices[i]);
	if (len < sizeof(expected))
		snprintf(expected + len, sizeof(expected) - len, " (or 0..%u)", n - 1);
	return bad_value(spec, key, val, expected);
}

const char *blkring__spec_str(struct blkring_spec *spec, const char *key)
{
	return spec_take(spec, key);
}

int blkring__spec_check_unused(struct blkring_spec *spec, const char *known)
{
	for (unsigned i = 0; i < spec->nr; i++)
		if (!spec->kv[i].used)
			return blkring__error(-EINVAL, "%s: unknown key '%s'; known keys: %s",
			                      spec->type, spec->kv[i].key, known);
	return 0;
}
