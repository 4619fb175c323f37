// SPDX-License-Identifier: MIT
/* The request cache: more requests alive than the ring was sized for grows
 * it, and every request comes back (LeakSanitizer checks the rest). */
#include <errno.h>

#include "ring-fake.h"
#include "ring/ring.h"
#include "test.h"

static unsigned chunks(const struct blkring *ring)
{
	unsigned n = 0;

	for (const struct blkring__req_chunk *c = ring->ctx->chunks; c; c = c->next)
		n++;
	return n;
}

static void cache_grows(void)
{
	enum { SQ = 4096, N = 3 * SQ };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_params p = {.flags = BLKRING_SETUP_CQSIZE, .cq_entries = 4 * SQ};
	struct blkring ring;
	static char buf[512];
	unsigned grown;

	CHECK_EQ(blkring_queue_init_params(SQ, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	/* Three full SQs in flight: more than the 4096 requests made at setup. */
	for (unsigned i = 0; i < N; i += SQ) {
		for (unsigned j = 0; j < SQ; j++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
			sqe->user_data = i + j;
		}
		CHECK_EQ(blkring_submit(&ring), SQ);
	}
	CHECK_EQ(ring_fake_held(fake), N);
	grown = chunks(&ring);
	CHECK(grown > 1);
	ring_fake_end_from_thread(fake, N, 0);
	for (unsigned i = 0; i < N; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK_EQ(cqe.user_data, i);
		CHECK_EQ(cqe.res, sizeof(buf));
	}
	/* Requests come back to the cache and are reused. */
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned j = 0; j < SQ; j++)
			blkring_prep_nop(ring_sqe(&ring));
		CHECK_EQ(blkring_submit_and_wait(&ring, SQ), SQ);
		blkring_cq_advance(&ring, SQ);
	}
	CHECK_EQ(chunks(&ring), grown);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-cache-grows", cache_grows, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
