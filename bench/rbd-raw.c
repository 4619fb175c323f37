// SPDX-License-Identifier: MIT
/*
 * The floor for the rbd driver: the least a librbd client can do for
 * random I/O at a queue depth.  One thread keeps qd commands in flight on
 * one image and sends a new one for each that completed, learning of
 * completions one of two ways:
 *   eventfd   librbd signals an eventfd (rbd_set_image_notification); the
 *             thread sleeps in poll(2) and takes every finished completion
 *             with rbd_poll_io_events();
 *   callback  librbd's threads run a callback that queues the slot under a
 *             mutex and signals a condition variable the thread sleeps on
 *             when nothing is queued.
 * librbd's cache is set as the rbd driver's cache= key sets it.
 * bench/rbd-vs-fio.sh runs it beside blkring and fio.  The cluster comes
 * from CEPH_CONF, the client is admin.
 *
 *   rbd-raw POOL IMAGE read|write BS QD SECONDS eventfd|callback \
 *           writeback|none                             prints "iops=N"
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <rbd/librbd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "raw.h"

#define MAX_QD 1024

struct raw {
	rbd_image_t img;
	bool write, callback;
	uint32_t bs;
	uint64_t blocks; /* of bs in the image */
	uint64_t rand;
	char *bufs;
	int efd;
	pthread_mutex_t lock; /* callback mode: guards done, nr_done, error */
	pthread_cond_t cond;
	unsigned done[MAX_QD];
	unsigned nr_done;
	int error;
	unsigned long long ios;
};

struct slot {
	struct raw *r;
	unsigned index;
};

/* On one of librbd's threads. */
static void completed(rbd_completion_t c, void *arg)
{
	struct slot *s = arg;
	struct raw *r = s->r;
	ssize_t ret = rbd_aio_get_return_value(c);

	rbd_aio_release(c);
	pthread_mutex_lock(&r->lock);
	if (ret < 0 && !r->error)
		r->error = (int)-ret;
	r->done[r->nr_done++] = s->index;
	if (r->nr_done == 1)
		pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static int issue(struct raw *r, struct slot *s)
{
	uint64_t off = next_block(&r->rand, r->blocks) * r->bs;
	char *buf = r->bufs + (size_t)s->index * r->bs;
	rbd_completion_t c;
	int ret = rbd_aio_create_completion(s, r->callback ? completed : NULL, &c);

	if (ret)
		return ret;
	ret = r->write ? rbd_aio_write(r->img, off, r->bs, buf, c)
	               : rbd_aio_read(r->img, off, r->bs, buf, c);
	if (ret < 0)
		rbd_aio_release(c);
	return ret < 0 ? ret : 0;
}

/* Sleeps until at least one completion finished; takes them all. */
static int reap_eventfd(struct raw *r, unsigned *done, unsigned *n)
{
	struct pollfd p = {.fd = r->efd, .events = POLLIN};
	rbd_completion_t comps[MAX_QD];
	uint64_t v;
	int got;

	if (poll(&p, 1, -1) < 0)
		return errno == EINTR ? 0 : -errno;
	if (read(r->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	got = rbd_poll_io_events(r->img, comps, MAX_QD);
	if (got < 0)
		return got;
	*n = 0;
	for (int i = 0; i < got; i++) {
		struct slot *s = rbd_aio_get_arg(comps[i]);
		ssize_t ret = rbd_aio_get_return_value(comps[i]);

		rbd_aio_release(comps[i]);
		if (ret < 0)
			return (int)ret;
		done[(*n)++] = s->index;
	}
	return 0;
}

static int reap_callback(struct raw *r, unsigned *done, unsigned *n)
{
	int err;

	pthread_mutex_lock(&r->lock);
	while (!r->nr_done)
		pthread_cond_wait(&r->cond, &r->lock);
	*n = r->nr_done;
	memcpy(done, r->done, sizeof(*done) * r->nr_done);
	r->nr_done = 0;
	err = r->error;
	pthread_mutex_unlock(&r->lock);
	return -err;
}

static int run(struct raw *r, unsigned qd, double secs)
{
	static struct slot slots[MAX_QD];
	unsigned done[MAX_QD], n = 0;
	double start, end;
	int ret;

	for (unsigned i = 0; i < qd; i++) {
		slots[i] = (struct slot){.r = r, .index = i};
		if ((ret = issue(r, &slots[i])))
			return ret;
	}
	start = now_s();
	end = start + secs;
	while (now_s() < end) {
		ret = r->callback ? reap_callback(r, done, &n) : reap_eventfd(r, done, &n);
		if (ret)
			return ret;
		for (unsigned i = 0; i < n; i++) {
			r->ios++;
			if ((ret = issue(r, &slots[done[i]])))
				return ret;
		}
	}
	printf("iops=%.0f\n", (double)r->ios / (now_s() - start));
	return 0; /* rbd_close() waits for what is still in flight */
}

/* As the driver's cache=writeback and cache=none. */
static int set_cache(rados_t cluster, bool writeback)
{
	if (!writeback)
		return rados_conf_set(cluster, "rbd_cache", "false");
	return rados_conf_set(cluster, "rbd_cache", "true")
	           ?: rados_conf_set(cluster, "rbd_cache_writethrough_until_flush", "false");
}

static int open_image(struct raw *r, const char *pool, const char *image, bool writeback,
                      rados_t *cluster, rados_ioctx_t *io)
{
	uint64_t size;
	int ret;

	if ((ret = rados_create(cluster, "admin")) ||
	    (ret = rados_conf_read_file(*cluster, NULL)) ||
	    (ret = set_cache(*cluster, writeback)) || (ret = rados_connect(*cluster)) ||
	    (ret = rados_ioctx_create(*cluster, pool, io)) ||
	    (ret = rbd_open(*io, image, &r->img, NULL)) || (ret = rbd_get_size(r->img, &size)))
		return ret;
	if (size < r->bs)
		return -EINVAL;
	r->blocks = size / r->bs;
	if (r->callback)
		return 0;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0)
		return -errno;
	return rbd_set_image_notification(r->img, r->efd, EVENT_TYPE_EVENTFD);
}

int main(int argc, char **argv)
{
	struct raw r = {.rand = 0x9e3779b97f4a7c15ULL, .efd = -1};
	rados_t cluster = NULL;
	rados_ioctx_t io = NULL;
	unsigned qd;
	double secs;
	int ret;

	if (argc != 9 || (strcmp(argv[3], "read") && strcmp(argv[3], "write")) ||
	    (strcmp(argv[7], "eventfd") && strcmp(argv[7], "callback")) ||
	    (strcmp(argv[8], "writeback") && strcmp(argv[8], "none"))) {
		fprintf(stderr, "usage: rbd-raw POOL IMAGE read|write BS QD SECONDS "
		                "eventfd|callback writeback|none\n");
		return 2;
	}
	r.write = !strcmp(argv[3], "write");
	r.callback = !strcmp(argv[7], "callback");
	r.bs = (uint32_t)strtoul(argv[4], NULL, 0);
	qd = (unsigned)strtoul(argv[5], NULL, 0);
	secs = atof(argv[6]);
	if (!r.bs || !qd || qd > MAX_QD || secs <= 0) {
		fprintf(stderr, "rbd-raw: BS and QD (1 to %d) and SECONDS must be positive\n",
		        MAX_QD);
		return 2;
	}
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	ret = open_image(&r, argv[1], argv[2], !strcmp(argv[8], "writeback"), &cluster, &io);
	if (ret) {
		fprintf(stderr, "rbd-raw: %s/%s: %s\n", argv[1], argv[2], strerror(-ret));
		return 1;
	}
	r.bufs = aligned_alloc(4096, ((size_t)qd * r.bs + 4095) & ~(size_t)4095);
	if (!r.bufs)
		return 1;
	memset(r.bufs, 0x5a, (size_t)qd * r.bs);
	ret = run(&r, qd, secs);
	if (ret)
		fprintf(stderr, "rbd-raw: %s\n", strerror(-ret));
	rbd_close(r.img);
	rados_ioctx_destroy(io);
	rados_shutdown(cluster);
	free(r.bufs);
	return ret ? 1 : 0;
}
