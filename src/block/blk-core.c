// SPDX-License-Identifier: MIT
/*
 * Bio submission (Linux's block/blk-core.c and blk-merge.c roles): checks
 * a bio against the device, splits it to the device's limits and hands it
 * to the driver or volume through the ops table.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "blkdev.h"

/* Linux caps one read or write at MAX_RW_COUNT; so do we, which also keeps
 * every data window offset within 32 bits. */
#define MAX_RW_BYTES ((uint64_t)INT_MAX & ~4095ULL)

int blkring__validate_byte_range(struct blkring_dev *dev, uint64_t offset, uint64_t len)
{
	uint64_t bs_mask = READ_ONCE(dev->limits.logical_block_size) - 1;
	uint64_t end;

	if ((offset | len) & bs_mask)
		return -EINVAL;
	if (!len)
		return -EINVAL;
	if (__builtin_add_overflow(offset, len, &end) || end > READ_ONCE(dev->size))
		return -EINVAL;
	return 0;
}

static inline uint64_t max_bytes(const struct blkring_dev *dev, unsigned op)
{
	uint64_t sectors;

	switch (op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		sectors = READ_ONCE(dev->limits.max_sectors);
		break;
	case REQ_OP_DISCARD:
		sectors = READ_ONCE(dev->limits.max_discard_sectors);
		break;
	case REQ_OP_WRITE_ZEROES:
		sectors = READ_ONCE(dev->limits.max_write_zeroes_sectors);
		break;
	default:
		return UINT64_MAX;
	}
	return (sectors << SECTOR_SHIFT) &
	       ~((uint64_t)READ_ONCE(dev->limits.logical_block_size) - 1);
}

uint64_t blkring__max_bio_bytes(const struct blkring_dev *dev, unsigned op)
{
	return max_bytes(dev, op);
}

/* O_DIRECT's rule: segment addresses on the DMA alignment, lengths whole
 * logical blocks. */
static int check_buffer_alignment(struct blkring_bio *bio)
{
	const struct blkring_limits *lim = &bio->dev->limits;
	uint64_t len_mask = READ_ONCE(lim->logical_block_size) - 1;
	uint32_t align = READ_ONCE(lim->dma_alignment);

	if (!align)
		return 0;
	if (bio->vec_skip & align)
		return -EINVAL;
	for (uint32_t i = 0; i < bio->nr_vecs; i++) {
		uintptr_t base = (uintptr_t)bio->vec[i].iov_base + (i ? 0 : bio->vec_skip);
		uint64_t len = bio->vec[i].iov_len - (i ? 0 : bio->vec_skip);

		if ((base & align) || (len & len_mask))
			return -EINVAL;
	}
	return 0;
}

/* Reads and writes: the fast path. */
static inline int check_rw(struct blkring_bio *bio)
{
	struct blkring_dev *dev = bio->dev;

	/* As Linux's bio_check_ro(): before any check of the range. */
	if (unlikely(bio->op == REQ_OP_WRITE && READ_ONCE(dev->read_only)))
		return -EBADF;
	if (unlikely(bio->status))
		return bio->status; /* sub-sector offset, see blkring__bio_init() */
	if (unlikely(blkring__validate_byte_range(dev, bio->sector << SECTOR_SHIFT, bio->size) ||
	             bio->size > MAX_RW_BYTES || !bio->vec))
		return -EINVAL;
	if (unlikely((bio->flags & BIO_POLLED) && !(READ_ONCE(dev->features) & BLKRING_FEAT_POLL)))
		return -EOPNOTSUPP;
	if (unlikely(READ_ONCE(dev->limits.dma_alignment)))
		return check_buffer_alignment(bio);
	return 0;
}

static int check_other(struct blkring_bio *bio)
{
	struct blkring_dev *dev = bio->dev;
	uint32_t feature;

	/* As Linux's bio_check_ro(), for every op that writes. */
	if (bio->op != REQ_OP_FLUSH && READ_ONCE(dev->read_only))
		return -EBADF;
	if (bio->status)
		return bio->status;
	switch (bio->op) {
	case REQ_OP_FLUSH:
		return 0;
	case REQ_OP_DISCARD:
		feature = BLKRING_FEAT_DISCARD;
		break;
	case REQ_OP_WRITE_ZEROES:
		feature = BLKRING_FEAT_WRITE_ZEROES;
		break;
	default:
		return -EINVAL;
	}
	if (!(READ_ONCE(dev->features) & feature))
		return -EOPNOTSUPP;
	return blkring__validate_byte_range(dev, bio->sector << SECTOR_SHIFT, bio->size);
}

static void issue(struct blkring_dev *dev, struct blkring_bio *bio)
{
	int ret = dev->ops->submit_bio(dev, bio);

	/* Only a BIO_NOWAIT bio may be refused, and split children are not. */
	if (unlikely(ret < 0))
		blkring__bio_endio(bio, ret);
}

static struct blkring_bio *next_child(struct blkring_bio *child)
{
	return child->node.next ? container_of(child->node.next, struct blkring_bio, node) : NULL;
}

/*
 * Cuts the bio into chained children of at most `max` bytes each.  All
 * children are allocated before the first is issued so that running out
 * of memory issues nothing; splitting is not the fast path.
 */
static int split_and_issue(struct blkring_bio *bio, uint64_t max)
{
	struct blkring_dev *dev = bio->dev;
	uint64_t offset = bio->sector << SECTOR_SHIFT;
	struct llist_node *first = NULL, **tail = &first;
	struct blkring_bio *child, *next;

	if (bio->flags & BIO_NOWAIT)
		return -EAGAIN;
	if (!max)
		return -EINVAL;
	for (uint64_t done = 0; done < bio->size; done += max) {
		uint64_t len = bio->size - done < max ? bio->size - done : max;

		child = blkring__bio_alloc_child(bio, bio->op, offset + done, len);
		if (!child)
			goto nomem;
		blkring__bio_clone_window(child, bio, done);
		child->node.next = NULL;
		*tail = &child->node;
		tail = &child->node.next;
	}
	/* The poll cookie: children of one bio share its queue hint. */
	if (dev->hctxs)
		bio->hctx = blkring__map_queue(dev, bio);
	for (child = container_of(first, struct blkring_bio, node); child; child = next) {
		next = next_child(child);
		issue(dev, child);
	}
	blkring__bio_endio(bio, 0); /* the submitter's own reference */
	return 0;
nomem:
	for (child = first ? container_of(first, struct blkring_bio, node) : NULL; child;
	     child = next) {
		next = next_child(child);
		free(child);
		atomic_fetch_sub_explicit(&bio->remaining, 1, memory_order_relaxed);
	}
	return -ENOMEM;
}

/* Everything but a plain read or write that fits the limits. */
static __attribute__((noinline)) int submit_bio_slow(struct blkring_bio *bio)
{
	struct blkring_dev *dev = bio->dev;
	uint64_t max;
	int ret;

	ret = likely(bio->op <= REQ_OP_WRITE) ? check_rw(bio) : check_other(bio);
	if (unlikely(ret))
		return ret;
	if (unlikely(bio->op == REQ_OP_FLUSH && !(READ_ONCE(dev->features) & BLKRING_FEAT_FLUSH))) {
		/* No volatile cache: nothing to flush (Linux ends it at once). */
		bio->account = true;
		blkring__bio_endio(bio, 0);
		return 0;
	}
	bio->account = true;
	if (!(READ_ONCE(dev->features) & BLKRING_FEAT_FUA))
		bio->flags &= ~BIO_FUA;
	max = max_bytes(dev, bio->op);
	if (unlikely(bio->size > max))
		ret = split_and_issue(bio, max);
	else
		ret = dev->ops->submit_bio(dev, bio);
	if (unlikely(ret))
		bio->account = false;
	return ret;
}

/*
 * The fast path's whole check: a read, or a write to a writable device,
 * with no flags and no sub-sector offset, whole logical blocks, not empty,
 * within max_sectors (so no split and within MAX_RW_BYTES), inside the
 * device, with a buffer the device takes as it is.  Anything else goes to
 * submit_bio_slow(), which says what is wrong or splits.
 */
static inline bool rw_fits(const struct blkring_bio *bio, const struct blkring_dev *dev)
{
	uint64_t off = bio->sector << SECTOR_SHIFT, size = bio->size, end;
	uint64_t max = (uint64_t)READ_ONCE(dev->limits.max_sectors) << SECTOR_SHIFT;

	if (bio->op > REQ_OP_WRITE || bio->flags || bio->status ||
	    (bio->op == REQ_OP_WRITE && READ_ONCE(dev->read_only)))
		return false;
	if (((off | size) & (READ_ONCE(dev->limits.logical_block_size) - 1)) || size - 1 >= max ||
	    size > MAX_RW_BYTES)
		return false;
	if (__builtin_add_overflow(off, size, &end) || end > READ_ONCE(dev->size))
		return false;
	return bio->vec && !READ_ONCE(dev->limits.dma_alignment);
}

int blkring__submit_bio(struct blkring_bio *bio)
{
	struct blkring_dev *dev = bio->dev;
	int ret;

	if (unlikely(!rw_fits(bio, dev)))
		return submit_bio_slow(bio);
	bio->account = true;
	ret = dev->ops->submit_bio(dev, bio);
	if (unlikely(ret))
		bio->account = false;
	return ret;
}

bool blkring__bio_cancel(struct blkring_bio *bio)
{
	struct blkring_dev *dev = bio->dev;

	if (dev->ops->cancel_bio)
		return dev->ops->cancel_bio(dev, bio);
	return bio->hctx && blkring__hctx_cancel_wait(bio->hctx, bio);
}

/* A bio's poll queue when it went to one, else every poll queue. */
static int poll_queues(struct blkring_dev *dev, struct blkring_bio *bio)
{
	int n = 0;

	if (bio && bio->hctx && bio->hctx->poll)
		return dev->ops->poll_queue(dev, bio->hctx);
	for (unsigned i = 0; i < dev->nr_poll_queues; i++)
		n += dev->ops->poll_queue(dev, &dev->hctxs[dev->nr_hw_queues + i]);
	return n;
}

int blkring__dev_poll(struct blkring_dev *dev, struct blkring_bio *bio)
{
	if (dev->ops->poll)
		return dev->ops->poll(dev, bio);
	if (dev->ops->poll_queue)
		return poll_queues(dev, bio);
	return -EOPNOTSUPP;
}

int blkring__poll_bio(struct blkring_bio *bio)
{
	return blkring__dev_poll(bio->dev, bio);
}
