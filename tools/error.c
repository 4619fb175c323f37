// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

/* As large as the library's: a device's message, quoted whole, can be a
 * chain of nested tables. */
static _Thread_local char last_error[8192];

int tool_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

const char *tool_last_error(void)
{
	return last_error;
}
