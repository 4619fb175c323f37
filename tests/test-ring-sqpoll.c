// SPDX-License-Identifier: MIT
/*
 * SQPOLL: the ring's SQ thread consumes SQEs, issues, runs task work and
 * posts CQEs while the application submits and reaps from its own thread;
 * the SQ thread sleeps after sq_thread_idle with NEED_WAKEUP set and submit
 * wakes it; other threads are refused; exit is safe while it works.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

static char buf[512];

static struct blkring_ring_stats stats(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st;
}

static void sq_ring(struct blkring *ring, unsigned entries, unsigned flags, unsigned idle_ms)
{
	struct blkring_params p = {.flags = flags | BLKRING_SETUP_SQPOLL,
	                           .sq_thread_idle = idle_ms};

	CHECK_EQ(blkring_queue_init_params(entries, ring, &p), 0);
}

static void queue_reads(struct blkring *ring, unsigned n, uint64_t first)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(ring);

		blkring_prep_read(sqe, 0, buf, sizeof(buf), 0);
		sqe->user_data = first + i;
	}
}

/* Reads completing inline (on the SQ thread) and on a device thread. */
static void sqpoll_basic(void)
{
	enum { N = 64 };
	static const char *const specs[] = {"null:irqmode=none", "null:irqmode=softirq"};

	for (unsigned s = 0; s < 2; s++) {
		struct blkring_dev *dev = test_open(specs[s]);
		struct blkring ring;

		sq_ring(&ring, N, 0, 0);
		CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
		queue_reads(&ring, N, 0);
		CHECK_EQ(blkring_submit(&ring), N);
		for (unsigned i = 0; i < N; i++) {
			struct blkring_cqe cqe = ring_reap(&ring);

			CHECK_EQ(cqe.res, sizeof(buf));
			if (s == 0) /* one issuer, inline completions: in order */
				CHECK_EQ(cqe.user_data, i);
		}
		CHECK_EQ(stats(&ring).issued, N);
		CHECK_EQ(blkring_unregister_devices(&ring), 0);
		blkring_queue_exit(&ring);
		CHECK_EQ(blkring_dev_close(dev), 0);
	}
}

/* What another thread tries on an SQPOLL ring. */
struct other {
	struct blkring *ring;
	struct blkring_dev *dev;
	int submit, wait, reg, unreg;
	unsigned peeked;
};

static void *other_thread(void *arg)
{
	struct other *o = arg;
	struct blkring_cqe *cqes[4];

	o->submit = blkring_submit(o->ring);
	o->wait = blkring_wait_cqes(o->ring, cqes, 1, NULL, NULL);
	o->reg = blkring_register_devices(o->ring, &o->dev, 1);
	o->unreg = blkring_unregister_devices(o->ring);
	o->peeked = blkring_peek_batch_cqe(o->ring, cqes, 4);
	return NULL;
}

/* The application's thread submits, waits and registers; others may only look. */
static void sqpoll_owner_rules(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct other o = {&ring, fake->dev, 0, 0, 0, 0, 0};
	struct blkring_cqe *cqe;
	pthread_t t;

	sq_ring(&ring, 8, 0, 1);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	queue_reads(&ring, 1, 7);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
	CHECK_EQ(pthread_create(&t, NULL, other_thread, &o), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(o.submit, -EEXIST);
	CHECK_EQ(o.wait, -EEXIST);
	CHECK_EQ(o.reg, -EEXIST);
	CHECK_EQ(o.unreg, -EEXIST);
	CHECK_EQ(o.peeked, 1);
	CHECK_EQ(ring_reap(&ring).user_data, 7);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static bool need_wakeup(struct blkring *ring)
{
	return atomic_load_explicit(ring->sq.kflags, memory_order_acquire) & BLKRING_SQ_NEED_WAKEUP;
}

/*
 * After sq_thread_idle without work the thread sleeps and says so; each
 * submit then wakes it.  Nothing else could: nothing is in flight.
 */
static void sqpoll_sleep_and_wake(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	sq_ring(&ring, 8, 0, 1);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned round = 0; round < 20; round++) {
		/* The thread raises the flag, then counts its sleep: wait for both
		 * (a thread that never sleeps fails this case by its time limit). */
		while (!need_wakeup(&ring) || stats(&ring).sleeps <= round)
			usleep(200);
		CHECK(need_wakeup(&ring));
		queue_reads(&ring, 1, round);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(ring_reap(&ring).user_data, round);
	}
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Submits racing with the thread's going to sleep: none is missed. */
static void sqpoll_wake_races(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;

	sq_ring(&ring, 8, 0, 1);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned i = 0; i < 300; i++) {
		usleep(i % 7 * 300);
		queue_reads(&ring, 1, i);
		CHECK_EQ(blkring_submit(&ring), 1);
		CHECK_EQ(ring_reap(&ring).user_data, i);
	}
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

struct ender {
	struct fake_dev *fake;
	unsigned n;
};

static void *end_later(void *arg)
{
	struct ender *e = arg;

	usleep(20000);
	ring_fake_end(e->fake, e->n, 0);
	return NULL;
}

/* The application sleeps until its wait_nr CQEs are there, and times out. */
static void sqpoll_app_waits(void)
{
	enum { N = 8 };
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct __kernel_timespec ts = {0, 10 * 1000 * 1000};
	struct ender e = {fake, N};
	struct blkring_cqe *cqe;
	struct blkring ring;
	pthread_t t;

	sq_ring(&ring, N, 0, 1);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	queue_reads(&ring, N, 0);
	CHECK_EQ(blkring_submit(&ring), N);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK(!cqe);
	CHECK_EQ(pthread_create(&t, NULL, end_later, &e), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, N, NULL, NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), N);
	CHECK_EQ(pthread_join(t, NULL), 0);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Registering parks the thread; unregistering sees what is in flight. */
static void sqpoll_register_parks(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring_cqe *cqe;
	struct blkring ring;

	sq_ring(&ring, 8, 0, 1);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), -EBUSY);
	queue_reads(&ring, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 2);
	ring_fake_wait_submitted(fake, 2);
	CHECK_EQ(blkring_unregister_devices(&ring), -EBUSY);
	ring_fake_end_from_thread(fake, 2, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 2, NULL, NULL), 0);
	CHECK_EQ(blkring_unregister_devices(&ring), 0);
	queue_reads(&ring, 1, 9);
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, sizeof(buf));
	CHECK_EQ(ring_reap(&ring).res, sizeof(buf));
	CHECK_EQ(ring_reap(&ring).res, -EBADF);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/*
 * A CQ that overflows: the SQ thread consumes no more SQEs until the
 * application reaps, then moves the overflowed CQEs in, in order, and goes on.
 */
static void sqpoll_overflow(void)
{
	enum { SQ = 8 };
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring_params p = {.flags = BLKRING_SETUP_SQPOLL | BLKRING_SETUP_CQSIZE,
	                           .cq_entries = SQ,
	                           .sq_thread_idle = 1};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(SQ, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	for (unsigned r = 0; r < 3; r++) {
		while (blkring_sq_space_left(&ring) < SQ)
			usleep(100);
		queue_reads(&ring, SQ, r * SQ);
		CHECK_EQ(blkring_submit(&ring), SQ);
	}
	for (unsigned i = 0; i < 3 * SQ; i++)
		CHECK_EQ(ring_reap(&ring).user_data, i);
	CHECK(stats(&ring).overflowed >= SQ); /* round 1 at least: nothing was reaped */
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Exit while the thread works through SQEs, issues and completions. */
static void sqpoll_exit_busy(void)
{
	static const unsigned flag_sets[] = {
	    0,
	    BLKRING_SETUP_TW_ISSUE,
	    BLKRING_SETUP_TW_ISSUE | BLKRING_SETUP_TW_PRIO,
	};
	struct blkring_dev *dev = test_open("null:irqmode=softirq,hw_queue_depth=256");

	for (unsigned round = 0; round < 30; round++) {
		struct blkring ring;

		sq_ring(&ring, 1024, flag_sets[round % 3], 0);
		CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
		queue_reads(&ring, 1024, 0);
		CHECK_EQ(blkring_submit(&ring), 1024);
		if (round % 2)
			usleep(round * 50);
		blkring_queue_exit(&ring);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Exit while the thread sleeps: the thread is gone when exit returns. */
static void sqpoll_exit_asleep(void)
{
	struct blkring ring;

	sq_ring(&ring, 8, 0, 1);
	while (!need_wakeup(&ring))
		usleep(200);
	CHECK_EQ(test_threads_with("comm", "blkring-sq\n"), 1);
	blkring_queue_exit(&ring);
	/* The join returns once the thread has run its last instruction; the
	 * kernel takes its /proc entry away a moment later. */
	for (int i = 0; i < 1000 && test_threads_with("comm", "blkring-sq\n"); i++)
		usleep(1000);
	CHECK_EQ(test_threads_with("comm", "blkring-sq\n"), 0);
}

/* Completions from device threads and issues as task work, with and
 * without the priority list: each CQE exactly once. */
static void sqpoll_many(void)
{
	enum { N = 20000, DEPTH = 256 };
	static bool seen[N];
	struct blkring_dev *dev = test_open("null:irqmode=softirq,submit_queues=2");

	for (unsigned prio = 0; prio < 2; prio++) {
		unsigned next = 0, done = 0;
		struct blkring ring;

		memset(seen, 0, sizeof(seen));
		sq_ring(&ring, DEPTH, BLKRING_SETUP_TW_ISSUE | (prio ? BLKRING_SETUP_TW_PRIO : 0),
		        1);
		CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
		while (done < N) {
			struct blkring_cqe *cqe;
			unsigned head, n = 0;

			while (next < N && next - done < DEPTH) {
				queue_reads(&ring, 1, next++);
				CHECK_EQ(blkring_submit(&ring), 1);
			}
			CHECK_EQ(blkring_wait_cqe(&ring, &cqe), 0);
			blkring_for_each_cqe (&ring, head, cqe) {
				CHECK(cqe->user_data < N && !seen[cqe->user_data]);
				CHECK_EQ(cqe->res, sizeof(buf));
				seen[cqe->user_data] = true;
				n++;
			}
			blkring_cq_advance(&ring, n);
			done += n;
		}
		CHECK_EQ(blkring_unregister_devices(&ring), 0);
		blkring_queue_exit(&ring);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/*
 * SQPOLL with IOPOLL: polled reads complete only when polled, and the SQ
 * thread is the one that polls; it must not sleep with them in flight
 * (sq_thread_idle 1 ms, far shorter than the run).  Exit with polled I/O
 * in flight polls it to completion.
 */
static void sqpoll_iopoll(void)
{
	enum { N = 2000, DEPTH = 32 };
	struct blkring_dev *dev = test_open("null:size=16M,poll_queues=1,name=sqiopoll");
	unsigned next = 0, done = 0;
	struct blkring ring;

	sq_ring(&ring, DEPTH, BLKRING_SETUP_IOPOLL, 1);
	CHECK_EQ(blkring_register_devices(&ring, &dev, 1), 0);
	while (done < N) {
		struct blkring_cqe cqe;

		while (next < N && next - done < DEPTH) {
			queue_reads(&ring, 1, next++);
			CHECK_EQ(blkring_submit(&ring), 1);
		}
		cqe = ring_reap(&ring);
		CHECK_EQ(cqe.res, sizeof(buf));
		done++;
	}
	queue_reads(&ring, DEPTH, N);
	CHECK_EQ(blkring_submit(&ring), DEPTH);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* SQ_AFF needs SQPOLL and a CPU that exists. */
static void sqpoll_affinity(void)
{
	struct blkring_params p = {.flags = BLKRING_SETUP_SQ_AFF};
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), -EINVAL);
	CHECK(strstr(blkring_last_error(), "SQPOLL"));
	p.flags = BLKRING_SETUP_SQPOLL | BLKRING_SETUP_SQ_AFF;
	p.sq_thread_cpu = 1U << 20;
	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), -EINVAL);
	CHECK(strstr(blkring_last_error(), "sq_thread_cpu"));
	p.sq_thread_cpu = 0;
	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, 0);
	blkring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-sqpoll-basic", sqpoll_basic, 0},
	    {"ring-sqpoll-owner-rules", sqpoll_owner_rules, 0},
	    {"ring-sqpoll-sleep-and-wake", sqpoll_sleep_and_wake, 0},
	    {"ring-sqpoll-wake-races", sqpoll_wake_races, 0},
	    {"ring-sqpoll-app-waits", sqpoll_app_waits, 0},
	    {"ring-sqpoll-register-parks", sqpoll_register_parks, 0},
	    {"ring-sqpoll-overflow", sqpoll_overflow, 0},
	    {"ring-sqpoll-exit-busy", sqpoll_exit_busy, 0},
	    {"ring-sqpoll-exit-asleep", sqpoll_exit_asleep, 0},
	    {"ring-sqpoll-many", sqpoll_many, 0},
	    {"ring-sqpoll-iopoll", sqpoll_iopoll, 0},
	    {"ring-sqpoll-affinity", sqpoll_affinity, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
