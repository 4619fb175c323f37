/* SPDX-License-Identifier: MIT */
/* Text read from files (tables, job files), checked before it is parsed. */
#ifndef BLKRING_LIB_TEXT_H
#define BLKRING_LIB_TEXT_H

#include <string.h>

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

#endif
