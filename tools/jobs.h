/* SPDX-License-Identifier: MIT */
/*
 * Job definitions from the command line and job files, as fio builds them:
 * options before the first --name are global; --name=X starts a job; in a
 * job file [global] applies to the sections below it.  Command-line global
 * options override what the files say.  A job with stonewall starts a new
 * group.
 */
#ifndef BLKRING_TOOLS_JOBS_H
#define BLKRING_TOOLS_JOBS_H

#include <stdbool.h>

#include "options.h"

struct kv {
	char *key, *val;
};

struct kvlist {
	struct kv *v;
	unsigned nr, cap;
};

int kvlist_set(struct kvlist *l, const char *key, const char *val);
void kvlist_free(struct kvlist *l);

#define JOB_WHERE_MAX 1100

struct job_def {
	struct job_opts o;
	struct kvlist given; /* the job's own options, as text, for "job options" */
	unsigned groupid;
	unsigned phase;            /* jobs of one phase run side by side; stonewall starts one */
	char where[JOB_WHERE_MAX]; /* "FILE:LINE" of its section, or "command line" */
};

struct bench_cfg {
	struct run_opts run;
	struct job_def *defs;
	unsigned nr_defs;
	unsigned nr_groups;
	struct kvlist global_given; /* "global options" */
	/* fio's command flags (--help also with --cmdhelp, which names an
	 * option or "all"). */
	bool help, version, showcmd, parse_only, readonly, warnings_fatal;
	const char *cmdhelp;
	const char **sections; /* --section=NAME: the job file sections that run */
	unsigned nr_sections;
	char *showcmd_text; /* --showcmd: the job files as one command line */
	char **places;      /* what job_opts.where points to */
	unsigned nr_places;
};

/* Where a job's option was set, or the job's own place when it was not. */
const char *def_where(const struct job_def *d, const char *opt);
/* Records "PLACE: job 'NAME': MESSAGE" (PLACE where opt was set; NULL: the
 * job's section) and returns -EINVAL. */
int def_error(const struct job_def *d, const char *opt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parses `blkring bench` arguments (argv[0] is the first argument). */
int bench_cfg_parse(struct bench_cfg *cfg, int argc, char **argv);
void bench_cfg_free(struct bench_cfg *cfg);

#endif
