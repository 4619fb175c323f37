// SPDX-License-Identifier: MIT
/*
 * ioengine=blkring: one ring per job, owned by the job's thread, with the
 * job's device registered at index 0.  A batch is one submit; completions
 * are reaped straight from the CQ with one clock stamp per batch.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "engine.h"
#include "job.h"

struct ring_engine {
	struct blkring ring;
	bool registered;
	/* The read or write every SQ slot holds but for three fields (-1: none). */
	int shape_op;
	unsigned shape_len;
	bool fixed;           /* fixedbufs: reads and writes in the registered buffer */
	uint32_t rw_flags;    /* of every read and write: nowait's BLKRING_RWF_NOWAIT */
	unsigned zero_flags;  /* of write zeroes: BLKRING_ZERO_* */
	unsigned async_count; /* SQEs since the last one force_async sent to the workers */
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

/* Whether the job's ring defers task work: as fio's io_uring engine asks
 * of the kernel (SINGLE_ISSUER|DEFER_TASKRUN, which a job's one thread
 * satisfies), unless taskrun= says otherwise or an SQ thread runs it, which
 * Linux refuses. */
static bool ring_defers(const struct job_opts *o)
{
	if (opt_is_set(o, "taskrun"))
		return o->taskrun == TASKRUN_DEFER;
	return !o->sqthread_poll;
}

void engine_blkring_params(const struct job_opts *o, struct blkring_params *p)
{
	memset(p, 0, sizeof(*p));
	if (o->hipri)
		p->flags |= BLKRING_SETUP_IOPOLL;
	if (o->sqthread_poll)
		p->flags |= BLKRING_SETUP_SQPOLL;
	if (o->sqthread_poll && opt_is_set(o, "sqthread_poll_cpu")) {
		p->flags |= BLKRING_SETUP_SQ_AFF;
		p->sq_thread_cpu = o->sqthread_poll_cpu;
	}
	if (o->tw_prio)
		p->flags |= BLKRING_SETUP_TW_PRIO;
	if (o->tw_issue)
		p->flags |= BLKRING_SETUP_TW_ISSUE;
	if (ring_defers(o))
		p->flags |= BLKRING_SETUP_DEFER_TASKRUN;
}

/* Bad setup options (sqthread_poll_cpu, taskrun with sqthread_poll) come
 * back as -EINVAL with the ring's text saying which. */
static void ring_setup_failed(struct job *j, int err)
{
	char what[512];

	if (err != -EINVAL) {
		job_fail(j, err, "setting up the ring");
		return;
	}
	snprintf(what, sizeof(what), "setting up the ring: %s", blkring_last_error());
	job_fail(j, err, what);
}

/* fixedbufs: every unit's buffer lies in one registered buffer, index 0. */
static int ring_register_buffers(struct job *j, struct ring_engine *e)
{
	struct iovec iov = {j->bufs, j->bufs_len};
	int ret = blkring_register_buffers(&e->ring, &iov, 1);

	if (ret)
		job_fail(j, ret, "registering the buffers");
	return ret;
}

/* The job's files, at the indices its units name. */
static int ring_register_devices(struct job *j, struct ring_engine *e)
{
	struct blkring_dev **devs = calloc(j->nr_files, sizeof(*devs));
	int ret;

	if (!devs)
		return -ENOMEM;
	for (unsigned k = 0; k < j->nr_files; k++)
		devs[k] = j->files[k].dev;
	ret = blkring_register_devices(&e->ring, devs, j->nr_files);
	free(devs);
	if (ret)
		job_fail(j, ret, "registering the devices");
	else
		e->registered = true;
	return ret;
}

static int ring_init(struct job *j)
{
	struct ring_engine *e = calloc(1, sizeof(*e));
	struct blkring_params p;
	int ret;

	if (!e)
		return -ENOMEM;
	engine_blkring_params(j->o, &p);
	ret = blkring_queue_init_params(j->depth, &e->ring, &p);
	if (ret) {
		free(e);
		ring_setup_failed(j, ret);
		return ret;
	}
	e->shape_op = -1;
	e->fixed = j->o->fixedbufs;
	e->rw_flags = j->o->nowait ? BLKRING_RWF_NOWAIT : 0;
	e->zero_flags = j->o->zero_flags;
	j->engine_data = e;
	ret = ring_register_devices(j, e);
	if (ret)
		return ret;
	return j->o->fixedbufs ? ring_register_buffers(j, e) : 0;
}

/* Discard and write zeroes commands, and fsync's flushes. */
static __attribute__((noinline)) void ring_prep_other(struct blkring_sqe *sqe, struct io_unit *io,
                                                      const struct ring_engine *e)
{
	if (io->ddir == DDIR_TRIM)
		blkring_prep_cmd_discard(sqe, io->file, io->offset, io->len);
	else if (io->ddir == DDIR_ZERO)
		blkring_prep_cmd_write_zeroes(sqe, io->file, io->offset, io->len, e->zero_flags);
	else
		blkring_prep_fsync(sqe, io->file, 0);
}

/* One SQE of the general path; the device is the unit's file's index. */
static void ring_prep(struct blkring_sqe *sqe, struct io_unit *io, const struct ring_engine *e)
{
	switch (io->ddir) {
	case DDIR_READ:
		if (e->fixed)
			blkring_prep_read_fixed(sqe, io->file, io->buf, io->len, io->offset, 0);
		else
			blkring_prep_read(sqe, io->file, io->buf, io->len, io->offset);
		sqe->rw_flags = e->rw_flags;
		break;
	case DDIR_WRITE:
		if (e->fixed)
			blkring_prep_write_fixed(sqe, io->file, io->buf, io->len, io->offset, 0);
		else
			blkring_prep_write(sqe, io->file, io->buf, io->len, io->offset);
		sqe->rw_flags = e->rw_flags;
		break;
	default:
		ring_prep_other(sqe, io, e);
		break;
	}
	blkring_sqe_set_data(sqe, io);
}

/*
 * The SQEs of a one-direction job's reads or writes differ only in offset,
 * buffer and unit.  As fio's io_uring engine writes only the fields that
 * change into the SQEs it owns, this engine writes the job's SQE into every
 * slot of the SQ once, then only those three fields: the ring only reads
 * SQEs, so the rest stays as written.  Any other SQE voids the shape.
 */
static __attribute__((noinline)) void ring_shape_fill(struct ring_engine *e, int op, unsigned len)
{
	struct blkring_sq *sq = &e->ring.sq;

	for (unsigned i = 0; i < sq->ring_entries; i++) {
		blkring_prep_rw(op, &sq->sqes[i], 0, NULL, len, 0);
		sq->sqes[i].rw_flags = e->rw_flags;
	}
	e->shape_op = op;
	e->shape_len = len;
}

static inline void ring_shape(struct ring_engine *e, int op, unsigned len)
{
	if (unlikely(e->shape_op != op || e->shape_len != len))
		ring_shape_fill(e, op, len);
}

/* An SQE of the job's shape: the unit's offset, buffer and self. */
static inline void ring_fill_one(struct blkring_sqe *sqe, struct io_unit *io, struct io_batch *b)
{
	io->batch = b;
	sqe->off = io->offset;
	sqe->addr = (uint64_t)(uintptr_t)io->buf;
	blkring_sqe_set_data(sqe, io);
}

/* n SQEs in a row of the SQ array, which holds the job's shape. */
static void ring_fill_rw(struct blkring_sqe *sqe, struct io_unit **ios, unsigned n,
                         struct io_batch *b)
{
	for (unsigned i = 0; i < n; i++, sqe++)
		ring_fill_one(sqe, ios[i], b);
}

static void ring_prep_rw_batch(struct ring_engine *e, uint32_t tail, struct io_unit **ios,
                               unsigned n, int op, unsigned len, struct io_batch *b)
{
	struct blkring_sq *sq = &e->ring.sq;
	uint32_t first = tail & sq->ring_mask;
	unsigned run = sq->ring_entries - first < n ? sq->ring_entries - first : n;

	ring_shape(e, op, len);
	/* fio's default batch of one, without the loops' set-up. */
	if (n == 1) {
		ring_fill_one(&sq->sqes[first], ios[0], b);
		return;
	}
	ring_fill_rw(&sq->sqes[first], ios, run, b);
	ring_fill_rw(sq->sqes, ios + run, n - run, b);
}

/* Any job's SQEs, each written whole: the shape is void. */
static __attribute__((noinline)) void ring_prep_each(struct ring_engine *e, uint32_t tail,
                                                     struct io_unit **ios, unsigned n,
                                                     struct io_batch *b)
{
	struct blkring_sq *sq = &e->ring.sq;

	e->shape_op = -1;
	for (unsigned i = 0; i < n; i++) {
		ios[i]->batch = b;
		ring_prep(&sq->sqes[(tail + i) & sq->ring_mask], ios[i], e);
	}
}

/* The opcode of a one-direction job's reads or writes; with fixedbufs the
 * shape's zeroed buf_index names the one registered buffer. */
static int ring_rw_op(bool write, bool fixed)
{
	if (fixed)
		return write ? BLKRING_OP_WRITE_FIXED : BLKRING_OP_READ_FIXED;
	return write ? BLKRING_OP_WRITE : BLKRING_OP_READ;
}

/* force_async=N, as fio's io_uring engine does it: every Nth SQE goes to
 * the ring's worker pool (the shape's SQEs are reused: the others are
 * cleared). */
static __attribute__((noinline)) void ring_force_async(struct ring_engine *e, unsigned every,
                                                       uint32_t tail, unsigned n)
{
	struct blkring_sq *sq = &e->ring.sq;

	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = &sq->sqes[(tail + i) & sq->ring_mask];
		bool async = ++e->async_count == every;

		if (async)
			e->async_count = 0;
		blkring_sqe_set_flags(sqe, async ? BLKRING_SQE_ASYNC : 0);
	}
}

/*
 * Fills n SQEs straight from the SQ array, as blkring_get_sqe() would one by
 * one: at most iodepth units exist and the SQ holds at least that many, so
 * there is always room.
 */
static int ring_submit(struct job *j, struct io_unit **ios, unsigned n)
{
	struct ring_engine *e = j->engine_data;
	struct blkring_sq *sq = &e->ring.sq;
	struct io_batch *b = j->issuing;
	uint32_t tail = sq->sqe_tail;

	if (j->single && (j->ddir == DDIR_READ || j->ddir == DDIR_WRITE))
		ring_prep_rw_batch(e, tail, ios, n, ring_rw_op(j->ddir == DDIR_WRITE, e->fixed),
		                   j->bs[j->ddir], b);
	else
		ring_prep_each(e, tail, ios, n, b);
	if (unlikely(j->o->force_async))
		ring_force_async(e, j->o->force_async, tail, n);
	sq->sqe_tail = tail + n;
	/* SQEs a short submit leaves stay queued for the next. */
	return blkring_submit(&e->ring);
}

static inline struct io_unit *cqe_unit(const struct blkring_cqe *cqe)
{
	return blkring_cqe_get_data(cqe);
}

/*
 * n CQEs in a row of the CQ array, of a one-direction job: its units all go
 * to the same statistics, so the loop counts them per run of a submission
 * and checks only the result.
 */
static void ring_count_run(struct job *j, const struct blkring_cqe *cqe, unsigned n,
                           struct io_unit **free, uint64_t now)
{
	/* Discard and write zeroes end with 0, reads and writes with their length. */
	unsigned len = j->ddir < DDIR_TRIM ? j->bs[j->ddir] : 0;
	struct io_batch *b = NULL;
	uint32_t run = 0, apart = 0;

	for (unsigned i = 0; i < n; i++, cqe++) {
		struct io_unit *io = cqe_unit(cqe);

		free[i] = io;
		if (io->batch != b) {
			if (b)
				job_reaped(j, b, run, run - apart, now);
			b = io->batch;
			run = apart = 0;
		}
		run++;
		if (unlikely((unsigned)cqe->res != len)) {
			job_account(j, io, cqe->res, now);
			apart++;
		}
	}
	if (b)
		job_reaped(j, b, run, run - apart, now);
}

/* Accounts n CQEs from head; the units of jobs with several directions
 * one by one. */
static void ring_account(struct job *j, const struct blkring_cq *cq, unsigned head, unsigned n,
                         uint64_t now)
{
	const struct blkring_cqe *cqes = cq->cqes;
	struct io_unit **free = j->free + j->nr_free;
	uint32_t first = head & cq->ring_mask;
	unsigned run = cq->ring_entries - first < n ? cq->ring_entries - first : n;

	if (j->single) {
		ring_count_run(j, &cqes[first], run, free, now);
		ring_count_run(j, cqes, n - run, free + run, now);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct blkring_cqe *cqe = &cqes[(head + i) & cq->ring_mask];

		free[i] = cqe_unit(cqe);
		job_account(j, free[i], cqe->res, now);
		job_reaped(j, free[i]->batch, 1, 0, now);
	}
}

/*
 * With an SQ thread the reaper watches the CQ ring and never enters the
 * ring, as fio's io_uring engine does (its getevents calls io_uring_enter
 * only without sqthread_poll; seed 002 ran so): a third busy thread.  It
 * yields now and then, so that a thread sharing its CPU (the SQ thread,
 * on one CPU) runs without waiting for the scheduler's tick.
 */
static unsigned ring_watch(struct blkring *ring, unsigned min)
{
	unsigned ready, n = 0;

	while ((ready = blkring_cq_ready(ring)) < min) {
		cpu_relax();
		if (!(++n & 1023))
			sched_yield();
	}
	return ready;
}

/* Reaps what is ready (waiting for min), with one clock stamp for all. */
static int ring_reap(struct job *j, unsigned min, unsigned max)
{
	struct blkring *ring = &((struct ring_engine *)j->engine_data)->ring;
	unsigned ready = blkring_cq_ready(ring), n;
	uint64_t now;

	if (ready < min && j->o->sqthread_poll)
		ready = ring_watch(ring, min);
	if (ready < min) {
		struct blkring_cqe *cqe;
		int ret;

		/* A signal handler (none of ours: SIGINT and SIGTERM are
		 * blocked) ends a wait early, as it ends io_uring_enter's. */
		do
			ret = blkring_wait_cqes(ring, &cqe, min, NULL, NULL);
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

static void ring_tw_wait(struct job *j, uint64_t *nr, uint64_t *ns)
{
	struct blkring_ring_stats rs;

	if (blkring_ring_stats(&((struct ring_engine *)j->engine_data)->ring, &rs))
		rs.tw_wait_nr = rs.tw_wait_ns = 0;
	*nr = rs.tw_wait_nr;
	*ns = rs.tw_wait_ns;
}

const struct bench_engine engine_blkring = {
    .name = "blkring",
    .sync = false,
    .init = ring_init,
    .exit = ring_exit,
    .submit = ring_submit,
    .reap = ring_reap,
    .tw_wait = ring_tw_wait,
};
