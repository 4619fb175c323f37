// SPDX-License-Identifier: MIT
/*
 * Planners: fill a batch of I/O units with direction, offset and length.
 * Jobs with one direction and no fsync get a planner per generator whose
 * loop has nothing else in it (their units' direction and length never
 * change); everything else takes a general one, and jobs with fio's
 * workload shapes (shape.h) the one that asks shape_next() for each I/O.
 */
#include "job.h"
#include "plan.h"
#include "shape.h"

void gen_new_pass(struct offset_gen *g)
{
	switch (g->kind) {
	case GEN_SEQ:
		g->x = 0;
		g->left = g->nr_blocks;
		break;
	case GEN_PERM:
		g->x = rng_next(&g->key) & g->mask;
		g->mul = rng_next(&g->key) << 2 | 1;
		g->add = rng_next(&g->key) | 1;
		g->left = g->nr_blocks;
		break;
	default:
		g->left = UINT64_MAX;
		break;
	}
}

void gen_init(struct offset_gen *g, int kind, uint64_t nr_blocks, uint64_t seed)
{
	unsigned bits = 0;

	g->kind = kind;
	g->nr_blocks = nr_blocks;
	g->left = 0;
	g->key = seed;
	g->rng = seed ^ 0x5851f42d4c957f2dULL;
	while (bits < 64 && (1ULL << bits) < nr_blocks)
		bits++;
	g->mask = bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
	g->shift = (bits + 1) / 2;
}

static inline unsigned plan_budget(struct job *j, unsigned n)
{
	if (n > j->ios_left)
		n = (unsigned)j->ios_left;
	j->ios_left -= n;
	return n;
}

/*
 * Each run of the inner loop stops at the pass's end, so it has no check
 * for it, and works on a copy of the generator: stores to the units could
 * alias the original.  fio's default batch of one takes neither the copy
 * nor the loops.
 */
#define DEFINE_PLANNER(fn, step)                                                                  \
	static __attribute__((noinline)) unsigned fn##_batch(struct job *j, struct io_unit **ios, \
	                                                     unsigned n)                          \
	{                                                                                         \
		struct offset_gen *gen = &j->files->gen[j->ddir];                                 \
		struct io_unit **free = j->free + j->nr_free;                                     \
		uint64_t base = j->files->start, bs = j->bs[j->ddir];                             \
		unsigned i = 0;                                                                   \
                                                                                                  \
		n = plan_budget(j, n);                                                            \
		j->nr_free -= n;                                                                  \
		while (i < n) {                                                                   \
			unsigned end = n;                                                         \
			struct offset_gen g;                                                      \
                                                                                                  \
			if (unlikely(!gen->left))                                                 \
				gen_new_pass(gen);                                                \
			if (gen->left < n - i)                                                    \
				end = i + (unsigned)gen->left;                                    \
			gen->left -= end - i;                                                     \
			g = *gen;                                                                 \
			for (; i < end; i++) {                                                    \
				struct io_unit *io = *--free;                                     \
                                                                                                  \
				io->offset = base + step(&g) * bs;                                \
				ios[i] = io;                                                      \
			}                                                                         \
			gen->x = g.x;                                                             \
			gen->rng = g.rng;                                                         \
		}                                                                                 \
		return n;                                                                         \
	}                                                                                         \
                                                                                                  \
	static unsigned fn(struct job *j, struct io_unit **ios, unsigned n)                       \
	{                                                                                         \
		struct offset_gen *gen = &j->files->gen[j->ddir];                                 \
		struct io_unit *io;                                                               \
                                                                                                  \
		if (n != 1 || unlikely(!j->ios_left || !gen->left))                               \
			return fn##_batch(j, ios, n);                                             \
		io = j->free[--j->nr_free];                                                       \
		io->offset = j->files->start + step(gen) * j->bs[j->ddir];                        \
		gen->left--;                                                                      \
		j->ios_left--;                                                                    \
		ios[0] = io;                                                                      \
		return 1;                                                                         \
	}

DEFINE_PLANNER(plan_seq, gen_seq_step)
DEFINE_PLANNER(plan_perm, gen_perm_step)
DEFINE_PLANNER(plan_random, gen_random_step)

static uint64_t gen_next(struct job *j, struct job_file *f, unsigned d)
{
	switch (j->gen_kind) {
	case GEN_SEQ:
		return gen_seq(&f->gen[d]);
	case GEN_PERM:
		return gen_perm(&f->gen[d]);
	default:
		return gen_random(&f->gen[d]);
	}
}

/* fio's file_service_type: the next file once the current one has had its
 * I/Os, or is done (`done`).  Inlined with pick_file(). */
static inline __attribute__((always_inline)) void next_file(struct job *j, bool done)
{
	const struct job_opts *o = j->o;

	if (o->file_service.type == FILE_SERVICE_RANDOM && !done)
		j->cur_file = (unsigned)rng_below(&j->mix_rng, j->nr_files);
	else if (o->file_service.type != FILE_SERVICE_SEQUENTIAL || done)
		j->cur_file = (j->cur_file + 1) % j->nr_files;
	j->file_ios_left =
	    o->file_service.type == FILE_SERVICE_SEQUENTIAL ? UINT32_MAX : o->file_service.nr;
}

/* The file of the next I/O of bs bytes, or NULL when every file's region
 * is done.  Inlined in both general planners, which a call per I/O would
 * slow. */
static inline __attribute__((always_inline)) struct job_file *pick_file(struct job *j, uint64_t bs)
{
	for (unsigned tried = 0; tried <= j->nr_files; tried++) {
		struct job_file *f;

		if (!j->file_ios_left)
			next_file(j, false);
		f = &j->files[j->cur_file];
		if (f->bytes_left >= bs) {
			j->file_ios_left--;
			return f;
		}
		next_file(j, true);
	}
	return NULL;
}

static unsigned pick_ddir(struct job *j)
{
	if (j->ddirs != ((1U << DDIR_READ) | (1U << DDIR_WRITE)))
		return j->ddir;
	return rng_below(&j->mix_rng, 100) < j->o->rwmixread ? DDIR_READ : DDIR_WRITE;
}

/* The flush fsync=N asked for goes to the file written last. */
static void plan_sync(struct job *j, struct io_unit *io)
{
	j->sync_due = false;
	io->file = (uint16_t)j->cur_file;
	io->ddir = DDIR_SYNC;
	io->len = 0;
	io->offset = 0;
}

/* An I/O of direction d on f: the budgets it takes. */
static inline void plan_charge(struct job *j, struct job_file *f, struct io_unit *io, unsigned d,
                               uint32_t len)
{
	j->number_left--;
	j->io_bytes_left -= len;
	f->bytes_left -= len;
	io->file = (uint16_t)(f - j->files);
	io->ddir = (uint8_t)d;
	io->len = len;
}

/* fsync=N: a flush is due after every N writes. */
static inline void plan_count_write(struct job *j, unsigned d)
{
	if (d == DDIR_WRITE && j->o->fsync && ++j->writes_since_sync == j->o->fsync) {
		j->writes_since_sync = 0;
		j->sync_due = true;
	}
}

/* One I/O of the general planner; false when the job's bytes are done. */
static bool plan_one(struct job *j, struct io_unit *io)
{
	struct job_file *f;
	unsigned d;

	if (j->sync_due) {
		plan_sync(j, io);
		return true;
	}
	d = pick_ddir(j);
	f = j->number_left && j->io_bytes_left >= j->bs[d] ? pick_file(j, j->bs[d]) : NULL;
	if (!f)
		return false;
	plan_charge(j, f, io, d, j->bs[d]);
	io->offset = f->start + gen_next(j, f, d) * j->bs[d];
	plan_count_write(j, d);
	return true;
}

/* The same for a shaped job, whose offsets and lengths shape_next() picks:
 * a file whose offsets ran out before its bytes did is done for the pass. */
static bool plan_shaped_one(struct job *j, struct io_unit *io)
{
	uint64_t min;
	unsigned d;

	if (j->sync_due) {
		plan_sync(j, io);
		return true;
	}
	d = pick_ddir(j);
	min = shape_min_bs(j, d);
	for (;;) {
		struct job_file *f =
		    j->number_left && j->io_bytes_left >= min ? pick_file(j, min) : NULL;

		if (!f)
			return false;
		if (shape_next(j, f, d, io,
		               f->bytes_left < j->io_bytes_left ? f->bytes_left
		                                                : j->io_bytes_left)) {
			plan_charge(j, f, io, d, io->len);
			plan_count_write(j, d);
			return true;
		}
		f->bytes_left = 0;
	}
}

/* A general planner's batch: its step, inlined, once per unit. */
#define DEFINE_GENERAL_PLANNER(fn, one)                                     \
	static unsigned fn(struct job *j, struct io_unit **ios, unsigned n) \
	{                                                                   \
		unsigned i;                                                 \
                                                                            \
		for (i = 0; i < n; i++) {                                   \
			struct io_unit *io = j->free[j->nr_free - 1];       \
                                                                            \
			if (!one(j, io))                                    \
				break;                                      \
			j->nr_free--;                                       \
			ios[i] = io;                                        \
		}                                                           \
		return i;                                                   \
	}

DEFINE_GENERAL_PLANNER(plan_general, plan_one)
DEFINE_GENERAL_PLANNER(plan_shaped, plan_shaped_one)

/* The lean planner of a one-direction job with one file and no fsync. */
static plan_fn lean_planner(const struct job *j)
{
	return j->gen_kind == GEN_SEQ    ? plan_seq
	       : j->gen_kind == GEN_PERM ? plan_perm
	                                 : plan_random;
}

int plan_setup(struct job *j, uint64_t seed)
{
	const struct job_opts *o = j->o;
	const struct rw_mode *m = &rw_modes[o->rw.mode];
	bool single = __builtin_popcount(m->ddirs) == 1, shaped = shape_wanted(j);
	/* fio's lfsr never repeats a block within a pass, map or not. */
	bool map = !o->norandommap || o->random_generator == RANDGEN_LFSR;

	j->ddirs = m->ddirs;
	j->ddir = (unsigned)__builtin_ctz(m->ddirs);
	j->gen_kind = !m->random ? GEN_SEQ : map ? GEN_PERM : GEN_RANDOM;
	for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
		j->bs[d] = (uint32_t)opts_max_bs(o, d);
	/* Streams 0..BENCH_DDIR_NR: the first file's and the mix's, as with
	 * one file; other files take streams of their own after them. */
	for (unsigned k = 0; k < j->nr_files; k++)
		for (unsigned d = 0; d < BENCH_DDIR_NR; d++)
			gen_init(&j->files[k].gen[d], j->gen_kind, j->files[k].len / j->bs[d],
			         plan_seed(seed, j->number, k * (BENCH_DDIR_NR + 1) + d));
	j->mix_rng = plan_seed(seed, j->number, BENCH_DDIR_NR);
	j->cur_file = 0;
	j->file_ios_left =
	    o->file_service.type == FILE_SERVICE_SEQUENTIAL ? UINT32_MAX : o->file_service.nr;
	j->lean = single && !o->fsync && j->nr_files == 1 && !shaped;
	j->plan = shaped ? plan_shaped : j->lean ? lean_planner(j) : plan_general;
	for (unsigned i = 0; j->lean && i < j->depth; i++) {
		j->ios[i].ddir = (uint8_t)j->ddir;
		j->ios[i].len = j->bs[j->ddir];
	}
	return shaped ? shape_setup(j, seed) : 0;
}
