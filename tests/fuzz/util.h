/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer harnesses: a scratch directory for whatever a
 * fuzzed spec creates, a filter that keeps fuzzed text away from the rest
 * of the filesystem and from sizes nobody means, and a reader of fuzz
 * bytes.
 */
#ifndef BLKRING_TESTS_FUZZ_UTIL_H
#define BLKRING_TESTS_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A harness's own failure: the message, then abort() so libFuzzer keeps the input. */
#define FUZZ_BUG(...)                                                 \
	do {                                                          \
		fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                         \
		fputc('\n', stderr);                                  \
		abort();                                              \
	} while (0)

#define FUZZ_CHECK(cond, ...)                  \
	do {                                   \
		if (!(cond))                   \
			FUZZ_BUG(__VA_ARGS__); \
	} while (0)

/*
 * Makes a fresh directory under $TMPDIR (or /tmp), once per process; it
 * goes at exit.  The working directory stays: libFuzzer's own paths are
 * relative to it.  Files written with fuzz_scratch_keep() stay across
 * inputs (written again by fuzz_scratch_clean(), which removes the rest).
 */
void fuzz_scratch_enter(const char *tag);
void fuzz_scratch_keep(const char *name, const char *text);
void fuzz_scratch_clean(void);
/* The scratch directory's absolute path. */
const char *fuzz_scratch_dir(void);
/* The spec with a relative path made relative to the scratch directory
 * (malloc'd; NULL without memory). */
char *fuzz_in_scratch(const char *spec);

/* The input as a C string; NULL when it holds a NUL (no spec or table does). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/*
 * True when the text may be handed to the library: every path it can name
 * stays in the working directory (no '/' but a leading "./", no ".."), a
 * memory-backed null device is not asked for more than FUZZ_MAX_MEM_SIZE
 * (its page table is allocated up front), and no timer or spin is long
 * enough to turn an input into a timeout.
 */
#define FUZZ_MAX_MEM_SIZE (64ULL << 30)
#define FUZZ_MAX_NSEC 1000000ULL
bool fuzz_text_safe(const char *text);

/* Fuzz bytes, read front to back; zeros once they run out. */
struct fuzz_bytes {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t fuzz_u8(struct fuzz_bytes *b)
{
	if (!b->left)
		return 0;
	b->left--;
	return *b->p++;
}

static inline uint32_t fuzz_u32(struct fuzz_bytes *b)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)fuzz_u8(b) << (8 * i);
	return v;
}

#endif
