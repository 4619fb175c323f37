// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "text.h"

int blkring__read_text(FILE *f, size_t max, char **textp, size_t *lenp)
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
