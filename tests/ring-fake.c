// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ring-fake.h"
#include "test.h"

static int fake_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct fake_dev *fake = dev->private;
	bool on_owner = pthread_equal(pthread_self(), fake->owner);
	struct fake_bio_record *rec;

	pthread_mutex_lock(&fake->lock);
	if (fake->nr_submitted == FAKE_MAX_BIOS)
		TEST_FAIL("fake device: more than %d bios", FAKE_MAX_BIOS);
	rec = &fake->rec[fake->nr_submitted++];
	*rec = (struct fake_bio_record){bio->op,         bio->flags,   bio->sector, bio->size,
	                                bio->queue_hint, bio->nr_vecs, bio->vec,    on_owner};
	if ((bio->flags & BIO_NOWAIT) || (fake->eagain_owner && on_owner)) {
		fake->nr_eagain++;
		pthread_cond_broadcast(&fake->changed);
		pthread_mutex_unlock(&fake->lock);
		return -EAGAIN;
	}
	if (fake->mode == FAKE_HOLD) {
		fake->held[fake->held_tail++ % FAKE_MAX_BIOS] = bio;
		pthread_cond_broadcast(&fake->changed);
		pthread_mutex_unlock(&fake->lock);
		return 0;
	}
	if (fake->mode == FAKE_BLOCK) {
		fake->nr_blocked++;
		if (fake->nr_blocked > fake->max_blocked)
			fake->max_blocked = fake->nr_blocked;
		pthread_cond_broadcast(&fake->changed);
		while (!fake->unblocked)
			pthread_cond_wait(&fake->changed, &fake->lock);
		fake->nr_blocked--;
	}
	pthread_cond_broadcast(&fake->changed);
	pthread_mutex_unlock(&fake->lock);
	blkring__bio_endio(bio, fake->status);
	return 0;
}

static const struct blkring_dev_ops fake_ops = {
    .name = "fake",
    .submit_bio = fake_submit_bio,
};

struct fake_dev *ring_fake_create(enum fake_mode mode)
{
	struct fake_dev *fake = calloc(1, sizeof(*fake));

	CHECK(fake);
	fake->dev = blkring__dev_alloc(&fake_ops);
	CHECK(fake->dev);
	fake->dev->private = fake;
	fake->dev->size = 1ULL << 30;
	fake->dev->features = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA;
	fake->mode = mode;
	fake->owner = pthread_self();
	pthread_mutex_init(&fake->lock, NULL);
	pthread_cond_init(&fake->changed, NULL);
	return fake;
}

void ring_fake_destroy(struct fake_dev *fake)
{
	blkring__dev_free(fake->dev);
	pthread_mutex_destroy(&fake->lock);
	pthread_cond_destroy(&fake->changed);
	free(fake);
}

void ring_fake_end(struct fake_dev *fake, unsigned n, int status)
{
	while (n--) {
		struct blkring_bio *bio;

		pthread_mutex_lock(&fake->lock);
		while (fake->held_head == fake->held_tail)
			pthread_cond_wait(&fake->changed, &fake->lock);
		bio = fake->held[fake->held_head++ % FAKE_MAX_BIOS];
		pthread_mutex_unlock(&fake->lock);
		blkring__bio_endio(bio, status);
	}
}

struct fake_end_arg {
	struct fake_dev *fake;
	unsigned n;
	int status;
};

static void *fake_end_thread(void *arg)
{
	struct fake_end_arg *a = arg;

	ring_fake_end(a->fake, a->n, a->status);
	return NULL;
}

void ring_fake_end_from_thread(struct fake_dev *fake, unsigned n, int status)
{
	struct fake_end_arg a = {fake, n, status};
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, fake_end_thread, &a), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

void ring_fake_unblock(struct fake_dev *fake)
{
	pthread_mutex_lock(&fake->lock);
	fake->unblocked = true;
	pthread_cond_broadcast(&fake->changed);
	pthread_mutex_unlock(&fake->lock);
}

void ring_fake_wait_blocked(struct fake_dev *fake, unsigned n)
{
	pthread_mutex_lock(&fake->lock);
	while (fake->nr_blocked < n)
		pthread_cond_wait(&fake->changed, &fake->lock);
	pthread_mutex_unlock(&fake->lock);
}

void ring_fake_wait_submitted(struct fake_dev *fake, unsigned n)
{
	pthread_mutex_lock(&fake->lock);
	while (fake->nr_submitted < n)
		pthread_cond_wait(&fake->changed, &fake->lock);
	pthread_mutex_unlock(&fake->lock);
}

unsigned ring_fake_held(struct fake_dev *fake)
{
	unsigned n;

	pthread_mutex_lock(&fake->lock);
	n = fake->held_tail - fake->held_head;
	pthread_mutex_unlock(&fake->lock);
	return n;
}

unsigned ring_fake_submitted(struct fake_dev *fake)
{
	unsigned n;

	pthread_mutex_lock(&fake->lock);
	n = fake->nr_submitted;
	pthread_mutex_unlock(&fake->lock);
	return n;
}

struct fake_bio_record ring_fake_record(struct fake_dev *fake, unsigned i)
{
	struct fake_bio_record rec;

	pthread_mutex_lock(&fake->lock);
	CHECK(i < fake->nr_submitted);
	rec = fake->rec[i];
	pthread_mutex_unlock(&fake->lock);
	return rec;
}

void ring_fake_ring(struct blkring *ring, unsigned entries, struct fake_dev *fake)
{
	CHECK_EQ(blkring_queue_init(entries, ring, 0), 0);
	CHECK_EQ(blkring_register_devices(ring, &fake->dev, 1), 0);
}

struct blkring_cqe ring_reap(struct blkring *ring)
{
	struct blkring_cqe *cqe, copy;

	CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
	copy = *cqe;
	blkring_cqe_seen(ring, cqe);
	return copy;
}
