/* SPDX-License-Identifier: MIT */
/*
 * Per-thread error text behind blkring_last_error(): the place that went
 * wrong (spec key, table line, option) and what was expected.
 */
#ifndef BLKRING_LIB_ERROR_H
#define BLKRING_LIB_ERROR_H

#include <stdarg.h>

#include "compiler.h"

/* Records the message and returns err, so callers write `return blkring__error(-EINVAL, ...)`. */
BLKRING__MODULE_API int blkring__error(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void blkring__clear_error(void);
/* fmt and ap as a string to free(), built at its length (a nested table's
 * message runs to kilobytes); NULL without memory. */
char *blkring__vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
