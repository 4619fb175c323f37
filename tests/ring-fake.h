/* SPDX-License-Identifier: MIT */
/*
 * A fake device for ring tests: it records every bio it is given and ends
 * it inline, holds it until the test ends it from any thread, or answers
 * -EAGAIN on chosen threads, so tests can drive completions from wherever
 * they need them.
 */
#ifndef BLKRING_TESTS_RING_FAKE_H
#define BLKRING_TESTS_RING_FAKE_H

#include <pthread.h>
#include <stdbool.h>

#include "block/blkdev.h"

enum fake_mode {
	FAKE_INLINE, /* end the bio inside submit_bio */
	FAKE_HOLD,   /* keep it until ring_fake_end() */
	FAKE_BLOCK,  /* block the submitter until ring_fake_unblock(), then end it */
};

#define FAKE_MAX_BIOS 16384

struct fake_bio_record {
	uint8_t op, flags;
	uint64_t sector, size;
	uint32_t queue_hint, nr_vecs;
	const struct iovec *vec;
	bool on_owner; /* submitted on the thread that created the fake */
};

struct fake_dev {
	struct blkring_dev *dev;
	enum fake_mode mode;
	int status;        /* what bios end with */
	bool eagain_owner; /* -EAGAIN when submitted on the creating thread */
	pthread_t owner;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned nr_submitted; /* accepted or answered -EAGAIN */
	unsigned nr_eagain;
	struct fake_bio_record rec[FAKE_MAX_BIOS];
	struct blkring_bio *held[FAKE_MAX_BIOS];
	unsigned held_head, held_tail;
	unsigned nr_blocked, max_blocked; /* submitters inside submit_bio */
	bool unblocked;
};

/* A 1 GiB device with 512-byte blocks, flush and FUA. */
struct fake_dev *ring_fake_create(enum fake_mode mode);
void ring_fake_destroy(struct fake_dev *fake);
/* Ends the n oldest held bios with status; waits until n are held. */
void ring_fake_end(struct fake_dev *fake, unsigned n, int status);
/* The same from a thread of its own, joined before returning. */
void ring_fake_end_from_thread(struct fake_dev *fake, unsigned n, int status);
/* FAKE_BLOCK: lets every blocked and later submitter through. */
void ring_fake_unblock(struct fake_dev *fake);
/* FAKE_BLOCK: waits until n submitters are blocked. */
void ring_fake_wait_blocked(struct fake_dev *fake, unsigned n);
/* Waits until n bios were submitted in all. */
void ring_fake_wait_submitted(struct fake_dev *fake, unsigned n);
unsigned ring_fake_held(struct fake_dev *fake);
unsigned ring_fake_submitted(struct fake_dev *fake);
struct fake_bio_record ring_fake_record(struct fake_dev *fake, unsigned i);

/* A ring of `entries` with the fake registered at index 0. */
void ring_fake_ring(struct blkring *ring, unsigned entries, struct fake_dev *fake);

/* Waits for the oldest CQE, consumes it and returns a copy. */
struct blkring_cqe ring_reap(struct blkring *ring);

#endif
