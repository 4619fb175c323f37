// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "blkring.h"
#include "error.h"

/* Room for a chain of nested tables, each level naming its file, line and
 * leg before the innermost cause.  On the heap, not in thread-local
 * storage: a library that dlopen() loads (an nbdkit plugin linking it) gets
 * only a small static TLS block. */
#define ERROR_MAX 8192
static _Thread_local char *last_error;
static pthread_key_t error_key;
static pthread_once_t error_once = PTHREAD_ONCE_INIT;

static void error_key_init(void)
{
	pthread_key_create(&error_key, free);
}

static char *error_buf(void)
{
	if (last_error)
		return last_error;
	pthread_once(&error_once, error_key_init);
	last_error = malloc(ERROR_MAX);
	if (last_error) {
		last_error[0] = '\0';
		pthread_setspecific(error_key, last_error);
	}
	return last_error;
}

int blkring__error(int err, const char *fmt, ...)
{
	char *buf = error_buf();
	va_list ap;

	if (!buf)
		return err;
	va_start(ap, fmt);
	vsnprintf(buf, ERROR_MAX, fmt, ap);
	va_end(ap);
	return err;
}

void blkring__clear_error(void)
{
	if (last_error)
		last_error[0] = '\0';
}

const char *blkring_last_error(void)
{
	return last_error ? last_error : "";
}

char *blkring__vformat(const char *fmt, va_list ap)
{
	char *s;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}
