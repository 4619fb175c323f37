/* SPDX-License-Identifier: MIT */
/*
 * device-mapper's internal interface: tables of targets, the target type
 * ops table every file in targets/ implements (Linux's struct target_type),
 * clones, and the volume that swaps tables while I/O runs.
 *
 * A volume is an ordinary blkring_dev (ops: dm_volume_ops in dm.c).  Its
 * submit_bio cuts the bio at target and chunk boundaries into clones,
 * asks each target's map() where a clone goes, and submits it to the leg
 * through blkring__submit_bio(); the original ends when its last clone
 * ended, with the first error.  A read or write inside one piece of one
 * target is one clone, checked against the table's limits and handed to
 * its leg with blkring__submit_bio_checked() (a leg that is a volume gets
 * the full check: its limits can change under the table).
 */
#ifndef BLKRING_DM_DM_H
#define BLKRING_DM_DM_H

#include <stdbool.h>
#include <stdint.h>

#include "block/blkdev.h"
#include "dm-inflight.h"

struct dm_table;
struct dm_target;
struct dm_volume;
struct dm_poll_list;

/* What map() did with a clone. */
enum {
	DM_MAPIO_SUBMITTED, /* the target ended the clone itself */
	DM_MAPIO_REMAPPED,  /* clone->dev and clone->sector point at a leg: submit it */
};

/*
 * A target type, one self-contained file each (nbdkit's shape).  ctr
 * parses the line's arguments and opens legs with blkring__dm_get_device();
 * every error goes through blkring__dm_arg_error()/blkring__dm_target_error()
 * so the message names the line, the target and the argument.
 */
struct dm_target_type {
	const char *name;
	int (*ctr)(struct dm_target *ti, unsigned argc, char **argv);
	/* Frees private state (optional; ctr sets ti->private last, so a
	 * failed ctr leaves nothing for it); the table closes the legs. */
	void (*dtr)(struct dm_target *ti);
	/* Remaps or ends one clone; clone->sector is a volume sector. */
	int (*map)(struct dm_target *ti, struct blkring_bio *clone);
	/* The table line's arguments with legs by canonical spec (dmsetup
	 * table's output); returns snprintf's count.  Optional: none means no
	 * arguments. */
	int (*status)(struct dm_target *ti, char *buf, size_t len);
	/* Sets the target's I/O size hints over its legs' (dm's io_hints):
	 * optional. */
	void (*io_hints)(struct dm_target *ti, struct blkring_limits *limits);
};

/* ctr of a target with no arguments and no legs that takes every
 * operation (zero, error). */
int blkring__dm_ctr_no_args(struct dm_target *ti, unsigned argc, char **argv);

/* One device a target maps onto: an open reference the table holds. */
struct dm_leg {
	struct blkring_dev *dev;
	uint64_t start; /* first sector used on the device */
	uint64_t len;   /* sectors used on the device */
};

struct dm_target {
	struct dm_table *table;
	const struct dm_target_type *type;
	uint64_t begin; /* volume sectors */
	uint64_t len;
	/* Reads and writes are cut every max_io_len sectors from begin (the
	 * stripe chunk); 0 cuts only at the target's end. */
	uint32_t max_io_len;
	/* Clones per flush, and per discard or write-zeroes piece (the clone's
	 * index, dm_clone_nr(), tells them apart: one per stripe). */
	unsigned num_flush_clones;
	unsigned num_discard_clones;
	/* Features of a target without legs; a target with legs has theirs. */
	uint32_t features;
	unsigned nr_legs;
	struct dm_leg *legs;
	unsigned line;
	char **argv; /* during ctr only: for error messages */
	void *private;
};

/*
 * A table: immutable once built.  The volume reads it on every I/O
 * without a lock; a swap happens only while the volume is suspended and
 * drained (dm.c says why that needs no RCU).  Its poll list (the `all`
 * strategy's, dm-poll.c) is built with it and goes with it.
 */
struct dm_table {
	struct dm_target *targets;
	unsigned nr_targets;
	/* What a read or write needs to go as one clone without the legs
	 * checking it again (dm.c's fast path; dm-table.c sets them with the
	 * limits): its bytes and sectors on `fast_mask`, at most fast_bytes[op]
	 * bytes (0: never; writes to a read-only table, buffers with alignment
	 * rules, chunks off the logical block). */
	uint64_t fast_mask;
	uint64_t fast_bytes[REQ_OP_WRITE + 1];
	uint64_t sectors;
	struct blkring_limits limits;
	uint32_t features;
	bool read_only;
	char *source;              /* FILE for messages, or NULL: `line N` */
	char *base_dir;            /* relative leg paths start here; NULL: the cwd */
	struct blkring_dev *owner; /* the volume it is built for, if it exists */
	struct dm_poll_list *poll; /* every poll queue below it */
};

/* ---- tables (dm-table.c) ---- */

/*
 * Builds a table from dmsetup text.  `owner` is the volume that will load
 * it (NULL for a new one): a leg that is or contains it is a cycle.
 * Returns 0, or a negative errno with a message naming the line, the
 * target and the argument; nothing stays open on failure.
 */
int blkring__dm_table_create(const char *text, const char *source, const char *base_dir,
                             struct blkring_dev *owner, struct dm_table **tp);
void blkring__dm_table_destroy(struct dm_table *t);
/* The target holding sector, or NULL past the end. */
struct dm_target *blkring__dm_table_find(const struct dm_table *t, uint64_t sector);
/* Calls fn for each target of the table (blkring_vol_describe's walk). */
int blkring__dm_table_describe(const struct dm_table *t, blkring_vol_target_fn fn, void *arg);
/* True when dev is `of`, or a volume whose tables reach `of`. */
bool blkring__dm_dev_reaches(struct blkring_dev *dev, struct blkring_dev *of);

/* For targets' ctr: messages that name the line, the target (and argument). */
int blkring__dm_target_error(struct dm_target *ti, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int blkring__dm_arg_error(struct dm_target *ti, unsigned arg, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Parses argument `arg` (1-based) as a decimal number no larger than max. */
int blkring__dm_arg_u64(struct dm_target *ti, unsigned arg, uint64_t max, const char *what,
                        uint64_t *out);
/* Opens argument `arg` as a device spec (relative paths against the
 * table's directory) and records [start, start+len) on it as a leg;
 * errors for a spec that does not open, a cycle, a leg too small or
 * misaligned. */
int blkring__dm_get_device(struct dm_target *ti, unsigned arg, uint64_t start, uint64_t len,
                           struct blkring_dev **devp);

/*
 * The sectors a read or write at `sector` may cover before it must be cut:
 * to ti's end and, with max_io_len, to the end of its chunk (a mask when the
 * chunk is a power of two, as the fast path's stripes are).
 */
static inline uint64_t blkring__dm_max_io_len(const struct dm_target *ti, uint64_t sector)
{
	uint64_t off = sector - ti->begin, left = ti->len - off, chunk_left;
	uint32_t chunk = ti->max_io_len;

	if (likely(!chunk))
		return left;
	if (likely(!(chunk & (chunk - 1))))
		chunk_left = chunk - (off & (chunk - 1));
	else
		chunk_left = chunk - off % chunk;
	return chunk_left < left ? chunk_left : left;
}

/* Sends a clone to the target's one leg, at the same offset into it (a
 * flush has none): linear's map, and flakey's while it is up. */
static inline void blkring__dm_remap_leg(const struct dm_target *ti, struct blkring_bio *clone)
{
	const struct dm_leg *leg = &ti->legs[0];

	clone->dev = leg->dev;
	if (clone->op != REQ_OP_FLUSH)
		clone->sector = leg->start + (clone->sector - ti->begin);
}

/* ---- targets (targets/ *.c) ---- */

extern const struct dm_target_type blkring__dm_linear;
extern const struct dm_target_type blkring__dm_striped;
extern const struct dm_target_type blkring__dm_zero;
extern const struct dm_target_type blkring__dm_error;
extern const struct dm_target_type blkring__dm_flakey;

/* Striping math (dm-stripe's), pure for table-driven tests.  Sectors are
 * target-relative; results are stripe-relative (add the leg's offset). */
struct dm_stripe_geom {
	uint32_t stripes;
	uint32_t chunk;  /* sectors */
	int chunk_shift; /* log2(chunk), or -1 when not a power of two */
};
void blkring__stripe_map_sector(const struct dm_stripe_geom *g, uint64_t sector, uint32_t *stripe,
                                uint64_t *result);
/* Stripe `stripe`'s part of [sector, sector+len) as one range (chunks of
 * that stripe, as dm-stripe sends discards); false when it has none. */
bool blkring__stripe_map_range(const struct dm_stripe_geom *g, uint64_t sector, uint64_t len,
                               uint32_t stripe, uint64_t *begin, uint64_t *nr);

/* flakey's clock, in nanoseconds; tests replace it to skip the waiting. */
extern uint64_t (*blkring__dm_clock_ns)(void);

/* ---- clones (dm-clone.c) ---- */

struct dm_clone {
	struct blkring_bio bio;
	struct blkring_bio *orig;
	struct dm_volume *vol;
	unsigned nr; /* which of a target's flush/discard clones */
	struct dm_clone_cache *cache;
	/* The cookie strategy: a polled original's clones, kept until its
	 * poller sees them done (dm-poll.c). */
	struct dm_clone *poll_next;
	_Atomic uint32_t poll_done;
};

static inline unsigned dm_clone_nr(const struct blkring_bio *clone)
{
	return container_of(clone, const struct dm_clone, bio)->nr;
}

/* The calling thread's clones (dm-clone.c): its free list, and the cache
 * its clones come from (NULL until its first clone).  initial-exec: a
 * plain %fs-relative access. */
struct dm_clone_local {
	struct llist_node *free;
	struct dm_clone_cache *cache;
};
extern _Thread_local struct dm_clone_local blkring__dm_clones
    __attribute__((tls_model("initial-exec")));
/* The slow halves: grow the thread's cache, or give a clone back to the
 * thread whose cache it came from. */
struct dm_clone *blkring__dm_clone_alloc_slow(void);
void blkring__dm_clone_free_remote(struct dm_clone *c);

/* A clone from the calling thread's free list, or NULL when it is empty. */
static inline struct dm_clone *blkring__dm_clone_pop(void)
{
	struct llist_node *n = blkring__dm_clones.free;

	if (unlikely(!n))
		return NULL;
	blkring__dm_clones.free = n->next;
	return container_of(n, struct dm_clone, bio.node);
}

/* From the calling thread's cache: no lock, and malloc only to grow it. */
static inline struct dm_clone *blkring__dm_clone_alloc(void)
{
	return blkring__dm_clone_pop() ?: blkring__dm_clone_alloc_slow();
}

/* Whether c came from the calling thread's cache. */
static inline bool blkring__dm_clone_mine(const struct dm_clone *c)
{
	return c->cache == blkring__dm_clones.cache;
}

/* Back on the calling thread's free list: only a clone of its own. */
static inline void blkring__dm_clone_free_mine(struct dm_clone *c)
{
	c->bio.node.next = blkring__dm_clones.free;
	blkring__dm_clones.free = &c->bio.node;
}

/* On any thread. */
static inline void blkring__dm_clone_free(struct dm_clone *c)
{
	if (unlikely(!blkring__dm_clone_mine(c))) {
		blkring__dm_clone_free_remote(c);
		return;
	}
	blkring__dm_clone_free_mine(c);
}

/* ---- volumes (dm.c) ---- */

int blkring__dm_create(const char *text, const char *source, const char *base_dir, bool ro,
                       unsigned poll, struct blkring_dev **devp);
bool blkring__dm_is_volume(const struct blkring_dev *dev);
/* With the volume's ctl held: block new I/O and drain what is in flight;
 * make the inactive table live (the old one closed); end the block,
 * replaying held bios through the live table in arrival order. */
void blkring__dm_suspend(struct dm_volume *v);
void blkring__dm_swap(struct dm_volume *v);
void blkring__dm_replay(struct dm_volume *v);
/* The live and inactive tables, for walks under blkring__dm_lock. */
struct dm_table *blkring__dm_live(struct blkring_dev *dev);
struct dm_table *blkring__dm_inactive(struct blkring_dev *dev);
/* Serialises table installs, swaps and frees against walks (cycle
 * checks, describe).  Never held across a device open or close. */
void blkring__dm_lock(void);
void blkring__dm_unlock(void);
/* Ends a clone as its end_io does: frees it, drops its in-flight count and
 * ends the original (the cookie strategy's reaping, dm-poll.c). */
void blkring__dm_clone_end(struct dm_clone *c);

/* ---- polling through volumes (dm-poll.c) ---- */

/* The spec key poll=: how polling a volume finds the queues to poll. */
enum {
	DM_POLL_ALL,    /* the table's list of every poll queue below it */
	DM_POLL_COOKIE, /* the clones of the polled bio, each leg polling its own (Linux 5.18) */
};
extern const char *const blkring__dm_poll_names[]; /* "all", "cookie", NULL */

/* A volume's polling state, inside its struct dm_volume. */
struct dm_poll_vol {
	unsigned strategy; /* DM_POLL_* */
	/* `all`: polling any polled bio of the volume polls every queue, so
	 * they share this cookie (bio->hctx) and a ring polls one per pass.
	 * Never a real queue: only its address is used. */
	struct blkring_hctx shared_cookie;
	_Atomic uint32_t gen;       /* table swaps so far: a parent's list goes stale */
	struct dm_inflight walkers; /* pollers walking the live table's list */
};

/* A volume (dm.c): its device's private part. */
struct dm_volume {
	/* Read on every I/O, written only by resume. */
	_Atomic(struct dm_table *) live __cacheline_aligned;
	bool ro;
	struct blkring_dev *dev;

	struct dm_inflight inflight; /* .blocked: suspended */
	struct dm_poll_vol poll;

	/* Slow path. */
	pthread_mutex_t ctl __cacheline_aligned; /* one load, suspend or resume at a time */
	struct dm_table *inactive;               /* written under blkring__dm_lock() */
	pthread_mutex_t hold_lock;
	struct llist_node *held, **held_tail;
};
struct dm_poll_vol *blkring__dm_poll_vol(struct blkring_dev *dev);

/* At load: the table's list of every poll queue reachable through it.
 * 0 or -ENOMEM. */
int blkring__dm_poll_build(struct dm_table *t);
void blkring__dm_poll_free(struct dm_table *t);
/* The volume's poll op. */
int blkring__dm_poll(struct blkring_dev *dev, struct blkring_bio *bio);
/* Swapping the live table: no walker may be left on the old one. */
void blkring__dm_poll_swap_begin(struct dm_poll_vol *pv);
void blkring__dm_poll_swap_end(struct dm_poll_vol *pv);

/* The cookie strategy's part of submission (dm.c): an original whose
 * poller polls it by name keeps its clones on a list until they are seen
 * done. */
static inline bool dm_poll_tracks(const struct dm_poll_vol *pv, const struct blkring_bio *orig)
{
	return unlikely(orig->flags & BIO_POLL_TRACKED) && pv->strategy == DM_POLL_COOKIE;
}
void blkring__dm_poll_clone_endio(struct blkring_bio *bio);

/* Written only when it changes: a held bio, replayed later by another
 * thread, is read by its poller meanwhile. */
static inline void dm_poll_set_cookie(struct dm_poll_vol *pv, struct blkring_bio *bio)
{
	if (unlikely(bio->flags & BIO_POLLED) && pv->strategy == DM_POLL_ALL &&
	    bio->hctx != &pv->shared_cookie)
		bio->hctx = &pv->shared_cookie;
}
/* Publishes the clones issued for orig to its poller (release). */
void blkring__dm_poll_publish(struct blkring_bio *orig, struct dm_clone *head);

#endif
