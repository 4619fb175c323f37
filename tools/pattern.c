// SPDX-License-Identifier: MIT
/* fio's data patterns: parsing and filling. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "error.h"
#include "pattern.h"

#define FMT_LEN 8 /* %o: the offset's bytes */

/* A piece of the text: where it ends, or NULL when it is none. */
typedef const char *(*piece_fn)(const char *s, uint8_t *out, size_t room, size_t *filled);

static const char *piece_string(const char *s, uint8_t *out, size_t room, size_t *filled)
{
	const char *end = strchr(s + 1, '"');

	if (!end || end == s + 1 || (size_t)(end - s - 1) > room)
		return NULL;
	memcpy(out, s + 1, (size_t)(end - s - 1));
	*filled = (size_t)(end - s - 1);
	return end + 1;
}

/* 'name': the file's first bytes, as many as there is room for. */
static const char *piece_file(const char *s, uint8_t *out, size_t room, size_t *filled)
{
	const char *end = strchr(s + 1, '\'');
	char name[PATH_MAX];
	ssize_t n;
	int fd;

	if (!end || end == s + 1 || (size_t)(end - s - 1) >= sizeof(name))
		return NULL;
	memcpy(name, s + 1, (size_t)(end - s - 1));
	name[end - s - 1] = '\0';
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, out, room);
	close(fd);
	if (n <= 0)
		return NULL;
	*filled = (size_t)n;
	return end + 1;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 0x and hex digits, up to a "0x" that starts the next piece (0xff0x14);
 * an odd count gives the first byte one digit. */
static const char *piece_hex(const char *s, uint8_t *out, size_t room, size_t *filled)
{
	size_t digits = 0, i = 0;
	const char *p = s + 2;

	while (hex_value(p[digits]) >= 0)
		digits++;
	if (digits && p[digits] && (p[digits] | 0x20) == 'x' && p[digits - 1] == '0')
		digits--;
	if (!digits || (digits + 1) / 2 > room)
		return NULL;
	if (digits % 2)
		out[i++] = (uint8_t)hex_value(*p++);
	for (; i < (digits + 1) / 2; i++, p += 2)
		out[i] = (uint8_t)(hex_value(p[0]) << 4 | hex_value(p[1]));
	*filled = i;
	return p;
}

/* A decimal in the range of an int: its bytes, least significant first,
 * as few as hold it (0 is one byte); it ends where a "0x" starts. */
static const char *piece_decimal(const char *s, uint8_t *out, size_t room, size_t *filled)
{
	const char *hex = strcasestr(s, "0x");
	char num[32], *end;
	size_t len = hex ? (size_t)(hex - s) : strlen(s);
	unsigned v;
	long l;
	size_t i = 0;

	if (len >= sizeof(num))
		len = sizeof(num) - 1; /* more digits are out of range anyway */
	memcpy(num, s, len);
	num[len] = '\0';
	errno = 0;
	l = strtol(num, &end, 10);
	if (end == num || errno || l > INT_MAX || l < INT_MIN)
		return NULL;
	v = (unsigned)l;
	do {
		if (i == room)
			return NULL;
		out[i++] = (uint8_t)(v & 0xff);
		v >>= 8;
	} while (v);
	*filled = i;
	return s + (end - num);
}

static piece_fn piece_kind(const char *s)
{
	if (*s == '"')
		return piece_string;
	if (*s == '\'')
		return piece_file;
	if (s[0] == '0' && (s[1] | 0x20) == 'x' && hex_value(s[2]) >= 0)
		return piece_hex;
	return piece_decimal;
}

/* %o: 8 bytes for the offset, pasted when a buffer is filled. */
static const char *piece_format(struct data_pattern *p, const char *s, size_t *filled)
{
	if (s[1] != 'o' || p->nr_fmt == PATTERN_MAX_FMT || PATTERN_MAX - p->len < FMT_LEN)
		return NULL;
	memset(p->bytes + p->len, 0, FMT_LEN);
	p->fmt_at[p->nr_fmt++] = p->len;
	*filled = FMT_LEN;
	return s + 2;
}

int pattern_parse(struct data_pattern *p, const char *text, bool formats)
{
	const char *s = text;

	memset(p, 0, sizeof(*p));
	while (*s) {
		size_t filled = 0;

		if (*s == '%')
			s = formats ? piece_format(p, s, &filled) : NULL;
		else
			s = piece_kind(s)(s, p->bytes + p->len, PATTERN_MAX - p->len, &filled);
		if (!s)
			break;
		p->len = (uint16_t)(p->len + filled);
	}
	if (s && p->len)
		return 0;
	memset(p, 0, sizeof(*p));
	return tool_error(-EINVAL,
	                  "'%s' is not a pattern: 0x-prefixed hex bytes, decimal numbers, "
	                  "\"strings\", 'files'%s, in any order, at most %d bytes",
	                  text, formats ? " or %o (the block's offset)" : "", PATTERN_MAX);
}

void pattern_chunk(const struct data_pattern *p, uint8_t *out, size_t len, uint64_t offset)
{
	uint8_t off[FMT_LEN];

	if (len > p->len)
		len = p->len;
	memcpy(out, p->bytes, len);
	for (unsigned i = 0; i < FMT_LEN; i++)
		off[i] = (uint8_t)(offset >> (8 * i));
	for (unsigned f = 0; f < p->nr_fmt && p->fmt_at[f] < len; f++) {
		size_t n = len - p->fmt_at[f] < FMT_LEN ? len - p->fmt_at[f] : FMT_LEN;

		memcpy(out + p->fmt_at[f], off, n);
	}
}

void pattern_fill(const struct data_pattern *p, void *buf, size_t len, uint64_t offset)
{
	uint8_t *b = buf;
	size_t done;

	pattern_chunk(p, b, len, offset);
	/* Doubling copies: few calls whatever the pattern's length. */
	for (done = p->len < len ? p->len : len; done < len; done *= 2)
		memcpy(b + done, b, len - done < done ? len - done : done);
}
