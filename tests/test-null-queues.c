// SPDX-License-Identifier: MIT
/* Hardware queues: tags and the FIFO wait list, completion modes, polling. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "test.h"

#define MAX_BIOS 4096

struct tracker {
	struct blkring_bio bios[MAX_BIOS];
	_Atomic uint32_t ended;
	_Atomic uint32_t pos;
	uint32_t order[MAX_BIOS];
	_Atomic uint32_t calls[MAX_BIOS];
	_Atomic int errors;
	char buf[512];
};

static void track_end(struct blkring_bio *bio)
{
	struct tracker *t = bio->private;
	uint32_t id = (uint32_t)(bio - t->bios);

	t->order[atomic_fetch_add(&t->pos, 1)] = id;
	atomic_fetch_add(&t->calls[id], 1);
	if (bio->status)
		atomic_fetch_add(&t->errors, 1);
	atomic_fetch_add_explicit(&t->ended, 1, memory_order_release);
}

static int track_submit(struct tracker *t, struct blkring_dev *dev, uint32_t id, unsigned flags,
                        unsigned hint)
{
	struct blkring_bio *bio = &t->bios[id];

	blkring__bio_init(bio, dev, REQ_OP_READ, (id % 64) * 512ULL, 512);
	blkring__bio_set_buf(bio, t->buf, 512);
	bio->flags = (uint8_t)flags;
	bio->queue_hint = hint;
	bio->end_io = track_end;
	bio->private = t;
	return blkring__submit_bio(bio);
}

static void wait_ended(struct tracker *t, uint32_t n)
{
	while (atomic_load_explicit(&t->ended, memory_order_acquire) < n)
		usleep(100);
}

static struct tracker *tracker_new(void)
{
	return calloc(1, sizeof(struct tracker));
}

static void check_once(struct tracker *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		CHECK_EQ(atomic_load(&t->calls[i]), 1);
}

/* Beyond the depth, bios wait in FIFO order; the submitter never blocks. */
static void test_wait_list_fifo(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,hw_queue_depth=2,irqmode=1,name=fifo");
	struct blkring_hctx *hctx = &dev->hctxs[1]; /* the poll queue */
	struct tracker *t = tracker_new();
	int n = 0;

	for (uint32_t i = 0; i < 20; i++)
		CHECK_EQ(track_submit(t, dev, i, BIO_POLLED, 0), 0);
	CHECK_EQ(atomic_load(&hctx->inflight), 2);
	CHECK_EQ(atomic_load(&hctx->nr_waiting), 18);
	CHECK_EQ(blkring__dev_inflight(dev), 20);
	CHECK_EQ(blkring_dev_close(dev), -EBUSY);
	while (atomic_load(&t->ended) < 20) {
		int got = blkring__poll_bio(&t->bios[0]);

		CHECK(got >= 0 && got <= 2);
		n += got;
	}
	CHECK_EQ(n, 20);
	for (uint32_t i = 0; i < 20; i++)
		CHECK_EQ(t->order[i], i);
	check_once(t, 20);
	CHECK_EQ(atomic_load(&hctx->inflight), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

static void test_nowait_without_tag(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,hw_queue_depth=1,irqmode=1,name=nw");
	struct tracker *t = tracker_new();

	CHECK_EQ(track_submit(t, dev, 0, BIO_POLLED | BIO_NOWAIT, 0), 0);
	CHECK_EQ(track_submit(t, dev, 1, BIO_POLLED | BIO_NOWAIT, 0), -EAGAIN);
	CHECK_EQ(track_submit(t, dev, 2, BIO_POLLED, 0), 0); /* waits */
	/* FIFO: a NOWAIT bio may not jump the wait list either. */
	CHECK_EQ(track_submit(t, dev, 3, BIO_POLLED | BIO_NOWAIT, 0), -EAGAIN);
	while (atomic_load(&t->ended) < 2)
		blkring__poll_bio(&t->bios[0]);
	CHECK_EQ(atomic_load(&t->calls[1]), 0);
	CHECK_EQ(atomic_load(&t->calls[3]), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

static void test_poll_only_when_polled(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=softirq,name=po");
	struct tracker *t = tracker_new();

	CHECK_EQ(track_submit(t, dev, 0, BIO_POLLED, 0), 0);
	CHECK(t->bios[0].hctx->poll);
	usleep(20000); /* the completion thread had every chance */
	CHECK_EQ(atomic_load(&t->ended), 0);
	/* A queue another poller holds is skipped. */
	CHECK(blkring__hctx_trylock_poll(t->bios[0].hctx));
	CHECK_EQ(blkring__poll_bio(&t->bios[0]), 0);
	CHECK_EQ(atomic_load(&t->ended), 0);
	blkring__hctx_unlock_poll(t->bios[0].hctx);
	CHECK_EQ(blkring__poll_bio(&t->bios[0]), 1);
	CHECK_EQ(atomic_load(&t->ended), 1);
	CHECK_EQ(blkring__poll_bio(&t->bios[0]), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

static void test_poll_queues_separate(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=0,poll_queues=2,name=p2");
	struct tracker *t = tracker_new();

	CHECK_EQ(track_submit(t, dev, 0, BIO_POLLED, 0), 0);
	CHECK_EQ(track_submit(t, dev, 1, BIO_POLLED, 1), 0);
	CHECK(t->bios[0].hctx != t->bios[1].hctx);
	CHECK_EQ(atomic_load(&t->ended), 0); /* irqmode=none does not end polled bios inline */
	CHECK_EQ(blkring__poll_bio(&t->bios[1]), 1);
	CHECK_EQ(atomic_load(&t->calls[1]), 1);
	CHECK_EQ(atomic_load(&t->calls[0]), 0);
	/* No bio: every poll queue. */
	CHECK_EQ(blkring__dev_poll(dev, NULL), 1);
	CHECK_EQ(atomic_load(&t->calls[0]), 1);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_timer_mode(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=1M,irqmode=timer,completion_nsec=30000000,name=tm");
	struct tracker *t = tracker_new();
	uint64_t start = mono_ns();

	CHECK_EQ(track_submit(t, dev, 0, 0, 0), 0);
	CHECK_EQ(track_submit(t, dev, 1, 0, 0), 0);
	wait_ended(t, 2);
	CHECK(mono_ns() - start >= 30000000ULL); /* not before its time */
	CHECK_EQ(t->order[0], 0);

	/* On a poll queue: ready only after completion_nsec, then only when polled. */
	start = mono_ns();
	CHECK_EQ(track_submit(t, dev, 2, BIO_POLLED, 0), 0);
	while (atomic_load(&t->ended) < 3) {
		int got = blkring__poll_bio(&t->bios[2]);

		CHECK(got == 0 || got == 1);
		if (got)
			CHECK(mono_ns() - start >= 30000000ULL);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

struct stress {
	struct blkring_dev *dev;
	struct tracker *t;
	uint32_t first, n;
	unsigned flags;
};

static void *stress_submit(void *arg)
{
	struct stress *s = arg;

	for (uint32_t i = s->first; i < s->first + s->n; i++)
		CHECK_EQ(track_submit(s->t, s->dev, i, s->flags, i % 3), 0);
	return NULL;
}

/*
 * Several submitters, a small depth: everything ends once.  Where one
 * thread ends a queue's bios (softirq, or one poller), they end in FIFO
 * order for each submitter; inline and timer ends race between threads.
 */
static void stress(const char *spec, unsigned flags, bool poll, bool fifo)
{
	enum { THREADS = 4, PER = 600 };
	struct blkring_dev *dev = test_open(spec);
	struct tracker *t = tracker_new();
	struct stress s[THREADS];
	pthread_t th[THREADS];
	uint32_t last[THREADS][8];

	for (int i = 0; i < THREADS; i++) {
		s[i] = (struct stress){dev, t, (uint32_t)i * PER, PER, flags};
		CHECK_EQ(pthread_create(&th[i], NULL, stress_submit, &s[i]), 0);
	}
	if (poll)
		while (atomic_load(&t->ended) < THREADS * PER)
			blkring__dev_poll(dev, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	wait_ended(t, THREADS * PER);
	check_once(t, THREADS * PER);
	CHECK_EQ(atomic_load(&t->errors), 0);
	memset(last, 0xff, sizeof(last));
	for (uint32_t k = 0; fifo && k < THREADS * PER; k++) {
		uint32_t id = t->order[k], th_i = id / PER, q = t->bios[id].hctx->index;

		if (last[th_i][q] != UINT32_MAX)
			CHECK(id > last[th_i][q]);
		last[th_i][q] = id;
	}
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(t);
}

static void test_stress_softirq(void)
{
	stress("null:size=1M,irqmode=1,hw_queue_depth=3,submit_queues=2,name=s1", 0, false, true);
}

static void test_stress_none(void)
{
	stress("null:size=1M,irqmode=0,hw_queue_depth=2,submit_queues=2,name=s0", 0, false, false);
}

/* Inline ends that hold tags (a badblocks list, out of the way, keeps the
 * device off the tagless path): waiters are started by the thread whose
 * bio ends. */
static void test_stress_none_tagged(void)
{
	stress("null:size=1M,irqmode=0,hw_queue_depth=2,submit_queues=2,badblocks=2047,name=s0t", 0,
	       false, false);
}

static void test_stress_timer(void)
{
	stress("null:size=1M,irqmode=2,completion_nsec=2000,hw_queue_depth=4,name=s2", 0, false,
	       false);
}

static void test_stress_poll(void)
{
	stress("null:size=1M,irqmode=1,hw_queue_depth=5,poll_queues=2,name=sp", BIO_POLLED, true,
	       true);
}

/* A plug's tags serve the queue that took them: a bio for another queue
 * (a volume's clones alternate between legs) takes a tag of its own and
 * leaves them for the first queue's bios still to come. */
static void test_plug_keeps_queue(void)
{
	struct blkring_dev *a = test_open("null:irqmode=none,hw_queue_depth=8,name=plug-a");
	struct blkring_dev *b = test_open("null:irqmode=none,hw_queue_depth=8,name=plug-b");
	struct blkring_ioc ioc = {.plug = {.active = true, .want = 4}};
	struct blkring_bio bio = {.ioc = &ioc};

	CHECK_EQ(blkring__hctx_get_tag_plugged(&a->hctxs[0], &bio), 1);
	CHECK(ioc.plug.hctx == &a->hctxs[0] && ioc.plug.nr == 3);
	CHECK_EQ(blkring__hctx_get_tag_plugged(&b->hctxs[0], &bio), 1);
	CHECK(ioc.plug.hctx == &a->hctxs[0] && ioc.plug.nr == 3);
	CHECK_EQ(blkring__dev_inflight(b), 1);
	CHECK_EQ(blkring__hctx_get_tag_plugged(&a->hctxs[0], &bio), 1);
	CHECK_EQ(ioc.plug.nr, 2);
	blkring__plug_finish(&ioc.plug);
	CHECK_EQ(blkring__dev_inflight(a), 2);
	CHECK(!blkring__hctx_put_tag(&a->hctxs[0]) && !blkring__hctx_put_tag(&a->hctxs[0]));
	CHECK(!blkring__hctx_put_tag(&b->hctxs[0]));
	CHECK_EQ(blkring__dev_inflight(a) + blkring__dev_inflight(b), 0);
	CHECK_EQ(blkring_dev_close(a), 0);
	CHECK_EQ(blkring_dev_close(b), 0);
}

static const struct test_case cases[] = {
    {"wait_list_fifo", test_wait_list_fifo, 0},
    {"nowait_without_tag", test_nowait_without_tag, 0},
    {"poll_only_when_polled", test_poll_only_when_polled, 0},
    {"poll_queues_separate", test_poll_queues_separate, 0},
    {"timer_mode", test_timer_mode, 0},
    {"stress_softirq", test_stress_softirq, 0},
    {"stress_none", test_stress_none, 0},
    {"stress_none_tagged", test_stress_none_tagged, 0},
    {"stress_timer", test_stress_timer, 0},
    {"stress_poll", test_stress_poll, 0},
    {"plug_keeps_queue", test_plug_keeps_queue, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
