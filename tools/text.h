/* SPDX-License-Identifier: MIT */
/* Text the command reads (job files) or passes on (device specs), checked before use. */
#ifndef BLKRING_TOOLS_TEXT_H
#define BLKRING_TOOLS_TEXT_H

#include <stdbool.h>
#include <stdio.h>

/* All of f, NUL-terminated (*lenp leaves the terminator out), if it holds
 * at most max bytes: 0, -EFBIG when it holds more, -ENOMEM, or the read's
 * -errno (-EISDIR for a directory). */
int tool_read_text(FILE *f, size_t max, char **textp, size_t *lenp);

/* The line (from 1) of the first NUL byte in text, or 0 without one: a
 * parser taking the text as a C string would drop the rest unseen. */
unsigned tool_nul_line(const char *text, size_t len);

/* Whether s ends in a lone backslash, which escapes nothing: anything
 * appended after it (",key=value") would have its comma escaped. */
bool tool_ends_in_escape(const char *s);

#endif
