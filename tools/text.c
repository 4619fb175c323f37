// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

int tool_read_text(FILE *f, size_t max, char **textp, size_t *lenp)
{
	char *text = malloc(max + 2);
	size_t len;
	int ret = 0;

	if (!text)
		return -ENOMEM;
	errno = 0;
	len = fread(text, 1, max + 1, f);
	if (ferror(f))
		ret = errno ? -errno : -EIO;
	else if (len > max)
		ret = -EFBIG;
	if (ret) {
		free(text);
		return ret;
	}
	text[len] = '\0';
	*textp = text;
	*lenp = len;
	return 0;
}

unsigned tool_nul_line(const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	unsigned line = 1;

	if (!nul)
		return 0;
	for (const char *p = text; p < nul; p++)
		line += *p == '\n';
	return line;
}

bool tool_ends_in_escape(const char *s)
{
	size_t len = strlen(s), n = 0;

	while (n < len && s[len - 1 - n] == '\\')
		n++;
	return n % 2;
}
