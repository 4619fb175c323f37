/* SPDX-License-Identifier: MIT */
/*
 * fio's data patterns (buffer_pattern=, verify_pattern=): 0x-prefixed hex
 * bytes, decimal numbers (their bytes, least significant first, as fio
 * stores them), "strings", 'files' (their first bytes) and, where fio takes
 * formats, %o (the block's offset, 8 bytes little-endian), in any order.
 * A buffer holds the pattern over and over from its start.
 */
#ifndef BLKRING_TOOLS_PATTERN_H
#define BLKRING_TOOLS_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PATTERN_MAX 512   /* fio's MAX_PATTERN_SIZE */
#define PATTERN_MAX_FMT 8 /* %o formats in one pattern */

struct data_pattern {
	uint8_t bytes[PATTERN_MAX];
	uint16_t len; /* 0: none given */
	uint16_t nr_fmt;
	uint16_t fmt_at[PATTERN_MAX_FMT]; /* where each %o's 8 bytes start */
};

/* Parses text into p (formats: %o is allowed); 0, or -EINVAL with the
 * reason set (tool_error). */
int pattern_parse(struct data_pattern *p, const char *text, bool formats);
/* The first min(len, p->len) bytes of a buffer at `offset`: the pattern
 * with the offset pasted at its formats. */
void pattern_chunk(const struct data_pattern *p, uint8_t *out, size_t len, uint64_t offset);
/* Fills len bytes with the pattern from their start, as at `offset`. */
void pattern_fill(const struct data_pattern *p, void *buf, size_t len, uint64_t offset);

#endif
