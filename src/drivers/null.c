// SPDX-License-Identifier: MIT
/*
 * null devices: null_blk's parameters, names and defaults.
 *
 * A request-based driver: bios take a tag on a hardware queue and complete
 * inline (irqmode=none), from the queue's completion thread (softirq: at
 * once; timer: after completion_nsec), as an interrupt of the submitting
 * ring's thread after completion_nsec (signal: null-irq.c), or, on poll
 * queues, when someone polls.  Data, with memory_backed=1, lives in a
 * sparse page store.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "block/blkdev.h"
#include "drivers/null.h"
#include "lib/clock.h"
#include "lib/error.h"
#include "lib/futex.h"
#include "lib/thread.h"

#define NULL_PAGE_SHIFT 12
#define NULL_PAGE_SIZE (1U << NULL_PAGE_SHIFT)
#define LEAF_SHIFT 12 /* pages per leaf of the page table */
#define NR_PAGE_LOCKS 64
#define MAX_QUEUES 64
#define MAX_BADBLOCKS 64
#define NULL_MAX_NSEC 10000000000ULL /* completion_nsec, spin_nsec, submit_nsec */

enum { IRQ_NONE, IRQ_SOFTIRQ, IRQ_TIMER, IRQ_SIGNAL };

static const char *const irqmodes[] = {"none", "softirq", "timer", "signal", NULL};

static const char null_keys[] =
    "size, bs, submit_queues, poll_queues, hw_queue_depth, irqmode, completion_nsec, "
    "memory_backed, discard, write_zeroes, max_sectors, max_discard_sectors, "
    "max_write_zeroes_sectors, mbps, badblocks, ro, spin_nsec, submit_nsec, irq_cpu, name";

struct null_conf {
	uint64_t size, bs, submit_queues, poll_queues, hw_queue_depth;
	unsigned irqmode;
	uint64_t completion_nsec, mbps, spin_nsec, submit_nsec;
	int64_t irq_cpu; /* -1: the completion threads run anywhere */
	uint64_t max_sectors, max_discard_sectors, max_write_zeroes_sectors;
	bool memory_backed, discard, write_zeroes, ro;
	unsigned nr_bad;
	struct {
		uint64_t start, end; /* sectors, inclusive */
	} bad[MAX_BADBLOCKS];
};

/* Per hardware queue: bios waiting for their completion time. */
struct null_queue {
	struct null_dev *nd;
	struct blkring_hctx *hctx;
	struct llist_head submitted; /* MPSC: submitters push, one consumer */
	_Atomic uint32_t state;      /* SLEEPER_* (lib/futex.h): the thread's sleep */
	_Atomic bool stop;
	bool has_thread;
	pthread_t thread;
	/* Consumer's own (the thread, or the poller holding hctx->busy). */
	struct null_pending pend;
} __cacheline_aligned;

struct null_dev {
	struct null_conf conf;
	bool inline_completion;       /* irqmode=none and no bandwidth limit */
	_Atomic uint64_t bw_clock_ns; /* mbps: when the link is next free */
	/* Sparse store: leaves of page pointers, installed with a CAS; page
	 * pointers and page contents are guarded by the page's stripe lock. */
	_Atomic(uint8_t **) *leaves;
	uint64_t nr_leaves;
	_Atomic uint64_t nr_pages;
	pthread_mutex_t page_locks[NR_PAGE_LOCKS];
	struct null_queue *queues;
};

/* ---- the sparse page store ---- */

static uint8_t **leaf_get(struct null_dev *nd, uint64_t page, bool alloc)
{
	_Atomic(uint8_t **) *slot = &nd->leaves[page >> LEAF_SHIFT];
	uint8_t **leaf = atomic_load_explicit(slot, memory_order_acquire), **none = NULL;

	if (leaf || !alloc)
		return leaf;
	leaf = calloc(1U << LEAF_SHIFT, sizeof(*leaf));
	if (!leaf)
		return NULL;
	if (!atomic_compare_exchange_strong_explicit(slot, &none, leaf, memory_order_acq_rel,
	                                             memory_order_acquire)) {
		free(leaf);
		leaf = none;
	}
	return leaf;
}

/* The page's slot in its leaf; NULL when the leaf is absent and !alloc. */
static uint8_t **page_slot(struct null_dev *nd, uint64_t page, bool alloc)
{
	uint8_t **leaf = leaf_get(nd, page, alloc);

	return leaf ? &leaf[page & ((1U << LEAF_SHIFT) - 1)] : NULL;
}

static uint8_t *page_alloc(struct null_dev *nd, uint8_t **slot)
{
	if (!*slot) {
		*slot = calloc(1, NULL_PAGE_SIZE);
		if (*slot)
			atomic_fetch_add_explicit(&nd->nr_pages, 1, memory_order_relaxed);
	}
	return *slot;
}

static void page_free(struct null_dev *nd, uint8_t **slot)
{
	if (*slot) {
		free(*slot);
		*slot = NULL;
		atomic_fetch_sub_explicit(&nd->nr_pages, 1, memory_order_relaxed);
	}
}

/* One page's part of a bio: [off, off + len) within the page. */
static int page_op(struct null_dev *nd, struct blkring_bio *bio, struct blkring_bio_iter *it,
                   uint64_t page, unsigned off, unsigned len)
{
	bool write = bio->op == REQ_OP_WRITE ||
	             (bio->op == REQ_OP_WRITE_ZEROES && (bio->flags & BIO_NOUNMAP));
	bool whole = off == 0 && len == NULL_PAGE_SIZE;
	uint8_t **slot = page_slot(nd, page, write);
	int ret = 0;

	if (!slot) {
		if (write)
			return -ENOMEM;
		if (bio->op == REQ_OP_READ)
			blkring__bio_iter_zero(it, len);
		return 0;
	}
	pthread_mutex_lock(&nd->page_locks[page % NR_PAGE_LOCKS]);
	if (write && !page_alloc(nd, slot)) {
		ret = -ENOMEM;
	} else if (bio->op == REQ_OP_READ) {
		if (*slot)
			blkring__bio_iter_copy_to(it, *slot + off, len);
		else
			blkring__bio_iter_zero(it, len);
	} else if (bio->op == REQ_OP_WRITE) {
		blkring__bio_iter_copy_from(it, *slot + off, len);
	} else if (whole && !write) {
		page_free(nd, slot); /* discard, and zeroes that may unmap */
	} else if (*slot) {
		memset(*slot + off, 0, len);
	}
	pthread_mutex_unlock(&nd->page_locks[page % NR_PAGE_LOCKS]);
	return ret;
}

/* The first byte of the next leaf, or end. */
static uint64_t skip_leaf(uint64_t pos, uint64_t end)
{
	uint64_t leaf_bytes = (uint64_t)NULL_PAGE_SIZE << LEAF_SHIFT;
	uint64_t next = (pos / leaf_bytes + 1) * leaf_bytes;

	return next < end ? next : end;
}

static int store_transfer(struct null_dev *nd, struct blkring_bio *bio)
{
	uint64_t pos = bio->sector << SECTOR_SHIFT, end = pos + bio->size;
	bool unmap = bio->op == REQ_OP_DISCARD ||
	             (bio->op == REQ_OP_WRITE_ZEROES && !(bio->flags & BIO_NOUNMAP));
	struct blkring_bio_iter it;
	int ret = 0;

	if (bio->vec)
		blkring__bio_iter_init(&it, bio);
	while (!ret && pos < end) {
		unsigned off = pos & (NULL_PAGE_SIZE - 1);
		unsigned len = NULL_PAGE_SIZE - off;

		if (unmap && !leaf_get(nd, pos >> NULL_PAGE_SHIFT, false)) {
			pos = skip_leaf(pos, end); /* nothing stored there */
			continue;
		}
		if (len > end - pos)
			len = (unsigned)(end - pos);
		ret = page_op(nd, bio, &it, pos >> NULL_PAGE_SHIFT, off, len);
		pos += len;
	}
	return ret;
}

static void store_free(struct null_dev *nd)
{
	for (uint64_t l = 0; l < nd->nr_leaves; l++) {
		uint8_t **leaf = atomic_load(&nd->leaves[l]);

		for (unsigned i = 0; leaf && i < (1U << LEAF_SHIFT); i++)
			free(leaf[i]);
		free(leaf);
	}
	free(nd->leaves);
	for (unsigned i = 0; i < NR_PAGE_LOCKS; i++)
		pthread_mutex_destroy(&nd->page_locks[i]);
}

static int store_init(struct null_dev *nd)
{
	uint64_t nr_pages = (nd->conf.size + NULL_PAGE_SIZE - 1) >> NULL_PAGE_SHIFT;

	nd->nr_leaves = (nr_pages + (1U << LEAF_SHIFT) - 1) >> LEAF_SHIFT;
	nd->leaves = calloc(nd->nr_leaves, sizeof(*nd->leaves));
	if (!nd->leaves)
		return -ENOMEM;
	for (unsigned i = 0; i < NR_PAGE_LOCKS; i++)
		pthread_mutex_init(&nd->page_locks[i], NULL);
	return 0;
}

uint64_t blkring__null_nr_pages(struct blkring_dev *dev)
{
	struct null_dev *nd = dev->private;

	return atomic_load_explicit(&nd->nr_pages, memory_order_relaxed);
}

/* ---- doing a bio ---- */

static bool hits_badblocks(const struct null_conf *c, const struct blkring_bio *bio)
{
	uint64_t first = bio->sector, last = bio->sector + (bio->size >> SECTOR_SHIFT) - 1;

	for (unsigned i = 0; i < c->nr_bad; i++)
		if (first <= c->bad[i].end && c->bad[i].start <= last)
			return true;
	return false;
}

/* Moves the data and returns the bio's status (null_handle_cmd's role). */
static inline int null_handle(struct null_dev *nd, struct blkring_bio *bio)
{
	if (likely(!nd->conf.nr_bad && !nd->conf.memory_backed))
		return 0;
	if (nd->conf.nr_bad && bio->op != REQ_OP_FLUSH && hits_badblocks(&nd->conf, bio))
		return -EIO;
	if (!nd->conf.memory_backed || bio->op == REQ_OP_FLUSH)
		return 0;
	return store_transfer(nd, bio);
}

static void queue_push(struct null_queue *q, struct blkring_bio *bio);

/*
 * Ends a bio that holds a tag.  The tag is freed first so that a caller
 * who sees the end sees the queue idle; a bio waiting for the tag is then
 * dispatched by us.
 */
static void null_end(struct null_queue *q, struct blkring_bio *bio)
{
	while (bio) {
		struct blkring_bio *next = blkring__hctx_put_tag(q->hctx);

		blkring__bio_endio(bio, (int)(intptr_t)bio->driver_data);
		bio = NULL;
		if (!next)
			break;
		next->driver_data = (void *)(intptr_t)null_handle(q->nd, next);
		if (q->nd->inline_completion && !q->hctx->poll)
			bio = next;
		else
			queue_push(q, next);
	}
}

/* mbps: each bio occupies the link for its bytes' worth of time. */
static uint64_t bandwidth_deadline(struct null_dev *nd, uint64_t now, uint64_t bytes)
{
	uint64_t cost = bytes * 1000000000ULL / (nd->conf.mbps << 20);
	uint64_t clock = atomic_load_explicit(&nd->bw_clock_ns, memory_order_relaxed), next;

	do {
		next = (clock > now ? clock : now) + cost;
	} while (!atomic_compare_exchange_weak_explicit(
	    &nd->bw_clock_ns, &clock, next, memory_order_relaxed, memory_order_relaxed));
	return next;
}

/* Completions wait for a time: completion_nsec, or the link's. */
static bool null_timed(const struct null_conf *c)
{
	return c->irqmode >= IRQ_TIMER || c->mbps;
}

static uint64_t bio_deadline(struct null_dev *nd, struct blkring_bio *bio)
{
	uint64_t now, at = 0;

	if (!null_timed(&nd->conf))
		return 0;
	now = blkring__now_ns();
	if (nd->conf.irqmode >= IRQ_TIMER)
		at = now + nd->conf.completion_nsec;
	if (nd->conf.mbps) {
		uint64_t bw = bandwidth_deadline(nd, now, bio->size);

		at = bw > at ? bw : at;
	}
	return at;
}

static void queue_add(struct null_queue *q, struct blkring_bio *bio)
{
	/* Only a first arrival can find the thread asleep: it sleeps only
	 * with an empty list. */
	if (llist_add(&bio->node, &q->submitted) && q->has_thread)
		sleeper_wake(&q->state);
}

static void queue_push(struct null_queue *q, struct blkring_bio *bio)
{
	bio->deadline_ns = bio_deadline(q->nd, bio);
	queue_add(q, bio);
}

static void null_irq_end(struct blkring_bio *bio)
{
	struct null_dev *nd = bio->dev->private;

	null_end(&nd->queues[bio->hctx->index], bio);
}

/* irqmode=signal, from the submitter: its ring's interrupt ends the bio;
 * one no ring submitted, or that waited for its tag, ends from the queue's
 * thread. */
static void null_start_signal(struct null_queue *q, struct blkring_bio *bio)
{
	bio->driver_data = (void *)(intptr_t)null_handle(q->nd, bio);
	bio->deadline_ns = bio_deadline(q->nd, bio);
	if (!bio->ioc || !blkring__null_irq_queue(bio->dev, bio, null_irq_end))
		queue_add(q, bio);
}

/* Starts a bio that holds a tag: its data now, its end inline or from the
 * queue's consumer. */
static void null_start(struct null_queue *q, struct blkring_bio *bio)
{
	bio->driver_data = (void *)(intptr_t)null_handle(q->nd, bio);
	if (likely(q->nd->inline_completion && !q->hctx->poll))
		null_end(q, bio);
	else
		queue_push(q, bio);
}

static void null_start_tagged(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct null_dev *nd = dev->private;

	null_start(&nd->queues[bio->hctx->index], bio);
}

/*
 * Tags through the ring's plug: the completion thread frees them one by
 * one on the line the submitter takes them from, and the submitter then
 * misses it once a batch, not once a bio (docs/BENCH.md, "Design
 * measurements").  Inline ends free their tag at once and gain nothing
 * from it.
 */
static int null_get_tag(struct null_dev *nd, struct blkring_hctx *hctx, struct blkring_bio *bio)
{
	if (nd->inline_completion && !hctx->poll)
		return blkring__hctx_get_tag(hctx, bio);
	return blkring__hctx_get_tag_plugged(hctx, bio);
}

/* submit_nsec: what handing a command to a device costs its submitter
 * (building it, ringing the doorbell), spent on the submitting CPU. */
static void submit_cost(const struct null_conf *c)
{
	uint64_t end = blkring__now_ns() + c->submit_nsec;

	while (blkring__now_ns() < end)
		cpu_relax();
}

static int null_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct null_dev *nd = dev->private;
	struct blkring_hctx *hctx = blkring__map_queue(dev, bio);
	struct null_queue *q = &nd->queues[hctx->index];
	int ret;

	if (unlikely(nd->conf.submit_nsec))
		submit_cost(&nd->conf);
	bio->hctx = hctx;
	ret = null_get_tag(nd, hctx, bio);
	if (ret <= 0)
		return ret; /* waiting for a tag (0), or NOWAIT without one */
	if (unlikely(nd->conf.irqmode == IRQ_SIGNAL) && !hctx->poll)
		null_start_signal(q, bio);
	else
		null_start(q, bio);
	return 0;
}

/*
 * irqmode=none with nothing to do for the data (no memory backing, no
 * badblocks, no bandwidth limit, no submit cost), picked at open.  A bio
 * for the default map starts and ends inside its submitter's call, so it
 * neither takes a tag nor names a queue (bio->hctx stays NULL, as for any
 * bio no queue took): the queues never hold more bios than there are
 * threads inside submit at that moment, none of them ever waits, and a tag
 * would only have cost two locked read-modify-writes on a line every
 * submitter shares.  hw_queue_depth still bounds every queue where a bio
 * can outlive the call: other irqmodes, mbps, and the poll queues.
 */
static int null_submit_bio_none(struct blkring_dev *dev, struct blkring_bio *bio)
{
	if (unlikely(bio->flags & BIO_POLLED))
		return null_submit_bio(dev, bio);
	blkring__bio_endio(bio, 0);
	return 0;
}

/* The same with memory or badblocks: the data moves inside the call too,
 * so the bio still needs no tag (many threads of one queue, as nbdkit's
 * workers, would otherwise pass its tag line between CPUs per bio).  Apart
 * from the plain one, so that its path does not pay for the data check. */
static int null_submit_bio_inline(struct blkring_dev *dev, struct blkring_bio *bio)
{
	if (unlikely(bio->flags & BIO_POLLED))
		return null_submit_bio(dev, bio);
	blkring__bio_endio(bio, null_handle(dev->private, bio));
	return 0;
}

/* ---- completion: the queue's thread, or a poller ---- */

static struct blkring_bio *node_bio(struct llist_node *n)
{
	return container_of(n, struct blkring_bio, node);
}

/* Deadlines tie, as they all do without a timer, or grow at the tail but
 * for a bandwidth limit's: the walk is rare. */
void blkring__null_pending_add(struct null_pending *p, struct blkring_bio *bio)
{
	struct llist_node **pp = &p->first;

	if (!p->tail || p->tail->deadline_ns <= bio->deadline_ns) {
		bio->node.next = NULL;
		if (p->tail)
			p->tail->node.next = &bio->node;
		else
			p->first = &bio->node;
		p->tail = bio;
		return;
	}
	while (node_bio(*pp)->deadline_ns <= bio->deadline_ns)
		pp = &(*pp)->next;
	bio->node.next = *pp;
	*pp = &bio->node;
}

static void pending_take_submitted(struct null_queue *q)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&q->submitted));

	while (n) {
		struct llist_node *next = n->next;

		blkring__null_pending_add(&q->pend, node_bio(n));
		n = next;
	}
}

/* Ends the pending bios whose time has come; returns how many, and the
 * first deadline still ahead in *next_ns (0 when none is pending). */
static int pending_complete(struct null_queue *q, uint64_t *next_ns)
{
	uint64_t now = null_timed(&q->nd->conf) ? blkring__now_ns() : 0;
	struct blkring_bio *bio;
	int n = 0;

	while ((bio = blkring__null_pending_due(&q->pend, now))) {
		null_end(q, bio);
		n++;
	}
	*next_ns = q->pend.first ? node_bio(q->pend.first)->deadline_ns : 0;
	return n;
}

/*
 * spin_nsec: before it sleeps, the thread watches its list that long.  A
 * device needs no wake-up to see new commands; a sleeping thread does, and
 * on a virtual machine whose idle vCPUs halt, that futex wake costs more
 * than the I/O it carries.  Returns true when a bio arrived.
 */
static bool thread_spin(struct null_queue *q)
{
	uint64_t end = blkring__now_ns() + q->nd->conf.spin_nsec;

	do {
		for (int i = 0; i < 64; i++) {
			if (atomic_load_explicit(&q->submitted.first, memory_order_relaxed) ||
			    atomic_load_explicit(&q->stop, memory_order_relaxed))
				return true;
			cpu_relax();
		}
	} while (blkring__now_ns() < end);
	return false;
}

static void thread_sleep(struct null_queue *q, uint64_t until_ns)
{
	struct timespec ts, *tsp = NULL;

	if (!until_ns && q->nd->conf.spin_nsec && thread_spin(q))
		return;

	sleeper_prepare(&q->state);
	if (!atomic_load_explicit(&q->submitted.first, memory_order_acquire) &&
	    !atomic_load_explicit(&q->stop, memory_order_relaxed)) {
		if (until_ns) {
			uint64_t now = blkring__now_ns(),
			         left = until_ns > now ? until_ns - now : 0;

			ts.tv_sec = (time_t)(left / 1000000000ULL);
			ts.tv_nsec = (long)(left % 1000000000ULL);
			tsp = &ts;
		}
		if (!tsp || tsp->tv_sec || tsp->tv_nsec)
			sleeper_wait(&q->state, tsp);
	}
	sleeper_done(&q->state);
}

/* The "interrupt": a default-map queue's completion thread. */
static void *queue_thread(void *arg)
{
	struct null_queue *q = arg;
	uint64_t next_ns;

	for (;;) {
		pending_take_submitted(q);
		pending_complete(q, &next_ns);
		if (!q->pend.first && llist_empty(&q->submitted) &&
		    atomic_load_explicit(&q->stop, memory_order_acquire))
			return NULL;
		thread_sleep(q, next_ns);
	}
}

static int poll_queue(struct null_queue *q)
{
	uint64_t next_ns;
	int n;

	if (!blkring__hctx_trylock_poll(q->hctx))
		return 0;
	pending_take_submitted(q);
	n = pending_complete(q, &next_ns);
	blkring__hctx_unlock_poll(q->hctx);
	return n;
}

static int null_poll_queue(struct blkring_dev *dev, struct blkring_hctx *hctx)
{
	struct null_dev *nd = dev->private;

	return poll_queue(&nd->queues[hctx->index]);
}

/* ---- setup and teardown ---- */

static void queues_stop(struct null_dev *nd, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		struct null_queue *q = &nd->queues[i];

		if (!q->has_thread)
			continue;
		atomic_store_explicit(&q->stop, true, memory_order_relaxed);
		sleeper_wake(&q->state);
		pthread_join(q->thread, NULL);
		q->has_thread = false;
	}
}

static int queue_pin(struct null_dev *nd, struct null_queue *q)
{
	cpu_set_t set;
	int ret;

	if (nd->conf.irq_cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET((int)nd->conf.irq_cpu, &set);
	ret = pthread_setaffinity_np(q->thread, sizeof(set), &set);
	if (ret)
		return blkring__error(-ret, "null: irq_cpu=%" PRId64 ": %s", nd->conf.irq_cpu,
		                      "not a CPU this process may run on");
	return 0;
}

static int queues_start(struct blkring_dev *dev, struct null_dev *nd)
{
	unsigned nr = dev->nr_hw_queues + dev->nr_poll_queues;
	bool threads = nd->conf.irqmode != IRQ_NONE || nd->conf.mbps;
	int ret;

	nd->queues = aligned_alloc(CACHELINE, sizeof(*nd->queues) * nr);
	if (!nd->queues)
		return -ENOMEM;
	/* All of it: a failed start leaves later queues for null_destroy(). */
	memset(nd->queues, 0, sizeof(*nd->queues) * nr);
	for (unsigned i = 0; i < nr; i++) {
		struct null_queue *q = &nd->queues[i];

		q->nd = nd;
		q->hctx = &dev->hctxs[i];
		llist_init(&q->submitted);
		if (!threads || q->hctx->poll)
			continue;
		ret = blkring__thread_start(&q->thread, NULL, queue_thread, q, "blkring-null");
		if (ret) {
			queues_stop(nd, i);
			return ret;
		}
		q->has_thread = true;
		ret = queue_pin(nd, q);
		if (ret) {
			queues_stop(nd, i + 1);
			return ret;
		}
	}
	return 0;
}

static void null_destroy(struct blkring_dev *dev)
{
	struct null_dev *nd = dev->private;

	if (!nd)
		return;
	if (nd->queues) {
		queues_stop(nd, dev->nr_hw_queues);
		free(nd->queues);
	}
	if (nd->leaves)
		store_free(nd);
	free(nd);
	dev->private = NULL;
}

static const struct blkring_dev_ops null_ops = {
    .name = "null",
    .submit_bio = null_submit_bio,
    .poll_queue = null_poll_queue,
    .start_tagged = null_start_tagged,
    .destroy = null_destroy,
};

static const struct blkring_dev_ops null_none_ops = {
    .name = "null",
    .submit_bio = null_submit_bio_none,
    .poll_queue = null_poll_queue,
    .start_tagged = null_start_tagged,
    .destroy = null_destroy,
};

static const struct blkring_dev_ops null_inline_ops = {
    .name = "null",
    .submit_bio = null_submit_bio_inline,
    .poll_queue = null_poll_queue,
    .start_tagged = null_start_tagged,
    .destroy = null_destroy,
};

/* Bios of the default map that end inside their submitter's call take no
 * tag (null_submit_bio_none()). */
static const struct blkring_dev_ops *null_pick_ops(const struct null_conf *c)
{
	if (c->irqmode != IRQ_NONE || c->mbps || c->submit_nsec)
		return &null_ops;
	return c->memory_backed || c->nr_bad ? &null_inline_ops : &null_none_ops;
}

/* ---- the spec ---- */

static int conf_error(const char *key, uint64_t val, const char *expected)
{
	return blkring__error(-EINVAL, "null: bad value %" PRIu64 " for key '%s': expected %s", val,
	                      key, expected);
}

static int parse_range(struct blkring_spec *spec, struct null_conf *c, const char *text)
{
	static const char expected[] =
	    "sector ranges START-END joined by '+', e.g. 100-199+4096-4103";
	const char *p = text;

	while (*p) {
		char *end;
		uint64_t start, last;

		if (c->nr_bad == MAX_BADBLOCKS || *p < '0' || *p > '9')
			goto bad;
		errno = 0;
		start = last = strtoull(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				goto bad;
			last = strtoull(end + 1, &end, 10);
		}
		if (errno || last < start || (*end && *end != '+') || (*end == '+' && !end[1]))
			goto bad;
		c->bad[c->nr_bad].start = start;
		c->bad[c->nr_bad].end = last;
		c->nr_bad++;
		p = *end ? end + 1 : end;
	}
	if (!c->nr_bad)
		goto bad;
	return 0;
bad:
	return blkring__error(-EINVAL,
	                      "%s: bad value '%s' for key 'badblocks': expected %s (at most %d)",
	                      spec->type, text, expected, MAX_BADBLOCKS);
}

/* irq_cpu=N: where the "interrupt" runs, as an IRQ's affinity does. */
static int parse_irq_cpu(struct blkring_spec *spec, struct null_conf *c)
{
	uint64_t cpu = UINT64_MAX;
	int ret = blkring__spec_u64(spec, "irq_cpu", &cpu);

	if (ret || cpu == UINT64_MAX)
		return ret;
	if (cpu >= CPU_SETSIZE)
		return conf_error("irq_cpu", cpu, "a CPU number below 1024");
	c->irq_cpu = (int64_t)cpu;
	return 0;
}

static int parse_keys(struct blkring_spec *spec, struct null_conf *c)
{
	const char *bad = blkring__spec_str(spec, "badblocks");
	int ret;

	(void)blkring__spec_str(spec, "name"); /* only tells devices apart */
	ret = blkring__spec_size(spec, "size", &c->size) ?:
	      blkring__spec_size(spec, "bs", &c->bs) ?:
	      blkring__spec_u64(spec, "submit_queues", &c->submit_queues) ?:
	      blkring__spec_u64(spec, "poll_queues", &c->poll_queues) ?:
	      blkring__spec_u64(spec, "hw_queue_depth", &c->hw_queue_depth) ?:
	      blkring__spec_choice(spec, "irqmode", irqmodes, &c->irqmode) ?:
	      blkring__spec_u64(spec, "completion_nsec", &c->completion_nsec) ?:
	      blkring__spec_bool(spec, "memory_backed", &c->memory_backed) ?:
	      blkring__spec_bool(spec, "discard", &c->discard) ?:
	      blkring__spec_bool(spec, "write_zeroes", &c->write_zeroes) ?:
	      blkring__spec_u64(spec, "max_sectors", &c->max_sectors) ?:
	      blkring__spec_u64(spec, "max_discard_sectors", &c->max_discard_sectors) ?:
	      blkring__spec_u64(spec, "max_write_zeroes_sectors", &c->max_write_zeroes_sectors) ?:
	      blkring__spec_u64(spec, "mbps", &c->mbps) ?:
	      blkring__spec_bool(spec, "ro", &c->ro) ?:
	      blkring__spec_u64(spec, "spin_nsec", &c->spin_nsec) ?:
	      blkring__spec_u64(spec, "submit_nsec", &c->submit_nsec) ?:
	      parse_irq_cpu(spec, c) ?:
	      blkring__spec_check_unused(spec, null_keys);
	if (!ret && bad)
		ret = parse_range(spec, c, bad);
	return ret;
}

static int check_conf(const struct null_conf *c)
{
	if (c->bs < SECTOR_SIZE || c->bs > 4096 || (c->bs & (c->bs - 1)))
		return conf_error("bs", c->bs, "a power of two from 512 to 4096");
	if (!c->size || c->size % c->bs)
		return conf_error("size", c->size, "a non-zero multiple of bs");
	if (!c->submit_queues || c->submit_queues > MAX_QUEUES)
		return conf_error("submit_queues", c->submit_queues, "1 to 64");
	if (c->poll_queues > MAX_QUEUES)
		return conf_error("poll_queues", c->poll_queues, "0 to 64");
	if (!c->hw_queue_depth || c->hw_queue_depth > 65536)
		return conf_error("hw_queue_depth", c->hw_queue_depth, "1 to 65536");
	if (c->max_sectors &&
	    (c->max_sectors < c->bs >> SECTOR_SHIFT || c->max_sectors > UINT32_MAX))
		return conf_error("max_sectors", c->max_sectors, "0 (default) or bs/512 to 2^32-1");
	if (c->max_discard_sectors < c->bs >> SECTOR_SHIFT || c->max_discard_sectors > UINT32_MAX)
		return conf_error("max_discard_sectors", c->max_discard_sectors,
		                  "bs/512 to 2^32-1");
	if (c->max_write_zeroes_sectors < c->bs >> SECTOR_SHIFT ||
	    c->max_write_zeroes_sectors > UINT32_MAX)
		return conf_error("max_write_zeroes_sectors", c->max_write_zeroes_sectors,
		                  "bs/512 to 2^32-1");
	/* Both are added to a clock: a bound keeps the sum from wrapping, and
	 * a completion far away from holding up a bench's stop. */
	if (c->completion_nsec > NULL_MAX_NSEC)
		return conf_error("completion_nsec", c->completion_nsec, "0 to 10000000000 (10 s)");
	if (c->spin_nsec > NULL_MAX_NSEC)
		return conf_error("spin_nsec", c->spin_nsec, "0 to 10000000000 (10 s)");
	if (c->submit_nsec > NULL_MAX_NSEC)
		return conf_error("submit_nsec", c->submit_nsec, "0 to 10000000000 (10 s)");
	if (c->mbps > (UINT64_MAX >> 20) / 1000000000ULL)
		return conf_error("mbps", c->mbps, "MiB/s, 0 for no limit");
	/* null_blk ignores these silently without memory; we say so. */
	if (c->discard && !c->memory_backed)
		return blkring__error(-EINVAL,
		                      "null: key 'discard': discard=1 needs memory_backed=1");
	if (c->write_zeroes && !c->memory_backed)
		return blkring__error(
		    -EINVAL, "null: key 'write_zeroes': write_zeroes=1 needs memory_backed=1");
	return 0;
}

static void set_limits(struct blkring_dev *dev, const struct null_conf *c)
{
	struct blkring_limits *lim = &dev->limits;

	dev->size = c->size;
	dev->read_only = c->ro;
	lim->logical_block_size = (uint32_t)c->bs;
	lim->physical_block_size = (uint32_t)c->bs;
	lim->discard_granularity = (uint32_t)c->bs;
	if (c->max_sectors)
		lim->max_sectors = (uint32_t)c->max_sectors;
	lim->max_discard_sectors = c->discard ? (uint32_t)c->max_discard_sectors : 0;
	lim->max_write_zeroes_sectors = c->write_zeroes ? (uint32_t)c->max_write_zeroes_sectors : 0;
	dev->features = (c->discard ? BLKRING_FEAT_DISCARD : 0) |
	                (c->write_zeroes ? BLKRING_FEAT_WRITE_ZEROES : 0) |
	                (c->poll_queues ? BLKRING_FEAT_POLL : 0);
}

static int null_open(struct blkring_spec *spec, struct blkring_dev **devp)
{
	struct null_conf c = {
	    .size = 250ULL << 30,
	    .bs = 512,
	    .submit_queues = 1,
	    .poll_queues = 1,
	    .hw_queue_depth = 64,
	    .irqmode = IRQ_SOFTIRQ,
	    .completion_nsec = 10000,
	    .irq_cpu = -1,
	    .max_discard_sectors = UINT32_MAX >> SECTOR_SHIFT,
	    .max_write_zeroes_sectors = UINT32_MAX >> SECTOR_SHIFT,
	};
	struct blkring_dev *dev;
	struct null_dev *nd;
	int ret = parse_keys(spec, &c) ?: check_conf(&c);

	if (!ret && c.irqmode == IRQ_SIGNAL)
		ret = blkring__null_irq_setup();
	if (ret)
		return ret;
	dev = blkring__dev_alloc(null_pick_ops(&c));
	nd = calloc(1, sizeof(*nd));
	if (!dev || !nd) {
		free(dev);
		free(nd);
		return -ENOMEM;
	}
	*devp = dev;
	dev->private = nd;
	nd->conf = c;
	nd->inline_completion = c.irqmode == IRQ_NONE && !c.mbps;
	set_limits(dev, &c);
	ret = blkring__hctxs_init(dev, (unsigned)c.submit_queues, (unsigned)c.poll_queues,
	                          (unsigned)c.hw_queue_depth);
	if (!ret && c.memory_backed)
		ret = store_init(nd);
	if (!ret)
		ret = queues_start(dev, nd);
	return ret; /* on failure the registry calls null_destroy() */
}

const struct blkring_driver blkring__null_driver = {
    .type = "null",
    .arg = SPEC_ARG_NONE,
    .open = null_open,
};
