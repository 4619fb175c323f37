// SPDX-License-Identifier: MIT
/*
 * ioengine=blkring: one ring per job, owned by the job's thread, with the
 * job's device registered at index 0.  A batch is one submit; completions
 * are reaped straight from the CQ with one clock stamp per batch.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "job.h"

struct ring_engine {
	struct blkring ring;
	bool registered;
};

static void ring_exit(struct job *j)
{
	struct ring_engine *e = j->engine_data;

	if (!e)
		return;
	if (e->registered)
		blkring_unregister_devices(&e->ring);
	blkring_queue_exit(&e->ring);
	free(e);
	j->engine_data = NULL;
}

static int ring_init(struct job *j)
{
	struct ring_engine *e = calloc(1, sizeof(*e));
	int ret;

	if (!e)
		return -ENOMEM;
	ret = blkring_queue_init(j->depth, &e->ring, j->o->hipri ? BLKRING_SETUP_IOPOLL : 0);
	if (ret) {
		free(e);
		job_fail(j, ret, "setting up the ring");
		return ret;
	}
	j->engine_data = e;
	ret = blkring_register_devices(&e->ring, &j->dev, 1);
	if (ret) {
		job_fail(j, ret, "registering the device");
		return ret;
	}
	e->registered = true;
	return 0;
}

static void ring_prep(struct blkring_sqe *sqe, struct io_unit *io)
{
	switch (io->ddir) {
	case DDIR_READ:
		blkring_prep_read(sqe, 0, io->buf, io->len, io->offset);
		break;
	case DDIR_WRITE:
		blkring_prep_write(sqe, 0, io->buf, io->len, io->offset);
		break;
	default:
		blkring_prep_fsync(sqe, 0, 0);
		break;
	}
	blkring_sqe_set_data(sqe, io);
}

/*
 * Fills n SQEs straight from the SQ array, as blkring_get_sqe() would one by
 * one: at most iodepth units exist and the SQ holds at least that many, so
 * there is always room.
 */
static int ring_submit(struct job *j, struct io_unit **ios, unsigned n)
{
	struct blkring *ring = &((struct ring_engine *)j->engine_data)->ring;
	struct blkring_sq *sq = &ring->sq;
	uint32_t tail = sq->sqe_tail;
	int ret;

	for (unsigned i = 0; i < n; i++)
		ring_prep(&sq->sqes[(tail + i) & sq->ring_mask], ios[i]);
	sq->sqe_tail = tail + n;
	ret = blkring_submit(ring);
	return ret < 0 ? ret : 0;
}

static inline struct io_unit *cqe_unit(const struct blkring_cqe *cqe)
{
	return blkring_cqe_get_data(cqe);
}

/*
 * Accounts n CQEs from head.  A one-direction job's units all go to the same
 * statistics, so its loop has them at hand and checks only the result.
 */
static void ring_account(struct job *j, const struct blkring_cq *cq, unsigned head, unsigned n,
                         uint64_t now)
{
	const struct blkring_cqe *cqes = cq->cqes;
	struct io_unit **free = j->free + j->nr_free;
	uint32_t mask = cq->ring_mask;

	if (j->single) {
		struct dir_stats *ds = &j->st->dir[j->ddir];

		for (unsigned i = 0; i < n; i++) {
			const struct blkring_cqe *cqe = &cqes[(head + i) & mask];
			struct io_unit *io = cqe_unit(cqe);

			free[i] = io;
			if (likely((unsigned)cqe->res == io->len))
				dir_account(ds, io, now);
			else
				job_complete_slow(j, io, cqe->res, now);
		}
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct blkring_cqe *cqe = &cqes[(head + i) & mask];

		free[i] = cqe_unit(cqe);
		job_account(j, free[i], cqe->res, now);
	}
}

/* Reaps what is ready (waiting for min), with one clock stamp for all. */
static int ring_reap(struct job *j, unsigned min, unsigned max)
{
	struct blkring *ring = &((struct ring_engine *)j->engine_data)->ring;
	unsigned ready = blkring_cq_ready(ring), n;
	uint64_t now;

	if (ready < min) {
		struct blkring_cqe *cqe;
		int ret;

		/* A signal handler (none of ours: SIGINT and SIGTERM are
		 * blocked) ends a wait early, as it ends io_uring_enter's. */
		do
			ret = blkring_wait_cqes(ring, &cqe, min, NULL);
		while (ret == -EINTR);
		if (ret < 0)
			return ret;
		ready = blkring_cq_ready(ring);
	}
	n = ready < max ? ready : max;
	now = clock_now_ns();
	ring_account(j, &ring->cq, atomic_load_explicit(ring->cq.khead, memory_order_relaxed), n,
	             now);
	blkring_cq_advance(ring, n);
	j->nr_free += n;
	j->inflight -= n;
	j->now_ns = now;
	return (int)n;
}

const struct bench_engine engine_blkring = {
    .name = "blkring",
    .sync = false,
    .init = ring_init,
    .exit = ring_exit,
    .submit = ring_submit,
    .reap = ring_reap,
};
