// SPDX-License-Identifier: MIT
/* Waiting: wait_cqes with and without a timeout or a signal mask,
 * submit_and_wait, wakes from completions on other threads. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "ring-fake.h"
#include "test.h"

static char buf[512];

static void wait_timeout_empty(void)
{
	struct blkring ring;
	struct blkring_cqe *cqe = (void *)1;
	struct __kernel_timespec ts = {0, 10 * 1000 * 1000};
	struct __kernel_timespec zero = {0, 0};

	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK(cqe == NULL);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &zero, NULL), -ETIME);
	/* wait_nr 0 only looks. */
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 0, &ts, NULL), -EAGAIN);
	blkring_queue_exit(&ring);
}

/* Fewer than asked for: -ETIME, with the first ready CQE handed back. */
static void wait_timeout_partial(void)
{
	struct blkring ring;
	struct blkring_cqe *cqe = NULL;
	struct __kernel_timespec ts = {0, 5 * 1000 * 1000};

	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	for (unsigned i = 0; i < 2; i++) {
		blkring_prep_nop(ring_sqe(&ring));
		ring.sq.sqes[i].user_data = 10 + i;
	}
	CHECK_EQ(blkring_submit(&ring), 2);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 3, &ts, NULL), -ETIME);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 10);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 2, &ts, NULL), 0);
	CHECK_EQ(cqe->user_data, 10);
	blkring_queue_exit(&ring);
}

static void wait_bad_timeout(void)
{
	struct blkring ring;
	struct blkring_cqe *cqe;
	struct __kernel_timespec bad = {0, 1000000000L};
	struct __kernel_timespec negative = {-1, 0};

	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &bad, NULL), -EINVAL);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &negative, NULL), -EINVAL);
	blkring_queue_exit(&ring);
}

struct ender {
	struct blkring *ring;
	struct fake_dev *fake;
	unsigned n;
};

static void *end_when_asleep(void *arg)
{
	struct ender *e = arg;
	struct blkring_ring_stats st;

	do {
		usleep(100);
		CHECK_EQ(blkring_ring_stats(e->ring, &st), 0);
	} while (!st.sleeps);
	ring_fake_end(e->fake, e->n, 0);
	return NULL;
}

static void submit_reads(struct blkring *ring, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		blkring_prep_read(ring_sqe(ring), 0, buf, sizeof(buf), 0);
}

/* A completion on another thread ends a wait that has time left. */
static void wait_woken_before_timeout(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct ender e = {&ring, fake, 4};
	struct blkring_cqe *cqe;
	struct __kernel_timespec ts = {60, 0};
	pthread_t t;

	ring_fake_ring(&ring, 4, fake);
	submit_reads(&ring, 4);
	CHECK_EQ(blkring_submit(&ring), 4);
	CHECK_EQ(pthread_create(&t, NULL, end_when_asleep, &e), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 4, &ts, NULL), 0);
	CHECK_EQ(blkring_cq_ready(&ring), 4);
	CHECK_EQ(pthread_join(t, NULL), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void wait_submit_and_wait(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct ender e = {&ring, fake, 4};
	pthread_t t;

	ring_fake_ring(&ring, 4, fake);
	submit_reads(&ring, 4);
	CHECK_EQ(pthread_create(&t, NULL, end_when_asleep, &e), 0);
	CHECK_EQ(blkring_submit_and_wait(&ring, 4), 4);
	CHECK_EQ(blkring_cq_ready(&ring), 4);
	CHECK_EQ(pthread_join(t, NULL), 0);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct signaller {
	struct blkring *ring;
	pthread_t target;
};

static void *signal_when_asleep(void *arg)
{
	struct signaller *s = arg;
	struct blkring_ring_stats st;

	do {
		usleep(100);
		CHECK_EQ(blkring_ring_stats(s->ring, &st), 0);
	} while (!st.sleeps);
	pthread_kill(s->target, SIGUSR1);
	return NULL;
}

/* A signal handler that runs while the owner sleeps ends the wait, as it
 * ends io_uring_enter, so a program can notice its Ctrl-C. */
static void wait_interrupted(void)
{
	struct blkring ring;
	struct blkring_cqe *cqe = (void *)1;
	struct sigaction sa = {.sa_handler = on_usr1};
	struct signaller s = {&ring, pthread_self()};
	pthread_t t;

	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(blkring_queue_init(4, &ring, 0), 0);
	CHECK_EQ(pthread_create(&t, NULL, signal_when_asleep, &s), 0);
	CHECK_EQ(blkring_wait_cqe(&ring, &cqe), -EINTR);
	CHECK(cqe == NULL);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/* The ring works on. */
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(ring_reap(&ring).res, 0);
	blkring_queue_exit(&ring);
}

static volatile sig_atomic_t usr1_seen;

static void count_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

/*
 * pselect's rule: SIGUSR1, blocked and already pending, is delivered by the
 * wait's mask at its sleep and ends it at once; outside the wait it stays
 * blocked.  Without the mask the same wait runs to its timeout.
 */
static void sigmask_wait(unsigned flags)
{
	struct sigaction sa = {.sa_handler = count_usr1};
	struct blkring_params p = {.flags = flags, .sq_thread_idle = 10};
	struct __kernel_timespec ts = {0, 20 * 1000 * 1000};
	sigset_t usr1, during, now;
	struct blkring_cqe *cqe;
	struct blkring ring;

	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &during), 0);
	sigdelset(&during, SIGUSR1);
	CHECK_EQ(blkring_queue_init_params(4, &ring, &p), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	usr1_seen = 0;
	CHECK_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME);
	CHECK_EQ(usr1_seen, 0);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, NULL, &during), -EINTR);
	CHECK_EQ(usr1_seen, 1);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	CHECK(sigismember(&now, SIGUSR1));
	/* The ring works on; a wait with a mask still gets its CQEs. */
	blkring_prep_nop(ring_sqe(&ring));
	CHECK_EQ(blkring_submit(&ring), 1);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, NULL, &during), 0);
	CHECK_EQ(cqe->res, 0);
	blkring_cqe_seen(&ring, cqe);
	blkring_queue_exit(&ring);
}

static void wait_sigmask(void)
{
	sigmask_wait(0);
}

static void wait_sigmask_defer(void)
{
	sigmask_wait(BLKRING_SETUP_DEFER_TASKRUN);
}

static void wait_sigmask_sqpoll(void)
{
	sigmask_wait(BLKRING_SETUP_SQPOLL);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-wait-timeout-empty", wait_timeout_empty, 0},
	    {"ring-wait-timeout-partial", wait_timeout_partial, 0},
	    {"ring-wait-bad-timeout", wait_bad_timeout, 0},
	    {"ring-wait-woken-before-timeout", wait_woken_before_timeout, 0},
	    {"ring-wait-submit-and-wait", wait_submit_and_wait, 0},
	    {"ring-wait-interrupted", wait_interrupted, 0},
	    {"ring-wait-sigmask", wait_sigmask, 0},
	    {"ring-wait-sigmask-defer", wait_sigmask_defer, 0},
	    {"ring-wait-sigmask-sqpoll", wait_sigmask_sqpoll, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
