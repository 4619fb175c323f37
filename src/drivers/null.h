/* SPDX-License-Identifier: MIT */
/* What tests may ask a null device beyond the ops table, and what null.c
 * shares with null-irq.c (irqmode=signal). */
#ifndef BLKRING_DRIVERS_NULL_H
#define BLKRING_DRIVERS_NULL_H

#include <stdint.h>

#include "block/blkdev.h"

/* Pages a memory-backed null device holds (4 KiB each). */
uint64_t blkring__null_nr_pages(struct blkring_dev *dev);

/* Bios waiting for their completion time, in deadline order (arrival order
 * when deadlines tie). */
struct null_pending {
	struct llist_node *first;
	struct blkring_bio *tail;
};

void blkring__null_pending_add(struct null_pending *p, struct blkring_bio *bio);

/* Takes the first bio if its deadline is at or before now; else NULL. */
static inline struct blkring_bio *blkring__null_pending_due(struct null_pending *p, uint64_t now)
{
	struct blkring_bio *bio;

	if (!p->first)
		return NULL;
	bio = container_of(p->first, struct blkring_bio, node);
	if (bio->deadline_ns > now)
		return NULL;
	p->first = bio->node.next;
	if (!p->first)
		p->tail = NULL;
	return bio;
}

/* irqmode=signal (null-irq.c).  Setup answers 0 or a negative errno with
 * the reason set; queue takes a bio whose deadline is set and which holds
 * a tag on bio->hctx, submitted by its ring's thread (bio->ioc), and ends
 * it with `end` once due.  False: no ring, or no state for it (the caller
 * completes the bio another way). */
int blkring__null_irq_setup(void);
bool blkring__null_irq_queue(struct blkring_dev *dev, struct blkring_bio *bio,
                             void (*end)(struct blkring_bio *bio));

#endif
