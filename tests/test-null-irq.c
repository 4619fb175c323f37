// SPDX-License-Identifier: MIT
/*
 * null irqmode=signal: completions raised as signals on the thread that
 * runs the ring's task work.  Each ring kind, rings sharing a queue, exit
 * with I/O in flight, no -EINTR from any sleep they cut short, the
 * completion wait counted, and a stress run where the handler lands in the
 * middle of the ring's own task-work pushes.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#define SIGNAL_SPEC "null:irqmode=signal,completion_nsec=20000"

static struct blkring_ring_stats stats(struct blkring *ring)
{
	struct blkring_ring_stats st;

	CHECK_EQ(blkring_ring_stats(ring, &st), 0);
	return st;
}

static void ring_on(struct blkring *ring, unsigned entries, unsigned flags,
                    struct blkring_dev **devs, unsigned nr)
{
	struct blkring_params p = {.flags = flags};

	CHECK_EQ(blkring_queue_init_params(entries, ring, &p), 0);
	CHECK_EQ(blkring_register_devices(ring, devs, nr), 0);
}

/* Reads at depth qd, `total` in all, each user_data seen exactly once,
 * every wait answered without -EINTR; wait_nr > 1 waits for that many. */
static void read_exactly_once(struct blkring *ring, unsigned qd, unsigned total, unsigned wait_nr)
{
	unsigned char *seen = calloc(total, 1);
	unsigned submitted = 0, done = 0;
	char *buf = test_alloc(4096);

	CHECK(seen);
	while (done < total) {
		struct blkring_cqe *cqe;
		unsigned want;

		while (submitted < total && submitted - done < qd) {
			struct blkring_sqe *sqe = ring_sqe(ring);

			blkring_prep_read(sqe, 0, buf, 4096, (uint64_t)(submitted % 4096) * 4096);
			sqe->user_data = submitted++;
		}
		want = submitted - done < wait_nr ? submitted - done : wait_nr;
		CHECK(blkring_submit_and_wait(ring, want) >= 0);
		while (blkring_peek_cqe(ring, &cqe) == 0) {
			CHECK_EQ(cqe->res, 4096);
			CHECK(cqe->user_data < total);
			CHECK_EQ(seen[cqe->user_data]++, 0);
			blkring_cqe_seen(ring, cqe);
			done++;
		}
	}
	free(seen);
	free(buf);
}

static void check_counted(struct blkring *ring, unsigned total)
{
	struct blkring_ring_stats st = stats(ring);

	/* Every CQE came from the interrupt's task work and waited a while. */
	CHECK_EQ(st.tw_wait_nr, total);
	CHECK(st.tw_wait_ns > 0);
}

static void one_ring(unsigned flags, unsigned wait_nr)
{
	struct blkring_dev *dev = test_open(SIGNAL_SPEC);
	struct blkring ring;

	ring_on(&ring, 64, flags, &dev, 1);
	read_exactly_once(&ring, 64, 5000, wait_nr);
	check_counted(&ring, 5000);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void irq_plain(void)
{
	one_ring(0, 1);
}

static void irq_sqpoll_prio(void)
{
	one_ring(BLKRING_SETUP_SQPOLL | BLKRING_SETUP_TW_PRIO | BLKRING_SETUP_TW_ISSUE, 1);
}

static void irq_sqpoll_noprio(void)
{
	one_ring(BLKRING_SETUP_SQPOLL | BLKRING_SETUP_TW_ISSUE, 1);
}

static void irq_defer(void)
{
	one_ring(BLKRING_SETUP_DEFER_TASKRUN, 16);
}

/* The other completion modes' task work is counted the same way; inline
 * completions are not task work. */
static void irq_wait_counted_softirq_not_inline(void)
{
	struct blkring_dev *devs[2] = {test_open("null:irqmode=softirq"),
	                               test_open("null:irqmode=none")};
	struct blkring ring;

	ring_on(&ring, 64, 0, devs, 1);
	read_exactly_once(&ring, 16, 500, 1);
	check_counted(&ring, 500);
	blkring_queue_exit(&ring);
	ring_on(&ring, 64, 0, &devs[1], 1);
	read_exactly_once(&ring, 16, 500, 1);
	CHECK_EQ(stats(&ring).tw_wait_nr, 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(devs[0]), 0);
	CHECK_EQ(blkring_dev_close(devs[1]), 0);
}

struct thread_ring {
	struct blkring_dev *dev;
	unsigned flags;
};

static void *ring_thread(void *arg)
{
	struct thread_ring *t = arg;
	struct blkring ring;

	ring_on(&ring, 32, t->flags, &t->dev, 1);
	read_exactly_once(&ring, 32, 3000, 1);
	check_counted(&ring, 3000);
	blkring_queue_exit(&ring);
	return NULL;
}

/* Several rings on one hardware queue: a timer for each (ring, queue). */
static void irq_rings_share_queue(void)
{
	struct thread_ring t[3] = {
	    {test_open(SIGNAL_SPEC ",submit_queues=1"), 0},
	    {t[0].dev, BLKRING_SETUP_SQPOLL},
	    {t[0].dev, BLKRING_SETUP_DEFER_TASKRUN},
	};
	pthread_t th[3];

	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, ring_thread, &t[i]), 0);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(blkring_dev_close(t[0].dev), 0);
}

/* Exit waits for what is in flight: an SQPOLL ring's interrupts follow the
 * ring from its stopped SQ thread to the exiting one. */
static void exit_in_flight(unsigned flags)
{
	struct blkring_dev *dev = test_open("null:irqmode=signal,completion_nsec=30000000");
	char *buf = test_alloc(4096);
	struct blkring ring;
	uint64_t start;

	ring_on(&ring, 64, flags, &dev, 1);
	for (unsigned i = 0; i < 64; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf, 4096, (uint64_t)i * 4096);
	CHECK_EQ(blkring_submit(&ring), 64);
	if (flags & BLKRING_SETUP_SQPOLL)
		while (stats(&ring).issued < 64)
			usleep(1000);
	start = test_now_ms();
	blkring_queue_exit(&ring);
	CHECK(test_now_ms() - start < 10000);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static void irq_exit_in_flight_sqpoll(void)
{
	exit_in_flight(BLKRING_SETUP_SQPOLL);
}

static void irq_exit_in_flight_plain(void)
{
	exit_in_flight(0);
}

/* Sleeps the interrupts cut short answer no -EINTR: a futex wait, a wait
 * with a signal mask (ppoll), and a ring whose file device sleeps in the
 * kernel's io_uring_enter. */
static void irq_no_eintr(void)
{
	struct blkring_dev *devs[2] = {
	    test_open("null:irqmode=signal,completion_nsec=2000000"),
	    test_open("file:/dev/shm/blkring-test-null-irq,size=1M"),
	};
	struct __kernel_timespec ts = {.tv_sec = 10};
	char *buf = test_alloc(4096);
	struct blkring_cqe *cqe;
	struct blkring ring;
	sigset_t mask;

	sigemptyset(&mask);
	ring_on(&ring, 8, 0, devs, 2);
	for (unsigned round = 0; round < 20; round++) {
		/* A timer 2 ms out fires during each sleep. */
		blkring_prep_read(ring_sqe(&ring), 0, buf, 4096, 0);
		CHECK_EQ(
		    blkring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, round % 2 ? &mask : NULL),
		    1);
		CHECK_EQ(cqe->res, 4096);
		blkring_cqe_seen(&ring, cqe);
	}
	blkring_queue_exit(&ring);
	unlink("/dev/shm/blkring-test-null-irq");
	CHECK_EQ(blkring_dev_close(devs[0]), 0);
	CHECK_EQ(blkring_dev_close(devs[1]), 0);
	free(buf);
}

/* The application's wait on an SQPOLL ring, with a signal mask, while this
 * thread's other ring has interrupts due: no -EINTR either. */
static void irq_no_eintr_other_ring(void)
{
	struct blkring_dev *sig = test_open("null:irqmode=signal,completion_nsec=1000000");
	struct blkring_dev *slow = test_open("null:irqmode=timer,completion_nsec=30000000");
	struct __kernel_timespec ts = {.tv_sec = 10};
	char *buf = test_alloc(4096);
	struct blkring a, b;
	struct blkring_cqe *cqe;
	sigset_t mask;

	sigemptyset(&mask);
	ring_on(&a, 64, 0, &sig, 1);
	ring_on(&b, 8, BLKRING_SETUP_SQPOLL, &slow, 1);
	for (unsigned i = 0; i < 16; i++)
		blkring_prep_read(ring_sqe(&a), 0, buf, 4096, (uint64_t)i * 4096);
	CHECK_EQ(blkring_submit(&a), 16);
	blkring_prep_read(ring_sqe(&b), 0, buf, 4096, 0);
	CHECK_EQ(blkring_submit_and_wait_timeout(&b, &cqe, 1, &ts, &mask), 1);
	CHECK_EQ(cqe->res, 4096);
	blkring_cqe_seen(&b, cqe);
	for (unsigned i = 0; i < 16; i++)
		CHECK_EQ(test_wait(&a, NULL, 10000), 4096);
	blkring_queue_exit(&a);
	blkring_queue_exit(&b);
	CHECK_EQ(blkring_dev_close(sig), 0);
	CHECK_EQ(blkring_dev_close(slow), 0);
	free(buf);
}

static void handler(int sig)
{
	(void)sig;
}

/* The signal is the library's: a handler already there makes open fail. */
static void irq_signal_taken(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	CHECK_EQ(sigaction(BLKRING_IRQ_SIGNAL, &sa, NULL), 0);
	test_open_fails("null:irqmode=signal", -EBUSY, "irqmode=signal", "already has a handler");
	/* Other modes do not need it. */
	CHECK_EQ(blkring_dev_close(test_open("null:irqmode=timer")), 0);
}

/* A stray BLKRING_IRQ_SIGNAL from kill(2) is no interrupt: it changes
 * nothing. */
static void irq_stray_signal(void)
{
	struct blkring_dev *dev = test_open(SIGNAL_SPEC);
	struct blkring ring;

	ring_on(&ring, 64, 0, &dev, 1);
	for (unsigned i = 0; i < 50; i++)
		CHECK_EQ(pthread_kill(pthread_self(), BLKRING_IRQ_SIGNAL), 0);
	read_exactly_once(&ring, 64, 2000, 1);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Deep queues, immediate deadlines and issues turned into task work: the
 * handler keeps landing while the ring's thread pushes its own task work,
 * takes the list and sleeps on it.  Each ring kind, rings on two threads. */
static void *stress_thread(void *arg)
{
	static const unsigned kinds[] = {
	    BLKRING_SETUP_SQPOLL | BLKRING_SETUP_TW_ISSUE | BLKRING_SETUP_TW_PRIO,
	    BLKRING_SETUP_SQPOLL | BLKRING_SETUP_TW_ISSUE,
	    BLKRING_SETUP_DEFER_TASKRUN | BLKRING_SETUP_TW_ISSUE,
	    BLKRING_SETUP_TW_ISSUE,
	};
	struct blkring_dev *dev = arg;

	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct blkring ring;

		ring_on(&ring, 256, kinds[k], &dev, 1);
		read_exactly_once(&ring, 256, 40000, k == 2 ? 32 : 1);
		check_counted(&ring, 40000);
		blkring_queue_exit(&ring);
	}
	return NULL;
}

static void irq_stress(void)
{
	struct blkring_dev *devs[2] = {
	    test_open("null:irqmode=signal,completion_nsec=0,submit_queues=2"),
	    test_open("null:irqmode=signal,completion_nsec=3000,submit_queues=1"),
	};
	pthread_t th[2];

	for (unsigned i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, stress_thread, devs[i]), 0);
	for (unsigned i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(blkring_dev_close(devs[0]), 0);
	CHECK_EQ(blkring_dev_close(devs[1]), 0);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"null-irq-plain", irq_plain, 0},
	    {"null-irq-sqpoll-prio", irq_sqpoll_prio, 0},
	    {"null-irq-sqpoll-noprio", irq_sqpoll_noprio, 0},
	    {"null-irq-defer", irq_defer, 0},
	    {"null-irq-wait-counted-softirq-not-inline", irq_wait_counted_softirq_not_inline, 0},
	    {"null-irq-rings-share-queue", irq_rings_share_queue, 0},
	    {"null-irq-exit-in-flight-sqpoll", irq_exit_in_flight_sqpoll, 0},
	    {"null-irq-exit-in-flight-plain", irq_exit_in_flight_plain, 0},
	    {"null-irq-no-eintr", irq_no_eintr, 0},
	    {"null-irq-no-eintr-other-ring", irq_no_eintr_other_ring, 0},
	    {"null-irq-signal-taken", irq_signal_taken, 0},
	    {"null-irq-stray-signal", irq_stray_signal, 0},
	    {"null-irq-stress", irq_stress, 120},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
