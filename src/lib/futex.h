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

/*
 * A thread that sleeps on a list of work, woken only while it sleeps and
 * never lost: it calls sleeper_prepare(), looks at its list once more,
 * sleeper_wait()s only when it is empty, and sleeper_done() after.  A
 * producer pushes, then calls sleeper_wake().  The two exchanges are
 * ordered: either the producer sees SLEEPER_ASLEEP and wakes the thread
 * (the changed word also makes a sleeper_wait() not yet asleep return), or
 * the thread's exchange acquires the producer's and its look sees the push.
 */
enum { SLEEPER_RUNNING, SLEEPER_ASLEEP };

static inline void sleeper_prepare(_Atomic uint32_t *state)
{
	atomic_exchange_explicit(state, SLEEPER_ASLEEP, memory_order_acq_rel);
}

static inline void sleeper_wait(_Atomic uint32_t *state, const struct timespec *ts)
{
	futex_wait(state, SLEEPER_ASLEEP, ts);
}

static inline void sleeper_done(_Atomic uint32_t *state)
{
	atomic_store_explicit(state, SLEEPER_RUNNING, memory_order_relaxed);
}

static inline void sleeper_wake(_Atomic uint32_t *state)
{
	if (atomic_exchange_explicit(state, SLEEPER_RUNNING, memory_order_acq_rel) ==
	    SLEEPER_ASLEEP)
		futex_wake(state, 1);
}

#endif
