/* SPDX-License-Identifier: MIT */
/*
 * verify=, fio's verify: every block a job writes starts with a header
 * (magic, the method, the block's offset and length, the seed of its data,
 * the writing run's generation) and carries a checksum of the whole block
 * but the sum itself (meta: none, the header alone is checked; pattern: no
 * header, the block is verify_pattern over and over).  verify_interval
 * gives every that many bytes their own header; verify_offset puts the
 * header elsewhere in the block, swapped with the data there.  As in fio,
 * a job that writes reads its blocks back when its writes are done
 * (do_verify=1, the default), and a job that only reads checks every block
 * it reads; the reads of a job that both reads and writes are checked in
 * the verify phase only.  The header is blkring's, not fio's byte format.
 * verify_backlog reads blocks back while the job writes (its planner
 * wrapped too); verify_state_save keeps the map of written blocks in a
 * file that verify_state_load gives a later verify_only run.
 *
 * A verify job runs its engine wrapped: the wrapper fills blocks before
 * they are submitted and checks them once the engine has put their units
 * back on the idle stack, so jobs without verify never pass through here.
 */
#ifndef BLKRING_TOOLS_VERIFY_H
#define BLKRING_TOOLS_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checksum.h"
#include "pattern.h"

#define VERIFY_MAGIC 0x32565242U /* "BRV2" */

struct verify_hdr {
	uint32_t magic;
	uint16_t kind;       /* the method: its index in verify_kinds[] */
	uint16_t sum_len;    /* bytes of sum in use */
	uint64_t offset;     /* bytes, on the device the job wrote */
	uint64_t seed;       /* of the data after the header */
	uint64_t generation; /* of the run that wrote it */
	uint32_t len;        /* of the block (or interval) */
	uint32_t thread;     /* the writing job's number, as fio's header has */
	uint8_t sum[CHECKSUM_MAX];
};

struct job;
struct io_unit;

/* verify='s values: "0", then the checksums, "meta" and "pattern". */
extern const char *const verify_kinds[];

/* How a job's blocks are written and checked (from its options). */
struct verify_method {
	unsigned kind;                 /* index in verify_kinds[] */
	const struct checksum *sum;    /* NULL for meta and pattern */
	bool header;                   /* all but pattern */
	struct data_pattern pattern;   /* verify_pattern; len 0: none */
	uint32_t interval, hdr_offset; /* 0: the whole block, at its start */
};

struct job_opts;

/* Parses a job's verify options into m, for a block size of bs: 0, or
 * -EINVAL with the reason set (tool_error). */
int verify_method_init(struct verify_method *m, const struct job_opts *o, uint32_t bs);
/* Fills a unit's buffer with headers and data from seed for a write. */
void verify_fill(const struct verify_method *m, struct io_unit *io, uint64_t seed,
                 uint64_t generation, unsigned thread);
/*
 * Checks a block that was read: 0, or -EILSEQ with what is wrong (where, the
 * expected and the found value) in msg.  A generation of 0 is not checked.
 * The buffer is changed (a moved header is swapped back).
 */
int verify_check(const struct verify_method *m, struct io_unit *io, uint64_t generation, char *msg,
                 size_t len);

/* With verify set: wraps the job's engine (before the engine's init). */
int verify_setup(struct job *j);
/* The verify phase of a job that wrote, when do_verify asks for one (or
 * verify_only); then the job fails with the first failure, if any. */
void verify_phase(struct job *j);
void verify_teardown(struct job *j);

#endif
