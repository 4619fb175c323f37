// SPDX-License-Identifier: MIT
/*
 * The bench's command line and job files (tools/jobs.c, jobfile.c,
 * options.c).  The input is argv, one argument per line, then a line "%%"
 * and a job file.  Every argument that is not an option names the job
 * file, which the parser reads through /proc/self/fd from a memfd, so the
 * real reader (size cap, NUL check) runs and no fuzzed path is opened.
 * Every parse answers 0 or -errno with a message; a parsed configuration
 * has jobs with names, filenames and groups in order.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "blkring.h"
#include "../../tools/error.h"
#include "../../tools/jobs.h"
#include "util.h"

#define MAX_ARGS 64

static int job_fd = -1;
static char job_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	job_fd = memfd_create("fuzz-job", 0);
	FUZZ_CHECK(job_fd >= 0, "memfd_create: %s", strerror(errno));
	snprintf(job_path, sizeof(job_path), "/proc/self/fd/%d", job_fd);
	return 0;
}

static void job_file(const char *text, size_t len)
{
	FUZZ_CHECK(!ftruncate(job_fd, 0) && pwrite(job_fd, text, len, 0) == (ssize_t)len,
	           "job file: %s", strerror(errno));
}

static void check_cfg(const struct bench_cfg *cfg)
{
	unsigned group = 0;

	FUZZ_CHECK(cfg->nr_defs && cfg->nr_groups && cfg->nr_groups <= cfg->nr_defs,
	           "%u jobs in %u groups", cfg->nr_defs, cfg->nr_groups);
	for (unsigned i = 0; i < cfg->nr_defs; i++) {
		const struct job_def *d = &cfg->defs[i];

		FUZZ_CHECK(memchr(d->o.name, '\0', sizeof(d->o.name)) &&
		               memchr(d->o.filename, '\0', sizeof(d->o.filename)) &&
		               d->o.filename[0],
		           "job %u: name or filename", i);
		FUZZ_CHECK(d->groupid == group || d->groupid == group + 1,
		           "job %u: group %u after %u", i, d->groupid, group);
		group = d->groupid;
		FUZZ_CHECK(d->o.iodepth >= 1 && d->o.numjobs >= 1, "job %u: iodepth %u numjobs %u",
		           i, d->o.iodepth, d->o.numjobs);
		for (unsigned k = 0; k < d->given.nr; k++)
			FUZZ_CHECK(d->given.v[k].key && d->given.v[k].val, "job %u: option %u", i,
			           k);
	}
	FUZZ_CHECK(group + 1 == cfg->nr_groups, "last group %u of %u", group, cfg->nr_groups);
}

static void parse(int argc, char **argv)
{
	struct bench_cfg cfg;
	int ret = bench_cfg_parse(&cfg, argc, argv);

	if (ret) {
		const char *msg = tool_last_error();

		FUZZ_CHECK(ret < 0 && ret > -4096, "parse %d", ret);
		FUZZ_CHECK(ret == -ENOMEM || (msg && *msg), "parse %d without a message", ret);
	} else if (!cfg.help && !cfg.version) {
		check_cfg(&cfg);
	}
	bench_cfg_free(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 1], *text, *line, *file = NULL;
	int argc = 0;

	/* A job file may hold NULs (the reader refuses them): keep the bytes. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = text; line && argc < MAX_ARGS;) {
		char *next = memchr(line, '\n', size - (size_t)(line - text));

		if (next)
			*next++ = '\0';
		if (!strcmp(line, "%%")) {
			file = next;
			break;
		}
		if (*line)
			argv[argc++] = line[0] == '-' ? line : job_path;
		line = next;
	}
	argv[argc] = NULL;
	job_file(file ? file : "", file ? size - (size_t)(file - text) : 0);
	parse(argc, argv);
	free(text);
	return 0;
}
