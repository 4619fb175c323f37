// SPDX-License-Identifier: MIT
/*
 * ioengine=sync: one blocking library call at a time (fio's psync), each
 * timed on its own; no ring, no submission latency.
 */
#include "engine.h"
#include "job.h"

static ssize_t sync_do(struct job *j, struct io_unit *io)
{
	struct blkring_dev *dev = j->files[io->file].dev;

	switch (io->ddir) {
	case DDIR_READ:
		return blkring_dev_pread(dev, io->buf, io->len, io->offset);
	case DDIR_WRITE:
		return blkring_dev_pwrite(dev, io->buf, io->len, io->offset);
	case DDIR_TRIM:
		return blkring_dev_discard(dev, io->offset, io->len);
	case DDIR_ZERO:
		return blkring_dev_write_zeroes(dev, io->offset, io->len, j->o->zero_flags);
	default:
		return blkring_dev_flush(dev);
	}
}

static int sync_submit(struct job *j, struct io_unit **ios, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_unit *io = ios[i];
		uint64_t t = clock_now_ns();
		ssize_t ret = sync_do(j, io);

		job_complete(j, io, (int)ret, t, t, clock_now_ns());
		j->free[j->nr_free++] = io;
		j->inflight--;
	}
	return 0;
}

const struct bench_engine engine_sync = {
    .name = "sync",
    .sync = true,
    .submit = sync_submit,
};
