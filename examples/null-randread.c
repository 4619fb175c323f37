// SPDX-License-Identifier: MIT
/*
 * 4k random reads on a null device through one ring, queue depth 128, for
 * about two seconds; prints what it did and how fast.
 *
 *   null-randread [SPEC [SECONDS]]     (default: null:irqmode=none 2)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkring.h"

#define QD 128
#define BS 4096

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t xorshift64(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct job {
	struct blkring ring;
	uint64_t blocks; /* BS-sized blocks on the device */
	char *bufs;
	uint64_t done, errors;
	int first_error;
};

static void queue_read(struct job *job, unsigned slot)
{
	/* One SQE per completion reaped: the SQ always has room. */
	struct blkring_sqe *sqe = blkring_get_sqe(&job->ring);

	if (!sqe)
		abort();
	/* A block in [0, blocks) by multiplying rather than dividing. */
	blkring_prep_read(sqe, 0, job->bufs + (size_t)slot * BS, BS,
	                  (uint64_t)(((unsigned __int128)xorshift64() * job->blocks) >> 64) * BS);
	sqe->user_data = slot;
}

static void reap(struct job *job, bool refill)
{
	struct blkring_cqe *cqes[QD];
	unsigned n = blkring_peek_batch_cqe(&job->ring, cqes, QD);

	for (unsigned i = 0; i < n; i++) {
		if (cqes[i]->res != BS && !job->errors++)
			job->first_error = cqes[i]->res;
		if (refill)
			queue_read(job, (unsigned)cqes[i]->user_data);
	}
	blkring_cq_advance(&job->ring, n);
	job->done += n;
}

static int run(struct job *job, double seconds, double *elapsed)
{
	uint64_t next_check = 1 << 16;
	double start = now(), end = start + seconds;
	int ret;

	for (unsigned slot = 0; slot < QD; slot++)
		queue_read(job, slot);
	for (;;) {
		ret = blkring_submit(&job->ring);
		if (ret < 0)
			return ret;
		if (job->done >= next_check) {
			next_check = job->done + (1 << 16);
			if (now() >= end)
				break;
		}
		/* Completions from a device thread: sleep until one comes. */
		if (!blkring_cq_ready(&job->ring)) {
			struct blkring_cqe *cqe;

			ret = blkring_wait_cqe(&job->ring, &cqe);
			if (ret < 0)
				return ret;
		}
		reap(job, true);
	}
	/* Stop refilling; wait for what is in flight. */
	for (uint64_t target = job->done + QD; job->done < target;) {
		struct blkring_cqe *cqe;

		ret = blkring_wait_cqe(&job->ring, &cqe);
		if (ret < 0)
			return ret;
		reap(job, false);
	}
	*elapsed = now() - start;
	return 0;
}

static void report(const struct job *job, const struct blkring_dev_info *info,
                   const struct blkring_ring_stats *st, double elapsed)
{
	printf("blkring example: %d-byte random reads on %s (%.0f GiB)\n", BS, info->spec,
	       info->size / 1073741824.0);
	printf("one ring, queue depth %d, one thread, %.2f s\n", QD, elapsed);
	printf("%llu reads: %.2fM IOPS, %.1f ns per I/O\n", (unsigned long long)job->done,
	       job->done / elapsed / 1e6, elapsed * 1e9 / job->done);
	printf("completions: %llu inline on the submitting thread, %llu as task work from "
	       "device threads\n",
	       (unsigned long long)(job->done - st->tw_run), (unsigned long long)st->tw_run);
	if (job->errors)
		printf("errors: %llu, the first: %s\n", (unsigned long long)job->errors,
		       strerror(-job->first_error));
	else
		printf("errors: none\n");
}

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "null:irqmode=none";
	double seconds = argc > 2 ? atof(argv[2]) : 2.0, elapsed = 0;
	struct blkring_dev_info info;
	struct blkring_ring_stats st;
	struct blkring_dev *dev;
	struct job job;
	int ret;

	memset(&job, 0, sizeof(job));
	ret = blkring_dev_open(spec, &dev);
	if (ret < 0) {
		fprintf(stderr, "null-randread: %s: %s (%s)\n", spec, strerror(-ret),
		        blkring_last_error());
		return 1;
	}
	blkring_dev_info(dev, &info);
	job.blocks = info.size / BS;
	job.bufs = aligned_alloc(4096, (size_t)QD * BS);
	if (!job.bufs || !job.blocks || blkring_queue_init(QD, &job.ring, 0) < 0 ||
	    blkring_register_devices(&job.ring, &dev, 1) < 0) {
		fprintf(stderr, "null-randread: setup failed\n");
		return 1;
	}
	ret = run(&job, seconds, &elapsed);
	blkring_ring_stats(&job.ring, &st);
	blkring_queue_exit(&job.ring);
	if (ret < 0) {
		fprintf(stderr, "null-randread: ring: %s\n", strerror(-ret));
		return 1;
	}
	report(&job, &info, &st, elapsed);
	blkring_dev_close(dev);
	free(job.bufs);
	return job.errors ? 1 : 0;
}
