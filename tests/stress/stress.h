/* SPDX-License-Identifier: MIT */
/*
 * What the stress programs (tests/stress/stress-*.c) share: the ring kinds
 * they run through, their time budget (short in `make test`, STRESS_SECONDS
 * in `make stress`), cases that take an argument, a watchdog that turns a
 * hang into a failure that says what hung, and a ledger that checks every
 * consumed SQE gets exactly one CQE.
 */
#ifndef BLKRING_TESTS_STRESS_H
#define BLKRING_TESTS_STRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "blkring.h"
#include "test.h"

/* A ring kind: setup flags, and whether exit is called from another thread. */
struct stress_ring_kind {
	const char *name;
	unsigned flags;
	bool remote_exit;
};

#define STRESS_NR_RING_KINDS 5
extern const struct stress_ring_kind stress_ring_kinds[STRESS_NR_RING_KINDS];

/* How long blkring_queue_exit may take before it counts as hung; exit
 * only waits for I/O that started, which ends in milliseconds here. */
#define STRESS_EXIT_SECONDS 5

/* STRESS_SECONDS from the environment, 0 (the short run) when unset. */
unsigned stress_seconds(void);
/* How long each of a program's nr_cases cases runs: short_ms in the short
 * run, else an even share of STRESS_SECONDS. */
uint64_t stress_case_ns(unsigned short_ms, unsigned nr_cases);
/* The harness's time limit for such a case, in seconds. */
unsigned stress_case_timeout(unsigned short_ms, unsigned nr_cases);
uint64_t stress_now_ns(void);
/* STRESS_SEED, else a fixed seed in the short run and the time in a long one. */
uint64_t stress_seed(void);
uint64_t stress_rand(uint64_t *state);
void stress_sleep_us(unsigned us);

/* Runs fn(arg) as one forked case of test.h's harness. */
void stress_run_case(const char *name, void (*fn)(const void *arg), const void *arg,
                     unsigned timeout_s, int argc, char **argv);

/* Fails the case, printing what, unless stress_watchdog_disarm() comes
 * first, within seconds. */
void stress_watchdog_arm(unsigned seconds, const char *what);
void stress_watchdog_disarm(void);

/* A ring of the kind; cq_entries 0 keeps the default CQ size. */
void stress_ring_init(struct blkring *ring, unsigned entries, unsigned cq_entries,
                      const struct stress_ring_kind *kind);
/* Exits the ring as its kind says, failing the case if exit hangs. */
void stress_ring_exit(struct blkring *ring, const struct stress_ring_kind *kind, const char *what);

/* Every user_data handed out, and how many CQEs each got. */
struct stress_ledger {
	uint8_t *cqes;
	uint64_t nr, cap;
	uint64_t reaped;
};

void stress_ledger_init(struct stress_ledger *l);
void stress_ledger_free(struct stress_ledger *l);
/* A new user_data. */
uint64_t stress_ledger_add(struct stress_ledger *l);
/* One CQE for user_data: fails on one never handed out or seen before. */
void stress_ledger_reap(struct stress_ledger *l, uint64_t user_data);
static inline uint64_t stress_ledger_inflight(const struct stress_ledger *l)
{
	return l->nr - l->reaped;
}

/* With STRESS_VERBOSE set, a line on stdout ("note: ...", which the test
 * runners skip) that says how much a case did. */
void stress_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The library's threads still running (names start with "blkring-"). */
int stress_lib_threads(void);

/* A pattern that tells every 8 bytes of every device offset apart. */
void stress_fill(void *buf, size_t len, uint64_t offset);
/* The first offset in buf that does not hold the pattern, or -1. */
long stress_check(const void *buf, size_t len, uint64_t offset);

#endif
