/* SPDX-License-Identifier: MIT */
/*
 * verify=crc32c, fio's verify: every block a job writes starts with a
 * header (magic, the block's offset and length, the seed of its data, the
 * writing run's generation) and is covered by a CRC32C; reads check it.
 * As in fio, a job that writes reads its blocks back when its writes are
 * done (do_verify=1, the default), and a job that only reads checks every
 * block it reads; the reads of a job that both reads and writes are
 * checked in the verify phase only.
 *
 * A verify job runs its engine wrapped: the wrapper fills blocks before
 * they are submitted and checks them once the engine has put their units
 * back on the idle stack, so jobs without verify never pass through here.
 */
#ifndef BLKRING_TOOLS_VERIFY_H
#define BLKRING_TOOLS_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#define VERIFY_MAGIC 0x31565242U /* "BRV1" */

struct verify_hdr {
	uint32_t magic;
	uint32_t crc;        /* CRC32C of the whole block but this field */
	uint64_t offset;     /* bytes, on the device the job wrote */
	uint64_t seed;       /* of the data after the header */
	uint64_t generation; /* of the run that wrote it */
	uint32_t len;        /* of the block */
	uint32_t thread;     /* the writing job's number, as fio's header has */
};

struct job;
struct io_unit;

/* CRC32C (Castagnoli, the iSCSI polynomial) of a block, its crc field as if absent. */
uint32_t verify_block_crc(const void *block, uint32_t len);
/* Fills a unit's buffer with a header and data from seed for a write. */
void verify_fill(struct io_unit *io, uint64_t seed, uint64_t generation, unsigned thread);
/*
 * Checks a block that was read: 0, or -EILSEQ with what is wrong (where, the
 * expected and the found value) in msg.  A generation of 0 is not checked.
 */
int verify_check(const struct io_unit *io, uint64_t generation, char *msg, size_t len);

/* With verify set: wraps the job's engine (before the engine's init). */
int verify_setup(struct job *j);
/* The verify phase of a job that wrote, when do_verify asks for one. */
void verify_phase(struct job *j);
void verify_teardown(struct job *j);

#endif
