// SPDX-License-Identifier: MIT
/*
 * verify=: block headers and checks, the engine wrapper that applies them,
 * and the verify phase.  The checksums are checksum.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine.h"
#include "error.h"
#include "job.h"
#include "verify.h"

#define SUM_OFF offsetof(struct verify_hdr, sum)
#define NR_KINDS (sizeof(verify_kinds) / sizeof(verify_kinds[0]) - 1)

_Static_assert(sizeof(struct verify_hdr) % 8 == 0, "data after the header is whole words");

const char *const verify_kinds[] = {"0",      "md5",    "crc64", "crc32c",  "crc32c-intel",
                                    "crc32",  "crc16",  "crc7",  "sha1",    "sha256",
                                    "sha512", "xxhash", "meta",  "pattern", NULL};

struct verify {
	struct bench_engine engine; /* the job's engine with submit and reap wrapped */
	const struct bench_engine *inner;
	struct verify_method method;
	uint64_t generation; /* this run's; never 0 */
	uint64_t rng;        /* seeds of the blocks' data */
	bool check_reads;    /* the reads of this phase are checked */
	bool verifying;      /* in the verify phase: generations are checked too */
	uint64_t *written;   /* a bit per block written, for the verify phase */
	uint64_t nr_blocks, next;
	/* verify_backlog: the offsets of the last writes that ended, a ring
	 * whose `unread` oldest no check has read; a check reads `pending`. */
	uint64_t *log;
	uint64_t log_len, log_head, unread, since, pending;
	uint64_t *reading; /* a bit per unit: a backlog check's read */
	uint64_t *checked; /* a bit per block: read by a check since its last write */
	plan_fn inner_plan;
	uint64_t failures; /* verify_fatal=0: failures seen, the first in first_msg */
	char first_msg[256];
	bool state_loaded; /* verify_state_load: the writer's generation is known */
};

/* verify_state_save's file, blkring's own format: this header, then the
 * map of the blocks whose writes ended. */
struct verify_state {
	char magic[8]; /* STATE_MAGIC, without its NUL */
	uint32_t version, bs;
	uint64_t start, nr_blocks; /* the region, as the job had it */
	uint64_t generation;       /* of the run that wrote */
};

#define STATE_MAGIC "BRVSTATE"
#define STATE_VERSION 1

/* ---- the method ---- */

int verify_method_init(struct verify_method *m, const struct job_opts *o, uint32_t bs)
{
	const char *name = verify_kinds[o->verify];
	uint32_t iv = o->verify_interval ? (uint32_t)o->verify_interval : bs;

	memset(m, 0, sizeof(*m));
	if (!bs)
		return tool_error(-EINVAL, "verify needs a block size");
	m->kind = o->verify;
	m->sum = checksum_find(name);
	m->header = strcmp(name, "pattern") != 0;
	m->pattern = o->verify_pattern;
	if (!m->header && !m->pattern.len)
		return tool_error(-EINVAL, "verify=pattern needs verify_pattern");
	if (o->verify_interval > bs || bs % iv || iv % 8 ||
	    (m->header && iv < sizeof(struct verify_hdr)))
		return tool_error(-EINVAL,
		                  "option 'verify_interval': %" PRIu64 " does not divide the block "
		                  "size %u into parts of whole words that hold a %zu-byte header",
		                  o->verify_interval, bs, sizeof(struct verify_hdr));
	if (o->verify_offset &&
	    (o->verify_offset % 8 || o->verify_offset + sizeof(struct verify_hdr) > iv))
		return tool_error(-EINVAL,
		                  "option 'verify_offset': %" PRIu64 " leaves no room for the "
		                  "%zu-byte header in %u bytes (or is not a multiple of 8)",
		                  o->verify_offset, sizeof(struct verify_hdr), iv);
	m->interval = iv;
	m->hdr_offset = (uint32_t)o->verify_offset;
	return 0;
}

/* ---- blocks ---- */

/* The header moves to hdr_offset and the data there to the start. */
static void swap_header(const struct verify_method *m, uint8_t *part)
{
	uint8_t tmp[sizeof(struct verify_hdr)];

	if (!m->hdr_offset)
		return;
	memcpy(tmp, part, sizeof(tmp));
	memcpy(part, part + m->hdr_offset, sizeof(tmp));
	memcpy(part + m->hdr_offset, tmp, sizeof(tmp));
}

/* verify_pattern's %o is the offset of the block (of the interval). */
static void fill_data(const struct verify_method *m, uint8_t *p, size_t len, uint64_t seed,
                      uint64_t offset)
{
	if (m->pattern.len) {
		pattern_fill(&m->pattern, p, len, offset);
		return;
	}
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w = rng_next(&seed);

		memcpy(p + i, &w, 8);
	}
}

static void sum_part(const struct verify_method *m, const uint8_t *part, uint32_t len, uint8_t *out)
{
	m->sum->sum(part, SUM_OFF, part + sizeof(struct verify_hdr),
	            len - sizeof(struct verify_hdr), out);
}

void verify_fill(const struct verify_method *m, struct io_unit *io, uint64_t seed,
                 uint64_t generation, unsigned thread)
{
	for (uint32_t at = 0; at < io->len; at += m->interval) {
		uint8_t *part = (uint8_t *)io->buf + at;
		struct verify_hdr *h = (struct verify_hdr *)part;
		uint64_t s = seed + at;

		if (!m->header) {
			fill_data(m, part, m->interval, 0, io->offset + at);
			continue;
		}
		fill_data(m, part + sizeof(*h), m->interval - sizeof(*h), s, io->offset + at);
		*h = (struct verify_hdr){
		    .magic = VERIFY_MAGIC,
		    .kind = (uint16_t)m->kind,
		    .sum_len = (uint16_t)(m->sum ? m->sum->len : 0),
		    .offset = io->offset + at,
		    .seed = s,
		    .generation = generation,
		    .len = m->interval,
		    .thread = thread,
		};
		if (m->sum)
			sum_part(m, part, m->interval, h->sum);
		swap_header(m, part);
	}
}

static int mismatch(char *msg, size_t len, uint64_t offset, uint32_t blen, const char *what,
                    uint64_t expected, uint64_t found, bool hex)
{
	snprintf(msg, len,
	         hex ? "verify: %s at offset %" PRIu64 ", length %u: expected 0x%08" PRIx64
	               ", found 0x%08" PRIx64
	             : "verify: %s at offset %" PRIu64 ", length %u: expected %" PRIu64
	               ", found %" PRIu64,
	         what, offset, blen, expected, found);
	return -EILSEQ;
}

/* Sums up to 8 bytes read as the number they are (the CRCs); digests as bytes. */
static void sum_text(const uint8_t *sum, unsigned n, char *out)
{
	uint64_t v = 0;

	if (n <= 8) {
		memcpy(&v, sum, n);
		sprintf(out, "0x%0*" PRIx64, n < 4 ? 2 * (int)n : 8, v);
		return;
	}
	out += sprintf(out, "0x");
	for (unsigned i = 0; i < n; i++)
		out += sprintf(out, "%02x", sum[i]);
}

static int sum_mismatch(char *msg, size_t len, const struct verify_method *m, uint64_t offset,
                        uint32_t blen, const uint8_t *expected, const uint8_t *found)
{
	char e[2 * CHECKSUM_MAX + 3], f[2 * CHECKSUM_MAX + 3];

	sum_text(expected, m->sum->len, e);
	sum_text(found, m->sum->len, f);
	snprintf(msg, len,
	         "verify: %s mismatch at offset %" PRIu64 ", length %u: expected %s, found %s",
	         m->sum->name, offset, blen, e, f);
	return -EILSEQ;
}

static int check_pattern(const struct verify_method *m, const uint8_t *p, uint32_t len,
                         uint64_t offset, char *msg, size_t mlen)
{
	uint8_t want[PATTERN_MAX];

	pattern_chunk(&m->pattern, want, m->pattern.len, offset);
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != want[i % m->pattern.len])
			return mismatch(msg, mlen, offset + i, len, "pattern mismatch",
			                want[i % m->pattern.len], p[i], true);
	return 0;
}

/* fio's order: the header's magic, length and offset, then the checksum. */
static int check_part(const struct verify_method *m, uint8_t *part, uint64_t offset,
                      uint64_t generation, char *msg, size_t len)
{
	const struct verify_hdr *h = (const struct verify_hdr *)part;
	uint8_t sum[CHECKSUM_MAX];

	if (!m->header)
		return check_pattern(m, part, m->interval, offset, msg, len);
	swap_header(m, part);
	if (h->magic != VERIFY_MAGIC)
		return mismatch(msg, len, offset, m->interval, "bad header magic", VERIFY_MAGIC,
		                h->magic, true);
	if (h->len != m->interval)
		return mismatch(msg, len, offset, m->interval, "bad header length", m->interval,
		                h->len, false);
	if (h->offset != offset)
		return mismatch(msg, len, offset, m->interval, "bad header offset", offset,
		                h->offset, false);
	if (h->kind != m->kind) {
		snprintf(msg, len,
		         "verify: block written with verify=%s at offset %" PRIu64
		         ", length %u: expected verify=%s",
		         h->kind < NR_KINDS ? verify_kinds[h->kind] : "?", offset, m->interval,
		         verify_kinds[m->kind]);
		return -EILSEQ;
	}
	if (m->sum) {
		sum_part(m, part, m->interval, sum);
		if (memcmp(sum, h->sum, m->sum->len))
			return sum_mismatch(msg, len, m, offset, m->interval, h->sum, sum);
	}
	if (generation && h->generation != generation)
		return mismatch(msg, len, offset, m->interval,
		                "block from another run (generation)", generation, h->generation,
		                true);
	return 0;
}

int verify_check(const struct verify_method *m, struct io_unit *io, uint64_t generation, char *msg,
                 size_t len)
{
	for (uint32_t at = 0; at < io->len; at += m->interval) {
		int ret =
		    check_part(m, (uint8_t *)io->buf + at, io->offset + at, generation, msg, len);

		if (ret)
			return ret;
	}
	return 0;
}

/* ---- the engine wrapper ---- */

static void verify_fail(struct job *j, const char *msg, uint64_t more)
{
	char what[BENCH_PATH_MAX + 512];

	snprintf(what, sizeof(what), "%s on %s", msg, j->files[0].name);
	if (more)
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
		         " (and %" PRIu64 " more blocks)", more);
	job_fail(j, EILSEQ, what);
}

/*
 * continue_on_error=verify counts each failure and goes on; verify_fatal
 * stops the job at the first; otherwise, as fio, the job checks everything
 * and then fails with the first failure (verify_done()).
 */
static void verify_error(struct job *j, const char *msg)
{
	struct verify *v = j->verify;

	j->st->total_err++;
	if (!j->st->first_error)
		j->st->first_error = EILSEQ;
	if (j->o->continue_on_error & COE_VERIFY) {
		fprintf(stderr, "blkring: job '%s': %s on %s\n", j->o->name, msg, j->files[0].name);
		return;
	}
	if (j->o->verify_fatal) {
		verify_fail(j, msg, 0);
		return;
	}
	if (!v->failures++)
		snprintf(v->first_msg, sizeof(v->first_msg), "%s", msg);
}

static void verify_done(struct job *j)
{
	struct verify *v = j->verify;

	if (v->failures)
		verify_fail(j, v->first_msg, v->failures - 1);
}

static bool map_get(const uint64_t *map, uint64_t b)
{
	return map[b / 64] >> (b % 64) & 1;
}

static void map_bit(uint64_t *map, uint64_t b, bool value)
{
	map[b / 64] = (map[b / 64] & ~(1ULL << (b % 64))) | (uint64_t)value << (b % 64);
}

/* A write ended: verify_backlog's ring takes it, and every log_len writes
 * a check of verify_backlog_batch of the unread ones is due (fio reads each
 * block once: what the ring lets go, the verify phase reads). */
static void backlog_written(struct verify *v, uint64_t offset, uint64_t batch)
{
	v->log[v->log_head++ % v->log_len] = offset;
	if (v->unread < v->log_len)
		v->unread++;
	if (++v->since < v->log_len)
		return;
	v->since = 0;
	v->pending = batch < v->unread ? batch : v->unread;
}

static void verify_written(struct job *j, struct io_unit *io)
{
	struct verify *v = j->verify;
	uint64_t b = (io->offset - j->files[0].start) / io->len;

	if (v->written)
		map_bit(v->written, b, true);
	if (v->log) {
		map_bit(v->checked, b, false);
		backlog_written(v, io->offset, j->o->verify_backlog_batch ?: j->o->verify_backlog);
	}
}

/* A backlog check's read: its unit goes back to writing, its block is read. */
static bool backlog_read(struct job *j, struct io_unit *io)
{
	struct verify *v = j->verify;
	uint64_t unit = (uint64_t)(io - j->ios);

	if (!v->reading || !map_get(v->reading, unit))
		return false;
	map_bit(v->reading, unit, false);
	map_bit(v->checked, (io->offset - j->files[0].start) / io->len, true);
	io->ddir = DDIR_WRITE;
	return true;
}

static void verify_ended_one(struct job *j, struct io_unit *io)
{
	struct verify *v = j->verify;
	bool backlog = backlog_read(j, io);
	char msg[256];

	if (io->failed)
		return;
	if (io->ddir == DDIR_WRITE && !backlog)
		verify_written(j, io);
	else if ((backlog || (io->ddir == DDIR_READ && v->check_reads)) &&
	         verify_check(&v->method, io, v->verifying || backlog ? v->generation : 0, msg,
	                      sizeof(msg)))
		verify_error(j, msg);
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
			verify_fill(&v->method, ios[i], rng_next(&v->rng), v->generation,
			            j->number);
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

/* verify_backlog: a check that is due goes before the job's next writes. */
static unsigned plan_backlog(struct job *j, struct io_unit **ios, unsigned n)
{
	struct verify *v = j->verify;
	unsigned i;

	for (i = 0; i < n && v->pending; i++, v->pending--) {
		struct io_unit *io = j->free[--j->nr_free];

		map_bit(v->reading, (uint64_t)(io - j->ios), true);
		io->file = 0;
		io->ddir = DDIR_READ;
		io->len = j->bs[DDIR_WRITE];
		io->offset = v->log[(v->log_head - v->unread--) % v->log_len];
		ios[i] = io;
	}
	return i ? i : v->inner_plan(j, ios, n);
}

/* The backlog's checks read in a write job: every unit is accounted by
 * its direction, at the written blocks' size. */
static int backlog_setup(struct job *j, struct verify *v)
{
	v->log_len = j->o->verify_backlog;
	v->log = calloc(v->log_len, sizeof(*v->log));
	v->reading = calloc((j->depth + 63) / 64, sizeof(uint64_t));
	v->checked = calloc((v->nr_blocks + 63) / 64, sizeof(uint64_t));
	if (!v->log || !v->reading || !v->checked)
		return -ENOMEM;
	v->inner_plan = j->plan;
	j->plan = plan_backlog;
	j->bs[DDIR_READ] = j->bs[DDIR_WRITE];
	return 0;
}

static uint64_t new_generation(void)
{
	uint64_t g = 0;

	if (getrandom(&g, sizeof(g), 0) != sizeof(g))
		g = clock_mono_ns();
	return g ? g : 1;
}

static void verify_free(struct verify *v)
{
	free(v->written);
	free(v->log);
	free(v->reading);
	free(v->checked);
	free(v);
}

static int verify_alloc_written(struct verify *v, const struct job *j)
{
	v->nr_blocks = j->files[0].len / j->bs[DDIR_WRITE];
	v->written = calloc((v->nr_blocks + 63) / 64, sizeof(uint64_t));
	if (!v->written)
		return -ENOMEM;
	/* verify_only: every block the job covers, as a full write left them. */
	if (j->o->verify_only)
		memset(v->written, 0xff, (v->nr_blocks + 63) / 64 * sizeof(uint64_t));
	return 0;
}

/* fio's name, in the current directory: local-NAME-N-verify.state, N
 * from 0 over all jobs, '/' in the name turned to '.'. */
static void state_name(const struct job *j, char *out, size_t len)
{
	char name[BENCH_NAME_MAX];

	snprintf(name, sizeof(name), "%s", j->o->name);
	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '.';
	snprintf(out, len, "local-%s-%u-verify.state", name, j->number - 1);
}

static size_t map_bytes(const struct verify *v)
{
	return (v->nr_blocks + 63) / 64 * sizeof(uint64_t);
}

/* Saved when the write phase ends, stopped or not; a failure is reported,
 * and the job goes on, as fio's does. */
static void verify_state_save(const struct job *j, const struct verify *v)
{
	struct verify_state h = {.magic = STATE_MAGIC,
	                         .version = STATE_VERSION,
	                         .bs = j->bs[DDIR_WRITE],
	                         .start = j->files[0].start,
	                         .nr_blocks = v->nr_blocks,
	                         .generation = v->generation};
	char path[BENCH_NAME_MAX + 64];
	FILE *f;
	bool ok;

	state_name(j, path, sizeof(path));
	f = fopen(path, "we");
	ok = f && fwrite(&h, sizeof(h), 1, f) == 1 && fwrite(v->written, map_bytes(v), 1, f) == 1;
	if (f && fclose(f))
		ok = false;
	if (!ok)
		fprintf(stderr, "blkring: job '%s': cannot save the verify state in %s: %s\n",
		        j->o->name, path, strerror(errno));
}

static int state_bad(const char *path, const char *why)
{
	return tool_error(-EINVAL, "verify_state_load: %s %s", path, why);
}

/* verify_only with verify_state_load: the blocks the saved run wrote, and
 * its generation, so blocks of another run fail too. */
static int verify_state_load(const struct job *j, struct verify *v)
{
	struct verify_state h;
	char path[BENCH_NAME_MAX + 64];
	FILE *f;
	bool ok;

	state_name(j, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return tool_error(-EINVAL, "verify_state_load: cannot open %s: %s", path,
		                  strerror(errno));
	ok = fread(&h, sizeof(h), 1, f) == 1;
	if (ok && (memcmp(h.magic, STATE_MAGIC, sizeof(h.magic)) || h.version != STATE_VERSION)) {
		fclose(f);
		return state_bad(path, "is not a blkring verify state");
	}
	if (ok && (h.bs != j->bs[DDIR_WRITE] || h.start != j->files[0].start ||
	           h.nr_blocks != v->nr_blocks)) {
		fclose(f);
		return state_bad(path, "was saved by a job of another block size or region");
	}
	ok = ok && fread(v->written, map_bytes(v), 1, f) == 1;
	fclose(f);
	if (!ok)
		return state_bad(path, "is cut short");
	v->generation = h.generation;
	v->state_loaded = true;
	return 0;
}

/* A writing job's map of written blocks: for its verify phase, its saved
 * state, or the state a verify_only run loads. */
static int verify_setup_writes(struct job *j, struct verify *v)
{
	const struct job_opts *o = j->o;
	int ret = 0;

	if (o->do_verify || o->verify_only || o->verify_state_save)
		ret = verify_alloc_written(v, j);
	if (!ret && o->verify_only && o->verify_state_load)
		ret = verify_state_load(j, v);
	/* fio's backlog checks take from the verify phase: with do_verify only. */
	if (!ret && o->verify_backlog && o->do_verify && !o->verify_only)
		ret = backlog_setup(j, v);
	return ret;
}

int verify_setup(struct job *j)
{
	bool writes = j->ddirs & (1U << DDIR_WRITE);
	struct verify *v = calloc(1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	if (verify_method_init(&v->method, j->o, j->bs[writes ? DDIR_WRITE : DDIR_READ])) {
		free(v);
		return -EINVAL;
	}
	v->inner = j->engine;
	v->engine = *j->engine;
	v->engine.submit = verify_submit;
	v->engine.reap = j->engine->reap ? verify_reap : NULL;
	v->generation = new_generation();
	v->rng = v->generation;
	/* fio checks the reads of jobs that do not write. */
	v->check_reads = !writes;
	ret = writes ? verify_setup_writes(j, v) : 0;
	if (ret) {
		verify_free(v);
		return ret;
	}
	j->verify = v;
	j->engine = &v->engine;
	return 0;
}

void verify_teardown(struct job *j)
{
	j->engine = j->verify->inner;
	verify_free(j->verify);
	j->verify = NULL;
}

/* ---- the verify phase ---- */

static uint64_t next_written(const struct verify *v, uint64_t b)
{
	while (b < v->nr_blocks) {
		uint64_t word =
		    (v->written[b / 64] & ~(v->checked ? v->checked[b / 64] : 0)) >> (b % 64);

		if (word) {
			b += (uint64_t)__builtin_ctzll(word);
			return b < v->nr_blocks ? b : v->nr_blocks;
		}
		b = (b / 64 + 1) * 64;
	}
	return v->nr_blocks;
}

/* Every block written, once, in offset order (fio's verify_sort); the
 * backlog's checks have read some already. */
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

	if (v->written && j->o->verify_state_save && !j->o->verify_only)
		verify_state_save(j, v);

	if (v->written && (j->o->do_verify || j->o->verify_only) && !j->st->error &&
	    !atomic_load_explicit(j->stop, memory_order_relaxed)) {
		v->check_reads = true;
		/* An earlier run's blocks: another generation, unless its state says which. */
		v->verifying = !j->o->verify_only || v->state_loaded;
		/* Its reads are accounted at the size of the blocks written. */
		j->bs[DDIR_READ] = j->bs[DDIR_WRITE];
		j->st->verify_ns = job_run_phase(j, plan_verify, 1U << DDIR_READ);
	}
	verify_done(j);
}
