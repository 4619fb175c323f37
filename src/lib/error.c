// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "blkring.h"
#include "error.h"

/* Room for a chain of nested tables, each level naming its file, line and
 * leg before the innermost cause. */
static _Thread_local char last_error[8192];

int blkring__error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

void blkring__clear_error(void)
{
	last_error[0] = '\0';
}

const char *blkring_last_error(void)
{
	return last_error;
}

char *blkring__vformat(const char *fmt, va_list ap)
{
	char *s;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}
