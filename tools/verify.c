// SPDX-License-Identifier: MIT
/*
 * verify=crc32c: block headers and checks, the engine wrapper that applies
 * them, and the verify phase.  CRC32C is Intel ISA-L's crc32_iscsi, which
 * picks the CPU's crc32 instruction where it has one.
 */
#include <errno.h>
#include <inttypes.h>
#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine.h"
#include "job.h"
#include "verify.h"

#define CRC_SKIP_END (offsetof(struct verify_hdr, crc) + sizeof(uint32_t))

_Static_assert(offsetof(struct verify_hdr, crc) == 4, "the crc follows the magic");
_Static_assert(sizeof(struct verify_hdr) % 8 == 0, "data after the header is whole words");

struct verify {
	struct bench_engine engine; /* the job's engine with submit and reap wrapped */
	const struct bench_engine *inner;
	uint64_t generation; /* this run's; never 0 */
	uint64_t rng;        /* seeds of the blocks' data */
	bool check_reads;    /* the reads of this phase are checked */
	bool verifying;      /* in the verify phase: generations are checked too */
	uint64_t *written;   /* a bit per block written, for the verify phase */
	uint64_t nr_blocks, next;
};

/* ---- blocks ---- */

/* ISA-L's crc32_iscsi neither inverts its seed nor its result: CRC32C does both. */
uint32_t verify_block_crc(const void *block, uint32_t len)
{
	const unsigned char *p = block;
	uint32_t crc =
	    crc32_iscsi((unsigned char *)p, (int)offsetof(struct verify_hdr, crc), 0xffffffffU);

	crc = crc32_iscsi((unsigned char *)p + CRC_SKIP_END, (int)(len - CRC_SKIP_END), crc);
	return ~crc;
}

void verify_fill(struct io_unit *io, uint64_t seed, uint64_t generation, unsigned thread)
{
	struct verify_hdr *h = io->buf;
	uint64_t *data = (uint64_t *)(h + 1), s = seed;
	size_t words = (io->len - sizeof(*h)) / 8;

	for (size_t i = 0; i < words; i++)
		data[i] = rng_next(&s);
	*h = (struct verify_hdr){
	    .magic = VERIFY_MAGIC,
	    .offset = io->offset,
	    .seed = seed,
	    .generation = generation,
	    .len = io->len,
	    .thread = thread,
	};
	h->crc = verify_block_crc(h, io->len);
}

static int mismatch(char *msg, size_t len, const struct io_unit *io, const char *what,
                    uint64_t expected, uint64_t found, bool hex)
{
	snprintf(msg, len,
	         hex ? "verify: %s at offset %" PRIu64 ", length %u: expected 0x%08" PRIx64
	               ", found 0x%08" PRIx64
	             : "verify: %s at offset %" PRIu64 ", length %u: expected %" PRIu64
	               ", found %" PRIu64,
	         what, io->offset, io->len, expected, found);
	return -EILSEQ;
}

/* fio's order: the header's magic, length and offset, then the checksum. */
int verify_check(const struct io_unit *io, uint64_t generation, char *msg, size_t len)
{
	const struct verify_hdr *h = io->buf;
	uint32_t crc;

	if (h->magic != VERIFY_MAGIC)
		return mismatch(msg, len, io, "bad header magic", VERIFY_MAGIC, h->magic, true);
	if (h->len != io->len)
		return mismatch(msg, len, io, "bad header length", io->len, h->len, false);
	if (h->offset != io->offset)
		return mismatch(msg, len, io, "bad header offset", io->offset, h->offset, false);
	crc = verify_block_crc(h, io->len);
	if (crc != h->crc)
		return mismatch(msg, len, io, "crc32c mismatch", h->crc, crc, true);
	if (generation && h->generation != generation)
		return mismatch(msg, len, io, "block from another run (generation)", generation,
		                h->generation, true);
	return 0;
}

/* ---- the engine wrapper ---- */

/* A verify error stops the job unless continue_on_error takes verify. */
static void verify_error(struct job *j, const char *msg)
{
	char what[BENCH_PATH_MAX + 512];

	j->st->total_err++;
	if (!j->st->first_error)
		j->st->first_error = EILSEQ;
	snprintf(what, sizeof(what), "%s on %s", msg, j->files[0].name);
	if (j->o->continue_on_error & COE_VERIFY)
		fprintf(stderr, "blkring: job '%s': %s\n", j->o->name, what);
	else
		job_fail(j, EILSEQ, what);
}

static void verify_ended_one(struct job *j, struct io_unit *io)
{
	struct verify *v = j->verify;
	char msg[256];

	if (io->failed)
		return;
	if (io->ddir == DDIR_WRITE && v->written) {
		uint64_t b = (io->offset - j->files[0].start) / io->len;

		v->written[b / 64] |= 1ULL << (b % 64);
	} else if (io->ddir == DDIR_READ && v->check_reads &&
	           verify_check(io, v->verifying ? v->generation : 0, msg, sizeof(msg))) {
		verify_error(j, msg);
	}
}

/* The units an engine put back on the idle stack since `from` have ended. */
static void verify_ended(struct job *j, unsigned from)
{
	for (unsigned i = from; i < j->nr_free; i++)
		verify_ended_one(j, j->free[i]);
}

static int verify_submit(struct job *j, struct io_unit **ios, unsigned n)
{
	struct verify *v = j->verify;
	unsigned from = j->nr_free;
	int ret;

	for (unsigned i = 0; i < n; i++) {
		ios[i]->failed = false;
		if (ios[i]->ddir == DDIR_WRITE)
			verify_fill(ios[i], rng_next(&v->rng), v->generation, j->number);
	}
	ret = v->inner->submit(j, ios, n);
	/* A sync engine's units are done and idle again when submit returns. */
	if (!ret)
		verify_ended(j, from);
	return ret;
}

static int verify_reap(struct job *j, unsigned min, unsigned max)
{
	unsigned from = j->nr_free;
	int n = j->verify->inner->reap(j, min, max);

	if (n > 0)
		verify_ended(j, from);
	return n;
}

static uint64_t new_generation(void)
{
	uint64_t g = 0;

	if (getrandom(&g, sizeof(g), 0) != sizeof(g))
		g = clock_mono_ns();
	return g ? g : 1;
}

int verify_setup(struct job *j)
{
	bool writes = j->ddirs & (1U << DDIR_WRITE);
	struct verify *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->inner = j->engine;
	v->engine = *j->engine;
	v->engine.submit = verify_submit;
	v->engine.reap = j->engine->reap ? verify_reap : NULL;
	v->generation = new_generation();
	v->rng = v->generation;
	/* fio checks the reads of jobs that do not write. */
	v->check_reads = !writes;
	if (writes && j->o->do_verify) {
		v->nr_blocks = j->files[0].len / j->bs[DDIR_WRITE];
		v->written = calloc((v->nr_blocks + 63) / 64, sizeof(uint64_t));
		if (!v->written) {
			free(v);
			return -ENOMEM;
		}
	}
	j->verify = v;
	j->engine = &v->engine;
	return 0;
}

void verify_teardown(struct job *j)
{
	j->engine = j->verify->inner;
	free(j->verify->written);
	free(j->verify);
	j->verify = NULL;
}

/* ---- the verify phase ---- */

static uint64_t next_written(const struct verify *v, uint64_t b)
{
	while (b < v->nr_blocks) {
		uint64_t word = v->written[b / 64] >> (b % 64);

		if (word)
			return b + (uint64_t)__builtin_ctzll(word);
		b = (b / 64 + 1) * 64;
	}
	return v->nr_blocks;
}

/* Every block written, once, in offset order (fio's verify_sort). */
static unsigned plan_verify(struct job *j, struct io_unit **ios, unsigned n)
{
	struct verify *v = j->verify;
	uint32_t bs = j->bs[DDIR_WRITE];
	unsigned i;

	for (i = 0; i < n; i++) {
		uint64_t b = next_written(v, v->next);
		struct io_unit *io;

		if (b == v->nr_blocks)
			break;
		v->next = b + 1;
		io = j->free[--j->nr_free];
		io->ddir = DDIR_READ;
		io->len = bs;
		io->offset = j->files[0].start + b * bs;
		ios[i] = io;
	}
	return i;
}

void verify_phase(struct job *j)
{
	struct verify *v = j->verify;

	if (!v->written || j->st->error || atomic_load_explicit(j->stop, memory_order_relaxed))
		return;
	v->check_reads = true;
	v->verifying = true;
	/* Its reads are accounted at the size of the blocks written. */
	j->bs[DDIR_READ] = j->bs[DDIR_WRITE];
	j->st->verify_ns = job_run_phase(j, plan_verify, 1U << DDIR_READ);
}
