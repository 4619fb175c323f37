// SPDX-License-Identifier: MIT
/*
 * The floor for the nbd driver: the least a libnbd client can do for
 * random I/O at a queue depth.  One thread, one connection, qd commands in
 * flight; it sleeps in poll(2) on the socket, lets libnbd read what came,
 * and sends a new command for each one that completed (after the notify
 * call returned: a completion callback must not call libnbd on its own
 * handle).  Simple replies, as the driver's.  bench/nbd-vs-fio.sh runs it
 * beside blkring and fio.
 *
 *   nbd-raw URI read|write BS QD SECONDS      prints "iops=N"
 */
#include <errno.h>
#include <libnbd.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

#define MAX_QD 1024

struct raw {
	struct nbd_handle *h;
	bool write;
	uint32_t bs;
	uint64_t blocks; /* of bs in the export */
	uint64_t rand;
	char *bufs;
	unsigned done[MAX_QD]; /* slots whose command completed */
	unsigned nr_done;
	int error;
	unsigned long long ios;
};

struct slot {
	struct raw *r;
	unsigned index;
};

/* Runs inside libnbd with the handle locked: only note the slot. */
static int completed(void *user_data, int *error)
{
	struct slot *s = user_data;

	if (*error && !s->r->error)
		s->r->error = *error;
	s->r->done[s->r->nr_done++] = s->index;
	return 1;
}

static int issue(struct raw *r, struct slot *s)
{
	nbd_completion_callback cb = {.callback = completed, .user_data = s};
	uint64_t off = next_block(&r->rand, r->blocks) * r->bs;
	void *buf = r->bufs + (size_t)s->index * r->bs;
	int64_t cookie = r->write ? nbd_aio_pwrite(r->h, buf, r->bs, off, cb, 0)
	                          : nbd_aio_pread(r->h, buf, r->bs, off, cb, 0);

	return cookie < 0 ? -1 : 0;
}

/* Waits for the socket, lets libnbd read or write, and refills. */
static int step(struct raw *r, struct slot *slots)
{
	unsigned dir = nbd_aio_get_direction(r->h);
	struct pollfd p = {.fd = nbd_aio_get_fd(r->h),
	                   .events = (short)(((dir & LIBNBD_AIO_DIRECTION_READ) ? POLLIN : 0) |
	                                     ((dir & LIBNBD_AIO_DIRECTION_WRITE) ? POLLOUT : 0))};
	int ret;

	if (poll(&p, 1, -1) < 0)
		return errno == EINTR ? 0 : -1;
	if (p.revents & (POLLIN | POLLHUP | POLLERR))
		ret = nbd_aio_notify_read(r->h);
	else
		ret = nbd_aio_notify_write(r->h);
	if (ret < 0 || r->error)
		return -1;
	for (unsigned i = 0; i < r->nr_done; i++) {
		r->ios++;
		if (issue(r, &slots[r->done[i]]))
			return -1;
	}
	r->nr_done = 0;
	return 0;
}

static int run(struct raw *r, unsigned qd, double secs)
{
	struct slot slots[MAX_QD];
	double start, end;

	for (unsigned i = 0; i < qd; i++) {
		slots[i] = (struct slot){.r = r, .index = i};
		if (issue(r, &slots[i]))
			return -1;
	}
	start = now_s();
	end = start + secs;
	while (now_s() < end)
		for (int i = 0; i < 64; i++)
			if (step(r, slots))
				return -1;
	printf("iops=%.0f\n", (double)r->ios / (now_s() - start));
	return 0;
}

int main(int argc, char **argv)
{
	struct raw r = {.rand = 0x9e3779b97f4a7c15ULL};
	unsigned qd;
	double secs;
	int64_t size;

	if (argc != 6 || (strcmp(argv[2], "read") && strcmp(argv[2], "write"))) {
		fprintf(stderr, "usage: nbd-raw URI read|write BS QD SECONDS\n");
		return 2;
	}
	r.write = !strcmp(argv[2], "write");
	r.bs = (uint32_t)strtoul(argv[3], NULL, 0);
	qd = (unsigned)strtoul(argv[4], NULL, 0);
	secs = atof(argv[5]);
	if (!r.bs || !qd || qd > MAX_QD || secs <= 0) {
		fprintf(stderr, "nbd-raw: BS and QD (1 to %d) and SECONDS must be positive\n",
		        MAX_QD);
		return 2;
	}
	r.h = nbd_create();
	/* Simple replies and no zeroing of read buffers, as the nbd driver
	 * asks for: a read's data comes right after its header, in one more
	 * read of the socket. */
	if (!r.h || nbd_set_request_structured_replies(r.h, false) ||
	    nbd_set_pread_initialize(r.h, false) || nbd_connect_uri(r.h, argv[1]) ||
	    (size = nbd_get_size(r.h)) < (int64_t)r.bs) {
		fprintf(stderr, "nbd-raw: %s: %s\n", argv[1], nbd_get_error());
		return 1;
	}
	r.blocks = (uint64_t)size / r.bs;
	r.bufs = aligned_alloc(4096, ((size_t)qd * r.bs + 4095) & ~(size_t)4095);
	if (!r.bufs)
		return 1;
	memset(r.bufs, 0x5a, (size_t)qd * r.bs);
	if (run(&r, qd, secs)) {
		fprintf(stderr, "nbd-raw: %s\n", r.error ? strerror(r.error) : nbd_get_error());
		return 1;
	}
	nbd_shutdown(r.h, 0);
	nbd_close(r.h);
	free(r.bufs);
	return 0;
}
