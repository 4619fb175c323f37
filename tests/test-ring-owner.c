// SPDX-License-Identifier: MIT
/* One owner per ring (SINGLE_ISSUER): other threads get -EEXIST. */
#include <errno.h>
#include <pthread.h>

#include "ring-fake.h"
#include "test.h"

static void *other_thread(void *arg)
{
	struct blkring *ring = arg;
	struct blkring_cqe *cqe = (void *)1;
	struct blkring_cqe *batch[4];
	struct blkring_ring_stats st;
	struct __kernel_timespec ts = {0, 1000};
	struct blkring_dev *none = NULL;

	CHECK_EQ(blkring_submit(ring), -EEXIST);
	CHECK_EQ(blkring_submit_and_wait(ring, 1), -EEXIST);
	CHECK_EQ(blkring_wait_cqe(ring, &cqe), -EEXIST);
	CHECK(cqe == NULL);
	CHECK_EQ(blkring_peek_cqe(ring, &cqe), -EEXIST);
	CHECK_EQ(blkring_wait_cqes(ring, &cqe, 1, &ts, NULL), -EEXIST);
	CHECK_EQ(blkring_register_devices(ring, &none, 1), -EEXIST);
	CHECK_EQ(blkring_unregister_devices(ring), -EEXIST);
	/* Reading the CQ needs no ownership: nothing is there yet. */
	CHECK_EQ(blkring_peek_batch_cqe(ring, batch, 4), 0);
	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	CHECK_EQ(st.issued, 0);
	return NULL;
}

static void owner_eexist(void)
{
	struct blkring ring;
	struct blkring_sqe *sqe;
	pthread_t t;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	sqe = ring_sqe(&ring);
	blkring_prep_nop(sqe);
	CHECK_EQ(pthread_create(&t, NULL, other_thread, &ring), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/* The SQE the other thread could not submit is still there. */
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, 0);
	blkring_queue_exit(&ring);
}

static void *peek_ready(void *arg)
{
	struct blkring *ring = arg;
	struct blkring_cqe *cqe;

	/* A ready CQE is read by the inline fast path, which any thread may use. */
	CHECK_EQ(blkring_peek_cqe(ring, &cqe), 0);
	CHECK_EQ(cqe->user_data, 77);
	return NULL;
}

static void owner_ready_cqe_readable(void)
{
	struct blkring ring;
	struct blkring_sqe *sqe;
	pthread_t t;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	sqe = ring_sqe(&ring);
	blkring_prep_nop(sqe);
	sqe->user_data = 77;
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(pthread_create(&t, NULL, peek_ready, &ring), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(ring_reap(&ring).user_data, 77);
	blkring_queue_exit(&ring);
}

struct exit_arg {
	struct blkring ring;
};

static void *exit_elsewhere(void *arg)
{
	struct exit_arg *a = arg;

	blkring_queue_exit(&a->ring);
	return NULL;
}

/* Exit may come from another thread once the owner stopped using the ring. */
static void owner_exit_from_other_thread(void)
{
	static struct exit_arg a;
	pthread_t t;

	CHECK_EQ(blkring_queue_init(8, &a.ring, 0), 0);
	blkring_prep_nop(ring_sqe(&a.ring));
	CHECK_EQ(blkring_submit(&a.ring), 1);
	CHECK_EQ(pthread_create(&t, NULL, exit_elsewhere, &a), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(a.ring.ctx == NULL);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-owner-eexist", owner_eexist, 0},
	    {"ring-owner-ready-cqe-readable", owner_ready_cqe_readable, 0},
	    {"ring-owner-exit-from-other-thread", owner_exit_from_other_thread, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
