// SPDX-License-Identifier: MIT
/*
 * Hardware queues and tags (blk-mq's role).  A queue has `depth` tags; a
 * bio beyond them waits on the queue's FIFO wait list and is handed the
 * tag of the next bio that ends, so the submitter never blocks and no bio
 * is lost.  The fast path is one compare-and-swap on the in-flight count;
 * the wait-list lock is taken only when tags run out.
 *
 * Tag hand-off without a lost wake-up: a waiter publishes itself
 * (nr_waiting) and then rereads `inflight`; a putter drops `inflight` and
 * then reads `nr_waiting`.  Both pairs are sequentially consistent, so at
 * least one side sees the other (Dekker).
 */
#include <errno.h>
#include <stdlib.h>

#include "blkdev.h"

int blkring__hctxs_init(struct blkring_dev *dev, unsigned nr_hw, unsigned nr_poll, unsigned depth)
{
	unsigned nr = nr_hw + nr_poll;
	struct blkring_hctx *hctxs;

	if (!nr_hw || !depth)
		return -EINVAL;
	hctxs = aligned_alloc(CACHELINE, sizeof(*hctxs) * nr);
	if (!hctxs)
		return -ENOMEM;
	for (unsigned i = 0; i < nr; i++) {
		struct blkring_hctx *hctx = &hctxs[i];

		*hctx = (struct blkring_hctx){
		    .dev = dev, .index = i, .poll = i >= nr_hw, .depth = depth};
		pthread_mutex_init(&hctx->wait_lock, NULL);
	}
	dev->hctxs = hctxs;
	dev->nr_hw_queues = nr_hw;
	dev->nr_poll_queues = nr_poll;
	return 0;
}

void blkring__hctxs_exit(struct blkring_dev *dev)
{
	unsigned nr = dev->nr_hw_queues + dev->nr_poll_queues;

	if (!dev->hctxs)
		return;
	for (unsigned i = 0; i < nr; i++)
		pthread_mutex_destroy(&dev->hctxs[i].wait_lock);
	free(dev->hctxs);
	dev->hctxs = NULL;
}

static bool tag_try_get(struct blkring_hctx *hctx)
{
	uint32_t n = atomic_load_explicit(&hctx->inflight, memory_order_relaxed);

	while (n < hctx->depth) {
		if (atomic_compare_exchange_weak_explicit(
		        &hctx->inflight, &n, n + 1, memory_order_seq_cst, memory_order_relaxed))
			return true;
	}
	return false;
}

static void wait_list_add(struct blkring_hctx *hctx, struct blkring_bio *bio)
{
	bio->node.next = NULL;
	if (hctx->wait_tail)
		hctx->wait_tail->node.next = &bio->node;
	else
		hctx->wait_head = bio;
	hctx->wait_tail = bio;
	atomic_fetch_add_explicit(&hctx->nr_waiting, 1, memory_order_seq_cst);
}

static struct blkring_bio *wait_next(const struct blkring_bio *b)
{
	return b->node.next ? container_of(b->node.next, struct blkring_bio, node) : NULL;
}

static void wait_unlink(struct blkring_hctx *hctx, struct blkring_bio *prev, struct blkring_bio *b)
{
	if (prev)
		prev->node.next = b->node.next;
	else
		hctx->wait_head = wait_next(b);
	if (hctx->wait_tail == b)
		hctx->wait_tail = prev;
	atomic_fetch_sub_explicit(&hctx->nr_waiting, 1, memory_order_relaxed);
}

static struct blkring_bio *wait_list_pop(struct blkring_hctx *hctx)
{
	struct blkring_bio *bio = hctx->wait_head;

	wait_unlink(hctx, NULL, bio);
	return bio;
}

/* Tags are out, others wait before us (FIFO), or another thread took the
 * tag we saw free. */
int blkring__hctx_get_tag_slow(struct blkring_hctx *hctx, struct blkring_bio *bio)
{
	int ret = 0;

	pthread_mutex_lock(&hctx->wait_lock);
	if (bio->flags & BIO_NOWAIT) {
		if (hctx->wait_head || !tag_try_get(hctx))
			ret = -EAGAIN;
		else
			ret = 1;
		pthread_mutex_unlock(&hctx->wait_lock);
		return ret;
	}
	wait_list_add(hctx, bio);
	/* A putter may have freed a tag before it could see us waiting. */
	if (hctx->wait_head == bio && tag_try_get(hctx)) {
		wait_list_pop(hctx);
		ret = 1;
	}
	pthread_mutex_unlock(&hctx->wait_lock);
	return ret;
}

bool blkring__hctx_cancel_wait(struct blkring_hctx *hctx, struct blkring_bio *bio)
{
	struct blkring_bio *prev = NULL;
	bool found = false;

	pthread_mutex_lock(&hctx->wait_lock);
	for (struct blkring_bio *b = hctx->wait_head; b; prev = b, b = wait_next(b)) {
		if (b == bio) {
			wait_unlink(hctx, prev, b);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&hctx->wait_lock);
	return found;
}

/* A tag was freed while bios wait: the first one takes it. */
struct blkring_bio *blkring__hctx_put_tag_slow(struct blkring_hctx *hctx)
{
	struct blkring_bio *bio = NULL;

	pthread_mutex_lock(&hctx->wait_lock);
	if (hctx->wait_head && tag_try_get(hctx))
		bio = wait_list_pop(hctx);
	pthread_mutex_unlock(&hctx->wait_lock);
	return bio;
}

void blkring__plug_release(struct blkring_plug *plug)
{
	struct blkring_hctx *hctx = plug->hctx;

	for (; plug->nr; plug->nr--) {
		struct blkring_bio *next = blkring__hctx_put_tag(hctx);

		if (next)
			hctx->dev->ops->start_tagged(hctx->dev, next);
	}
	plug->hctx = NULL;
	blkring__dev_unpin(hctx->dev);
}

/* Cached tags are a reference: a reload may close the device meanwhile. */
static void plug_hold(struct blkring_plug *plug, struct blkring_hctx *hctx, uint32_t nr)
{
	blkring__dev_pin(hctx->dev);
	if (plug->hctx)
		blkring__dev_unpin(plug->hctx->dev); /* its tags are all used */
	plug->hctx = hctx;
	plug->nr = nr;
}

int blkring__hctx_get_tag_plugged(struct blkring_hctx *hctx, struct blkring_bio *bio)
{
	struct blkring_plug *plug = bio->ioc ? &bio->ioc->plug : NULL;
	uint32_t n;

	if (!plug || !plug->active)
		return blkring__hctx_get_tag(hctx, bio);
	if (plug->want)
		plug->want--;
	if (plug->hctx == hctx && plug->nr) {
		plug->nr--;
		return 1;
	}
	/* Another queue's tags stay for its bios to come (a volume's clones
	 * alternate between legs), as Linux's cached requests serve one queue. */
	if (plug->nr)
		return blkring__hctx_get_tag(hctx, bio);
	n = blkring__hctx_get_tags(hctx, plug->want + 1);
	if (!n)
		return blkring__hctx_get_tag(hctx, bio);
	if (n > 1)
		plug_hold(plug, hctx, n - 1);
	return 1;
}
