// SPDX-License-Identifier: MIT
/*
 * The kernel's own asynchronous discard rate: one thread, one io_uring,
 * BLOCK_URING_CMD_DISCARD at random block-aligned offsets, a fixed queue
 * depth kept full (reaped completions are replaced in the same
 * io_uring_enter that waits for the next).  The yardstick for blkring's
 * file driver, and with --sync=N the synchronous baseline of seed 000: N
 * threads each looping on ioctl(BLKDISCARD).
 *
 *   discard-uring DEVICE [--bs=BYTES] [--qd=N] [--runtime=SECONDS] [--sync=THREADS]
 *
 * Defaults: 4096, 64, 5, async.  Prints one line:
 *   mode=async bs=4096 qd=64 ios=N iops=N lat_avg_us=N lat_max_us=N
 * DESTROYS the data on DEVICE.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Linux's BLOCK_URING_CMD_DISCARD, _IO(0x12, 0); liburing 2.3 has no helper. */
#define BLOCK_URING_CMD_DISCARD ((0x12U << 8) | 0)
#define MAX_QD 4096

struct opts {
	const char *dev;
	uint64_t bs;
	unsigned qd, sync_threads;
	double runtime;
};

struct result {
	uint64_t ios, lat_sum_ns, lat_max_ns;
	int err;
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

static void account(struct result *r, uint64_t lat)
{
	r->ios++;
	r->lat_sum_ns += lat;
	if (lat > r->lat_max_ns)
		r->lat_max_ns = lat;
}

/* ---- async: one ring ---- */

struct slot {
	uint64_t start_ns;
};

static void prep_discard(struct io_uring *ring, struct slot *slot, uint64_t off, uint64_t len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, 0, NULL, 0, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->cmd_op = BLOCK_URING_CMD_DISCARD;
	sqe->addr = off;
	sqe->addr3 = len;
	io_uring_sqe_set_data(sqe, slot);
	slot->start_ns = now_ns();
}

static int reap(struct io_uring *ring, struct result *r, struct slot **done, unsigned *nr)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	uint64_t now = now_ns();

	io_uring_for_each_cqe(ring, head, cqe)
	{
		struct slot *slot = io_uring_cqe_get_data(cqe);

		if (cqe->res < 0)
			return cqe->res;
		account(r, now - slot->start_ns);
		done[n++] = slot;
	}
	io_uring_cq_advance(ring, n);
	*nr = n;
	return 0;
}

static int run_async(const struct opts *o, int fd, uint64_t blocks, struct result *r)
{
	static struct slot slots[MAX_QD], *done[MAX_QD];
	struct io_uring ring;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, end;
	unsigned nr = o->qd;
	int ret = io_uring_queue_init(o->qd, &ring, 0);

	if (ret)
		return ret;
	ret = io_uring_register_files(&ring, &fd, 1);
	for (unsigned i = 0; i < o->qd; i++)
		done[i] = &slots[i];
	end = now_ns() + (uint64_t)(o->runtime * 1e9);
	while (!ret && now_ns() < end) {
		for (unsigned i = 0; i < nr; i++)
			prep_discard(&ring, done[i], (xorshift(&seed) % blocks) * o->bs, o->bs);
		ret = io_uring_submit_and_wait(&ring, 1);
		ret = ret < 0 ? ret : reap(&ring, r, done, &nr);
	}
	io_uring_queue_exit(&ring); /* waits for what is still in flight */
	return ret;
}

/* ---- sync: threads of BLKDISCARD ---- */

struct sync_thread {
	const struct opts *o;
	int fd;
	uint64_t blocks, seed, end_ns;
	struct result r;
	pthread_t tid;
};

static void *sync_loop(void *arg)
{
	struct sync_thread *t = arg;

	while (now_ns() < t->end_ns) {
		uint64_t range[2] = {(xorshift(&t->seed) % t->blocks) * t->o->bs, t->o->bs};
		uint64_t start = now_ns();

		if (ioctl(t->fd, BLKDISCARD, range) < 0) {
			t->r.err = -errno;
			break;
		}
		account(&t->r, now_ns() - start);
	}
	return NULL;
}

static int run_sync(const struct opts *o, int fd, uint64_t blocks, struct result *r)
{
	struct sync_thread *t = calloc(o->sync_threads, sizeof(*t));
	uint64_t end = now_ns() + (uint64_t)(o->runtime * 1e9);
	unsigned started = 0;
	int err = 0;

	if (!t)
		return -ENOMEM;
	for (; started < o->sync_threads; started++) {
		t[started] = (struct sync_thread){
		    .o = o, .fd = fd, .blocks = blocks, .seed = started * 7919 + 1, .end_ns = end};
		if (pthread_create(&t[started].tid, NULL, sync_loop, &t[started]))
			break;
	}
	for (unsigned i = 0; i < started; i++) {
		pthread_join(t[i].tid, NULL);
		r->ios += t[i].r.ios;
		r->lat_sum_ns += t[i].r.lat_sum_ns;
		if (t[i].r.lat_max_ns > r->lat_max_ns)
			r->lat_max_ns = t[i].r.lat_max_ns;
		err = err ? err : t[i].r.err;
	}
	free(t);
	return err;
}

/* ---- options ---- */

static int usage(void)
{
	fprintf(stderr, "usage: discard-uring DEVICE [--bs=BYTES] [--qd=N] [--runtime=SECONDS] "
	                "[--sync=THREADS]\n");
	return 2;
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
		else if (!strncmp(a, "--sync=", 7))
			o->sync_threads = (unsigned)atoi(a + 7);
		else if (a[0] != '-' && !o->dev)
			o->dev = a;
		else
			return -1;
	}
	if (!o->dev || !o->bs || (o->bs & 511) || !o->qd || o->qd > MAX_QD || o->runtime <= 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct result r = {0};
	struct opts o;
	uint64_t size;
	double secs;
	int fd, ret;

	if (parse(argc, argv, &o))
		return usage();
	fd = open(o.dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0) {
		fprintf(stderr, "discard-uring: %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	if (size < o.bs) {
		fprintf(stderr, "discard-uring: %s: smaller than one block\n", o.dev);
		return 1;
	}
	secs = (double)now_ns();
	ret =
	    o.sync_threads ? run_sync(&o, fd, size / o.bs, &r) : run_async(&o, fd, size / o.bs, &r);
	secs = ((double)now_ns() - secs) / 1e9;
	close(fd);
	if (ret) {
		fprintf(stderr, "discard-uring: %s: %s\n", o.dev, strerror(-ret));
		return 1;
	}
	printf("mode=%s bs=%llu qd=%u ios=%llu iops=%.0f lat_avg_us=%.1f lat_max_us=%.1f\n",
	       o.sync_threads ? "sync" : "async", (unsigned long long)o.bs,
	       o.sync_threads ? o.sync_threads : o.qd, (unsigned long long)r.ios, r.ios / secs,
	       r.ios ? r.lat_sum_ns / 1e3 / r.ios : 0, r.lat_max_ns / 1e3);
	return 0;
}
