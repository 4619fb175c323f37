// SPDX-License-Identifier: MIT
/* What the stress programs share: see stress.h. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stress.h"

const struct stress_ring_kind stress_ring_kinds[STRESS_NR_RING_KINDS] = {
    {"plain", 0, false},
    {"defer", BLKRING_SETUP_DEFER_TASKRUN, false},
    {"sqpoll", BLKRING_SETUP_SQPOLL, false},
    {"iopoll", BLKRING_SETUP_IOPOLL, false},
    {"remote-exit", 0, true},
};

unsigned stress_seconds(void)
{
	const char *s = getenv("STRESS_SECONDS");

	return s ? (unsigned)strtoul(s, NULL, 0) : 0;
}

uint64_t stress_case_ns(unsigned short_ms, unsigned nr_cases)
{
	uint64_t share = (uint64_t)stress_seconds() * 1000000000ULL / (nr_cases ? nr_cases : 1);
	uint64_t least = (uint64_t)short_ms * 1000000ULL;

	return share > least ? share : least;
}

unsigned stress_case_timeout(unsigned short_ms, unsigned nr_cases)
{
	/* Room for setup, the drain at the end and a slow sanitizer tree. */
	return (unsigned)(stress_case_ns(short_ms, nr_cases) / 1000000000ULL) + 30;
}

uint64_t stress_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t stress_seed(void)
{
	const char *s = getenv("STRESS_SEED");

	if (s)
		return strtoull(s, NULL, 0);
	return stress_seconds() ? stress_now_ns() : 1;
}

/* splitmix64: any seed, 0 included, gives a good sequence. */
uint64_t stress_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void stress_sleep_us(unsigned us)
{
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- cases with an argument ---- */

static void (*case_fn)(const void *arg);
static const void *case_arg;

static void wd_stop(void);

static void case_trampoline(void)
{
	case_fn(case_arg);
	/* TSan sleeps a second at exit while other threads run. */
	wd_stop();
}

void stress_run_case(const char *name, void (*fn)(const void *arg), const void *arg,
                     unsigned timeout_s, int argc, char **argv)
{
	struct test_case cases[2] = {{name, case_trampoline, timeout_s}, {NULL, NULL, 0}};

	/* The forked child inherits these. */
	case_fn = fn;
	case_arg = arg;
	test_main(cases, argc, argv);
}

/* ---- the watchdog: one thread per case process, started on first use ---- */

static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond = PTHREAD_COND_INITIALIZER;
static pthread_t wd_thread;
static bool wd_started, wd_armed, wd_stopping;
static struct timespec wd_deadline;
static char wd_what[256];
static unsigned wd_seconds;

static void *wd_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wd_lock);
	for (;;) {
		if (wd_stopping) {
			pthread_mutex_unlock(&wd_lock);
			return NULL;
		}
		if (!wd_armed) {
			pthread_cond_wait(&wd_cond, &wd_lock);
			continue;
		}
		if (pthread_cond_timedwait(&wd_cond, &wd_lock, &wd_deadline) == ETIMEDOUT &&
		    wd_armed)
			break;
	}
	fprintf(stderr, "hang: %s did not return within %u s\n", wd_what, wd_seconds);
	fflush(stderr);
	_exit(1);
	return NULL;
}

void stress_watchdog_arm(unsigned seconds, const char *what)
{
	pthread_mutex_lock(&wd_lock);
	if (!wd_started) {
		if (pthread_create(&wd_thread, NULL, wd_main, NULL))
			TEST_FAIL("watchdog: pthread_create failed");
		wd_started = true;
	}
	clock_gettime(CLOCK_REALTIME, &wd_deadline);
	wd_deadline.tv_sec += seconds;
	wd_seconds = seconds;
	snprintf(wd_what, sizeof(wd_what), "%s", what);
	wd_armed = true;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

void stress_watchdog_disarm(void)
{
	pthread_mutex_lock(&wd_lock);
	wd_armed = false;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

static void wd_stop(void)
{
	pthread_mutex_lock(&wd_lock);
	wd_stopping = true;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
	if (wd_started)
		pthread_join(wd_thread, NULL);
	wd_started = false;
}

/* ---- rings ---- */

void stress_ring_init(struct blkring *ring, unsigned entries, unsigned cq_entries,
                      const struct stress_ring_kind *kind)
{
	/* A short idle makes the SQ thread sleep and wake often. */
	struct blkring_params p = {.flags = kind->flags, .sq_thread_idle = 1};
	int ret;

	if (cq_entries) {
		p.flags |= BLKRING_SETUP_CQSIZE;
		p.cq_entries = cq_entries;
	}
	ret = blkring_queue_init_params(entries, ring, &p);
	if (ret)
		TEST_FAIL("%s ring: %s (%s)", kind->name, strerror(-ret), blkring_last_error());
}

static void *exit_main(void *arg)
{
	blkring_queue_exit(arg);
	return NULL;
}

void stress_ring_exit(struct blkring *ring, const struct stress_ring_kind *kind, const char *what)
{
	char text[256];
	pthread_t t;

	snprintf(text, sizeof(text), "blkring_queue_exit (%s ring, %s)", kind->name, what);
	stress_watchdog_arm(STRESS_EXIT_SECONDS, text);
	if (kind->remote_exit) {
		CHECK_EQ(pthread_create(&t, NULL, exit_main, ring), 0);
		CHECK_EQ(pthread_join(t, NULL), 0);
	} else {
		blkring_queue_exit(ring);
	}
	stress_watchdog_disarm();
	/* Exit zeroes the ring: a second call must do nothing. */
	CHECK(!ring->ctx);
	blkring_queue_exit(ring);
}

/* ---- the ledger ---- */

void stress_ledger_init(struct stress_ledger *l)
{
	memset(l, 0, sizeof(*l));
}

void stress_ledger_free(struct stress_ledger *l)
{
	free(l->cqes);
	memset(l, 0, sizeof(*l));
}

uint64_t stress_ledger_add(struct stress_ledger *l)
{
	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->cqes = realloc(l->cqes, l->cap);
		CHECK(l->cqes);
	}
	l->cqes[l->nr] = 0;
	return l->nr++;
}

void stress_ledger_reap(struct stress_ledger *l, uint64_t user_data)
{
	if (user_data >= l->nr)
		TEST_FAIL("CQE for user_data %llu, never submitted (%llu were)",
		          (unsigned long long)user_data, (unsigned long long)l->nr);
	if (l->cqes[user_data]++)
		TEST_FAIL("second CQE for user_data %llu", (unsigned long long)user_data);
	l->reaped++;
}

/* ---- threads and data ---- */

void stress_note(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("STRESS_VERBOSE"))
		return;
	va_start(ap, fmt);
	fputs("note: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
}

int stress_lib_threads(void)
{
	int n;

	/* A joined thread stays listed until its exit ends, a moment after
	 * pthread_join() returned: give it a second. */
	for (int i = 0; (n = test_threads_with("comm", "blkring-")) && i < 100; i++)
		usleep(10000);
	return n;
}

static uint64_t pattern_word(uint64_t offset)
{
	return offset * 0x9e3779b97f4a7c15ULL ^ 0x5354524553530000ULL;
}

void stress_fill(void *buf, size_t len, uint64_t offset)
{
	uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		p[i] = pattern_word(offset + i * 8);
}

long stress_check(const void *buf, size_t len, uint64_t offset)
{
	const uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		if (p[i] != pattern_word(offset + i * 8))
			return (long)(i * 8);
	return -1;
}
