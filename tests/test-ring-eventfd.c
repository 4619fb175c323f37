// SPDX-License-Identifier: MIT
/*
 * The ring's eventfd, as liburing's test/eventfd*.c use it: signalled for
 * completions the owner posts and for those that come from other threads
 * (only those with _async), silenced by the CQ flag, next to a socket in
 * epoll, on plain, DEFER_TASKRUN and SQPOLL rings.
 */
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

static char buf[8][512];

/* What the eventfd counted since the last read (0: not signalled). */
static uint64_t ev_count(int efd, int timeout_ms)
{
	struct pollfd pfd = {.fd = efd, .events = POLLIN};
	eventfd_t n = 0;

	if (poll(&pfd, 1, timeout_ms) == 1)
		CHECK_EQ(eventfd_read(efd, &n), 0);
	return n;
}

static void reads(struct blkring *ring, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		blkring_prep_read(ring_sqe(ring), 0, buf[i], sizeof(buf[i]), 0);
	CHECK_EQ(blkring_submit(ring), n);
}

static unsigned reap_all(struct blkring *ring)
{
	struct blkring_cqe *cqe;
	unsigned n = 0;

	while (!blkring_peek_cqe(ring, &cqe)) {
		CHECK_EQ(cqe->res, 512);
		blkring_cqe_seen(ring, cqe);
		n++;
	}
	return n;
}

static void eventfd_register_rules(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_unregister_eventfd(&ring), -ENXIO);
	CHECK_EQ(blkring_register_eventfd(&ring, -1), -EBADF);
	CHECK_EQ(blkring_register_eventfd(&ring, efd), 0);
	CHECK_EQ(blkring_register_eventfd_async(&ring, efd), -EBUSY);
	/* The ring signals its own copy: closing ours changes nothing for it. */
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK(ev_count(efd, 0) >= 1);
	CHECK_EQ(blkring_unregister_eventfd(&ring), 0);
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ev_count(efd, 0), 0);
	blkring_queue_exit(&ring);
	close(efd);
}

/* Owner-posted CQEs signal unless _async; device-thread ones always. */
static void eventfd_sources(bool async)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=softirq,name=ev");
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct blkring ring;
	unsigned got = 0;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	CHECK_EQ((async ? blkring_register_eventfd_async : blkring_register_eventfd)(&ring, efd),
	         0);
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ev_count(efd, 0) > 0, !async);
	blkring_cq_advance(&ring, 1);
	reads(&ring, 8);
	/* Each wake brings at least one CQE; a burst may come as one count. */
	while (got < 8) {
		uint64_t n = ev_count(efd, 5000);

		CHECK(n >= 1 && n <= 8);
		got += reap_all(&ring);
	}
	CHECK_EQ(got, 8);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	close(efd);
}

static void eventfd_owner_and_threads(void)
{
	eventfd_sources(false);
}

static void eventfd_async_threads_only(void)
{
	eventfd_sources(true);
}

/* BLKRING_CQ_EVENTFD_DISABLED silences it; enabling it again restores it. */
static void eventfd_toggle(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_eventfd(&ring, efd), 0);
	CHECK(blkring_cq_eventfd_enabled(&ring));
	CHECK_EQ(blkring_cq_eventfd_toggle(&ring, 0), 0);
	CHECK(!blkring_cq_eventfd_enabled(&ring));
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ev_count(efd, 0), 0);
	CHECK_EQ(blkring_cq_eventfd_toggle(&ring, 1), 0);
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK(ev_count(efd, 0) >= 1);
	blkring_queue_exit(&ring);
	close(efd);
}

/* In an epoll loop beside a socket, on every ring kind: each wake for the
 * eventfd is followed by CQEs, and every read completes. */
static void epoll_loop(unsigned flags)
{
	struct blkring_params p = {.flags = flags, .sq_thread_idle = 10};
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=softirq,name=ep");
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), ep = epoll_create1(EPOLL_CLOEXEC), sv[2];
	struct epoll_event ev = {.events = EPOLLIN};
	struct blkring ring;
	unsigned got = 0, sock = 0;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ev.data.fd = efd;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), 0);
	ev.data.fd = sv[0];
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev), 0);
	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	CHECK_EQ(blkring_register_eventfd(&ring, efd), 0);
	CHECK_EQ(write(sv[1], "x", 1), 1);
	reads(&ring, 8);
	while (got < 8 || !sock) {
		struct epoll_event out;
		char c;

		CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
		if (out.data.fd == sv[0]) {
			CHECK_EQ(read(sv[0], &c, 1), 1);
			sock++;
			continue;
		}
		CHECK(ev_count(efd, 0) >= 1);
		if (flags & BLKRING_SETUP_DEFER_TASKRUN) {
			struct blkring_cqe *cqe;

			/* Deferred work runs only in a wait: the eventfd said it is there. */
			CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		}
		got += reap_all(&ring);
	}
	CHECK_EQ(got, 8);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	close(efd);
	close(ep);
	close(sv[0]);
	close(sv[1]);
}

static void eventfd_epoll(void)
{
	epoll_loop(0);
}

static void eventfd_epoll_defer(void)
{
	epoll_loop(BLKRING_SETUP_DEFER_TASKRUN);
}

static void eventfd_epoll_sqpoll(void)
{
	epoll_loop(BLKRING_SETUP_SQPOLL);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-eventfd-register-rules", eventfd_register_rules, 0},
	    {"ring-eventfd-owner-and-threads", eventfd_owner_and_threads, 0},
	    {"ring-eventfd-async-threads-only", eventfd_async_threads_only, 0},
	    {"ring-eventfd-toggle", eventfd_toggle, 0},
	    {"ring-eventfd-epoll", eventfd_epoll, 20},
	    {"ring-eventfd-epoll-defer", eventfd_epoll_defer, 20},
	    {"ring-eventfd-epoll-sqpoll", eventfd_epoll_sqpoll, 20},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
