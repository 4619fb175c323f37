/* SPDX-License-Identifier: MIT */
/* Text read from files (tables, job files) and specs, checked before it is parsed. */
#ifndef BLKRING_LIB_TEXT_H
#define BLKRING_LIB_TEXT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* All of f, NUL-terminated (*lenp leaves the terminator out), if it holds
 * at most max bytes: 0, -EFBIG when it holds more, -ENOMEM, or the read's
 * -errno (-EISDIR for a directory). */
int blkring__read_text(FILE *f, size_t max, char **textp, size_t *lenp);

/*
 * The line (from 1) of the first NUL byte in text, or 0 without one.  A
 * parser that takes the text as a C string would stop there and drop the
 * rest without a word.
 */
static inline unsigned blkring__nul_line(const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	unsigned line = 1;

	if (!nul)
		return 0;
	for (const char *p = text; p < nul; p++)
		line += *p == '\n';
	return line;
}

/* Whether s ends in a lone backslash, which escapes nothing: anything
 * appended after it (",key=value") would have its comma escaped. */
static inline bool blkring__ends_in_escape(const char *s)
{
	size_t len = strlen(s), n = 0;

	while (n < len && s[len - 1 - n] == '\\')
		n++;
	return n % 2;
}

#endif
