// SPDX-License-Identifier: MIT
/*
 * Poll queues and their busy flags, below the ring: polling one queue
 * (poll_queue, the volumes' `all` walk), a poller skipping a queue another
 * holds and moving on to the next, and concurrent pollers ending every bio
 * exactly once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "test.h"

#define NR_BIOS 4000

struct pq_tracker {
	struct blkring_bio bios[NR_BIOS];
	_Atomic uint32_t calls[NR_BIOS];
	_Atomic uint32_t ended;
	char buf[512];
};

static void pq_end(struct blkring_bio *bio)
{
	struct pq_tracker *t = bio->private;

	atomic_fetch_add(&t->calls[bio - t->bios], 1);
	atomic_fetch_add_explicit(&t->ended, 1, memory_order_release);
}

static void pq_submit(struct pq_tracker *t, struct blkring_dev *dev, uint32_t id, unsigned hint)
{
	struct blkring_bio *bio = &t->bios[id];

	blkring__bio_init(bio, dev, REQ_OP_READ, (id % 512) * 512ULL, 512);
	blkring__bio_set_buf(bio, t->buf, sizeof(t->buf));
	bio->flags = BIO_POLLED;
	bio->queue_hint = hint;
	bio->end_io = pq_end;
	bio->private = t;
	CHECK_EQ(blkring__submit_bio(bio), 0);
}

static struct blkring_hctx *pq_hctx(struct blkring_dev *dev, unsigned i)
{
	return &dev->hctxs[dev->nr_hw_queues + i];
}

/* poll_queue reaps one queue; a held queue answers 0 and keeps its bios,
 * while the device-wide poll moves on to the queues nobody holds. */
static void pq_skip_held_queue(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=3,name=pq3");
	struct pq_tracker *t = calloc(1, sizeof(*t));
	struct blkring_hctx *q0 = pq_hctx(dev, 0), *q1 = pq_hctx(dev, 1);

	CHECK(t);
	for (uint32_t i = 0; i < 9; i++)
		pq_submit(t, dev, i, i % 3);
	CHECK(blkring__hctx_trylock_poll(q0));
	CHECK_EQ(dev->ops->poll_queue(dev, q0), 0);
	CHECK_EQ(dev->ops->poll_queue(dev, q1), 3);
	CHECK_EQ(blkring__dev_poll(dev, NULL), 3); /* queue 2; queue 0 skipped */
	CHECK_EQ(atomic_load(&t->ended), 6);
	for (uint32_t i = 0; i < 9; i += 3)
		CHECK_EQ(atomic_load(&t->calls[i]), 0);
	blkring__hctx_unlock_poll(q0);
	CHECK_EQ(dev->ops->poll_queue(dev, q0), 3);
	CHECK_EQ(atomic_load(&t->ended), 9);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

struct pq_shared {
	struct blkring_dev *dev;
	struct pq_tracker *t;
	_Atomic bool done;
	_Atomic uint64_t reaped;
};

struct pq_submitter {
	struct pq_shared *sh;
	uint32_t first, n;
};

static void *pq_submit_run(void *arg)
{
	struct pq_submitter *s = arg;

	for (uint32_t i = s->first; i < s->first + s->n; i++)
		pq_submit(s->sh->t, s->sh->dev, i, i);
	return NULL;
}

/* Polls every queue one by one, as a volume's list walk does, until all
 * bios ended; counts what it reaped. */
static void *pq_poll_run(void *arg)
{
	struct pq_shared *sh = arg;
	struct blkring_dev *dev = sh->dev;

	while (atomic_load_explicit(&sh->t->ended, memory_order_acquire) < NR_BIOS) {
		for (unsigned q = 0; q < dev->nr_poll_queues; q++) {
			int n = dev->ops->poll_queue(dev, pq_hctx(dev, q));

			CHECK(n >= 0);
			atomic_fetch_add(&sh->reaped, (uint64_t)n);
		}
	}
	return NULL;
}

/* Three pollers over two queues while two threads submit: the busy flags
 * keep each queue to one poller at a time; every bio ends exactly once
 * and the pollers' counts add up to all of them. */
static void pq_concurrent_pollers(void)
{
	enum { POLLERS = 3, SUBMITTERS = 2 };
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=2,hw_queue_depth=8,name=pqc");
	struct pq_shared sh = {.dev = dev, .t = calloc(1, sizeof(struct pq_tracker))};
	struct pq_submitter sub[SUBMITTERS];
	pthread_t pt[POLLERS], st[SUBMITTERS];

	CHECK(sh.t);
	for (int i = 0; i < POLLERS; i++)
		CHECK_EQ(pthread_create(&pt[i], NULL, pq_poll_run, &sh), 0);
	for (int i = 0; i < SUBMITTERS; i++) {
		sub[i] = (struct pq_submitter){&sh, (uint32_t)i * (NR_BIOS / SUBMITTERS),
		                               NR_BIOS / SUBMITTERS};
		CHECK_EQ(pthread_create(&st[i], NULL, pq_submit_run, &sub[i]), 0);
	}
	for (int i = 0; i < SUBMITTERS; i++)
		pthread_join(st[i], NULL);
	for (int i = 0; i < POLLERS; i++)
		pthread_join(pt[i], NULL);
	for (uint32_t i = 0; i < NR_BIOS; i++)
		CHECK_EQ(atomic_load(&sh.t->calls[i]), 1);
	CHECK_EQ(atomic_load(&sh.reaped), NR_BIOS);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(sh.t);
}

static const struct test_case cases[] = {
    {"pq_skip_held_queue", pq_skip_held_queue, 0},
    {"pq_concurrent_pollers", pq_concurrent_pollers, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
