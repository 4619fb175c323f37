// SPDX-License-Identifier: MIT
/*
 * Completions counted per run of a submission's units (job_reaped(), as
 * the blkring engine's reap loop calls it) against one sample per unit: the
 * same latency statistics and histograms, short transfers included, in any
 * reap order and size; and every submission's record idle again once its
 * units are in.
 */
#include "../tools/job.h"
#include "test.h"

#define NR_BATCHES 8
#define PER_BATCH 8
#define NR_UNITS (NR_BATCHES * PER_BATCH)
#define BS 4096

struct fixture {
	struct job j;
	struct job_stats st, ref;
	struct io_batch batches[NR_BATCHES], *free_batches[NR_BATCHES];
	struct io_unit units[NR_UNITS];
	unsigned order[NR_UNITS];
};

/* Submissions with stamps some way apart, their units to be reaped in a shuffled order. */
static void setup(struct fixture *f, bool single, uint64_t *rng, uint64_t *now)
{
	struct job *j = &f->j;

	job_stats_init(&f->st);
	job_stats_init(&f->ref);
	j->st = &f->st;
	j->ddir = DDIR_READ;
	j->single = single;
	j->bs[DDIR_READ] = BS;
	j->batches = f->batches;
	j->free_batches = f->free_batches;
	for (unsigned i = 0; i < NR_BATCHES; i++)
		f->free_batches[i] = &f->batches[i];
	j->nr_free_batches = NR_BATCHES;
	for (unsigned b = 0; b < NR_BATCHES; b++) {
		struct io_batch *rec = j->free_batches[--j->nr_free_batches];

		rec->start_ns = *now;
		*now += 100 + rng_below(rng, 5000);
		rec->issue_ns = *now;
		rec->inflight = PER_BATCH;
		for (unsigned u = 0; u < PER_BATCH; u++)
			f->units[b * PER_BATCH + u] =
			    (struct io_unit){.len = BS, .ddir = DDIR_READ, .batch = rec};
	}
	for (unsigned i = 0; i < NR_UNITS; i++)
		f->order[i] = i;
	for (unsigned i = NR_UNITS - 1; i > 0; i--) {
		unsigned k = (unsigned)rng_below(rng, i + 1), t = f->order[i];

		f->order[i] = f->order[k];
		f->order[k] = t;
	}
}

/* A run of reaped units of one submission, as the engine's loop ends it. */
struct run {
	struct io_batch *b;
	uint32_t n, whole;
};

/* One reaped unit, as the engine's loops see it, and its sample in the reference. */
static void reap_one(struct fixture *f, struct io_unit *io, int res, struct run *r, uint64_t now)
{
	struct dir_stats *ref = &f->ref.dir[DDIR_READ];

	ref->short_ios += res != BS;
	dir_account_n(&f->j, ref, now - io->batch->issue_ns, now - io->batch->start_ns, 1);
	if (!f->j.single) {
		job_account(&f->j, io, res, now);
		job_reaped(&f->j, io->batch, 1, 0, now);
		return;
	}
	if (io->batch != r->b) {
		if (r->b)
			job_reaped(&f->j, r->b, r->n, r->whole, now);
		*r = (struct run){io->batch, 0, 0};
	}
	r->n++;
	if (res == BS)
		r->whole++;
	else
		job_account(&f->j, io, res, now);
}

static void same_lat(const struct lat_stat *a, const struct lat_stat *b)
{
	CHECK_EQ(a->n, b->n);
	CHECK_EQ(a->min, b->min);
	CHECK_EQ(a->max, b->max);
	CHECK_EQ(a->sum, b->sum);
	CHECK(a->sumsq == b->sumsq);
}

static void run(bool single, uint64_t seed)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint64_t rng = seed, now = 1000000;
	const struct dir_stats *got, *want;
	unsigned k = 0, shorts = 0;

	CHECK(f);
	setup(f, single, &rng, &now);
	while (k < NR_UNITS) {
		unsigned m = 1 + (unsigned)rng_below(&rng, 3 * PER_BATCH / 2);
		struct run r = {NULL, 0, 0};

		now += 1 + rng_below(&rng, 200000);
		for (unsigned i = 0; i < m && k < NR_UNITS; i++, k++) {
			unsigned u = f->order[k];
			int res = u % 7 == 3 ? BS / 2 : BS;

			shorts += res != BS;
			reap_one(f, &f->units[u], res, &r, now);
		}
		if (r.b)
			job_reaped(&f->j, r.b, r.n, r.whole, now);
	}
	got = &f->st.dir[DDIR_READ];
	want = &f->ref.dir[DDIR_READ];
	same_lat(&got->clat, &want->clat);
	same_lat(&got->lat, &want->lat);
	CHECK_EQ(got->clat.n, NR_UNITS);
	CHECK(!memcmp(&got->clat_hist, &want->clat_hist, sizeof(got->clat_hist)));
	CHECK(!memcmp(&got->lat_hist, &want->lat_hist, sizeof(got->lat_hist)));
	CHECK_EQ(got->short_ios, shorts);
	CHECK_EQ(f->j.short_missing[DDIR_READ], (uint64_t)shorts * (BS / 2));
	CHECK_EQ(f->j.nr_free_batches, NR_BATCHES);
	for (unsigned i = 0; i < NR_BATCHES; i++)
		CHECK(!f->batches[i].inflight);
	free(f);
}

static void test_one_direction(void)
{
	for (uint64_t seed = 1; seed <= 50; seed++)
		run(true, seed);
}

static void test_units_apart(void)
{
	for (uint64_t seed = 1; seed <= 50; seed++)
		run(false, seed);
}

static const struct test_case cases[] = {
    {"one_direction", test_one_direction, 0},
    {"units_apart", test_units_apart, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
