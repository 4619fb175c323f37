/* SPDX-License-Identifier: MIT */
/*
 * The block layer's internal interface (blk-mq's role): device objects with
 * limits, features and hardware queues; bios that are validated, split to
 * the device's limits, chained and ended exactly once; the ops table that
 * drivers (src/drivers/) and volumes (src/dm/) implement.
 *
 * Rings (src/ring/) build a bio inside each request and hand it to
 * blkring__submit_bio().  Drivers never see rings; rings never see drivers.
 */
#ifndef BLKRING_BLOCK_BLKDEV_H
#define BLKRING_BLOCK_BLKDEV_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blkring.h"
#include "../lib/compiler.h"
#include "../lib/llist.h"

#define SECTOR_SHIFT 9
#define SECTOR_SIZE (1U << SECTOR_SHIFT)

enum blkring__req_op {
	REQ_OP_READ,
	REQ_OP_WRITE,
	REQ_OP_FLUSH,
	REQ_OP_DISCARD,
	REQ_OP_WRITE_ZEROES,
	REQ_OP_NR
};

/* bio->flags */
#define BIO_FUA (1U << 0)
#define BIO_NOWAIT (1U << 1)     /* -EAGAIN rather than wait for a tag or split */
#define BIO_POLLED (1U << 2)     /* goes to a poll queue; completes when polled */
#define BIO_NOUNMAP (1U << 3)    /* write zeroes: keep the range allocated */
#define BIO_NOFALLBACK (1U << 4) /* write zeroes: no zero-page fallback */
/* Polled, and its submitter polls this very bio (blkring__poll_bio) until
 * it ends: a volume may keep its clones until polled (the cookie strategy).
 * Split children do not inherit it: nobody polls them by name. */
#define BIO_POLL_TRACKED (1U << 5)
#define BIO_FIXED_BUF (1U << 6) /* the buffer is ioc->bufs[buf_index] (or within it) */
/* A blocking discard or write zeroes (blk-lib.c): its submitter sleeps until
 * it ends, so a driver may do the blocking work in the submitting thread,
 * as the kernel's own ioctls do. */
#define BIO_SYNC (1U << 7)

struct blkring_hctx;
struct blkring_ioc;

struct blkring_bio {
	struct blkring_dev *dev;
	uint8_t op;          /* REQ_OP_* */
	uint8_t flags;       /* BIO_* */
	int16_t status;      /* 0 or -errno; the first error wins */
	uint32_t queue_hint; /* submitter's preference among hardware queues */
	uint64_t sector;     /* start, 512-byte sectors */
	uint64_t size;       /* bytes */

	/* Data: a window of an iovec array (reads and writes only). */
	const struct iovec *vec;
	uint32_t nr_vecs;
	uint32_t vec_skip; /* bytes to skip in vec[0] */
	struct iovec inline_vec;

	/* Completion: end_io runs exactly once, on any thread. */
	void (*end_io)(struct blkring_bio *bio);
	void *private;
	struct blkring_bio *parent; /* chained: parent ends after its children */
	_Atomic uint32_t remaining; /* children outstanding, plus one for the parent */
	bool account;               /* set by blkring__submit_bio(): counted when it ends */
	uint16_t buf_index;         /* with BIO_FIXED_BUF: the registered buffer */
	/* The submitting ring's context when a ring issued it on its owner
	 * thread, else NULL (see struct blkring_ioc). */
	struct blkring_ioc *ioc;

	/* Driver and queue state. */
	struct blkring_hctx *hctx; /* cookie: the hardware queue it went to */
	struct llist_node node;    /* queue and wait-list link */
	uint64_t deadline_ns;      /* timer-mode completion time */
	void *driver_data;
};

/* Limits as the kernel's queue_limits; sectors are 512 bytes. */
struct blkring_limits {
	uint32_t logical_block_size;
	uint32_t physical_block_size;
	uint32_t max_sectors;
	uint32_t max_discard_sectors;
	uint32_t discard_granularity; /* bytes */
	uint32_t max_write_zeroes_sectors;
	/* I/O size hints in bytes, as Linux's: the smallest I/O without a
	 * penalty (0: the physical block) and the best streaming size (0: none). */
	uint32_t io_min;
	uint32_t io_opt;
	/* Buffer address mask the device needs (Linux's dma_alignment), e.g.
	 * 511 for O_DIRECT-like devices; 0 takes any buffer.  When non-zero,
	 * segment lengths must also be multiples of the logical block size. */
	uint32_t dma_alignment;
};

void blkring__io_hints_validate(struct blkring_limits *lim);

/* A hardware queue with tags and a FIFO wait list, as blk-mq's hctx. */
struct blkring_hctx {
	struct blkring_dev *dev;
	unsigned index;
	bool poll;             /* in the poll map: completes only when polled */
	_Atomic uint32_t busy; /* a poller holds it; others skip it */
	/* What taking and freeing a tag reads and writes: one line. */
	uint32_t depth __cacheline_aligned; /* tags */
	_Atomic uint32_t inflight;
	_Atomic uint32_t nr_waiting;
	pthread_mutex_t wait_lock; /* slow path only: tags exhausted */
	struct blkring_bio *wait_head, *wait_tail;
};

/* One device's per-thread counters by REQ_OP_* (blkring_dev_info() turns
 * them into BLKRING_DIR_*): an I/O's count and bytes side by side, so an
 * end touches one 16-byte slot. */
struct blkring_dev_stats {
	struct {
		_Atomic uint64_t ios, bytes;
	} done[REQ_OP_NR];
	_Atomic uint64_t errors[REQ_OP_NR];
} __cacheline_aligned;

#define BLKRING_STATS_SHARDS 32

/*
 * What a ring lends the drivers below it, as io_uring's per-task context:
 * a driver may keep state per (ring, device) -- the file driver keeps a
 * kernel io_uring -- and use it with no lock, since only the ring's owner
 * thread submits bios carrying the ring's ioc, and only the owner calls the
 * queue ops.  The ring calls them:
 *   flush          (optional) at the end of each submit batch and after reaping, when
 *                  ioc->flush_pending says a queue holds work (one syscall
 *                  per batch);
 *   reap           (optional) whenever it enters, to end what completed (never sleeps);
 *   prepare_sleep  before the owner sleeps: a descriptor that polls readable
 *                  once completions are ready (the owner sleeps in ppoll()
 *                  on those of all its queues and on its own eventfd),
 *                  -EAGAIN when some are ready already (no sleep then), or
 *                  -ENOENT when the queue has nothing to wait for.  *wakes
 *                  says the descriptor also polls readable once
 *                  ioc->wake_fd is signalled (the queue empties it): the
 *                  owner then leaves the eventfd out of its ppoll();
 *   exit           when the ring exits or unregisters its devices, with
 *                  nothing in flight: frees the queue.
 */
struct blkring_ioc_queue;

/* Work for a ring's task-work thread: a ring's own, or a driver's handed up
 * through blkring_ioc.irq_work. */
struct blkring_tw_node {
	struct llist_node node;
	void (*func)(struct blkring_tw_node *tw);
	uint64_t pushed_ns; /* a completion's: when it was pushed (tw_wait_ns) */
	bool prio;          /* a completion: on a TW_PRIO ring it runs before other work */
};

struct blkring_ioc_queue_ops {
	void (*flush)(struct blkring_ioc_queue *q);
	unsigned (*reap)(struct blkring_ioc_queue *q);
	int (*prepare_sleep)(struct blkring_ioc_queue *q, bool *wakes);
	/* Optional: sleeps until the descriptor prepare_sleep gave would poll
	 * readable (left: NULL for no limit), when that is all the owner waits
	 * on.  Returns 1, 0 at the time limit, or -EINTR. */
	int (*sleep)(struct blkring_ioc_queue *q, const struct timespec *left);
	/* Nothing of the ring's in flight on it.  A queue whose device was
	 * closed while the queue pinned it (a volume's leg that a reload
	 * dropped) is let go at the first flush that finds it idle. */
	bool (*idle)(struct blkring_ioc_queue *q);
	/* Frees the queue; the ring then drops the device's pin. */
	void (*exit)(struct blkring_ioc_queue *q);
};

/* A driver's state for one (ring, device) pair: embedded in the driver's own. */
struct blkring_ioc_queue {
	struct blkring_ioc_queue *next;
	struct blkring_dev *dev;
	const struct blkring_ioc_queue_ops *ops;
};

/*
 * The owner's submit batch (Linux's blk_plug with its cached requests):
 * blkring__hctx_get_tag_plugged() takes tags for the batch's bios with one
 * update of the line the completer also writes, instead of one per bio;
 * the batch's end gives back what it did not use.
 */
struct blkring_plug {
	bool active;               /* inside the ring's submit batch */
	uint32_t want;             /* bios the batch may still issue */
	uint32_t nr;               /* tags held for hctx, unused */
	struct blkring_hctx *hctx; /* whose tags; its device is pinned */
};

struct blkring_ioc {
	struct blkring_ioc_queue *queues; /* owner-only list */
	struct blkring_plug plug;
	bool flush_pending; /* a queue holds work for the next flush */
	/* The ring's: where its owner sleeps while it has queues. */
	int wake_fd;         /* an eventfd task work signals; -1 until the first sleep */
	struct pollfd *pfds; /* the sleep's: wake_fd, then the queues' */
	unsigned pfds_cap;
	struct blkring_ioc_queue *sleeper; /* the sleep's only queue, when it sleeps itself */
	/* The ring's owner is the only thread that ever enters its queues:
	 * the application promised it (DEFER_TASKRUN: its owner waits for its
	 * I/O, and no SQ thread hands the queues over when it parks or stops).
	 * A driver may then tie its queues to that thread. */
	bool one_thread;
	/* The ring has task work waiting: a queue that watches its device
	 * before the owner sleeps stops watching for it. */
	bool (*work_pending)(struct blkring_ioc *ioc);
	/* Hands work to the ring as a completion (its func then runs on the
	 * ring's task-work thread), from any thread, and from a signal handler
	 * that interrupted that thread anywhere: lock-free, async-signal-safe. */
	void (*irq_work)(struct blkring_ioc *ioc, struct blkring_tw_node *work);
	/* Registered buffers (blkring_register_buffers()); bufs_gen changes
	 * with every registration, so a queue knows when to register anew. */
	const struct iovec *bufs;
	unsigned nr_bufs;
	uint32_t bufs_gen;
};

/* A pin keeps the device from being freed, not from being closed: a
 * volume's leg may lose its last open (a reload) while a ring's queue for
 * it lives or a ring's batch holds its tags.  The last unpin frees it. */
BLKRING__MODULE_API void blkring__dev_pin(struct blkring_dev *dev);
void blkring__dev_unpin(struct blkring_dev *dev);

static inline struct blkring_ioc_queue *blkring__ioc_find(struct blkring_ioc *ioc,
                                                          const struct blkring_dev *dev)
{
	struct blkring_ioc_queue *q = ioc->queues;

	while (q && q->dev != dev)
		q = q->next;
	return q;
}

/* Adds a driver's queue, its dev and ops set: the queue pins its device,
 * and the ring unpins it after the queue's exit. */
static inline void blkring__ioc_add(struct blkring_ioc *ioc, struct blkring_ioc_queue *q)
{
	blkring__dev_pin(q->dev);
	q->next = ioc->queues;
	ioc->queues = q;
}

/*
 * What a driver or a volume implements (nbdkit's shape: a callback table in
 * one self-contained file).
 */
struct blkring_dev_ops {
	const char *name;
	/* Queue the bio (already validated and within the limits).  The
	 * driver ends it with blkring__bio_endio(), inline or later, or
	 * returns -EAGAIN for a BIO_NOWAIT bio it cannot take without
	 * waiting (nothing issued, end_io not called). */
	int (*submit_bio)(struct blkring_dev *dev, struct blkring_bio *bio);
	/* Reap one poll queue; a queue another poller holds (hctx->busy) is
	 * skipped, answering 0.  The block layer polls a bio's queue, or every
	 * poll queue, through it (blkring__dev_poll()). */
	int (*poll_queue)(struct blkring_dev *dev, struct blkring_hctx *hctx);
	/* Instead of poll_queue, for a device whose polling is not by queue (a
	 * volume, the file driver's kernel rings): reap ready bios of a polled
	 * bio's queues (all of them when bio is NULL or has no cookie); returns
	 * how many ended.  The bio may have ended already, on another thread. */
	int (*poll)(struct blkring_dev *dev, struct blkring_bio *bio);
	/* Optional: takes back a bio the device holds without having issued
	 * it (a suspended volume's); true when taken, and the caller ends it.
	 * Without it, blkring__bio_cancel() looks in the bio's tag wait list. */
	bool (*cancel_bio)(struct blkring_dev *dev, struct blkring_bio *bio);
	/* Optional: start a bio a put handed a tag while it waited; needed by
	 * drivers that take tags with blkring__hctx_get_tag_plugged(). */
	void (*start_tagged)(struct blkring_dev *dev, struct blkring_bio *bio);
	/* Free the driver's state; the block layer frees the rest. */
	void (*destroy)(struct blkring_dev *dev);
};

struct blkring_dev {
	const struct blkring_dev_ops *ops;
	char *spec; /* canonical spec: the registry key */
	uint64_t size;
	struct blkring_limits limits;
	uint32_t features; /* BLKRING_FEAT_* */
	bool read_only;

	struct blkring_hctx *hctxs; /* default map first, then the poll map */
	unsigned nr_hw_queues;
	unsigned nr_poll_queues;

	_Atomic int refs;      /* opens */
	_Atomic int ring_refs; /* ring registrations */
	/* What keeps it allocated: its opens (one pin for all), rings' queues
	 * for it, a plug's cached tags.  Written once a batch: a line of its own. */
	_Atomic int pins __attribute__((aligned(CACHELINE)));
	struct blkring_dev *registry_next;
	void *private; /* driver's */

	struct blkring_dev_stats stats[BLKRING_STATS_SHARDS];
};

/* ---- counters (dev.c) ---- */

/* Counts one finished I/O of op on the calling thread's shard. */
BLKRING__MODULE_API void blkring__dev_account(struct blkring_dev *dev, unsigned op, uint64_t bytes,
                                              int status);

/*
 * The calling thread's own counter shard, or a value at or above
 * BLKRING_STATS_SHARED when it has none yet or shares the last one
 * (dev.c).  initial-exec: a plain %fs-relative load.
 */
#define BLKRING_STATS_SHARED (BLKRING_STATS_SHARDS - 1)
BLKRING__MODULE_API extern _Thread_local unsigned blkring__stats_shard
    __attribute__((tls_model("initial-exec")));

/* Interrupts drivers raised on this thread as signals (null
 * irqmode=signal): a sleep they cut short is no -EINTR of the
 * application's.  Only their handlers write it. */
extern _Thread_local volatile unsigned blkring__irqs __attribute__((tls_model("initial-exec")));

/* A successful I/O on the thread's own shard: two plain adds, no lock
 * prefix, since no other thread writes that shard. */
static inline void blkring__dev_account_ok(struct blkring_dev *dev, unsigned op, uint64_t bytes)
{
	unsigned shard = blkring__stats_shard;
	__typeof__(dev->stats[0].done[0]) *c;

	if (unlikely(shard >= BLKRING_STATS_SHARED)) {
		blkring__dev_account(dev, op, bytes, 0);
		return;
	}
	c = &dev->stats[shard].done[op];
	atomic_store_explicit(&c->ios, atomic_load_explicit(&c->ios, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	atomic_store_explicit(&c->bytes,
	                      atomic_load_explicit(&c->bytes, memory_order_relaxed) + bytes,
	                      memory_order_relaxed);
}

/* ---- bios (bio.c) ---- */

/* An offset that is not a multiple of 512 leaves the bio marked invalid:
 * blkring__submit_bio() then answers -EINVAL.  Inline: every read and
 * write starts here, so these are stores in the caller, not a call. */
static inline void blkring__bio_init(struct blkring_bio *bio, struct blkring_dev *dev, unsigned op,
                                     uint64_t offset, uint64_t size)
{
	bio->dev = dev;
	bio->op = (uint8_t)op;
	bio->flags = 0;
	/* Only a byte offset says it is not sector-aligned: keep that fact for
	 * blkring__submit_bio(), which then answers -EINVAL. */
	bio->status = (offset & (SECTOR_SIZE - 1)) ? -EINVAL : 0;
	bio->queue_hint = 0;
	bio->sector = offset >> SECTOR_SHIFT;
	bio->size = size;
	bio->vec = NULL;
	bio->nr_vecs = 0;
	bio->vec_skip = 0;
	bio->end_io = NULL;
	bio->private = NULL;
	bio->parent = NULL;
	atomic_store_explicit(&bio->remaining, 1, memory_order_relaxed);
	bio->account = false;
	bio->ioc = NULL;
	bio->hctx = NULL;
	bio->deadline_ns = 0;
	bio->driver_data = NULL;
}

static inline void blkring__bio_set_buf(struct blkring_bio *bio, void *buf, size_t len)
{
	bio->inline_vec.iov_base = buf;
	bio->inline_vec.iov_len = len;
	bio->vec = &bio->inline_vec;
	bio->nr_vecs = 1;
	bio->vec_skip = 0;
}

/* Makes child a chained child of parent (parent's end waits for it). */
void blkring__bio_chain(struct blkring_bio *child, struct blkring_bio *parent);
/* Copies between a bio's data window and a flat buffer. */
BLKRING__MODULE_API void blkring__bio_copy_to(struct blkring_bio *bio, const void *src);
BLKRING__MODULE_API void blkring__bio_copy_from(struct blkring_bio *bio, void *dst);

/* A cursor over a bio's data window, for drivers that copy piecewise. */
struct blkring_bio_iter {
	const struct iovec *vec;
	size_t off; /* bytes into vec[0] */
};
void blkring__bio_iter_init(struct blkring_bio_iter *it, const struct blkring_bio *bio);
void blkring__bio_iter_copy_to(struct blkring_bio_iter *it, const void *src, size_t len);
void blkring__bio_iter_copy_from(struct blkring_bio_iter *it, void *dst, size_t len);
void blkring__bio_iter_zero(struct blkring_bio_iter *it, size_t len);
/* Points dst's data window at src's, `skip` bytes further in. */
void blkring__bio_clone_window(struct blkring_bio *dst, const struct blkring_bio *src,
                               uint64_t skip);

/* The general end (bio.c): errors, chained children and their parents. */
BLKRING__MODULE_API void blkring__bio_endio_slow(struct blkring_bio *bio, int status);

/*
 * Ends a bio: records status (first error wins), counts it, runs end_io,
 * ends a chained parent when its last child ended.  Inline, the common
 * end: a bio with no parent and no children, ending well (its status is
 * its own then, so a plain read of it is enough).
 */
static inline void blkring__bio_endio(struct blkring_bio *bio, int status)
{
	if (unlikely(status || bio->parent || __atomic_load_n(&bio->status, __ATOMIC_RELAXED) ||
	             atomic_load_explicit(&bio->remaining, memory_order_acquire) != 1)) {
		blkring__bio_endio_slow(bio, status);
		return;
	}
	if (bio->account)
		blkring__dev_account_ok(bio->dev, bio->op, bio->size);
	if (bio->end_io)
		bio->end_io(bio);
}

/* ---- submission (blk-core.c) ---- */

/* Byte-range validation, as Linux's blk_validate_byte_range(). */
int blkring__validate_byte_range(struct blkring_dev *dev, uint64_t offset, uint64_t len);
/*
 * Validates and issues a bio, splitting it to the device's limits.
 * Returns a negative errno when rejected (nothing issued, end_io not
 * called), 0 when accepted (end_io runs exactly once, maybe before return).
 */
int blkring__submit_bio(struct blkring_bio *bio);

/*
 * Issues a read or write that its submitter has already checked against
 * this device's limits as they stand (a volume's clone: the volume
 * validated the original against its table's limits, the strictest of its
 * legs', and cut it inside one target piece): no check, no split, only the
 * driver's submit, and the bio is counted on the device when it ends.
 * Returns as blkring__submit_bio().
 */
static inline int blkring__submit_bio_checked(struct blkring_bio *bio)
{
	struct blkring_dev *dev = bio->dev;
	int ret;

	bio->account = true;
	if (likely(!(bio->flags & BIO_NOWAIT)))
		return dev->ops->submit_bio(dev, bio); /* only a NOWAIT bio is refused */
	ret = dev->ops->submit_bio(dev, bio);
	if (ret)
		bio->account = false;
	return ret;
}

/* Polls the queues a polled bio went to. */
int blkring__poll_bio(struct blkring_bio *bio);
/* Polls dev: bio's queues, or every poll queue when bio is NULL. */
int blkring__dev_poll(struct blkring_dev *dev, struct blkring_bio *bio);
/* Takes back a submitted bio that is waiting for a tag or held by a
 * suspended volume: true when taken, nothing of it issued and its end_io
 * not run (the caller ends it); false when it went on (or was split). */
bool blkring__bio_cancel(struct blkring_bio *bio);
/* The largest bio the device takes for op, in bytes (whole logical blocks). */
uint64_t blkring__max_bio_bytes(const struct blkring_dev *dev, unsigned op);
/* Allocates a child bio for op on [offset, offset+size) chained to parent;
 * it frees itself when it ends.  NULL when out of memory. */
struct blkring_bio *blkring__bio_alloc_child(struct blkring_bio *parent, unsigned op,
                                             uint64_t offset, uint64_t size);

/*
 * Discard and write zeroes (blk-lib.c, Linux's blkdev_issue_discard and
 * blkdev_issue_zeroout): checked in Linux's blkdev_cmd_* order, then issued
 * on `bio`, which the caller set up (blkring__bio_init(), end_io, ioc) and
 * which ends once.  With nowait, a range that needs more than one bio (or
 * zero-page writes) fails with -EAGAIN before anything is issued.
 */
int blkring__blkdev_issue_discard(struct blkring_bio *bio, uint64_t start, uint64_t len,
                                  bool nowait);
int blkring__blkdev_issue_zeroout(struct blkring_bio *bio, uint64_t start, uint64_t len,
                                  unsigned zero_flags, bool nowait);

/*
 * Block device commands (ioctl.c, Linux's blkdev_uring_cmd): checks the
 * SQE's fields and calls the primitive it names, on `bio` as above.  With
 * BLKRING_ISSUE_NONBLOCK the primitive may answer -EAGAIN, and the ring
 * re-issues the command from the worker pool without the flag.  Returns 0
 * when issued (end_io runs once), a negative errno otherwise.
 */
#define BLKRING_ISSUE_NONBLOCK (1U << 0)
int blkring__blkdev_uring_cmd(const struct blkring_sqe *sqe, struct blkring_bio *bio,
                              unsigned issue_flags);

/* ---- hardware queues and tags (blk-mq.c) ---- */

BLKRING__MODULE_API int blkring__hctxs_init(struct blkring_dev *dev, unsigned nr_hw,
                                            unsigned nr_poll, unsigned depth);
void blkring__hctxs_exit(struct blkring_dev *dev);
/* The slow halves of the tag calls below: tags out, or bios waiting.  The
 * put half runs after the tag was freed. */
int blkring__hctx_get_tag_slow(struct blkring_hctx *hctx, struct blkring_bio *bio);
BLKRING__MODULE_API struct blkring_bio *blkring__hctx_put_tag_slow(struct blkring_hctx *hctx);

/* Picks the default or poll map queue for a bio. */
static inline struct blkring_hctx *blkring__map_queue(struct blkring_dev *dev,
                                                      struct blkring_bio *bio)
{
	unsigned hint = bio->queue_hint, n;

	if (unlikely(bio->flags & BIO_POLLED) && dev->nr_poll_queues) {
		n = dev->nr_poll_queues;
		return &dev->hctxs[dev->nr_hw_queues + (n == 1 ? 0 : hint % n)];
	}
	n = dev->nr_hw_queues;
	return &dev->hctxs[n == 1 ? 0 : hint % n];
}

/*
 * Takes a tag: 1 to dispatch now, 0 when the bio went on the wait list (it
 * is dispatched by a later put_tag) or, with BIO_NOWAIT, -EAGAIN.  Inline,
 * one compare-and-swap when a tag is free and no bio waits (FIFO: none is
 * overtaken).
 */
static inline int blkring__hctx_get_tag(struct blkring_hctx *hctx, struct blkring_bio *bio)
{
	uint32_t n = atomic_load_explicit(&hctx->inflight, memory_order_relaxed);

	if (likely(n < hctx->depth &&
	           !atomic_load_explicit(&hctx->nr_waiting, memory_order_relaxed)) &&
	    atomic_compare_exchange_strong_explicit(&hctx->inflight, &n, n + 1,
	                                            memory_order_seq_cst, memory_order_relaxed))
		return 1;
	return blkring__hctx_get_tag_slow(hctx, bio);
}

/* Takes bio off the hctx's wait list; true if it was there. */
bool blkring__hctx_cancel_wait(struct blkring_hctx *hctx, struct blkring_bio *bio);

/* Takes up to `want` tags at once when no bio waits; returns how many. */
static inline uint32_t blkring__hctx_get_tags(struct blkring_hctx *hctx, uint32_t want)
{
	uint32_t n = atomic_load_explicit(&hctx->inflight, memory_order_relaxed);

	while (n < hctx->depth && !atomic_load_explicit(&hctx->nr_waiting, memory_order_relaxed)) {
		uint32_t take = hctx->depth - n < want ? hctx->depth - n : want;

		if (atomic_compare_exchange_weak_explicit(
		        &hctx->inflight, &n, n + take, memory_order_seq_cst, memory_order_relaxed))
			return take;
	}
	return 0;
}

/* Gives back the tags a plug holds, one at a time, each to a waiting bio
 * if there is one (FIFO, as any put), started by its driver; then the pin. */
void blkring__plug_release(struct blkring_plug *plug);

/* The end of a submit batch: what the plug still holds goes back. */
static inline void blkring__plug_finish(struct blkring_plug *plug)
{
	plug->active = false;
	plug->want = 0;
	if (plug->hctx)
		blkring__plug_release(plug);
}

/* Takes a tag as blkring__hctx_get_tag() does; in a ring's submit batch,
 * the first bio to a queue takes tags for the batch's other bios too, when
 * no bio waits.  The device needs ops->start_tagged. */
BLKRING__MODULE_API int blkring__hctx_get_tag_plugged(struct blkring_hctx *hctx,
                                                      struct blkring_bio *bio);

/* Frees a tag; returns a waiting bio that now owns it, or NULL.  The
 * decrement and the read of nr_waiting are the putter's half of the
 * hand-off described in blk-mq.c. */
static inline struct blkring_bio *blkring__hctx_put_tag(struct blkring_hctx *hctx)
{
	atomic_fetch_sub_explicit(&hctx->inflight, 1, memory_order_seq_cst);
	if (likely(!atomic_load_explicit(&hctx->nr_waiting, memory_order_seq_cst)))
		return NULL;
	return blkring__hctx_put_tag_slow(hctx);
}

/* Poll-queue ownership: a poller skips a queue another poller holds. */
static inline bool blkring__hctx_trylock_poll(struct blkring_hctx *hctx)
{
	uint32_t idle = 0;

	return atomic_compare_exchange_strong_explicit(&hctx->busy, &idle, 1, memory_order_acquire,
	                                               memory_order_relaxed);
}
static inline void blkring__hctx_unlock_poll(struct blkring_hctx *hctx)
{
	atomic_store_explicit(&hctx->busy, 0, memory_order_release);
}

/* ---- devices (dev.c) ---- */

/* Allocates a device with the defaults; the driver fills the rest. */
BLKRING__MODULE_API struct blkring_dev *blkring__dev_alloc(const struct blkring_dev_ops *ops);
void blkring__dev_free(struct blkring_dev *dev);
/* Takes another open reference (a volume holding its legs); a holder drops
 * it with blkring__dev_put(), which cannot fail: its own I/O has ended, and
 * what others still hold is pinned. */
void blkring__dev_get(struct blkring_dev *dev);
void blkring__dev_put(struct blkring_dev *dev);
/* Bios the device's hardware queues hold (dispatched or waiting for a tag). */
unsigned blkring__dev_inflight(struct blkring_dev *dev);

/* ---- device specs (spec.c) ---- */

#define BLKRING_SPEC_MAX_KEYS 32

/* What a driver's first item is (docs/API.md, "Device specs"). */
enum blkring__spec_arg {
	SPEC_ARG_NONE,   /* TYPE:key=value,...: no first item */
	SPEC_ARG_PATH,   /* TYPE:PATH,...: made absolute at open */
	SPEC_ARG_OPAQUE, /* TYPE:STRING,...: verbatim (a URI, a pool/image) */
};

struct blkring_driver;

/* A parsed spec: blkring_spec_parse()'s, opaque to applications. */
struct blkring_spec {
	const char *type;
	const struct blkring_driver *drv;
	char *arg;       /* the first item, or NULL */
	char *arg_owned; /* set by blkring_spec_set_arg(): arg lives here */
	unsigned nr;
	struct blkring__spec_kv {
		char *key;
		char *val;
		char *owned; /* set by blkring_spec_set(): key and val live here */
		bool used;
	} kv[BLKRING_SPEC_MAX_KEYS];
	char *buf; /* owns type, arg and the parsed items */
};

int blkring__spec_parse(const char *text, struct blkring_spec *spec);
void blkring__spec_free(struct blkring_spec *spec);
/* Typed getters: 0 and *out left alone when absent; -EINVAL with a message
 * naming the key and the accepted values when malformed. */
BLKRING__MODULE_API int blkring__spec_u64(struct blkring_spec *spec, const char *key,
                                          uint64_t *out);
int blkring__spec_size(struct blkring_spec *spec, const char *key, uint64_t *out);
BLKRING__MODULE_API int blkring__spec_bool(struct blkring_spec *spec, const char *key, bool *out);
BLKRING__MODULE_API int blkring__spec_choice(struct blkring_spec *spec, const char *key,
                                             const char *const *choices, unsigned *out);
BLKRING__MODULE_API const char *blkring__spec_str(struct blkring_spec *spec, const char *key);
/* -EINVAL naming the first key no getter asked for, and listing `known`. */
BLKRING__MODULE_API int blkring__spec_check_unused(struct blkring_spec *spec, const char *known);

/* A driver: one per spec TYPE, listed in src/drivers/registry.c. */
struct blkring_driver {
	const char *type;
	enum blkring__spec_arg arg;
	const char *arg_name; /* for messages: "PATH", "URI" */
	/* A spec that is this driver's without TYPE: (a bare path, a URI), its
	 * first item; optional. */
	bool (*claims)(const char *text);
	int (*open)(struct blkring_spec *spec, struct blkring_dev **devp);
};

/* The registry (src/drivers/registry.c): block finds drivers by type. */
const struct blkring_driver *blkring__driver_find(const char *type);
const struct blkring_driver *blkring__driver_claim(const char *text);
/* The type of a module that claims text (an nbd:// URI), loaded or not. */
const char *blkring__module_claim(const char *text);
/* A separately loaded driver adds itself: -EEXIST when its type is taken. */
int blkring__driver_register(const struct blkring_driver *drv);
/* Loads the module that provides type: -ENOENT (no message) when none
 * does, another negative errno with a message when it cannot be loaded. */
int blkring__driver_load(const char *type, const struct blkring_driver **drvp);
/* "null, file, ...", for messages. */
void blkring__driver_types(char *buf, size_t size);

#endif
