// SPDX-License-Identifier: MIT
/*
 * Job definitions from job files and the command line: [global]
 * inheritance, command-line overrides, comments, bare keys, stonewall
 * groups, the recorded option text, and every error with its place.
 */
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "../tools/error.h"
#include "../tools/jobfile.h"
#include "../tools/jobs.h"
#include "test.h"

static char path[64];

/* Writes a job file; its path is in `path`. */
static void job_file(const char *text)
{
	int fd;

	strcpy(path, "/tmp/blkring-jobXXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static int parse(struct bench_cfg *cfg, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, cfg);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return bench_cfg_parse(cfg, argc, argv);
}

static const char *given(const struct kvlist *l, const char *key)
{
	for (unsigned i = 0; i < l->nr; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].val;
	return NULL;
}

static void fails(struct bench_cfg *cfg, int ret, const char *frag1, const char *frag2)
{
	const char *msg = tool_last_error();

	if (ret != -EINVAL && ret != -ENOENT)
		TEST_FAIL("parse gave %d, expected an error (%s)", ret, msg);
	if (!strstr(msg, frag1) || (frag2 && !strstr(msg, frag2)))
		TEST_FAIL("message '%s' lacks '%s' or '%s'", msg, frag1, frag2 ? frag2 : "");
	bench_cfg_free(cfg);
}

static void test_inheritance(void)
{
	struct bench_cfg cfg;

	job_file("; a comment\n"
	         "# another\n"
	         "[global]\n"
	         "filename=null:irqmode=none\n"
	         "  bs = 8k   ; trailing comment\n"
	         "iodepth=4 # and this\n"
	         "time_based\n"
	         "runtime=1\n"
	         "\n"
	         "[first]\n"
	         "rw=randread\r\n"
	         "[second]\n"
	         "iodepth=16\n"
	         "norandommap\n"
	         "[global]\n"
	         "bs=16k\n"
	         "[third]\n");
	CHECK_EQ(parse(&cfg, path, NULL), 0);
	CHECK_EQ(cfg.nr_defs, 3);
	CHECK(!strcmp(cfg.defs[0].o.name, "first"));
	CHECK(!strcmp(cfg.defs[0].o.filename, "null:irqmode=none"));
	CHECK(!strcmp(rw_modes[cfg.defs[0].o.rw.mode].name, "randread"));
	CHECK_EQ(cfg.defs[0].o.bs[DDIR_READ], 8192);
	CHECK_EQ(cfg.defs[0].o.iodepth, 4);
	CHECK(cfg.defs[0].o.time_based);
	CHECK_EQ(cfg.defs[1].o.iodepth, 16);
	CHECK(cfg.defs[1].o.norandommap);
	CHECK(!cfg.defs[0].o.norandommap);
	CHECK(!strcmp(rw_modes[cfg.defs[1].o.rw.mode].name, "read"));
	/* a later [global] applies to the sections below it only */
	CHECK_EQ(cfg.defs[1].o.bs[DDIR_READ], 8192);
	CHECK_EQ(cfg.defs[2].o.bs[DDIR_READ], 16384);
	CHECK_EQ(cfg.defs[2].o.iodepth, 4);
	/* the text as given, for "job options" and "global options" */
	CHECK(!strcmp(given(&cfg.defs[1].given, "iodepth"), "16"));
	/* a bare key is left out, as fio leaves it out */
	CHECK(given(&cfg.defs[1].given, "norandommap") == NULL);
	CHECK(given(&cfg.defs[1].given, "bs") == NULL);
	CHECK(!strcmp(given(&cfg.global_given, "bs"), "16k"));
	CHECK(!strcmp(given(&cfg.global_given, "iodepth"), "4"));
	CHECK(strstr(cfg.defs[1].where, ":12"));
	bench_cfg_free(&cfg);
	unlink(path);
}

static void test_command_line_overrides(void)
{
	struct bench_cfg cfg;

	job_file("[global]\nfilename=null:\nbs=8k\nclocksource=clock_gettime\n"
	         "[a]\niodepth=4\nrw=write\n");
	/* globals on the command line win over the file's, wherever they stand */
	CHECK_EQ(parse(&cfg, "--iodepth=32", path, "--clocksource=cpu", "--bs=1k", NULL), 0);
	CHECK_EQ(cfg.nr_defs, 1);
	CHECK_EQ(cfg.defs[0].o.iodepth, 32);
	CHECK_EQ(cfg.defs[0].o.bs[DDIR_WRITE], 1024);
	CHECK(!strcmp(rw_modes[cfg.defs[0].o.rw.mode].name, "write"));
	CHECK_EQ(cfg.run.clocksource, 0);
	CHECK(!strcmp(given(&cfg.global_given, "iodepth"), "32"));
	bench_cfg_free(&cfg);
	unlink(path);
}

static void test_command_line_jobs(void)
{
	struct bench_cfg cfg;

	CHECK_EQ(parse(&cfg, "--filename=null:", "--iodepth=8", "--output-format=json", "--name=a",
	               "--rw=randread", "--time_based", "--runtime=2", "--name=b", "--iodepth=2",
	               "--numjobs=3", "--output=out.json", NULL),
	         0);
	CHECK_EQ(cfg.nr_defs, 2);
	CHECK(!strcmp(cfg.defs[0].o.name, "a") && !strcmp(cfg.defs[1].o.name, "b"));
	CHECK_EQ(cfg.defs[0].o.iodepth, 8);
	CHECK(cfg.defs[0].o.time_based);
	CHECK_EQ(cfg.defs[1].o.iodepth, 2);
	CHECK(!cfg.defs[1].o.time_based);
	CHECK_EQ(cfg.defs[1].o.numjobs, 3);
	CHECK(!strcmp(cfg.defs[1].o.filename, "null:"));
	CHECK_EQ(cfg.run.output_format, FORMAT_JSON);
	CHECK(!strcmp(cfg.run.output, "out.json"));
	CHECK(!strcmp(given(&cfg.defs[0].given, "name"), "a"));
	CHECK(given(&cfg.defs[0].given, "time_based") == NULL);
	CHECK(given(&cfg.defs[1].given, "output") == NULL);
	CHECK(!strcmp(given(&cfg.global_given, "filename"), "null:"));
	CHECK(given(&cfg.global_given, "output-format") == NULL);
	CHECK(!strcmp(cfg.defs[0].where, "command line"));
	bench_cfg_free(&cfg);
}

static void test_stonewall_groups(void)
{
	struct bench_cfg cfg;

	job_file("[global]\nfilename=null:\n[a]\n[b]\nstonewall\n[c]\n[d]\nwait_for_previous=1\n"
	         "[e]\nstonewall=0\n");
	CHECK_EQ(parse(&cfg, "--name=first", "--stonewall", "--filename=null:", path, NULL), 0);
	CHECK_EQ(cfg.nr_defs, 6);
	/* the first job's stonewall opens no group: nothing ran before it */
	CHECK_EQ(cfg.defs[0].groupid, 0);
	CHECK_EQ(cfg.defs[1].groupid, 0);
	CHECK_EQ(cfg.defs[2].groupid, 1);
	CHECK_EQ(cfg.defs[3].groupid, 1);
	CHECK_EQ(cfg.defs[4].groupid, 2);
	CHECK_EQ(cfg.defs[5].groupid, 2);
	CHECK_EQ(cfg.nr_groups, 3);
	bench_cfg_free(&cfg);
	unlink(path);
}

static void test_help_and_version(void)
{
	struct bench_cfg cfg;

	/* no jobs needed, and nothing else is checked */
	CHECK_EQ(parse(&cfg, "--help", NULL), 0);
	CHECK(cfg.help);
	bench_cfg_free(&cfg);
	CHECK_EQ(parse(&cfg, "--bs=nonsense", "--version", NULL), 0);
	CHECK(cfg.version);
	bench_cfg_free(&cfg);
}

/* fio's command flags, and "--name value" for options that take a value. */
static void test_command_flags(void)
{
	struct bench_cfg cfg;

	CHECK_EQ(parse(&cfg, "--name", "a", "--filename", "null:", "--time_based", "--runtime", "1",
	               "--rw", "write", "--output-format", "json", NULL),
	         0);
	CHECK_EQ(cfg.nr_defs, 1);
	CHECK(!strcmp(cfg.defs[0].o.filename, "null:") && cfg.defs[0].o.time_based == true);
	CHECK(!strcmp(rw_modes[cfg.defs[0].o.rw.mode].name, "write"));
	CHECK_EQ(cfg.run.output_format, FORMAT_JSON);
	bench_cfg_free(&cfg);
	CHECK_EQ(parse(&cfg, "--cmdhelp", NULL), 0);
	CHECK(cfg.help && !strcmp(cfg.cmdhelp, "all"));
	bench_cfg_free(&cfg);
	CHECK_EQ(parse(&cfg, "--cmdhelp=bs", NULL), 0);
	CHECK(!strcmp(cfg.cmdhelp, "bs"));
	bench_cfg_free(&cfg);
	job_file("[global]\nfilename=null:\n[a]\nrw=write\n[b]\ntime_based\nruntime=1\n");
	CHECK_EQ(parse(&cfg, "--showcmd", "--parse-only", "--warnings-fatal", "--section", "b",
	               path, NULL),
	         0);
	CHECK(cfg.showcmd && cfg.parse_only && cfg.warnings_fatal);
	CHECK_EQ(cfg.nr_defs, 1);
	CHECK(!strcmp(cfg.defs[0].o.name, "b"));
	CHECK(!strcmp(cfg.showcmd_text,
	              "blkring bench --filename=null: --name=b --time_based --runtime=1"));
	bench_cfg_free(&cfg);
	fails(&cfg, parse(&cfg, "--readonly", path, NULL),
	      "job 'a': rw=write changes data, and --readonly allows reads only", NULL);
	fails(&cfg, parse(&cfg, "--showcmd=1", path, NULL), "--showcmd takes no value", NULL);
	fails(&cfg, parse(&cfg, "--section=", path, NULL), "--section needs a section name", NULL);
	unlink(path);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char file[128];
	FILE *f;

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	f = fopen(file, "w");
	CHECK(f && fputs(text, f) >= 0 && !fclose(f));
}

/* fio's include (a relative name from the including file's directory),
 * ${VAR}, comments anywhere, and a group per later job file. */
static void test_include_env_comments(void)
{
	char dir[] = "/tmp/blkring-incXXXXXX", main_fio[64], loop_fio[64], sect_fio[64];
	struct bench_cfg cfg;

	CHECK(mkdtemp(dir));
	snprintf(main_fio, sizeof(main_fio), "%s/main.fio", dir);
	snprintf(loop_fio, sizeof(loop_fio), "%s/loop.fio", dir);
	snprintf(sect_fio, sizeof(sect_fio), "%s/sect.fio", dir);
	write_file(dir, "main.fio", "[a]\nfilename=null:\ninclude sub.fio\nrw=write#c\n");
	write_file(dir, "sub.fio",
	           "iodepth=${BLKRING_TEST_DEPTH}\nbs=8k;c\nsize=1${NO_SUCH_VAR}M\n");
	write_file(dir, "loop.fio", "[a]\ninclude l2.fio\n");
	write_file(dir, "l2.fio", "include l2.fio\n");
	write_file(dir, "sect.fio", "[a]\ninclude s2.fio\n");
	write_file(dir, "s2.fio", "bs=4k\n[b]\n");
	setenv("BLKRING_TEST_DEPTH", "6", 1);
	CHECK_EQ(parse(&cfg, main_fio, main_fio, NULL), 0);
	CHECK_EQ(cfg.nr_defs, 2);
	CHECK_EQ(cfg.defs[0].o.iodepth, 6);
	CHECK_EQ(cfg.defs[0].o.bs[DDIR_READ], 8192);
	CHECK_EQ(cfg.defs[0].o.size.bytes, 1 << 20);
	CHECK(!strcmp(rw_modes[cfg.defs[0].o.rw.mode].name, "write"));
	CHECK(!strcmp(given(&cfg.defs[0].given, "iodepth"), "6"));
	CHECK(cfg.defs[1].groupid == 1 && cfg.nr_groups == 2);
	bench_cfg_free(&cfg);
	fails(&cfg, parse(&cfg, loop_fio, NULL), "includes nest more than 16 deep", NULL);
	fails(&cfg, parse(&cfg, sect_fio, NULL), "s2.fio:2: an included file holds options", NULL);
	for (unsigned i = 0; i < 6; i++) {
		static const char *const names[] = {"main.fio", "sub.fio",  "loop.fio",
		                                    "l2.fio",   "sect.fio", "s2.fio"};
		char file[128];

		snprintf(file, sizeof(file), "%s/%s", dir, names[i]);
		unlink(file);
	}
	rmdir(dir);
}

/* Every job file error names the file and the line. */
static void test_file_errors(void)
{
	static const struct {
		const char *text;
		const char *line, *frag;
	} cases[] = {
	    {"bs=4k\n", ":1: 'bs=4k' comes before any section", "[global]"},
	    {"[a]\nfilename=null:\n[b\n", ":3: expected a section header", NULL},
	    {"[a]\n[ ]\n", ":2: the section has no name", NULL},
	    {"[a]\n= 5\n", ":2: expected key=value, found no key", NULL},
	    {"[a]\n\n\nbogus=1\n", ":4: unknown option 'bogus'", NULL},
	    {"[global]\nbs=4x\n", ":2: option 'bs': '4x' is not a size", NULL},
	    {"[a]\niodepth\n", ":2: option 'iodepth' needs a value", NULL},
	    {"[a]\nblockalign=8k\n",
	     ":2: option 'blockalign' is a fio option blkring does not support", NULL},
	    {"[a]\noutput=x\n", ":2: option 'output' is taken on the command line only", NULL},
	    {"[a]\nclocksource=cpu\n", ":2: option 'clocksource' applies to the whole run", NULL},
	    /* a job's error about an option is at the line that set it */
	    {"[global]\nfilename=null:\n[a]\ntime_based\n",
	     ":4: job 'a': time_based needs a runtime", NULL},
	    {"[global]\ntime_based\n[a]\nfilename=null:\n",
	     ":2: job 'a': time_based needs a runtime", NULL},
	    {"[global]\nioengine=sync\nhipri\n[a]\nfilename=null:\n",
	     ":3: job 'a': hipri=1 needs ioengine=blkring", NULL},

	    {"[a]\nfilename=null:\niodepth_batch_complete_min=8\niodepth_batch_complete_max=4\n",
	     ":3: job 'a': iodepth_batch_complete_min (8) is above iodepth_batch_complete_max (4)",
	     NULL},
	    {"[a]\nfilename=null:\niodepth=32769\n",
	     ":3: job 'a': option 'iodepth': 32769 is out of range for ioengine=blkring",
	     "(1 to 32768"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bench_cfg cfg;
		char want[128];

		job_file(cases[i].text);
		snprintf(want, sizeof(want), "%s%s", path, cases[i].line);
		fails(&cfg, parse(&cfg, path, NULL), want, cases[i].frag);
		unlink(path);
	}
}

static void test_command_line_errors(void)
{
	struct bench_cfg cfg;

	fails(&cfg, parse(&cfg, "--name=a", "--filename=null:", "--bs=1q", NULL),
	      "command line: option 'bs': '1q' is not a size", NULL);
	fails(&cfg, parse(&cfg, "--nosuch=1", NULL), "command line: unknown option 'nosuch'", NULL);
	fails(&cfg, parse(&cfg, "--name=a", "--filename=null:", "--zonemode=zbd", NULL),
	      "option 'zonemode': 'zbd' needs a zoned block device", NULL);
	fails(&cfg, parse(&cfg, "-x", NULL), "command line: unknown flag '-x'", NULL);
	fails(&cfg, parse(&cfg, "--=3", NULL), "'--=3' has no option name", NULL);
	fails(&cfg, parse(&cfg, "--output-format=xml", "--name=a", NULL),
	      "option 'output-format': 'xml' is not one of normal, json", NULL);
	fails(&cfg, parse(&cfg, "--filename=null:", NULL), "no jobs", "--name=NAME");
	/* no filename: fio's NAME.JOB.FILE, made when the job opens */
	CHECK_EQ(parse(&cfg, "--name=a", "--runtime=1", "--time_based", NULL), 0);
	bench_cfg_free(&cfg);
	fails(&cfg, parse(&cfg, "/nonexistent/job.fio", NULL),
	      "/nonexistent/job.fio: cannot open the job file", "No such file");
}

/* A ring's limit binds the blkring engine only: sync ignores iodepth (with a note). */
static void test_iodepth_limit(void)
{
	struct bench_cfg cfg;

	CHECK_EQ(parse(&cfg, "--name=a", "--filename=null:", "--iodepth=32768", NULL), 0);
	bench_cfg_free(&cfg);
	CHECK_EQ(
	    parse(&cfg, "--name=a", "--filename=null:", "--ioengine=sync", "--iodepth=65536", NULL),
	    0);
	bench_cfg_free(&cfg);
	fails(&cfg, parse(&cfg, "--iodepth=65536", "--name=a", "--filename=null:", NULL),
	      "command line: job 'a': option 'iodepth': 65536 is out of range", "(1 to 32768");
}

static int count_keys(void *ctx, const char *section, const char *key, const char *val,
                      const char *where)
{
	unsigned *n = ctx;

	(void)section;
	(void)val;
	(void)where;
	if (key)
		(*n)++;
	return 0;
}

static void test_jobfile_text(void)
{
	char text[] = "[s]\na=1\nb = 2 ;x\nc\n#d=4\n  ;e=5\nf=a#b\n";
	unsigned n = 0;

	CHECK_EQ(jobfile_parse_text("t", text, count_keys, &n), 0);
	CHECK_EQ(n, 4);
}

static const struct test_case cases[] = {
    {"inheritance", test_inheritance, 0},
    {"command_line_overrides", test_command_line_overrides, 0},
    {"command_line_jobs", test_command_line_jobs, 0},
    {"stonewall_groups", test_stonewall_groups, 0},
    {"help_and_version", test_help_and_version, 0},
    {"command_flags", test_command_flags, 0},
    {"include_env_comments", test_include_env_comments, 0},
    {"file_errors", test_file_errors, 0},
    {"command_line_errors", test_command_line_errors, 0},
    {"iodepth_limit", test_iodepth_limit, 0},
    {"jobfile_text", test_jobfile_text, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
