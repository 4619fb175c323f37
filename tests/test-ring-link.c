// SPDX-License-Identifier: MIT
/* IO_LINK chains: in order, one at a time, stopped by the first failure;
 * IO_HARDLINK chains, which a failure does not stop; CQE_SKIP_SUCCESS. */
#include <errno.h>

#include "ring-fake.h"
#include "test.h"

static char buf[4096];

static void link_nop(struct blkring *ring, uint64_t data, unsigned flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	blkring_prep_nop(sqe);
	sqe->user_data = data;
	sqe->flags = (uint8_t)flags;
}

static void link_read(struct blkring *ring, int dev, uint64_t data, unsigned flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	blkring_prep_read(sqe, dev, buf, sizeof(buf), data * sizeof(buf));
	sqe->user_data = data;
	sqe->flags = (uint8_t)flags;
}

static void expect(struct blkring *ring, uint64_t data, int res)
{
	struct blkring_cqe cqe = ring_reap(ring);

	CHECK_EQ(cqe.user_data, data);
	CHECK_EQ(cqe.res, res);
}

static void link_all_succeed(void)
{
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	for (unsigned i = 0; i < 4; i++)
		link_nop(&ring, i, i < 3 ? BLKRING_SQE_IO_LINK : 0);
	CHECK_EQ(blkring_submit(&ring), 4);
	for (unsigned i = 0; i < 4; i++)
		expect(&ring, i, 0);
	blkring_queue_exit(&ring);
}

/* Each link starts only when the one before it completed. */
static void link_one_at_a_time(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	for (unsigned i = 0; i < 4; i++)
		link_read(&ring, 0, i, i < 3 ? BLKRING_SQE_IO_LINK : 0);
	CHECK_EQ(blkring_submit(&ring), 4);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	for (unsigned i = 0; i < 4; i++) {
		ring_fake_end_from_thread(fake, 1, 0);
		expect(&ring, i, sizeof(buf));
		CHECK_EQ(ring_fake_submitted(fake), i < 3 ? i + 2 : 4);
		CHECK_EQ(ring_fake_record(fake, i).sector, i * sizeof(buf) / 512);
	}
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void link_failure_cancels_rest(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	for (unsigned i = 0; i < 5; i++)
		link_read(&ring, 0, i, i < 4 ? BLKRING_SQE_IO_LINK : 0);
	/* Not part of the chain: unaffected. */
	link_nop(&ring, 99, 0);
	CHECK_EQ(blkring_submit(&ring), 6);
	expect(&ring, 99, 0);
	ring_fake_end_from_thread(fake, 1, 0);
	expect(&ring, 0, sizeof(buf));
	ring_fake_end_from_thread(fake, 1, -EIO);
	expect(&ring, 1, -EIO);
	expect(&ring, 2, -ECANCELED);
	expect(&ring, 3, -ECANCELED);
	expect(&ring, 4, -ECANCELED);
	CHECK_EQ(ring_fake_submitted(fake), 2);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A hard link goes on after a failure; a plain link after it still stops. */
static void link_hardlink_survives_failure(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	link_read(&ring, 0, 0, BLKRING_SQE_IO_HARDLINK);
	link_read(&ring, 0, 1, BLKRING_SQE_IO_HARDLINK);
	link_read(&ring, 0, 2, BLKRING_SQE_IO_LINK);
	link_read(&ring, 0, 3, 0);
	CHECK_EQ(blkring_submit(&ring), 4);
	ring_fake_end_from_thread(fake, 1, -EIO);
	expect(&ring, 0, -EIO);
	ring_fake_end_from_thread(fake, 1, -EIO);
	expect(&ring, 1, -EIO);
	ring_fake_end_from_thread(fake, 1, -EIO);
	expect(&ring, 2, -EIO);
	expect(&ring, 3, -ECANCELED);
	CHECK_EQ(ring_fake_submitted(fake), 3);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* CQE_SKIP_SUCCESS: successes post nothing, failures and cancels do;
 * afterwards IO_DRAIN is refused on the ring, as io_uring's. */
static void link_skip_success(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	unsigned skip = BLKRING_SQE_CQE_SKIP_SUCCESS;
	struct blkring ring;

	ring_fake_ring(&ring, 16, fake);
	link_nop(&ring, 0, skip);
	link_read(&ring, 0, 1, skip | BLKRING_SQE_IO_LINK);
	link_read(&ring, 0, 2, skip | BLKRING_SQE_IO_LINK);
	link_read(&ring, 0, 3, skip);
	link_nop(&ring, 4, 0);
	CHECK_EQ(blkring_submit(&ring), 5);
	expect(&ring, 4, 0); /* the skipped NOP posted nothing */
	ring_fake_end_from_thread(fake, 1, 0);
	/* Entering runs read 1's completion, which posts nothing and starts 2. */
	while (!ring_fake_held(fake)) {
		struct blkring_cqe *cqe;

		CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	}
	ring_fake_end_from_thread(fake, 1, -EIO);
	expect(&ring, 2, -EIO);
	expect(&ring, 3, -ECANCELED);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	link_nop(&ring, 5, BLKRING_SQE_IO_DRAIN);
	CHECK_EQ(blkring_submit(&ring), 1);
	expect(&ring, 5, -EOPNOTSUPP);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A failure at issue (the block layer rejects the bio) stops a chain too. */
static void link_issue_error_cancels_rest(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct blkring_sqe *sqe;

	ring_fake_ring(&ring, 8, fake);
	link_read(&ring, 0, 0, BLKRING_SQE_IO_LINK);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, sizeof(buf), 1ULL << 40); /* past the end */
	sqe->user_data = 1;
	sqe->flags = BLKRING_SQE_IO_LINK;
	link_nop(&ring, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	expect(&ring, 0, sizeof(buf));
	expect(&ring, 1, -EINVAL);
	expect(&ring, 2, -ECANCELED);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* A member that fails prep fails the whole chain before any of it runs. */
static void link_prep_failure_fails_chain(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	link_read(&ring, 0, 0, BLKRING_SQE_IO_LINK);
	link_read(&ring, 5, 1, BLKRING_SQE_IO_LINK); /* no device 5 */
	link_read(&ring, 0, 2, 0);
	link_read(&ring, 0, 3, 0);
	CHECK_EQ(blkring_submit(&ring), 4);
	expect(&ring, 0, -ECANCELED);
	expect(&ring, 1, -EBADF);
	expect(&ring, 2, -ECANCELED);
	expect(&ring, 3, sizeof(buf));
	CHECK_EQ(ring_fake_submitted(fake), 1);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Hard links do not carry a chain past a member that failed prep: none of
 * it runs (io_uring turns them into soft links). */
static void link_prep_failure_beats_hardlink(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	link_read(&ring, 0, 0, BLKRING_SQE_IO_HARDLINK);
	link_read(&ring, 0, 1, BLKRING_SQE_IO_HARDLINK);
	link_read(&ring, 5, 2, 0); /* no device 5 */
	CHECK_EQ(blkring_submit(&ring), 3);
	expect(&ring, 0, -ECANCELED);
	expect(&ring, 1, -ECANCELED);
	expect(&ring, 2, -EBADF);
	CHECK_EQ(ring_fake_submitted(fake), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* The last SQE of a submit carries IO_LINK: the chain runs as it stands. */
static void link_open_at_end(void)
{
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	link_nop(&ring, 0, BLKRING_SQE_IO_LINK);
	link_nop(&ring, 1, BLKRING_SQE_IO_LINK);
	CHECK_EQ(blkring_submit(&ring), 2);
	expect(&ring, 0, 0);
	expect(&ring, 1, 0);
	/* The next submit starts a new chain. */
	link_nop(&ring, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	expect(&ring, 2, 0);
	blkring_queue_exit(&ring);
}

/* Inline completions make the whole chain run inside one submit, without
 * recursing once per link. */
static void link_long_chain(void)
{
	enum { N = 4096 };
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct blkring_params p = {.flags = BLKRING_SETUP_CQSIZE, .cq_entries = N};

	CHECK_EQ(blkring_queue_init_params(N, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned i = 0; i < N; i++)
		link_read(&ring, 0, i, i < N - 1 ? BLKRING_SQE_IO_LINK : 0);
	CHECK_EQ(blkring_submit(&ring), N);
	CHECK_EQ(blkring_cq_ready(&ring), N);
	for (unsigned i = 0; i < N; i++)
		expect(&ring, i, sizeof(buf));
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* An ASYNC member goes to a worker when its turn comes; order holds. */
static void link_async_member(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	link_read(&ring, 0, 0, BLKRING_SQE_IO_LINK);
	link_read(&ring, 0, 1, BLKRING_SQE_IO_LINK | BLKRING_SQE_ASYNC);
	link_read(&ring, 0, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 3);
	for (unsigned i = 0; i < 3; i++)
		expect(&ring, i, sizeof(buf));
	CHECK(ring_fake_record(fake, 0).on_owner);
	CHECK(!ring_fake_record(fake, 1).on_owner);
	CHECK(ring_fake_record(fake, 2).on_owner);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-link-all-succeed", link_all_succeed, 0},
	    {"ring-link-one-at-a-time", link_one_at_a_time, 0},
	    {"ring-link-failure-cancels-rest", link_failure_cancels_rest, 0},
	    {"ring-link-hardlink-survives-failure", link_hardlink_survives_failure, 0},
	    {"ring-link-skip-success", link_skip_success, 0},
	    {"ring-link-issue-error-cancels-rest", link_issue_error_cancels_rest, 0},
	    {"ring-link-prep-failure-fails-chain", link_prep_failure_fails_chain, 0},
	    {"ring-link-prep-failure-beats-hardlink", link_prep_failure_beats_hardlink, 0},
	    {"ring-link-open-at-end", link_open_at_end, 0},
	    {"ring-link-long-chain", link_long_chain, 0},
	    {"ring-link-async-member", link_async_member, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
