// SPDX-License-Identifier: MIT
/*
 * Volumes (Linux's dm.c role): a device whose submit_bio cuts a bio into
 * clones along its live table, and the mechanics of suspend, table swap
 * and replay that dm-ioctl.c's control calls drive.
 *
 * The read side of the live table, on every I/O.  Linux takes an SRCU
 * read lock around map() and, separately, counts every I/O in flight
 * (md->pending) so that suspend can drain.  Here the in-flight count
 * alone is enough: a table is swapped only while the volume is suspended
 * and drained, so an I/O that counted itself in before it saw "not
 * suspended" keeps its table alive until its clones end, and one that
 * sees "suspended" never reads the table.  The count is urcu-memb's trick
 * (dm-inflight.h): per-thread counters written without a lock prefix,
 * membarrier() on the rare suspend; docs/BENCH.md has the measurements
 * behind that choice.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm-inflight.h"
#include "dm.h"
#include "lib/futex.h"

#define CLONE_FLAGS (BIO_FUA | BIO_NOWAIT | BIO_POLLED | BIO_NOUNMAP | BIO_NOFALLBACK)

/* Recursive: describe's callback may describe a leg. */
static pthread_mutex_t dm_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void blkring__dm_lock(void)
{
	pthread_mutex_lock(&dm_lock);
}

void blkring__dm_unlock(void)
{
	pthread_mutex_unlock(&dm_lock);
}

static const struct blkring_dev_ops dm_volume_ops;

bool blkring__dm_is_volume(const struct blkring_dev *dev)
{
	return dev->ops == &dm_volume_ops;
}

struct dm_table *blkring__dm_live(struct blkring_dev *dev)
{
	struct dm_volume *v = dev->private;

	return atomic_load_explicit(&v->live, memory_order_acquire);
}

struct dm_table *blkring__dm_inactive(struct blkring_dev *dev)
{
	return ((struct dm_volume *)dev->private)->inactive;
}

struct dm_poll_vol *blkring__dm_poll_vol(struct blkring_dev *dev)
{
	return &((struct dm_volume *)dev->private)->poll;
}

/* ---- clones ---- */

/*
 * A clone issued in its original's thread goes on in that ring's context
 * (Linux's clones share their submitter's plug and io_context): a file leg
 * queues it on the ring's own kernel ring, which the ring reaps, instead
 * of the device's shared one and its reaper thread.  Not a polled one: the
 * `all` walk polls legs without a bio, which could not name the ring.
 */
static inline struct blkring_ioc *dm_clone_ioc(const struct blkring_bio *orig)
{
	return unlikely(orig->flags & BIO_POLLED) ? NULL : orig->ioc;
}

/* One split in progress.  Each clone holds an in-flight count of its own
 * (the submitter's stands until the split is handed over); the clone
 * queued last holds the original's own `remaining`, each earlier clone
 * takes one. */
struct dm_io {
	struct dm_volume *v;
	struct blkring_bio *orig;
	bool issued;
	bool track;               /* the cookie strategy keeps the clones issued... */
	struct dm_clone *tracked; /* ...on this list, for orig's poller */
	struct dm_clone *pending;
	struct dm_target *pending_ti;
};

/* A clone's end in general: back to its cache (maybe another thread's),
 * out of the in-flight count, and the original's end with its status.
 * The wake-up comes first: once the original ended its volume may go. */
__attribute__((noinline)) void blkring__dm_clone_end(struct dm_clone *c)
{
	struct blkring_bio *orig = c->orig;
	struct dm_volume *v = c->vol;
	int status = c->bio.status;

	blkring__dm_clone_free(c);
	dm_inflight_put(&v->inflight);
	blkring__bio_endio(orig, status);
}

/* A suspend waits to drain: wake it, then end the original. */
static __attribute__((noinline)) void dm_clone_endio_wake(struct dm_inflight *f,
                                                          struct blkring_bio *orig, int status)
{
	blkring__dm_inflight_wake(f);
	blkring__bio_endio(orig, status);
}

/* The common end: on a thread with its own slot and the clone's cache,
 * so nothing needs a call but the original's end, a tail call. */
static void dm_clone_endio(struct blkring_bio *bio)
{
	struct dm_clone *c = container_of(bio, struct dm_clone, bio);
	struct dm_inflight *f = &c->vol->inflight;
	struct blkring_bio *orig = c->orig;
	int status = bio->status;
	long off = dm_own_slot();

	if (unlikely(!off || !blkring__dm_clone_mine(c))) {
		blkring__dm_clone_end(c);
		return;
	}
	blkring__dm_clone_free_mine(c);
	if (unlikely(dm_inflight_put_own(f, off))) {
		dm_clone_endio_wake(f, orig, status);
		return;
	}
	blkring__bio_endio(orig, status);
}

static struct dm_clone *dm_clone_new(struct dm_io *io, unsigned op, uint64_t sector, uint64_t size,
                                     unsigned nr)
{
	struct dm_clone *c = blkring__dm_clone_alloc();

	if (unlikely(!c))
		return NULL;
	blkring__bio_init(&c->bio, NULL, op, 0, size);
	c->bio.sector = sector;
	c->bio.flags = io->orig->flags & CLONE_FLAGS;
	c->bio.queue_hint = io->orig->queue_hint;
	c->bio.ioc = dm_clone_ioc(io->orig);
	c->bio.end_io = dm_clone_endio;
	if (unlikely(io->track)) {
		/* Its leg may keep its own clones for it in turn. */
		c->bio.flags |= BIO_POLL_TRACKED;
		c->bio.end_io = blkring__dm_poll_clone_endio;
	}
	c->orig = io->orig;
	c->vol = io->v;
	c->nr = nr;
	return c;
}

/* The cookie strategy: whatever becomes of an issued clone, orig's poller
 * finds it on the list. */
static void dm_track(struct dm_io *io, struct dm_clone *c)
{
	if (unlikely(io->track)) {
		atomic_init(&c->poll_done, 0);
		c->poll_next = io->tracked;
		io->tracked = c;
	}
}

/*
 * Maps and submits one clone.  Returns -EAGAIN only for the sole clone of
 * a BIO_NOWAIT bio that its leg refused: then nothing was issued and the
 * caller refuses the original.  Any other failure ends the clone with it.
 */
static int dm_issue(struct dm_io *io, struct dm_target *ti, struct dm_clone *c, bool last)
{
	bool first = !io->issued;
	int ret;

	dm_track(io, c);
	dm_inflight_get(&io->v->inflight);
	if (!last)
		atomic_fetch_add_explicit(&io->orig->remaining, 1, memory_order_relaxed);
	io->issued = true;
	if (ti->type->map(ti, &c->bio) != DM_MAPIO_REMAPPED)
		return 0;
	ret = blkring__submit_bio(&c->bio);
	if (likely(!ret))
		return 0;
	if (ret == -EAGAIN && first && last) {
		if (unlikely(io->track))
			io->tracked = NULL;
		blkring__dm_clone_free(c);
		dm_inflight_put(&io->v->inflight);
		return -EAGAIN;
	}
	blkring__bio_endio(&c->bio, ret);
	return 0;
}

/* Issues the clone queued before, now that it is known not to be last. */
static int dm_queue(struct dm_io *io, struct dm_target *ti, struct dm_clone *c)
{
	if (io->pending) {
		if (io->orig->flags & BIO_NOWAIT) {
			blkring__dm_clone_free(c);
			return -EAGAIN;
		}
		dm_issue(io, io->pending_ti, io->pending, false);
	}
	io->pending = c;
	io->pending_ti = ti;
	return 0;
}

/* Reads and writes: cut at target ends, at chunk boundaries, and to the
 * table's own limits (the original met the volume's when it was
 * submitted, which a reload may have lowered since). */
static int dm_split_rw(struct dm_io *io, const struct dm_table *t)
{
	struct blkring_bio *orig = io->orig;
	uint64_t sector = orig->sector, table_max = (uint64_t)t->limits.max_sectors;

	for (uint64_t done = 0; done < orig->size;) {
		struct dm_target *ti = blkring__dm_table_find(t, sector);
		uint64_t len = orig->size - done, max;
		struct dm_clone *c;
		int ret;

		if (unlikely(!ti))
			return -EIO;
		max = blkring__dm_max_io_len(ti, sector);
		max = (max < table_max ? max : table_max) << SECTOR_SHIFT;
		len = len < max ? len : max;
		c = dm_clone_new(io, orig->op, sector, len, 0);
		if (unlikely(!c))
			return -ENOMEM;
		blkring__bio_clone_window(&c->bio, orig, done);
		ret = dm_queue(io, ti, c);
		if (ret)
			return ret;
		done += len;
		sector += len >> SECTOR_SHIFT;
	}
	return 0;
}

/* Discards and write zeroes: cut at target ends only; each target sends
 * num_discard_clones clones of its piece (striped: one per stripe). */
static int dm_split_range(struct dm_io *io, const struct dm_table *t)
{
	struct blkring_bio *orig = io->orig;
	uint64_t sector = orig->sector;
	uint64_t table_max = orig->op == REQ_OP_DISCARD ? t->limits.max_discard_sectors
	                                                : t->limits.max_write_zeroes_sectors;

	if (!table_max)
		return -EOPNOTSUPP; /* the new table's legs cannot */
	for (uint64_t done = 0; done < orig->size;) {
		struct dm_target *ti = blkring__dm_table_find(t, sector);
		uint64_t len = orig->size - done, max;

		if (!ti)
			return -EIO;
		max = ti->begin + ti->len - sector;
		max = (max < table_max ? max : table_max) << SECTOR_SHIFT;
		len = len < max ? len : max;
		for (unsigned n = 0; n < ti->num_discard_clones; n++) {
			struct dm_clone *c = dm_clone_new(io, orig->op, sector, len, n);
			int ret = c ? dm_queue(io, ti, c) : -ENOMEM;

			if (ret)
				return ret;
		}
		done += len;
		sector += len >> SECTOR_SHIFT;
	}
	return 0;
}

/* Flushes: every target's flush clones (one per leg). */
static int dm_split_flush(struct dm_io *io, const struct dm_table *t)
{
	for (unsigned i = 0; i < t->nr_targets; i++) {
		struct dm_target *ti = &t->targets[i];

		for (unsigned n = 0; n < ti->num_flush_clones; n++) {
			struct dm_clone *c = dm_clone_new(io, REQ_OP_FLUSH, 0, 0, n);
			int ret = c ? dm_queue(io, ti, c) : -ENOMEM;

			if (ret)
				return ret;
		}
	}
	return 0;
}

static int dm_split(struct dm_io *io, const struct dm_table *t)
{
	switch (io->orig->op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		return dm_split_rw(io, t);
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		return dm_split_range(io, t);
	case REQ_OP_FLUSH:
		return dm_split_flush(io, t);
	default:
		return -EINVAL;
	}
}

/*
 * A sole clone that may fail at submit: one to a volume (its limits may
 * have changed since this table was built, so it gets the full check), or
 * one with BIO_NOWAIT.  A refused BIO_NOWAIT clone refuses the original,
 * nothing issued at all; any other failure ends the clone with it.
 */
static __attribute__((noinline)) int dm_submit_one_slow(struct dm_clone *c)
{
	struct dm_volume *v = c->vol;
	int ret = blkring__dm_is_volume(c->bio.dev) ? blkring__submit_bio(&c->bio)
	                                            : blkring__submit_bio_checked(&c->bio);

	if (likely(!ret))
		return 0;
	if (ret == -EAGAIN) {
		blkring__dm_clone_free(c);
		dm_inflight_put(&v->inflight);
		return -EAGAIN;
	}
	blkring__bio_endio(&c->bio, ret);
	return 0;
}

/* The request part of a bio, op to the data window: a whole clone copies it. */
#define RQ_START offsetof(struct blkring_bio, op)
#define RQ_END offsetof(struct blkring_bio, inline_vec)
_Static_assert(offsetof(struct blkring_bio, vec_skip) < RQ_END &&
                   offsetof(struct blkring_bio, end_io) > RQ_END,
               "the request part of struct blkring_bio moved");

/* What a read or write clone needs before map() and its leg see it: the
 * original's request part in one copy (five words, not ten fields); map()
 * sets dev, submit sets account, the driver its own fields. */
static inline void dm_clone_rw(struct dm_clone *c, struct dm_volume *v, struct blkring_bio *orig)
{
	memcpy((char *)&c->bio + RQ_START, (const char *)orig + RQ_START, RQ_END - RQ_START);
	c->bio.flags &= CLONE_FLAGS;
	c->bio.status = 0;
	c->bio.end_io = dm_clone_endio;
	c->bio.parent = NULL;
	atomic_store_explicit(&c->bio.remaining, 1, memory_order_relaxed);
	c->bio.account = false; /* a target that ends it did not submit it */
	c->bio.hctx = NULL;
	c->bio.ioc = dm_clone_ioc(orig);
	c->orig = orig;
	c->vol = v;
}

/* Maps the sole clone and hands it to its leg. */
static inline int dm_issue_one(struct dm_clone *c, struct dm_volume *v, struct dm_target *ti,
                               struct blkring_bio *orig)
{
	dm_clone_rw(c, v, orig);
	dm_inflight_get_at(&v->inflight, blkring__dm_slot_off);
	if (ti->type->map(ti, &c->bio) != DM_MAPIO_REMAPPED)
		return 0;
	/* Only a BIO_NOWAIT bio may be refused (blkdev.h): this submit cannot fail. */
	if (likely(!(c->bio.flags & BIO_NOWAIT) && !blkring__dm_is_volume(c->bio.dev)))
		return blkring__submit_bio_checked(&c->bio);
	return dm_submit_one_slow(c);
}

/* The thread's clone cache is empty: grow it first. */
static __attribute__((noinline)) int dm_map_one_grow(struct dm_volume *v, struct dm_target *ti,
                                                     struct blkring_bio *orig)
{
	struct dm_clone *c = blkring__dm_clone_alloc_slow();

	if (unlikely(!c))
		return -ENOMEM;
	return dm_issue_one(c, v, ti, orig);
}

/*
 * The common case: one clone carries the whole bio, to a leg that needs
 * no second check (the original met the table's limits, which are the
 * legs', and stays inside one piece of one target).  Nothing of the
 * table is read after the submit: the clone's end may let a swap free it.
 * Every call but map() is a tail call, so little is kept across it.
 */
static inline int dm_map_one(struct dm_volume *v, struct dm_target *ti, struct blkring_bio *orig)
{
	struct dm_clone *c = blkring__dm_clone_pop();

	if (unlikely(!c))
		return dm_map_one_grow(v, ti, orig);
	return dm_issue_one(c, v, ti, orig);
}

/* A read or write the table's limits allow without a second check.  The
 * original met the volume's limits when it was submitted, but a reload
 * may have made this table live since: its own limits are what its legs
 * take. */
static inline bool dm_fits_fast(const struct dm_table *t, const struct blkring_bio *orig)
{
	return orig->op <= REQ_OP_WRITE && orig->size - 1 < t->fast_bytes[orig->op] &&
	       !(((orig->sector << SECTOR_SHIFT) | orig->size) & t->fast_mask);
}

/* [sector, sector + nr) inside one piece of ti (blkring__dm_max_io_len()). */
static inline bool dm_one_piece(const struct dm_target *ti, uint64_t sector, uint64_t nr)
{
	return nr <= blkring__dm_max_io_len(ti, sector);
}

/* The split: every piece a clone, the original ends with the last. */
static int dm_map(struct dm_io *io, const struct dm_table *t)
{
	struct blkring_bio *orig = io->orig;
	struct dm_volume *v = io->v;
	int ret = dm_split(io, t);

	if (likely(io->pending && !ret))
		return dm_issue(io, io->pending_ti, io->pending, true);
	if (io->pending && io->issued) {
		/* Failed part way: the last clone carries the error to the original. */
		dm_track(io, io->pending);
		dm_inflight_get(&v->inflight);
		blkring__bio_endio(&io->pending->bio, ret);
		return 0;
	}
	if (io->pending)
		blkring__dm_clone_free(io->pending);
	if (ret)
		return ret;
	blkring__bio_endio(orig, 0); /* a flush with nothing to flush */
	return 0;
}

static __attribute__((noinline)) int dm_map_split(struct dm_volume *v, const struct dm_table *t,
                                                  struct blkring_bio *orig)
{
	struct dm_io io = {.v = v, .orig = orig, .track = dm_poll_tracks(&v->poll, orig)};
	int ret = dm_map(&io, t);

	if (unlikely(io.tracked))
		blkring__dm_poll_publish(orig, io.tracked);
	return ret;
}

/*
 * The caller holds one in-flight count.  Returns 0 when the
 * original will end (exactly once), or a negative errno when nothing was
 * issued and the original is untouched.
 */
static inline __attribute__((always_inline)) int
dm_map_bio(struct dm_volume *v, const struct dm_table *t, struct blkring_bio *orig)
{
	/* The cookie strategy's polled bios keep their clones on a list for
	 * the original's poller: they take the general path. */
	if (likely(!dm_poll_tracks(&v->poll, orig) && dm_fits_fast(t, orig))) {
		struct dm_target *ti = likely(t->nr_targets == 1)
		                           ? t->targets
		                           : blkring__dm_table_find(t, orig->sector);

		if (likely(ti && dm_one_piece(ti, orig->sector, orig->size >> SECTOR_SHIFT)))
			return dm_map_one(v, ti, orig);
	}
	return dm_map_split(v, t, orig);
}

/* Returns 1 when the volume was resumed meanwhile (submit again), 0 when
 * the bio is held, -EAGAIN for BIO_NOWAIT. */
static int dm_hold(struct dm_volume *v, struct blkring_bio *bio)
{
	int ret = 0;

	pthread_mutex_lock(&v->hold_lock);
	if (!atomic_load(&v->inflight.blocked)) {
		ret = 1;
	} else if (bio->flags & BIO_NOWAIT) {
		ret = -EAGAIN;
	} else {
		bio->ioc = NULL; /* resume's thread submits it again */
		bio->node.next = NULL;
		*v->held_tail = &bio->node;
		v->held_tail = &bio->node.next;
	}
	pthread_mutex_unlock(&v->hold_lock);
	return ret;
}

static int dm_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio);

/* A held bio taken back (a cancel): the caller ends it. */
static bool dm_cancel_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct dm_volume *v = dev->private;
	struct llist_node **pp;
	bool found = false;

	pthread_mutex_lock(&v->hold_lock);
	for (pp = &v->held; *pp; pp = &(*pp)->next) {
		if (*pp != &bio->node)
			continue;
		*pp = bio->node.next;
		if (v->held_tail == &bio->node.next)
			v->held_tail = pp;
		found = true;
		break;
	}
	pthread_mutex_unlock(&v->hold_lock);
	return found;
}

/* Suspended when it came: backs out, then is held, or goes again if the
 * volume was resumed meanwhile. */
static __attribute__((noinline)) int dm_submit_blocked(struct dm_volume *v, struct blkring_bio *bio)
{
	int ret;

	do {
		dm_inflight_put(&v->inflight);
		ret = dm_hold(v, bio);
		if (ret != 1)
			return ret;
	} while (dm_inflight_enter_blocked(&v->inflight));
	ret = dm_map_bio(v, atomic_load_explicit(&v->live, memory_order_acquire), bio);
	dm_inflight_put(&v->inflight);
	return ret;
}

/* The thread's first I/O through any volume: it takes an in-flight slot. */
static __attribute__((noinline)) int dm_submit_first(struct blkring_dev *dev,
                                                     struct blkring_bio *bio)
{
	blkring__dm_slot_claim();
	return dm_submit_bio(dev, bio);
}

/* Every call here is a tail call but map()'s: little is kept across it. */
static int dm_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct dm_volume *v = dev->private;
	long off = blkring__dm_slot_off;
	int ret;

	dm_poll_set_cookie(&v->poll, bio);
	if (unlikely(off < 0))
		return dm_submit_first(dev, bio);
	if (unlikely(dm_inflight_enter_at(&v->inflight, off)))
		return dm_submit_blocked(v, bio);
	/* The submitter's count stands until its clones are handed over: a
	 * clone that ends meanwhile must not let a suspend free the legs it is
	 * still inside of (each clone holds its own). */
	ret = dm_map_bio(v, atomic_load_explicit(&v->live, memory_order_acquire), bio);
	dm_inflight_put_at(&v->inflight, blkring__dm_slot_off);
	return ret;
}

/* ---- volume objects ---- */

/* Submitters read these as they change (READ_ONCE in blk-core.c): each
 * field is written whole.  A bio checked against the old ones meanwhile
 * is cut to the new table's when it is mapped. */
static void dm_apply_table(struct dm_volume *v, const struct dm_table *t)
{
	struct blkring_dev *dev = v->dev;
	struct blkring_limits *l = &dev->limits;

	WRITE_ONCE(dev->size, t->sectors << SECTOR_SHIFT);
	WRITE_ONCE(l->logical_block_size, t->limits.logical_block_size);
	WRITE_ONCE(l->physical_block_size, t->limits.physical_block_size);
	WRITE_ONCE(l->max_sectors, t->limits.max_sectors);
	WRITE_ONCE(l->max_discard_sectors, t->limits.max_discard_sectors);
	WRITE_ONCE(l->discard_granularity, t->limits.discard_granularity);
	WRITE_ONCE(l->max_write_zeroes_sectors, t->limits.max_write_zeroes_sectors);
	WRITE_ONCE(l->dma_alignment, t->limits.dma_alignment);
	WRITE_ONCE(l->io_min, t->limits.io_min);
	WRITE_ONCE(l->io_opt, t->limits.io_opt);
	WRITE_ONCE(dev->features, t->features);
	WRITE_ONCE(dev->read_only, t->read_only || v->ro);
}

static void dm_end_held(struct llist_node *n, int status)
{
	while (n) {
		struct llist_node *next = n->next;

		blkring__bio_endio(container_of(n, struct blkring_bio, node), status);
		n = next;
	}
}

static void dm_volume_destroy(struct blkring_dev *dev)
{
	struct dm_volume *v = dev->private;
	struct dm_table *live, *inactive;

	dm_end_held(v->held, -EIO);
	blkring__dm_lock();
	live = atomic_load(&v->live);
	inactive = v->inactive;
	atomic_store(&v->live, NULL);
	v->inactive = NULL;
	blkring__dm_unlock();
	blkring__dm_table_destroy(live);
	if (inactive)
		blkring__dm_table_destroy(inactive);
	pthread_mutex_destroy(&v->ctl);
	pthread_mutex_destroy(&v->hold_lock);
	free(v);
}

static const struct blkring_dev_ops dm_volume_ops = {
    .name = "table",
    .submit_bio = dm_submit_bio,
    .poll = blkring__dm_poll,
    .cancel_bio = dm_cancel_bio,
    .destroy = dm_volume_destroy,
};

static int dm_volume_new(struct dm_table *t, bool ro, unsigned poll, struct blkring_dev **devp)
{
	struct blkring_dev *dev = blkring__dev_alloc(&dm_volume_ops);
	struct dm_volume *v = aligned_alloc(CACHELINE, sizeof(*v));

	if (!dev || !v) {
		free(v);
		if (dev)
			blkring__dev_free(dev);
		return -ENOMEM;
	}
	memset(v, 0, sizeof(*v));
	blkring__dm_inflight_setup();
	atomic_init(&v->live, t);
	v->ro = ro;
	v->dev = dev;
	v->poll.strategy = poll;
	v->held_tail = &v->held;
	pthread_mutex_init(&v->ctl, NULL);
	pthread_mutex_init(&v->hold_lock, NULL);
	dev->private = v;
	dm_apply_table(v, t);
	*devp = dev;
	return 0;
}

int blkring__dm_create(const char *text, const char *source, const char *base_dir, bool ro,
                       unsigned poll, struct blkring_dev **devp)
{
	struct dm_table *t;
	int ret = blkring__dm_table_create(text, source, base_dir, NULL, &t);

	if (ret)
		return ret;
	ret = dm_volume_new(t, ro, poll, devp);
	if (ret)
		blkring__dm_table_destroy(t);
	return ret;
}

/* ---- suspend, swap and replay, as dm-ioctl.c drives them ---- */

void blkring__dm_suspend(struct dm_volume *v)
{
	blkring__dm_inflight_block(&v->inflight);
}

/* Makes the inactive table live; the old one is closed outside the lock. */
void blkring__dm_swap(struct dm_volume *v)
{
	struct dm_table *old;

	blkring__dm_lock();
	old = atomic_load(&v->live);
	blkring__dm_poll_swap_begin(&v->poll);
	atomic_store_explicit(&v->live, v->inactive, memory_order_release);
	blkring__dm_poll_swap_end(&v->poll);
	v->inactive = NULL;
	dm_apply_table(v, atomic_load_explicit(&v->live, memory_order_relaxed));
	blkring__dm_unlock();
	blkring__dm_table_destroy(old);
}

/* Held bios go again, in arrival order, through the new table, which cuts
 * them to its own limits (dm_split_rw()). */
void blkring__dm_replay(struct dm_volume *v)
{
	struct llist_node *n;

	pthread_mutex_lock(&v->hold_lock);
	n = v->held;
	v->held = NULL;
	v->held_tail = &v->held;
	blkring__dm_inflight_unblock(&v->inflight);
	pthread_mutex_unlock(&v->hold_lock);
	while (n) {
		struct llist_node *next = n->next;
		struct blkring_bio *bio = container_of(n, struct blkring_bio, node);
		int ret = dm_submit_bio(v->dev, bio);

		if (ret)
			blkring__bio_endio(bio, ret);
		n = next;
	}
}
