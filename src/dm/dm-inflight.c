// SPDX-License-Identifier: MIT
/* Slots, membarrier and the drain behind dm-inflight.h. */
#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dm-inflight.h"
#include "lib/futex.h"

_Thread_local long blkring__dm_slot_off = -1;
static bool need_fence; /* no membarrier: every thread takes the shared slot */

static _Atomic uint32_t slots_taken;
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* A slot outlives its thread's counts: the next owner adds to them.  The
 * thread forgets it first: an I/O it still ends from a later destructor
 * must not count with plain adds on a slot another thread may own. */
static void slot_release(void *arg)
{
	uint32_t bit = 1U << ((uintptr_t)arg - 1);

	blkring__dm_slot_off = -1;
	atomic_fetch_and_explicit(&slots_taken, ~bit, memory_order_release);
}

static void slot_key_init(void)
{
	pthread_key_create(&slot_key, slot_release);
}

static void setup(void)
{
	need_fence = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0;
}

void blkring__dm_inflight_setup(void)
{
	pthread_once(&setup_once, setup);
}

static long slot_off(unsigned slot)
{
	return (long)offsetof(struct dm_inflight, slot[slot]);
}

long blkring__dm_slot_claim(void)
{
	uint32_t taken = atomic_load_explicit(&slots_taken, memory_order_relaxed);

	pthread_once(&slot_once, slot_key_init);
	blkring__dm_inflight_setup();
	for (unsigned i = 0; i < DM_SHARED_SLOT && !need_fence;) {
		if (taken & (1U << i)) {
			i++;
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&slots_taken, &taken, taken | 1U << i,
		                                          memory_order_acquire,
		                                          memory_order_relaxed)) {
			pthread_setspecific(slot_key, (void *)(uintptr_t)(i + 1));
			return blkring__dm_slot_off = slot_off(i);
		}
		i = 0; /* the mask changed: look again from the start */
	}
	return blkring__dm_slot_off = slot_off(DM_SHARED_SLOT);
}

void blkring__dm_inflight_wake(struct dm_inflight *f)
{
	atomic_fetch_add(&f->drain_seq, 1);
	futex_wake(&f->drain_seq, INT_MAX);
}

/* Completed first, then submitted: both only grow and a clone counts as
 * submitted before it can count as completed, so equal sums read in this
 * order mean nothing was in flight at the moment between the two passes. */
static bool drained(struct dm_inflight *f)
{
	uint64_t completed = 0, submitted = 0;

	for (unsigned i = 0; i < DM_SLOTS; i++)
		completed += atomic_load_explicit(&f->slot[i].completed, memory_order_acquire);
	for (unsigned i = 0; i < DM_SLOTS; i++)
		submitted += atomic_load_explicit(&f->slot[i].submitted, memory_order_acquire);
	return submitted == completed;
}

void blkring__dm_inflight_block(struct dm_inflight *f)
{
	atomic_exchange(&f->blocked, 1);
	if (!need_fence)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	for (;;) {
		uint32_t seq = atomic_load(&f->drain_seq);

		if (drained(f))
			return;
		futex_wait(&f->drain_seq, seq, NULL);
	}
}

void blkring__dm_inflight_unblock(struct dm_inflight *f)
{
	atomic_store(&f->blocked, 0);
}
