/* SPDX-License-Identifier: MIT */
/*
 * The test harness.  A test program lists its cases; each case runs in its
 * own forked child with a time limit, so a crash or a hang fails that case
 * alone.  Output, one line per case, is counted by tests/run-tests.sh:
 *   PASS name | FAIL name: why | SKIP name: why
 */
#ifndef BLKRING_TESTS_TEST_H
#define BLKRING_TESTS_TEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"

struct test_case {
	const char *name;
	void (*fn)(void);
	unsigned timeout_s; /* 0: the default, 60 s */
};

#define TEST_SKIP_EXIT 77

int test_main(const struct test_case *cases, int argc, char **argv);

#define TEST_FAIL(...)                                          \
	do {                                                    \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                   \
		fputc('\n', stderr);                            \
		exit(1);                                        \
	} while (0)

#define CHECK(cond)                                           \
	do {                                                  \
		if (!(cond))                                  \
			TEST_FAIL("check failed: %s", #cond); \
	} while (0)

/* Compares two integers and prints both on failure. */
#define CHECK_EQ(a, b)                                                       \
	do {                                                                 \
		long long _a = (long long)(a), _b = (long long)(b);          \
		if (_a != _b)                                                \
			TEST_FAIL("%s == %s: %lld != %lld", #a, #b, _a, _b); \
	} while (0)

#define SKIP(...)                             \
	do {                                  \
		fprintf(stderr, "skip: ");    \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr);          \
		exit(TEST_SKIP_EXIT);         \
	} while (0)

/* The next SQE of a ring that must have one. */
static inline struct blkring_sqe *ring_sqe(struct blkring *ring)
{
	struct blkring_sqe *sqe = blkring_get_sqe(ring);

	CHECK(sqe);
	return sqe;
}

/* Opens a device or fails the test with the library's message. */
struct blkring_dev *test_open(const char *spec);
/* The same for a volume built from table text (base_dir: NULL for the cwd). */
struct blkring_dev *test_vol(const char *table, const char *base_dir);

/* ---- helpers of the device tests ---- */

/* test_open() of the formatted spec. */
struct blkring_dev *test_openf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Opening spec fails with err and a message holding both texts (NULL: any). */
void test_open_fails(const char *spec, int err, const char *text1, const char *text2);
uint64_t test_now_ms(void);
/* Page-aligned, whole pages; fails the test without memory. */
void *test_alloc(size_t size);
/* A pattern that tells every 8 bytes of every device offset apart. */
void test_fill(void *buf, size_t len, uint64_t off, uint64_t seed);
bool test_pattern_ok(const void *buf, size_t len, uint64_t off, uint64_t seed);
bool test_zero(const void *buf, size_t len);
/* A ring of 64 with dev registered at index 0. */
void test_ring(struct blkring *ring, unsigned flags, struct blkring_dev *dev);
/* Waits for one CQE, at most ms (else the test fails); its result, and
 * its user_data in *data when data is not NULL. */
int test_wait(struct blkring *ring, uint64_t *data, unsigned ms);
/* The one SQE prepared, submitted and waited for (30 s at most). */
int test_ring_one(struct blkring *ring);
/* A read or write of device 0 on the ring, waited for. */
int test_ring_rw(struct blkring *ring, bool write, void *buf, unsigned len, uint64_t off,
                 unsigned rw_flags);

/* A thread that writes 16 x 4 KiB at a time through a ring on vol, over
 * its first 16 MiB, until stop; done counts the batches. */
struct test_load {
	struct blkring_dev *vol;
	_Atomic bool stop;
	_Atomic unsigned long done;
};
void *test_load_thread(void *arg);

/* This process's threads with a line of /proc/self/task/TID/FILE that
 * starts with `line`. */
int test_threads_with(const char *file, const char *line);

#endif
