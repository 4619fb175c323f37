// SPDX-License-Identifier: MIT
/*
 * Polling through volumes.  A volume has no queues of its own: polling it
 * means polling its legs' poll queues.  Both designs that Linux saw are
 * here, chosen per volume with the spec key poll=:
 *
 * `all` (the design proposed for Linux before cookies): when a table loads, every poll queue
 * of every leg, recursing into stacked volumes, goes on a list kept with
 * the table, so a reload swaps it with the table.  Polling the volume
 * walks the list; each queue's busy flag (taken by the queue's poll
 * routine) makes a poller skip a queue another holds and go on to the
 * next.  The list holds a reference on every device it names through a
 * stacked volume, so those queues stay valid even when that volume
 * reloads; the list then knows it is stale (the volume's swap count moved
 * on) and also polls that volume through its new table.
 *
 * `cookie` (Ming Lei, Linux 5.18): the ring's bio is polled by name
 * (BIO_POLL_TRACKED).  Its clones are kept on a list hanging from it
 * (bio->driver_data) instead of ending it when they end; polling it polls
 * each clone not yet done through the clone's own leg (a device polls the
 * queue the clone went to, bio->hctx; a stacked volume polls the clone's
 * clones), and ends the original with the clones it finds done.  No list,
 * no busy flags at the volume.
 *
 * A bio the volume never saw by name (a split piece, a bio held while the
 * volume is suspended) is polled as `all` polls, whatever the strategy.
 *
 * The live table's list may be walked on any thread while a reload swaps
 * tables; walkers count themselves in (a dm_inflight, cheap per-thread
 * counters) and the swap blocks new walkers and waits for the rest, for
 * the moment it takes to change the pointer.
 */
#include <errno.h>
#include <stdlib.h>

#include "dm.h"

const char *const blkring__dm_poll_names[] = {"all", "cookie", NULL};

/* A poll queue, or a whole device that cannot poll one queue at a time. */
struct dm_poll_queue {
	struct blkring_dev *dev;
	struct blkring_hctx *hctx; /* NULL: blkring__dev_poll(dev, NULL) */
};

/* A stacked volume whose queues were copied in, and its swap count then. */
struct dm_poll_child {
	struct blkring_dev *vol;
	uint32_t gen;
};

struct dm_poll_list {
	struct dm_poll_queue *q;
	unsigned nr_q;
	struct dm_poll_child *vols;
	unsigned nr_vols;
	struct blkring_dev **refs; /* one reference each, dropped with the list */
	unsigned nr_refs;
};

/* ---- building the list ---- */

/* Arrays grow by doubling: nr is 0 or a power of two exactly when full. */
static int grow(void **arr, unsigned nr, size_t size)
{
	void *p;

	if (nr & (nr - 1))
		return 0;
	p = realloc(*arr, (nr ? 2 * (size_t)nr : 1) * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

static int add_ref(struct dm_poll_list *pl, struct blkring_dev *dev)
{
	for (unsigned i = 0; i < pl->nr_refs; i++)
		if (pl->refs[i] == dev)
			return 0;
	if (grow((void **)&pl->refs, pl->nr_refs, sizeof(*pl->refs)))
		return -ENOMEM;
	blkring__dev_get(dev);
	pl->refs[pl->nr_refs++] = dev;
	return 0;
}

static int add_queue(struct dm_poll_list *pl, struct blkring_dev *dev, struct blkring_hctx *hctx)
{
	for (unsigned i = 0; i < pl->nr_q; i++)
		if (pl->q[i].dev == dev && pl->q[i].hctx == hctx)
			return 0;
	if (grow((void **)&pl->q, pl->nr_q, sizeof(*pl->q)))
		return -ENOMEM;
	pl->q[pl->nr_q++] = (struct dm_poll_queue){dev, hctx};
	return 0;
}

static int add_child(struct dm_poll_list *pl, struct blkring_dev *vol, uint32_t gen)
{
	for (unsigned i = 0; i < pl->nr_vols; i++)
		if (pl->vols[i].vol == vol)
			return 0;
	if (grow((void **)&pl->vols, pl->nr_vols, sizeof(*pl->vols)))
		return -ENOMEM;
	pl->vols[pl->nr_vols++] = (struct dm_poll_child){vol, gen};
	return 0;
}

/*
 * A stacked volume's own list, copied in; the caller holds the dm lock,
 * so its live table stays put meanwhile.  The table holds its own legs,
 * but not these: a reload of the stacked volume may close them, so the
 * list takes a reference on each.
 */
static int add_volume(struct dm_poll_list *pl, struct blkring_dev *vol)
{
	const struct dm_poll_list *cl = blkring__dm_live(vol)->poll;
	int ret = add_child(pl, vol, atomic_load(&blkring__dm_poll_vol(vol)->gen));

	for (unsigned i = 0; !ret && i < cl->nr_q; i++)
		ret = add_queue(pl, cl->q[i].dev, cl->q[i].hctx) ?: add_ref(pl, cl->q[i].dev);
	for (unsigned i = 0; !ret && i < cl->nr_vols; i++)
		ret =
		    add_child(pl, cl->vols[i].vol, cl->vols[i].gen) ?: add_ref(pl, cl->vols[i].vol);
	return ret;
}

static int add_leg(struct dm_poll_list *pl, struct blkring_dev *dev)
{
	int ret = 0;

	if (blkring__dm_is_volume(dev))
		return add_volume(pl, dev);
	if (!(READ_ONCE(dev->features) & BLKRING_FEAT_POLL))
		return 0;
	if (!dev->ops->poll_queue)
		return add_queue(pl, dev, NULL);
	for (unsigned i = 0; !ret && i < dev->nr_poll_queues; i++)
		ret = add_queue(pl, dev, &dev->hctxs[dev->nr_hw_queues + i]);
	return ret;
}

/*
 * Built even when some leg cannot poll, and then the volume takes no
 * polled I/O: bios held across a reload onto such a table still reach the
 * legs that can, polled, and someone must poll them.
 */
int blkring__dm_poll_build(struct dm_table *t)
{
	struct dm_poll_list *pl = calloc(1, sizeof(*pl));
	int ret = 0;

	if (!pl)
		return -ENOMEM;
	t->poll = pl;
	blkring__dm_lock();
	for (unsigned i = 0; !ret && i < t->nr_targets; i++)
		for (unsigned l = 0; !ret && l < t->targets[i].nr_legs; l++)
			ret = add_leg(pl, t->targets[i].legs[l].dev);
	blkring__dm_unlock();
	return ret;
}

void blkring__dm_poll_free(struct dm_table *t)
{
	struct dm_poll_list *pl = t->poll;

	if (!pl)
		return;
	for (unsigned i = 0; i < pl->nr_refs; i++)
		blkring__dev_put(pl->refs[i]);
	free(pl->refs);
	free(pl->q);
	free(pl->vols);
	free(pl);
	t->poll = NULL;
}

/* ---- the `all` walk ---- */

static int poll_all(struct blkring_dev *dev, unsigned start);

/* Every queue once, starting at `start` so that pollers spread out. */
static int walk(const struct dm_poll_list *pl, unsigned start)
{
	int n = 0;

	for (unsigned i = 0; i < pl->nr_q; i++) {
		const struct dm_poll_queue *q = &pl->q[(start + i) % pl->nr_q];

		n += q->hctx ? q->dev->ops->poll_queue(q->dev, q->hctx)
		             : blkring__dev_poll(q->dev, NULL);
	}
	for (unsigned i = 0; i < pl->nr_vols; i++) {
		const struct dm_poll_child *c = &pl->vols[i];

		if (atomic_load_explicit(&blkring__dm_poll_vol(c->vol)->gen,
		                         memory_order_relaxed) != c->gen)
			n += poll_all(c->vol, start);
	}
	return n;
}

static int poll_all(struct blkring_dev *dev, unsigned start)
{
	struct dm_poll_vol *pv = blkring__dm_poll_vol(dev);
	const struct dm_poll_list *pl;
	int n = 0;

	if (dm_inflight_enter_blocked(&pv->walkers)) {
		/* a swap is under way: the next pass polls the new table */
		dm_inflight_put(&pv->walkers);
		return 0;
	}
	pl = blkring__dm_live(dev)->poll;
	n = walk(pl, start);
	dm_inflight_put(&pv->walkers);
	return n;
}

void blkring__dm_poll_swap_begin(struct dm_poll_vol *pv)
{
	blkring__dm_inflight_block(&pv->walkers);
}

void blkring__dm_poll_swap_end(struct dm_poll_vol *pv)
{
	atomic_fetch_add(&pv->gen, 1);
	blkring__dm_inflight_unblock(&pv->walkers);
}

/* ---- the cookie strategy ---- */

static struct dm_clone **tracked_head(struct blkring_bio *orig)
{
	return (struct dm_clone **)&orig->driver_data;
}

/* A tracked clone's end: only says so; its original's poller ends it.
 * The flag is the last touch of the clone here. */
void blkring__dm_poll_clone_endio(struct blkring_bio *bio)
{
	struct dm_clone *c = container_of(bio, struct dm_clone, bio);

	atomic_store_explicit(&c->poll_done, 1, memory_order_release);
}

/* Release: the clones' fields reach the poller, which may be another
 * thread (the volume replays held bios from the thread that resumes it). */
void blkring__dm_poll_publish(struct blkring_bio *orig, struct dm_clone *head)
{
	__atomic_store_n(tracked_head(orig), head, __ATOMIC_RELEASE);
}

static bool clone_done(struct dm_clone *c)
{
	return atomic_load_explicit(&c->poll_done, memory_order_acquire);
}

/*
 * Polls the clones of orig that are not done (each through its own leg)
 * and ends those that are.  The list left over is stored before the first
 * end: the last one may end orig, after which orig is not ours to touch.
 * Returns how many clones ended, or -1 when orig has no clones listed.
 */
static int poll_cookie(struct blkring_bio *orig)
{
	struct dm_clone *c = __atomic_load_n(tracked_head(orig), __ATOMIC_ACQUIRE);
	struct dm_clone *keep = NULL, *done = NULL, *next;
	int n = 0;

	if (!c)
		return -1;
	for (; c; c = next) {
		next = c->poll_next;
		if (!clone_done(c) && c->bio.dev)
			blkring__poll_bio(&c->bio);
		if (clone_done(c)) {
			c->poll_next = done;
			done = c;
			n++;
		} else {
			c->poll_next = keep;
			keep = c;
		}
	}
	__atomic_store_n(tracked_head(orig), keep, __ATOMIC_RELAXED);
	for (c = done; c; c = next) {
		next = c->poll_next;
		blkring__dm_clone_end(c);
	}
	return n;
}

int blkring__dm_poll(struct blkring_dev *dev, struct blkring_bio *bio)
{
	if (bio && dm_poll_tracks(blkring__dm_poll_vol(dev), bio)) {
		int n = poll_cookie(bio);

		if (n >= 0)
			return n;
	}
	return poll_all(dev, bio ? bio->queue_hint : 0);
}
