// SPDX-License-Identifier: MIT
/*
 * IOPOLL rings over null devices: polled reads and writes complete only
 * when the owner polls, with no task work and no sleep; devices without
 * poll queues refuse them; other opcodes complete by the interrupt path;
 * exit polls what is in flight; a held (busy) queue is skipped; many rings
 * poll one queue and each completion is delivered exactly once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

#define BS 4096

static struct blkring_ring_stats poll_stats(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st;
}

static void poll_ring(struct blkring *ring, unsigned entries, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(entries, ring, BLKRING_SETUP_IOPOLL), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

static void poll_close(struct blkring *ring, struct blkring_dev *dev)
{
	blkring_queue_exit(ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static char *poll_buf(size_t size)
{
	char *p = aligned_alloc(BS, size);

	CHECK(p);
	memset(p, 0, size);
	return p;
}

static struct blkring_hctx *poll_hctx(struct blkring_dev *dev, unsigned i)
{
	return &dev->hctxs[dev->nr_hw_queues + i];
}

/* Reads at depth qd, `total` in all; each user_data must come back once. */
static void poll_read_many(struct blkring *ring, char *buf, unsigned qd, unsigned total)
{
	uint8_t *seen = calloc(total, 1);
	unsigned submitted = 0, done = 0;

	CHECK(seen);
	while (done < total) {
		struct blkring_cqe *cqe;

		while (submitted < total && submitted - done < qd) {
			struct blkring_sqe *sqe = ring_sqe(ring);

			blkring_prep_read(sqe, 0, buf + (submitted % qd) * BS, BS,
			                  (uint64_t)(submitted * 7919 % 4096) * BS);
			sqe->user_data = submitted++;
		}
		CHECK(blkring_submit(ring) >= 0);
		CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
		CHECK_EQ(cqe->res, BS);
		CHECK(cqe->user_data < total);
		CHECK_EQ(seen[cqe->user_data]++, 0);
		blkring_cqe_seen(ring, cqe);
		done++;
	}
	free(seen);
}

/* Completed by the owner's polling: no task work, no sleep, poll queue only. */
static void poll_completes_without_thread(void)
{
	struct blkring_dev *dev = test_open("null:size=16M,irqmode=softirq,poll_queues=1,name=p1");
	struct blkring ring;
	char *buf = poll_buf(32 * BS);

	poll_ring(&ring, 32, dev);
	poll_read_many(&ring, buf, 32, 5000);
	CHECK_EQ(poll_stats(&ring).tw_run, 0);
	CHECK_EQ(poll_stats(&ring).sleeps, 0);
	CHECK_EQ(atomic_load(&dev->hctxs[0].inflight), 0);
	poll_close(&ring, dev);
	free(buf);
}

/* RWF_HIPRI asks for what an IOPOLL ring does anyway: accepted. */
static void poll_hipri_accepted(void)
{
	struct blkring_dev *dev = test_open("null:size=16M,irqmode=softirq,poll_queues=1,name=hp");
	struct blkring_sqe *sqe;
	struct blkring_cqe *cqe;
	struct blkring ring;
	char *buf = poll_buf(BS);

	poll_ring(&ring, 8, dev);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, BS, 0);
	sqe->rw_flags = BLKRING_RWF_HIPRI;
	CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), 0);
	CHECK_EQ(cqe->res, BS);
	blkring_cqe_seen(&ring, cqe);
	poll_close(&ring, dev);
	free(buf);
}

/* A request waits in its poll queue until polled: peek polls once. */
static void poll_peek_polls(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=1,name=peek");
	struct blkring ring;
	struct blkring_cqe *cqe;
	char *buf = poll_buf(BS);

	poll_ring(&ring, 8, dev);
	blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	CHECK_EQ(blkring__dev_inflight(dev), 1);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), 0);
	CHECK_EQ(cqe->res, BS);
	blkring_cqe_seen(&ring, cqe);
	poll_close(&ring, dev);
	free(buf);
}

/* Data goes through poll queues both ways, with read, write, readv, writev. */
static void poll_data_round_trip(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=1M,memory_backed=1,poll_queues=2,submit_queues=2,name=data");
	struct blkring ring;
	char *w = poll_buf(4 * BS), *r = poll_buf(4 * BS);
	struct iovec wv[2] = {{w + 2 * BS, BS}, {w + 3 * BS, BS}};
	struct iovec rv[2] = {{r + 2 * BS, BS}, {r + 3 * BS, BS}};

	for (unsigned i = 0; i < 4 * BS; i++)
		w[i] = (char)(i * 31 + 7);
	poll_ring(&ring, 8, dev);
	blkring_prep_write(ring_sqe(&ring), 0, w, 2 * BS, 0);
	blkring_prep_writev(ring_sqe(&ring), 0, wv, 2, 2 * BS);
	CHECK_EQ(blkring_submit_and_wait(&ring, 2), 2);
	CHECK_EQ(ring_reap(&ring).res, 2 * BS);
	CHECK_EQ(ring_reap(&ring).res, 2 * BS);
	blkring_prep_read(ring_sqe(&ring), 0, r, 2 * BS, 0);
	blkring_prep_readv(ring_sqe(&ring), 0, rv, 2, 2 * BS);
	CHECK_EQ(blkring_submit_and_wait(&ring, 2), 2);
	CHECK_EQ(ring_reap(&ring).res, 2 * BS);
	CHECK_EQ(ring_reap(&ring).res, 2 * BS);
	CHECK(!memcmp(w, r, 4 * BS));
	CHECK_EQ(poll_stats(&ring).tw_run, 0);
	poll_close(&ring, dev);
	free(w);
	free(r);
}

/* As Linux: polled I/O to a device without poll queues is -EOPNOTSUPP. */
static void poll_eopnotsupp_without_poll_queues(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=0,name=nopoll");
	struct blkring ring;
	char *buf = poll_buf(BS);
	struct iovec iov = {buf, BS};

	poll_ring(&ring, 8, dev);
	blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
	blkring_prep_write(ring_sqe(&ring), 0, buf, BS, 0);
	blkring_prep_readv(ring_sqe(&ring), 0, &iov, 1, 0);
	CHECK_EQ(blkring_submit_and_wait(&ring, 3), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ring_reap(&ring).res, -EOPNOTSUPP);
	/* A flush is not polled: it completes. */
	blkring_prep_fsync(ring_sqe(&ring), 0, 0);
	CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
	CHECK_EQ(ring_reap(&ring).res, 0);
	poll_close(&ring, dev);
	free(buf);
}

/* Discards, write zeroes, flushes and NOPs take the interrupt path, next to
 * polled reads in flight, and nothing hangs. */
static void poll_commands_by_interrupt(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,memory_backed=1,discard=1,write_zeroes=1,"
	                                    "irqmode=softirq,name=cmds");
	struct blkring ring;
	char *buf = poll_buf(4 * BS), *zero = poll_buf(4 * BS);

	memset(buf, 0xab, 4 * BS);
	poll_ring(&ring, 16, dev);
	blkring_prep_write(ring_sqe(&ring), 0, buf, 4 * BS, 0);
	CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
	CHECK_EQ(ring_reap(&ring).res, 4 * BS);

	blkring_prep_read(ring_sqe(&ring), 0, buf, BS, 0);
	blkring_prep_cmd_discard(ring_sqe(&ring), 0, BS, BS);
	blkring_prep_cmd_write_zeroes(ring_sqe(&ring), 0, 2 * BS, BS, BLKRING_ZERO_NOUNMAP);
	blkring_prep_fsync(ring_sqe(&ring), 0, 0);
	blkring_prep_nop(ring_sqe(&ring));
	blkring_prep_read(ring_sqe(&ring), 0, buf + BS, BS, 3 * BS);
	CHECK_EQ(blkring_submit_and_wait(&ring, 6), 6);
	for (int i = 0; i < 6; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK(cqe.res == 0 || cqe.res == BS);
	}
	blkring_prep_read(ring_sqe(&ring), 0, buf, 2 * BS, BS);
	CHECK_EQ(blkring_submit_and_wait(&ring, 1), 1);
	CHECK_EQ(ring_reap(&ring).res, 2 * BS);
	CHECK(!memcmp(buf, zero, 2 * BS));
	poll_close(&ring, dev);
	free(buf);
	free(zero);
}

/* Exit with polled I/O in flight polls it to completion. */
static void poll_exit_with_inflight(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=1,name=exit");
	struct blkring ring;
	char *buf = poll_buf(64 * BS);

	poll_ring(&ring, 64, dev);
	for (unsigned i = 0; i < 64; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf + i * BS, BS, (uint64_t)i * BS);
	CHECK_EQ(blkring_submit(&ring), 64);
	CHECK_EQ(blkring__dev_inflight(dev), 64);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Timer mode: requests become ready later; the waiter spins until then. */
static void poll_timer_mode_spins(void)
{
	struct blkring_dev *dev =
	    test_open("null:size=16M,irqmode=timer,completion_nsec=200000,name=timer");
	struct blkring ring;
	char *buf = poll_buf(8 * BS);

	poll_ring(&ring, 8, dev);
	poll_read_many(&ring, buf, 8, 200);
	CHECK_EQ(poll_stats(&ring).sleeps, 0);
	CHECK_EQ(poll_stats(&ring).tw_run, 0);
	poll_close(&ring, dev);
	free(buf);
}

/* ASYNC: a worker issues the polled read; the owner still polls it. */
static void poll_async_issue(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=1,name=async");
	struct blkring ring;
	char *buf = poll_buf(16 * BS);

	poll_ring(&ring, 16, dev);
	for (unsigned i = 0; i < 16; i++) {
		struct blkring_sqe *sqe = ring_sqe(&ring);

		blkring_prep_read(sqe, 0, buf + i * BS, BS, (uint64_t)i * BS);
		blkring_sqe_set_flags(sqe, BLKRING_SQE_ASYNC);
	}
	CHECK_EQ(blkring_submit_and_wait(&ring, 16), 16);
	for (unsigned i = 0; i < 16; i++)
		CHECK_EQ(ring_reap(&ring).res, BS);
	CHECK_EQ(poll_stats(&ring).async, 16);
	poll_close(&ring, dev);
	free(buf);
}

/* A link's next request starts once the polled one before it completed. */
static void poll_links(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=0,name=links-nopoll");
	struct blkring_dev *pdev = test_open("null:size=1M,poll_queues=1,name=links");
	struct blkring_dev *devs[2] = {pdev, dev};
	struct blkring ring;
	char *buf = poll_buf(4 * BS);
	struct blkring_sqe *sqe;

	CHECK_EQ(blkring_queue_init(8, &ring, BLKRING_SETUP_IOPOLL), 0);
	CHECK_EQ(blkring_register_devices(&ring, devs, 2), 0);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, BS, 0);
	blkring_sqe_set_flags(sqe, BLKRING_SQE_IO_LINK);
	sqe->user_data = 1;
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf + BS, BS, BS);
	blkring_sqe_set_flags(sqe, BLKRING_SQE_IO_LINK);
	sqe->user_data = 2;
	/* Fails: its device cannot poll, so the chain's rest is cancelled. */
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 1, buf + 2 * BS, BS, 0);
	blkring_sqe_set_flags(sqe, BLKRING_SQE_IO_LINK);
	sqe->user_data = 3;
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf + 3 * BS, BS, 0);
	sqe->user_data = 4;
	CHECK_EQ(blkring_submit_and_wait(&ring, 4), 4);
	for (uint64_t i = 1; i <= 4; i++) {
		struct blkring_cqe cqe = ring_reap(&ring);

		CHECK_EQ(cqe.user_data, i);
		CHECK_EQ(cqe.res, i < 3 ? BS : i == 3 ? -EOPNOTSUPP : -ECANCELED);
	}
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(blkring_dev_close(pdev), 0);
	free(buf);
}

/* More polled completions than the CQ holds: overflow, none lost. */
static void poll_overflow(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=1,name=ovf");
	struct blkring_params p = {.flags = BLKRING_SETUP_IOPOLL | BLKRING_SETUP_CQSIZE,
	                           .cq_entries = 16};
	struct blkring ring;
	char *buf = poll_buf(BS);
	uint8_t seen[32] = {0};
	unsigned got = 0;

	CHECK_EQ(blkring_queue_init_params(16, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < 16; i++) {
			struct blkring_sqe *sqe = ring_sqe(&ring);

			blkring_prep_read(sqe, 0, buf, BS, 0);
			sqe->user_data = round * 16 + i;
		}
		CHECK_EQ(blkring_submit(&ring), 16);
	}
	while (got < 32) {
		struct blkring_cqe *cqe;

		CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
		CHECK_EQ(cqe->res, BS);
		CHECK_EQ(seen[cqe->user_data]++, 0);
		blkring_cqe_seen(&ring, cqe);
		got++;
	}
	CHECK_EQ(poll_stats(&ring).overflowed, 16);
	poll_close(&ring, dev);
	free(buf);
}

/* A queue another poller holds is skipped: nothing completes (the wait
 * times out, spinning) until it is let go. */
static void poll_busy_queue_skipped(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,poll_queues=1,name=busy");
	struct blkring_hctx *hctx = poll_hctx(dev, 0);
	struct __kernel_timespec ts = {0, 20 * 1000 * 1000};
	struct blkring ring;
	struct blkring_cqe *cqe;
	char *buf = poll_buf(8 * BS);

	poll_ring(&ring, 8, dev);
	CHECK(blkring__hctx_trylock_poll(hctx));
	for (unsigned i = 0; i < 8; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf + i * BS, BS, (uint64_t)i * BS);
	CHECK_EQ(blkring_submit(&ring), 8);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK_EQ(blkring_cq_ready(&ring), 0);
	CHECK_EQ(poll_stats(&ring).sleeps, 0);
	blkring__hctx_unlock_poll(hctx);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 8, NULL, NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), 8);
	poll_close(&ring, dev);
	free(buf);
}

/* ---- many rings, one device ---- */

#define RINGS 4
#define PER_RING 3000

struct poller {
	struct blkring_dev *dev;
	pthread_t thread;
	unsigned id;
	uint32_t tw_run;
};

static void *poller_run(void *arg)
{
	struct poller *p = arg;
	struct blkring ring;
	char *buf = poll_buf(32 * BS);

	poll_ring(&ring, 32, p->dev);
	poll_read_many(&ring, buf, 32, PER_RING);
	p->tw_run = (uint32_t)poll_stats(&ring).tw_run;
	blkring_queue_exit(&ring);
	free(buf);
	return NULL;
}

/*
 * Rings on several threads poll the same queue: each one's polling ends
 * the others' bios too, and a ring skips the queue while another holds it.
 * Every CQE reaches its own ring exactly once (poll_read_many checks).
 */
static void poll_many_rings_one_device(void)
{
	struct blkring_dev *dev = test_open("null:size=16M,poll_queues=1,name=many");
	struct poller p[RINGS];

	for (unsigned i = 0; i < RINGS; i++) {
		p[i] = (struct poller){.dev = dev, .id = i};
		CHECK_EQ(pthread_create(&p[i].thread, NULL, poller_run, &p[i]), 0);
	}
	for (unsigned i = 0; i < RINGS; i++) {
		pthread_join(p[i].thread, NULL);
		CHECK_EQ(p[i].tw_run, 0);
	}
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

struct holder {
	struct blkring_hctx *hctx;
	_Atomic bool stop;
	_Atomic unsigned held;
};

/* Takes and lets go of the queue's busy flag over and over, as a rival
 * poller would. */
static void *holder_run(void *arg)
{
	struct holder *h = arg;

	while (!atomic_load(&h->stop)) {
		if (blkring__hctx_trylock_poll(h->hctx)) {
			atomic_fetch_add(&h->held, 1);
			usleep(50);
			blkring__hctx_unlock_poll(h->hctx);
		}
		usleep(50);
	}
	return NULL;
}

/* A ring keeps making progress while a rival holds its queue on and off:
 * it runs until the rival held the queue a few times. */
static void poll_with_rival_holder(void)
{
	struct blkring_dev *dev = test_open("null:size=16M,poll_queues=1,name=rival");
	struct holder h = {.hctx = poll_hctx(dev, 0)};
	struct blkring ring;
	char *buf = poll_buf(16 * BS);
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, holder_run, &h), 0);
	poll_ring(&ring, 16, dev);
	while (atomic_load(&h.held) < 20)
		poll_read_many(&ring, buf, 16, 200);
	atomic_store(&h.stop, true);
	pthread_join(t, NULL);
	poll_close(&ring, dev);
	free(buf);
}

static const struct test_case cases[] = {
    {"poll_completes_without_thread", poll_completes_without_thread, 0},
    {"poll_hipri_accepted", poll_hipri_accepted, 0},
    {"poll_peek_polls", poll_peek_polls, 0},
    {"poll_data_round_trip", poll_data_round_trip, 0},
    {"poll_eopnotsupp_without_poll_queues", poll_eopnotsupp_without_poll_queues, 0},
    {"poll_commands_by_interrupt", poll_commands_by_interrupt, 0},
    {"poll_exit_with_inflight", poll_exit_with_inflight, 0},
    {"poll_timer_mode_spins", poll_timer_mode_spins, 0},
    {"poll_async_issue", poll_async_issue, 0},
    {"poll_links", poll_links, 0},
    {"poll_overflow", poll_overflow, 0},
    {"poll_busy_queue_skipped", poll_busy_queue_skipped, 0},
    {"poll_many_rings_one_device", poll_many_rings_one_device, 0},
    {"poll_with_rival_holder", poll_with_rival_holder, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
