/* SPDX-License-Identifier: MIT */
/* Thin futex wrappers: the sleeping primitive for rings and device threads. */
#ifndef BLKRING_LIB_FUTEX_H
#define BLKRING_LIB_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *addr == val; ts is relative (NULL: no limit). Returns -errno or 0. */
static inline int futex_wait(_Atomic uint32_t *addr, uint32_t val, const struct timespec *ts)
{
	if (syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, ts, NULL, 0) < 0)
		return -errno;
	return 0;
}

static inline void futex_wake(_Atomic uint32_t *addr, int nr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
}

#endif
