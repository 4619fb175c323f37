// SPDX-License-Identifier: MIT
/*
 * The kernel's own io_uring NOP rate: one thread, batches of 32 NOPs, one
 * io_uring_enter per batch, completions reaped from the CQ ring.  The
 * yardstick for blkring's per-I/O cost (bench/core-vs-nop.sh).
 *
 *   nop-uring [seconds]      default 1; prints "nop_ops_per_sec=N"
 */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 32

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One batch: 32 NOPs in one submit, then every completion reaped. */
static int nop_batch(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	int ret;

	for (int i = 0; i < BATCH; i++)
		io_uring_prep_nop(io_uring_get_sqe(ring));
	ret = io_uring_submit_and_wait(ring, BATCH);
	if (ret < 0)
		return ret;
	io_uring_for_each_cqe(ring, head, cqe)
	{
		if (cqe->res < 0)
			return cqe->res;
		n++;
	}
	io_uring_cq_advance(ring, n);
	return (int)n;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, start, end;
	struct io_uring ring;
	unsigned long long ops = 0;
	int ret;

	if (secs <= 0) {
		fprintf(stderr, "usage: nop-uring [seconds]\n");
		return 2;
	}
	ret = io_uring_queue_init(BATCH * 2, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "nop-uring: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	start = now_s();
	end = start + secs;
	do {
		for (int i = 0; i < 256; i++) {
			ret = nop_batch(&ring);
			if (ret < 0) {
				fprintf(stderr, "nop-uring: %s\n", strerror(-ret));
				return 1;
			}
			ops += (unsigned)ret;
		}
	} while (now_s() < end);
	printf("nop_ops_per_sec=%.0f\n", (double)ops / (now_s() - start));
	io_uring_queue_exit(&ring);
	return 0;
}
