/* SPDX-License-Identifier: MIT */
/*
 * I/O engines, fio's ioengine: a small ops table called per batch, never
 * per I/O.  An engine queues and commits a batch of planned units, and
 * reaps completions, accounting each with job_account() and returning its
 * unit to the job's idle stack.  The units that ended in one call are the
 * ones pushed on the stack by it (verify relies on this): a sync engine's
 * submit, an async engine's reap.
 */
#ifndef BLKRING_TOOLS_ENGINE_H
#define BLKRING_TOOLS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

struct job;
struct job_opts;
struct io_unit;
struct blkring_params;

struct bench_engine {
	const char *name;
	/* Completes every I/O inside submit: one at a time, no submission
	 * latency, nothing to reap (fio's sync engines). */
	bool sync;
	/* Optional: per-job set-up and teardown in the job's thread. */
	int (*init)(struct job *j);
	void (*exit)(struct job *j);
	/* Queues and commits n units: a count >= 0 (the ring's submit returns what it
	 * took), or a negative errno (nothing queued). */
	int (*submit)(struct job *j, struct io_unit **ios, unsigned n);
	/* Async engines: reaps at least min and at most max completions, setting j->now_ns
	 * to the stamp they were accounted at; returns how many or -errno. */
	int (*reap)(struct job *j, unsigned min, unsigned max);
	/* Optional: the ring's tw_wait_nr and tw_wait_ns so far (blkring_ring_stats),
	 * read only when measuring starts and when the job ends. */
	void (*tw_wait)(struct job *j, uint64_t *nr, uint64_t *ns);
};

/* Where a job's device comes from: its filename, or the engine's options. */
enum engine_dev {
	ENGINE_DEV_FILENAME,
	ENGINE_DEV_NULL, /* fio's null engine: a null device of the job's size */
	ENGINE_DEV_NBD,  /* fio's nbd engine: uri= */
	ENGINE_DEV_RBD,  /* fio's rbd engine: pool=, rbdname=, clientname= */
};

/*
 * A name ioengine= takes: blkring's engines, and fio's names for the
 * engines block jobs use, each run by one of blkring's (asynchronous ones
 * on a ring, synchronous ones by blocking calls).
 */
struct engine_name {
	const char *name;
	const struct bench_engine *engine;
	const char *note; /* for fio's names: what runs them, said once per run */
	enum engine_dev dev;
};

/* Every name, NULL-terminated, in the order messages list them; at most
 * ENGINE_NAMES_MAX entries, so a run can mark the ones it has noted. */
#define ENGINE_NAMES_MAX 32
extern const struct engine_name engine_names[];
/* The entry for that name, or NULL. */
const struct engine_name *engine_find(const char *name);

extern const struct bench_engine engine_blkring;
/* The ring setup a blkring job asks for: flags from its hipri,
 * sqthread_poll, tw_* and taskrun options. */
void engine_blkring_params(const struct job_opts *o, struct blkring_params *p);
extern const struct bench_engine engine_sync;

#endif
