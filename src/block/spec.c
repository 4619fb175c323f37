// SPDX-License-Identifier: MIT
/*
 * Device specs (docs/API.md, "Device specs"): `TYPE:key=value,...`, or
 * `TYPE:ARG,key=value,...` where the driver takes a first item (a path, or
 * an opaque string such as a URI), or a driver's shorthand (the file
 * driver claims a bare path, the nbd driver a URI).  `\,` puts a comma in
 * an item, `\\` a backslash.  Every error names the key and what it
 * accepts, through blkring__error().  The public blkring_spec_* calls let
 * applications edit specs without editing their text.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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

static int find_key(const struct blkring_spec *spec, const char *key)
{
	for (unsigned i = 0; i < spec->nr; i++)
		if (!strcmp(spec->kv[i].key, key))
			return (int)i;
	return -1;
}

static int add_kv(struct blkring_spec *spec, char *item, unsigned pos)
{
	char *eq = strchr(item, '=');

	if (!eq || eq == item)
		return blkring__error(-EINVAL, "%s: item %u '%s': expected key=value", spec->type,
		                      pos, item);
	*eq = '\0';
	if (find_key(spec, item) >= 0)
		return blkring__error(-EINVAL, "%s: key '%s' given twice", spec->type, item);
	if (spec->nr == BLKRING_SPEC_MAX_KEYS)
		return blkring__error(-EINVAL, "%s: more than %d keys", spec->type,
		                      BLKRING_SPEC_MAX_KEYS);
	spec->kv[spec->nr].key = item;
	spec->kv[spec->nr].val = eq + 1;
	spec->kv[spec->nr].owned = NULL;
	spec->kv[spec->nr].used = false;
	spec->nr++;
	return 0;
}

/* A path's first item is the PATH when it is not key=value, or starts as a
 * path does (a key never starts with '/' or '.'); an opaque one always is. */
static bool is_arg(enum blkring__spec_arg kind, const char *item)
{
	if (kind == SPEC_ARG_OPAQUE)
		return true;
	return !strchr(item, '=') || item[0] == '/' || item[0] == '.';
}

static int parse_items(struct blkring_spec *spec, char *rest)
{
	enum blkring__spec_arg kind = spec->drv->arg;
	char *item;
	int ret;

	for (unsigned pos = 1; (item = next_item(&rest)); pos++) {
		if (pos == 1 && !*item && !rest)
			return 0; /* "TYPE:" */
		if (pos == 1 && is_arg(kind, item)) {
			if (kind == SPEC_ARG_NONE)
				return blkring__error(
				    -EINVAL,
				    "%s: item 1 '%s': expected key=value (%s takes no path)",
				    spec->type, item, spec->type);
			spec->arg = item;
			continue;
		}
		ret = add_kv(spec, item, pos);
		if (ret)
			return ret;
	}
	return 0;
}

/* The TYPE, and where the items start (NULL: none).  A spec that a driver
 * claims as its shorthand (a bare path, a URI) is all items. */
static char *split_type(struct blkring_spec *spec)
{
	char *colon;

	spec->drv = blkring__driver_claim(spec->buf);
	spec->type = spec->drv ? spec->drv->type : blkring__module_claim(spec->buf);
	if (spec->type)
		return spec->buf;
	spec->type = spec->buf;
	colon = strchr(spec->buf, ':');
	if (!colon)
		return NULL;
	*colon = '\0';
	return colon + 1;
}

static int unknown_type(const struct blkring_spec *spec)
{
	char known[256];

	blkring__driver_types(known, sizeof(known));
	return blkring__error(-ENODEV, "unknown device type '%s'; known types: %s", spec->type,
	                      known);
}

static int parse(const char *text, struct blkring_spec *spec)
{
	char *rest;

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
	rest = split_type(spec);
	if (!*spec->type)
		return blkring__error(-EINVAL, "'%s': no device type before ':'", text);
	if (!spec->drv)
		spec->drv = blkring__driver_find(spec->type);
	if (!spec->drv) {
		int ret = blkring__driver_load(spec->type, &spec->drv);

		if (ret)
			return ret == -ENOENT ? unknown_type(spec) : ret;
	}
	return parse_items(spec, rest);
}

int blkring__spec_parse(const char *text, struct blkring_spec *spec)
{
	int ret;

	memset(spec, 0, sizeof(*spec));
	ret = parse(text, spec);
	if (ret)
		blkring__spec_free(spec);
	return ret;
}

void blkring__spec_free(struct blkring_spec *spec)
{
	for (unsigned i = 0; i < spec->nr; i++)
		free(spec->kv[i].owned);
	free(spec->arg_owned);
	free(spec->buf);
	memset(spec, 0, sizeof(*spec));
}

/* ---- the public calls ---- */

int blkring_spec_parse(const char *text, struct blkring_spec **specp)
{
	struct blkring_spec *spec;
	int ret;

	if (!specp)
		return -EINVAL;
	*specp = NULL;
	spec = malloc(sizeof(*spec));
	if (!spec)
		return -ENOMEM;
	blkring__clear_error();
	ret = blkring__spec_parse(text, spec);
	if (ret) {
		free(spec);
		return ret;
	}
	*specp = spec;
	return 0;
}

void blkring_spec_free(struct blkring_spec *spec)
{
	if (!spec)
		return;
	blkring__spec_free(spec);
	free(spec);
}

const char *blkring_spec_type(const struct blkring_spec *spec)
{
	return spec ? spec->type : NULL;
}

const char *blkring_spec_arg(const struct blkring_spec *spec)
{
	return spec ? spec->arg : NULL;
}

const char *blkring_spec_get(const struct blkring_spec *spec, const char *key)
{
	int i = spec && key ? find_key(spec, key) : -1;

	return i < 0 ? NULL : spec->kv[i].val;
}

static void kv_remove(struct blkring_spec *spec, unsigned i)
{
	free(spec->kv[i].owned);
	memmove(&spec->kv[i], &spec->kv[i + 1], (spec->nr - i - 1) * sizeof(spec->kv[0]));
	spec->nr--;
}

static int check_key(const struct blkring_spec *spec, const char *key)
{
	if (!*key || strchr(key, '=') || strchr(key, ','))
		return blkring__error(-EINVAL, "%s: key '%s': expected a name without '=' or ','",
		                      spec->type, key);
	return 0;
}

int blkring_spec_set(struct blkring_spec *spec, const char *key, const char *value)
{
	int i, ret;
	char *item;

	if (!spec || !key)
		return -EINVAL;
	ret = check_key(spec, key);
	if (ret)
		return ret;
	i = find_key(spec, key);
	if (i >= 0)
		kv_remove(spec, (unsigned)i);
	if (!value)
		return 0;
	if (spec->nr == BLKRING_SPEC_MAX_KEYS)
		return blkring__error(-EINVAL, "%s: more than %d keys", spec->type,
		                      BLKRING_SPEC_MAX_KEYS);
	if (asprintf(&item, "%s=%s", key, value) < 0)
		return -ENOMEM;
	item[strlen(key)] = '\0';
	spec->kv[spec->nr].key = item;
	spec->kv[spec->nr].val = item + strlen(key) + 1;
	spec->kv[spec->nr].owned = item;
	spec->kv[spec->nr].used = false;
	spec->nr++;
	return 0;
}

int blkring_spec_set_arg(struct blkring_spec *spec, const char *arg)
{
	char *copy;

	if (!spec || !arg || !*arg)
		return -EINVAL;
	if (spec->drv->arg == SPEC_ARG_NONE)
		return blkring__error(-EINVAL, "%s: takes no first item ('%s')", spec->type, arg);
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	free(spec->arg_owned);
	spec->arg = spec->arg_owned = copy;
	return 0;
}

/* snprintf's contract: the length the whole text needs. */
static size_t put(char *buf, size_t size, size_t len, const char *s, bool escape)
{
	for (; *s; s++) {
		if (escape && (*s == ',' || *s == '\\')) {
			if (len + 1 < size)
				buf[len] = '\\';
			len++;
		}
		if (len + 1 < size)
			buf[len] = *s;
		len++;
	}
	if (size)
		buf[len < size ? len : size - 1] = '\0';
	return len;
}

int blkring_spec_format(const struct blkring_spec *spec, char *buf, size_t size)
{
	size_t len;

	if (!spec || (!buf && size))
		return -EINVAL;
	len = put(buf, size, 0, spec->type, false);
	len = put(buf, size, len, ":", false);
	/* A path read back as key=value would not be one: ./ keeps it a path. */
	if (spec->arg && !is_arg(spec->drv->arg, spec->arg))
		len = put(buf, size, len, "./", false);
	if (spec->arg)
		len = put(buf, size, len, spec->arg, true);
	for (unsigned i = 0; i < spec->nr; i++) {
		len = put(buf, size, len, (i || spec->arg) ? "," : "", false);
		len = put(buf, size, len, spec->kv[i].key, true);
		len = put(buf, size, len, "=", false);
		len = put(buf, size, len, spec->kv[i].val, true);
	}
	return len > INT_MAX ? -EOVERFLOW : (int)len;
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
