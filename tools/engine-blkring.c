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
	ret = blkring_queue_init(j->depth, &e->ring, 0);
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

static int ring_submit(struct job *j, struct io_unit **ios, unsigned n)
{
	struct blkring *ring = &((struct ring_engine *)j->engine_data)->ring;
	int ret;

	/* At most iodepth units exist and the SQ holds at least that many. */
	for (unsigned i = 0; i < n; i++)
		ring_prep(blkring_get_sqe(ring), ios[i]);
	ret = blkring_submit(ring);
	return ret < 0 ? ret : 0;
}

static int ring_reap(struct job *j, unsigned min, unsigned max)
{
	struct blkring *ring = &((struct ring_engine *)j->engine_data)->ring;
	struct blkring_cqe *cqe;
	unsigned head, n = 0;
	uint64_t now;

	if (blkring_cq_ready(ring) < min) {
		int ret = blkring_wait_cqes(ring, &cqe, min, NULL);

		if (ret < 0)
			return ret;
	}
	now = clock_now_ns();
	blkring_for_each_cqe (ring, head, cqe) {
		job_complete(j, blkring_cqe_get_data(cqe), cqe->res, now);
		if (++n == max)
			break;
	}
	blkring_cq_advance(ring, n);
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
