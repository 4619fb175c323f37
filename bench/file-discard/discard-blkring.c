// SPDX-License-Identifier: MIT
/*
 * blkring's asynchronous discard rate on a block device: one ring, the
 * device opened as a file device, random block-aligned discards
 * (BLKRING_CMD_DISCARD) at a fixed queue depth kept full, the same loop as
 * bench/discard-uring.c runs on the kernel's io_uring, so their ratio is
 * blkring's cost.
 *
 *   discard-blkring SPEC [--bs=BYTES] [--qd=N] [--runtime=SECONDS]
 *
 * Prints: mode=blkring bs=4096 qd=64 ios=N iops=N lat_avg_us=N lat_max_us=N
 * DESTROYS the data on the device.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkring.h"

#define MAX_QD 4096

struct opts {
	const char *spec;
	uint64_t bs;
	unsigned qd;
	double runtime;
};

struct result {
	uint64_t ios, lat_sum_ns, lat_max_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Queues one discard; its start time rides in user_data.  The SQ holds
 * the whole queue depth, so there is always an entry. */
static int prep_discard(struct blkring *ring, uint64_t off, uint64_t len)
{
	struct blkring_sqe *sqe = blkring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	blkring_prep_cmd_discard(sqe, 0, off, len);
	sqe->user_data = now_ns();
	return 0;
}

/* Accounts what completed; returns how many, or the first error. */
static int reap(struct blkring *ring, struct result *r)
{
	struct blkring_cqe *cqe;
	uint64_t now = now_ns();
	unsigned head, n = 0;

	blkring_for_each_cqe (ring, head, cqe) {
		uint64_t lat = now - cqe->user_data;

		if (cqe->res < 0)
			return cqe->res;
		r->ios++;
		r->lat_sum_ns += lat;
		if (lat > r->lat_max_ns)
			r->lat_max_ns = lat;
		n++;
	}
	blkring_cq_advance(ring, n);
	return (int)n;
}

static int run(const struct opts *o, struct blkring *ring, uint64_t blocks, struct result *r)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL, end = now_ns() + (uint64_t)(o->runtime * 1e9);
	unsigned inflight = 0;
	int ret = 0;

	while (ret >= 0 && now_ns() < end) {
		struct blkring_cqe *cqe;

		for (ret = 0; !ret && inflight < o->qd; inflight++)
			ret = prep_discard(ring, (xorshift(&seed) % blocks) * o->bs, o->bs);
		if (ret >= 0)
			ret = blkring_submit(ring);
		if (ret >= 0)
			ret = blkring_wait_cqe(ring, &cqe);
		if (ret >= 0)
			ret = reap(ring, r);
		if (ret > 0)
			inflight -= (unsigned)ret;
	}
	while (ret >= 0 && inflight) {
		struct blkring_cqe *cqe;

		ret = blkring_wait_cqe(ring, &cqe);
		if (ret >= 0)
			ret = reap(ring, r);
		if (ret > 0)
			inflight -= (unsigned)ret;
	}
	return ret < 0 ? ret : 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.bs = 4096, .qd = 64, .runtime = 5};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--bs=", 5))
			o->bs = strtoull(a + 5, NULL, 0);
		else if (!strncmp(a, "--qd=", 5))
			o->qd = (unsigned)atoi(a + 5);
		else if (!strncmp(a, "--runtime=", 10))
			o->runtime = atof(a + 10);
		else if (a[0] != '-' && !o->spec)
			o->spec = a;
		else
			return -1;
	}
	if (!o->spec || !o->bs || (o->bs & 511) || !o->qd || o->qd > MAX_QD || o->runtime <= 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct blkring_dev_info info;
	struct blkring_dev *dev;
	struct result r = {0};
	struct blkring ring;
	struct opts o;
	double secs;
	int ret;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: discard-blkring SPEC [--bs=BYTES] [--qd=N] "
		                "[--runtime=SECONDS]\n");
		return 2;
	}
	ret = blkring_dev_open(o.spec, &dev);
	if (ret) {
		fprintf(stderr, "discard-blkring: %s: %s\n", o.spec, blkring_last_error());
		return 1;
	}
	blkring_dev_info(dev, &info);
	ret = blkring_queue_init(o.qd, &ring, 0);
	if (!ret)
		ret = blkring_register_devices(&ring, &dev, 1);
	secs = (double)now_ns();
	if (!ret)
		ret = run(&o, &ring, info.size / o.bs, &r);
	secs = ((double)now_ns() - secs) / 1e9;
	blkring_queue_exit(&ring);
	blkring_dev_close(dev);
	if (ret) {
		fprintf(stderr, "discard-blkring: %s: %s\n", o.spec, strerror(-ret));
		return 1;
	}
	printf("mode=blkring bs=%llu qd=%u ios=%llu iops=%.0f lat_avg_us=%.1f lat_max_us=%.1f\n",
	       (unsigned long long)o.bs, o.qd, (unsigned long long)r.ios, r.ios / secs,
	       r.ios ? r.lat_sum_ns / 1e3 / r.ios : 0, r.lat_max_ns / 1e3);
	return 0;
}
