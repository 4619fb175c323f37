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
 * membarrier is missing the fast path reads `blocked` with a locked
 * read-modify-write instead.
 */
#ifndef BLKRING_DM_INFLIGHT_H
#define BLKRING_DM_INFLIGHT_H

#include <stdatomic.h>
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

extern _Thread_local int blkring__dm_my_slot;
extern bool blkring__dm_need_fence;
unsigned blkring__dm_slot_claim(void);

/* Sets up membarrier once per process; call before the first I/O. */
void blkring__dm_inflight_setup(void);
/* Blocks new entries and waits until the count is zero. */
void blkring__dm_inflight_block(struct dm_inflight *f);
void blkring__dm_inflight_unblock(struct dm_inflight *f);

static inline void dm_count(_Atomic uint64_t *c, unsigned slot)
{
	if (likely(slot != DM_SHARED_SLOT))
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
		                      memory_order_release);
	else
		atomic_fetch_add(c, 1);
}

static inline unsigned dm_slot(void)
{
	if (unlikely(blkring__dm_my_slot < 0))
		return blkring__dm_slot_claim();
	return (unsigned)blkring__dm_my_slot;
}

/*
 * Reads `blocked` after the count was stored.  With membarrier, suspend
 * supplies the barrier and this side needs only the compiler's.  Without
 * it, a read-modify-write of `blocked` pairs with suspend's exchange.
 */
static inline bool dm_blocked(struct dm_inflight *f)
{
	if (unlikely(blkring__dm_need_fence))
		return atomic_fetch_add(&f->blocked, 0) != 0;
	atomic_signal_fence(memory_order_seq_cst);
	return atomic_load_explicit(&f->blocked, memory_order_relaxed) != 0;
}

/* One more clone in flight (the caller already counts one). */
static inline void dm_inflight_get(struct dm_inflight *f)
{
	unsigned slot = dm_slot();

	dm_count(&f->slot[slot].submitted, slot);
}

void blkring__dm_inflight_wake(struct dm_inflight *f);

static inline void dm_inflight_put(struct dm_inflight *f)
{
	unsigned slot = dm_slot();

	dm_count(&f->slot[slot].completed, slot);
	if (unlikely(dm_blocked(f)))
		blkring__dm_inflight_wake(f);
}

/* Counts an I/O in; false (and not counted) when suspend blocks it. */
static inline bool dm_inflight_enter(struct dm_inflight *f)
{
	unsigned slot = dm_slot();

	dm_count(&f->slot[slot].submitted, slot);
	if (likely(!dm_blocked(f)))
		return true;
	dm_inflight_put(f);
	return false;
}

#endif
