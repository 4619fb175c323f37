/* SPDX-License-Identifier: MIT */
/*
 * Counting a volume's I/O in flight so that suspend can hold new I/O and
 * drain the rest: the read side of the live table (dm.c says why this
 * replaces RCU).  Each thread owns a slot of counters it writes with a
 * plain load and store; a slot counts the clones its thread submitted and
 * the clones that ended on it, so the sum over slots of submitted minus
 * completed is what is in flight.  The submit side stores its count and
 * then reads `blocked` with no fence in between; suspend pairs with it by
 * setting `blocked` and running membarrier(), which puts a full barrier
 * on every thread of the process (liburcu's urcu-memb scheme).  Where
 * membarrier is missing every thread gets the shared slot, which counts
 * with a locked add and reads `blocked` with a locked read-modify-write:
 * the choice is the slot's, so the fast path tests nothing more.
 */
#ifndef BLKRING_DM_INFLIGHT_H
#define BLKRING_DM_INFLIGHT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/compiler.h"

#define DM_SLOTS 32
#define DM_SHARED_SLOT (DM_SLOTS - 1) /* threads beyond the rest share it, atomically */

struct dm_slot {
	_Atomic uint64_t submitted;
	_Atomic uint64_t completed;
} __cacheline_aligned;

struct dm_inflight {
	_Atomic uint32_t blocked;
	_Atomic uint32_t drain_seq; /* futex: bumped when a count drops while blocked */
	struct dm_slot slot[DM_SLOTS];
};

/* The calling thread's slot as a byte offset into struct dm_inflight (one
 * add to find it in any volume), or -1 before its first I/O. */
extern _Thread_local long blkring__dm_slot_off __attribute__((tls_model("initial-exec")));
long blkring__dm_slot_claim(void);

/* Sets up membarrier once per process; call before the first I/O. */
void blkring__dm_inflight_setup(void);
/* Blocks new entries and waits until the count is zero. */
void blkring__dm_inflight_block(struct dm_inflight *f);
void blkring__dm_inflight_unblock(struct dm_inflight *f);
void blkring__dm_inflight_wake(struct dm_inflight *f);

#define DM_SHARED_OFF ((long)offsetof(struct dm_inflight, slot[DM_SHARED_SLOT]))

static inline struct dm_slot *dm_slot(struct dm_inflight *f, long *off)
{
	*off = blkring__dm_slot_off;
	if (unlikely(*off < 0))
		*off = blkring__dm_slot_claim();
	return (struct dm_slot *)((char *)f + *off);
}

/*
 * Counts one on the thread's slot, then reads `blocked`.  An own slot
 * exists only with membarrier: a plain add, and suspend supplies the
 * barrier between it and the read (this side needs only the compiler's).
 * On the shared slot a locked add, and a read-modify-write of `blocked`
 * that pairs with suspend's exchange.
 */
static inline uint32_t dm_count_own(struct dm_inflight *f, _Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
	                      memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	return atomic_load_explicit(&f->blocked, memory_order_relaxed);
}

static inline uint32_t dm_count(struct dm_inflight *f, _Atomic uint64_t *c, long off)
{
	if (unlikely(off == DM_SHARED_OFF)) {
		atomic_fetch_add(c, 1);
		return atomic_fetch_add(&f->blocked, 0);
	}
	return dm_count_own(f, c);
}

/* The thread's own slot, or 0 when it has none yet or shares the last
 * one (then dm_inflight_put() is the way out). */
static inline long dm_own_slot(void)
{
	long off = blkring__dm_slot_off;

	return likely(off > 0 && off != DM_SHARED_OFF) ? off : 0;
}

/* dm_inflight_put() on the slot dm_own_slot() gave, minus the wake-up:
 * nonzero when a suspend waits, and the caller wakes it. */
static inline uint32_t dm_inflight_put_own(struct dm_inflight *f, long off)
{
	return dm_count_own(f, &((struct dm_slot *)((char *)f + off))->completed);
}

/* One more clone in flight (the caller already counts one). */
static inline void dm_inflight_get(struct dm_inflight *f)
{
	long off;
	struct dm_slot *s = dm_slot(f, &off);

	dm_count(f, &s->submitted, off);
}

static inline void dm_inflight_put(struct dm_inflight *f)
{
	long off;
	struct dm_slot *s = dm_slot(f, &off);

	if (unlikely(dm_count(f, &s->completed, off)))
		blkring__dm_inflight_wake(f);
}

/*
 * Counts an I/O in.  Nonzero when suspend blocks it: the count stands
 * then, and the caller backs out with dm_inflight_put() (out of its fast
 * path: nothing here calls out).
 */
/* dm_inflight_enter_blocked() on the slot `off` the thread already has. */
static inline uint32_t dm_inflight_enter_at(struct dm_inflight *f, long off)
{
	return dm_count(f, &((struct dm_slot *)((char *)f + off))->submitted, off);
}

static inline uint32_t dm_inflight_enter_blocked(struct dm_inflight *f)
{
	long off;

	dm_slot(f, &off);
	return dm_inflight_enter_at(f, off);
}

/* One more clone in flight, and the count of an entry ending, on the slot
 * the entry found: it stands meanwhile, so suspend waits for these too and
 * nothing reads `blocked` but the put. */
static inline void dm_inflight_get_at(struct dm_inflight *f, long off)
{
	_Atomic uint64_t *c = &((struct dm_slot *)((char *)f + off))->submitted;

	if (unlikely(off == DM_SHARED_OFF))
		atomic_fetch_add(c, 1);
	else
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
		                      memory_order_release);
}

static inline void dm_inflight_put_at(struct dm_inflight *f, long off)
{
	if (unlikely(dm_count(f, &((struct dm_slot *)((char *)f + off))->completed, off)))
		blkring__dm_inflight_wake(f);
}

#endif
