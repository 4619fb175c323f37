// SPDX-License-Identifier: MIT
/*
 * `blkring bench`: parse, open the devices and check every job against its
 * device before anything runs, then run the groups one after another (each
 * job a thread), watch for SIGINT/SIGTERM and finished jobs, and print the
 * reports.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "bench.h"
#include "compiler.h"
#include "engine.h"
#include "error.h"
#include "files.h"
#include "job.h"
#include "latlog.h"
#include "output.h"
#include "progress.h"
#include "text.h"
#include "timing.h"

struct bench_run {
	struct bench_cfg cfg;
	struct job *jobs;
	struct job_stats *stats;
	struct job_stats *snaps; /* --status-interval's copies, one per job */
	unsigned snap_gen;
	uint64_t next_status_ns;
	unsigned nr_jobs;
	_Atomic bool stop;       /* the run: no later phase starts */
	_Atomic bool phase_stop; /* the running jobs (a signal, or fio's exitall) */
	bool interrupted;        /* by SIGINT or SIGTERM */
	uint64_t start_ns;       /* the run's, for the JSON's elapsed */
	bool start_failed;
	int sig_fd, done_fd;
	FILE *out;
	bool progress;
	struct progress prog;
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: blkring bench [--option=value ...] [jobfile ...]\n"
	        "\n"
	        "Runs fio-style jobs on blkring devices. Options before the first --name apply\n"
	        "to every job (and override job files); --name=NAME starts a job. Job files are\n"
	        "fio's: [global] and [job] sections, key=value, ';' and '#' comments.\n"
	        "Exit status: 0 all jobs clean, 1 an I/O error, 2 a usage or parse error,\n"
	        "128 (129 with an I/O error) stopped by SIGINT or SIGTERM.\n"
	        "\n"
	        "Flags (fio's): --help, --version, --cmdhelp[=OPTION|all], --showcmd (the job\n"
	        "files as one command line), --parse-only, --readonly (refuse jobs that write),\n"
	        "--warnings-fatal (a note refuses the run), --section=NAME (run only that job\n"
	        "file section; again for more). --name value is --name=value.\n"
	        "\n"
	        "Options:\n");
	opts_help(f);
}

/* cpus as a CPU list: "0-3,6". */
static void cpu_list(char *buf, size_t size, const cpu_set_t *cpus)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && len < size; c++) {
		int last = c;

		if (!CPU_ISSET(c, cpus))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, cpus))
			last++;
		len += (size_t)snprintf(buf + len, size - len, last > c ? "%s%d-%d" : "%s%d",
		                        len ? "," : "", c, last);
		c = last;
	}
}

static void *probe_thread(void *arg)
{
	return arg;
}

/* Whether a thread may run on cpus: pthread_setaffinity_np() refuses a set
 * with no CPU this process may use (offline, outside its cpuset), as the
 * job's thread and the ring's SQ thread would be refused once started. */
static bool cpus_usable(const cpu_set_t *cpus)
{
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	ret = pthread_create(&t, &attr, probe_thread, NULL);
	pthread_attr_destroy(&attr);
	if (!ret)
		pthread_join(t, NULL);
	/* Anything but EINVAL is not about the CPUs: the run reports it. */
	return ret != EINVAL;
}

static int cpus_error(const struct job_def *d, const char *opt, const char *given)
{
	cpu_set_t cpus;
	char list[256];

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		CPU_ZERO(&cpus);
	cpu_list(list, sizeof(list), &cpus);
	return def_error(d, opt, "%s=%s: no CPU this process may use (it runs on CPUs %s)", opt,
	                 given, list);
}

/* The CPUs a job pins its threads to, checked before anything starts. */
static int def_cpus_fit(const struct job_def *d)
{
	const struct job_opts *o = &d->o;
	cpu_set_t cpus;
	char given[256];

	if (CPU_COUNT(&o->cpus_allowed) && !cpus_usable(&o->cpus_allowed)) {
		cpu_list(given, sizeof(given), &o->cpus_allowed);
		return cpus_error(d, "cpus_allowed", given);
	}
	if (o->ioengine->engine != &engine_blkring || !o->sqthread_poll ||
	    !opt_is_set(o, "sqthread_poll_cpu"))
		return 0;
	CPU_ZERO(&cpus);
	CPU_SET(o->sqthread_poll_cpu, &cpus);
	if (cpus_usable(&cpus))
		return 0;
	snprintf(given, sizeof(given), "%u", o->sqthread_poll_cpu);
	return cpus_error(d, "sqthread_poll_cpu", given);
}

/*
 * Whether a file can be written where path says, looked at rather than
 * opened, so that nothing is created or emptied by a run that is refused:
 * a FIFO, /dev/null or a dangling link pass as fopen would open them.
 * `what` names it in the message ("output=FILE").
 */
static int check_writable(const char *what, const char *path)
{
	char *dir, *slash;
	int ret = 0;

	if (!access(path, W_OK))
		return 0;
	if (errno != ENOENT)
		return tool_error(-errno, "%s: %s", what, strerror(errno));
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	if (access(slash ? dir : ".", W_OK | X_OK))
		ret = tool_error(-errno, "%s: %s", what, strerror(errno));
	free(dir);
	return ret;
}

/*
 * --output is looked at before any device opens, so that a path that
 * cannot be written stops the run before a file device is created, and
 * opened (emptied) only once every job has been checked, so that a
 * refused run leaves an existing FILE as it was.
 */
static int bench_check_output(const struct bench_run *br)
{
	char what[BENCH_PATH_MAX + 16];

	if (!br->cfg.run.output[0])
		return 0;
	snprintf(what, sizeof(what), "output=%s", br->cfg.run.output);
	return check_writable(what, br->cfg.run.output);
}

/* A job's logs, checked as --output is: a log that cannot be created
 * refuses the run rather than failing the job once it started. */
static int job_check_logs(const struct job *j)
{
	static const char *const opts[LATLOG_NR] = {"write_lat_log",  "write_lat_log",
	                                            "write_lat_log",  "write_bw_log",
	                                            "write_iops_log", "write_hist_log"};
	char path[BENCH_PATH_MAX + 64], what[sizeof(path) + BENCH_NAME_MAX + 64];

	for (unsigned k = 0; k < LATLOG_NR; k++) {
		const char *name = opts_log_name(j->o, opts[k]);

		if (!name)
			continue;
		if (latlog_path(path, sizeof(path), name, k, j->number, j->o->per_job_logs))
			return -EINVAL;
		snprintf(what, sizeof(what), "job '%s': %s: cannot create %s", j->o->name, opts[k],
		         path);
		if (check_writable(what, path))
			return -EINVAL;
	}
	return 0;
}

/* Every job, numbered as fio numbers its threads; nothing opened yet. */
static int bench_jobs(struct bench_run *br)
{
	unsigned n = 0;

	for (unsigned i = 0; i < br->cfg.nr_defs; i++)
		n += br->cfg.defs[i].o.numjobs;
	br->jobs = calloc(n, sizeof(*br->jobs));
	br->stats = calloc(n, sizeof(*br->stats));
	if (br->cfg.run.status_interval_us)
		br->snaps = calloc(n, sizeof(*br->snaps));
	if (!br->jobs || !br->stats || (br->cfg.run.status_interval_us && !br->snaps))
		return tool_error(-ENOMEM, "out of memory for %u jobs", n);
	for (unsigned i = 0; i < br->cfg.nr_defs; i++) {
		const struct job_def *d = &br->cfg.defs[i];

		if (def_cpus_fit(d))
			return -EINVAL;
		for (unsigned k = 0; k < d->o.numjobs; k++) {
			struct job *j = &br->jobs[br->nr_jobs];

			j->def = d;
			j->o = &d->o;
			j->number = ++br->nr_jobs;
			j->clone = k;
			j->engine = d->o.ioengine->engine;
			j->stop = &br->phase_stop;
			j->st = &br->stats[j->number - 1];
			j->snap = br->snaps ? &br->snaps[j->number - 1] : NULL;
			job_stats_init(j->st);
			if (job_check_logs(j))
				return -EINVAL;
		}
	}
	return 0;
}

/* Opens every job's files and checks the job against them. */
static int bench_open_jobs(struct bench_run *br)
{
	for (unsigned i = 0; i < br->nr_jobs; i++) {
		int ret = job_files_open(&br->jobs[i], br->jobs[i].clone, br->cfg.readonly);

		if (ret)
			return ret;
	}
	return 0;
}

/* A note that an option has no effect: fio's warnings, which
 * --warnings-fatal makes errors, so each is counted. */
static void warn(unsigned *nr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(unsigned *nr, const char *fmt, ...)
{
	va_list ap;

	fputs("blkring: note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	(*nr)++;
}

/* Options that set up a ring, on a job that has none. */
static void note_ring_options(const struct job_opts *o, unsigned *nr)
{
	static const char *const ring_opts[] = {
	    "sqthread_poll", "sqthread_poll_cpu", "tw_prio", "tw_issue",
	    "taskrun",       "fixedbufs",         "nowait",  "force_async",
	};

	for (unsigned i = 0; i < ARRAY_SIZE(ring_opts); i++)
		if (opt_is_set(o, ring_opts[i]))
			warn(nr,
			     "job '%s': %s sets up a ring; ioengine=%s has none, so it has no "
			     "effect",
			     o->name, ring_opts[i], o->ioengine->name);
}

/* Kernel engines' options that mean nothing here (their table rows say why). */
static void note_noted_options(const struct job_opts *o, unsigned *nr)
{
	for (unsigned i = 0; i < bench_nr_opts; i++)
		if (bench_opts[i].note && o->set[i])
			warn(nr, "job '%s': %s has no effect: %s", o->name, bench_opts[i].name,
			     bench_opts[i].note);
}

/* bssplit shares over 100%: fio runs them, and so does blkring. */
static void note_bssplit(const struct job_opts *o, unsigned *nr)
{
	for (unsigned d = 0; d < FIO_DDIR_NR; d++)
		if (o->bssplit[d].over && (rw_modes[o->rw.mode].ddirs & (1U << d)))
			warn(nr,
			     "job '%s': bssplit: the %s shares add up to %u%%; as fio, the draw "
			     "stops at 100%%, so the sizes past it get what is left",
			     o->name, ddir_names[d], o->bssplit[d].over);
}

/* fio's engine names: what runs each, once per run (no warning: the job
 * runs as it asks). */
static void note_engine(const struct engine_name *e, uint32_t *noted)
{
	uint32_t bit = 1U << (e - engine_names);

	if (!e->note || (*noted & bit))
		return;
	*noted |= bit;
	fprintf(stderr, "blkring: note: ioengine=%s %s\n", e->name, e->note);
}

/* The notes on the jobs; how many were warnings. */
static unsigned bench_notes(const struct bench_cfg *cfg)
{
	bool thread_note = false;
	uint32_t engines_noted = 0;
	unsigned nr = 0;

	for (unsigned i = 0; i < cfg->nr_defs; i++) {
		const struct job_opts *o = &cfg->defs[i].o;
		bool sync = o->ioengine->engine == &engine_sync;

		if (!o->thread && !thread_note) {
			warn(&nr, "jobs always run as threads; thread=0 has no effect");
			thread_note = true;
		}
		note_engine(o->ioengine, &engines_noted);
		if (opt_is_set(o, "sqthread_poll_cpu") && !o->sqthread_poll && !sync)
			warn(&nr,
			     "job '%s': sqthread_poll_cpu=%u has no effect without "
			     "sqthread_poll=1",
			     o->name, o->sqthread_poll_cpu);
		if (sync && o->iodepth > 1)
			warn(&nr,
			     "job '%s': ioengine=%s does one I/O at a time; iodepth=%u has no "
			     "effect",
			     o->name, o->ioengine->name, o->iodepth);
		if (sync)
			note_ring_options(o, &nr);
		note_noted_options(o, &nr);
		note_bssplit(o, &nr);
		if (o->io_submit_mode == SUBMIT_OFFLOAD)
			warn(&nr,
			     "job '%s': io_submit_mode=offload has no effect: blkring submits "
			     "inline, as a ring has one owner thread",
			     o->name);
	}
	return nr;
}

/*
 * SIGINT and SIGTERM are blocked before any thread exists (the library
 * starts device threads when a device opens), so every thread inherits the
 * mask and the signals arrive only through the signalfd.
 */
static void bench_block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	/* A shell starts background commands with SIGINT ignored, and an
	 * ignored signal never reaches a signalfd: take them back. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int bench_signals(struct bench_run *br, const sigset_t *set)
{
	br->sig_fd = signalfd(-1, set, SFD_CLOEXEC);
	br->done_fd = eventfd(0, EFD_CLOEXEC);
	if (br->sig_fd < 0 || br->done_fd < 0)
		return tool_error(-errno, "signalfd/eventfd: %s", strerror(errno));
	return 0;
}

static void *job_thread(void *arg)
{
	struct job *j = arg;
	uint64_t one = 1;

	job_main(j);
	atomic_store_explicit(&j->finished, true, memory_order_release);
	if (write(j->done_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	return NULL;
}

static void on_signal(struct bench_run *br)
{
	struct signalfd_siginfo si;

	if (read(br->sig_fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (!atomic_load(&br->stop))
		fprintf(stderr, "%sblkring: terminating on signal %u\n", br->progress ? "\n" : "",
		        si.ssi_signo);
	br->interrupted = true;
	atomic_store(&br->stop, true);
	atomic_store(&br->phase_stop, true);
}

/* fio's group_reporting: b is reported (and judged by steadystate) with a. */
static bool reported_together(const struct job *a, const struct job *b)
{
	return a->o->group_reporting && b->o->group_reporting && a->def->groupid == b->def->groupid;
}

/*
 * One report per job, or per run of group_reporting jobs of one group,
 * merged into the first job's statistics: the final ones (the jobs are
 * over), or --status-interval's copies.  Jobs with stats=0 are left out,
 * as fio leaves them.  Returns the number of reports, or -ENOMEM.
 */
static int build_reports(struct bench_run *br, struct report *out, bool so_far)
{
	const struct job *prev = NULL; /* the last job reported */
	unsigned n = 0;

	for (unsigned i = 0; i < br->nr_jobs; i++) {
		const struct job *j = &br->jobs[i];
		struct job_stats *st = so_far ? j->snap : j->st;

		if (!j->started || !j->o->stats)
			continue;
		if (prev && reported_together(prev, j)) {
			prev = j;
			out[n - 1].run_sum_ns += st->runtime_ns + st->verify_ns;
			job_stats_merge(out[n - 1].st, st);
			out[n - 1].nr_jobs++;
			continue;
		}
		out[n++] = (struct report){.def = j->def,
		                           .groupid = j->def->groupid,
		                           .nr_jobs = 1,
		                           .tid = j->tid,
		                           .st = st,
		                           .run_sum_ns = st->runtime_ns + st->verify_ns};
		prev = j;
	}
	for (unsigned i = 0; i < n; i++) {
		if (report_fold_mixed(&out[i])) {
			report_release(out, n);
			return tool_error(-ENOMEM, "out of memory for the mixed statistics");
		}
	}
	return (int)n;
}

/* The results, in every format asked for, fio's order: terse, JSON, normal. */
static int bench_print(struct bench_run *br, const struct report *reports, unsigned nr)
{
	unsigned formats = br->cfg.run.output_format;
	int ret = 0;

	if (formats & FORMAT_TERSE)
		ret = output_terse(br->out, reports, nr);
	if (!ret && (formats & FORMAT_JSON))
		ret = output_json(br->out, reports, nr, &br->cfg, time(NULL),
		                  since(clock_now_ns(), br->start_ns));
	if (!ret && (formats & FORMAT_NORMAL))
		ret = output_normal(br->out, reports, nr);
	if (ret)
		fprintf(stderr, "blkring: out of memory writing the results\n");
	return ret;
}

static int bench_output(struct bench_run *br, int *status)
{
	struct report *reports = calloc(br->nr_jobs ? br->nr_jobs : 1, sizeof(*reports));
	int nr, ret;

	if (!reports)
		return -ENOMEM;
	/* Every job's errors, reported or not (stats=0). */
	for (unsigned i = 0; i < br->nr_jobs; i++)
		if (br->jobs[i].started && (br->jobs[i].st->error || br->jobs[i].st->total_err))
			*status = EXIT_IO_ERROR;
	nr = build_reports(br, reports, false);
	if (nr < 0) {
		free(reports);
		return nr;
	}
	errno = 0; /* a failed write's, for bench_close_output() */
	ret = bench_print(br, reports, (unsigned)nr);
	report_release(reports, (unsigned)nr);
	free(reports);
	return ret;
}

/*
 * Asks every running job for a copy of its statistics (its thread makes
 * it within a millisecond) and waits for them; a job that is over has its
 * final ones copied.
 */
static void bench_snapshot(struct bench_run *br)
{
	unsigned gen = ++br->snap_gen;

	for (unsigned i = 0; i < br->nr_jobs; i++)
		atomic_store_explicit(&br->jobs[i].snap_req, gen, memory_order_release);
	for (unsigned i = 0; i < br->nr_jobs; i++) {
		struct job *j = &br->jobs[i];

		while (j->started &&
		       atomic_load_explicit(&j->snap_done, memory_order_acquire) != gen) {
			if (atomic_load_explicit(&j->finished, memory_order_acquire)) {
				*j->snap = *j->st;
				break;
			}
			usleep(100);
		}
	}
}

/* fio's --status-interval: the results so far, printed as the final ones. */
static void bench_status(struct bench_run *br)
{
	struct report *reports = calloc(br->nr_jobs, sizeof(*reports));
	int nr;

	if (!reports) {
		fprintf(stderr, "blkring: out of memory writing the results so far\n");
		return;
	}
	bench_snapshot(br);
	if (br->progress)
		progress_clear(&br->prog);
	nr = build_reports(br, reports, true);
	if (nr >= 0) {
		bench_print(br, reports, (unsigned)nr);
		report_release(reports, (unsigned)nr);
	} else {
		fprintf(stderr, "blkring: %s\n", tool_last_error());
	}
	fflush(br->out);
	free(reports);
}

/* Milliseconds until the display or the next status report is due (-1: never). */
static int wait_ms(const struct bench_run *br)
{
	int ms = br->progress ? progress_wait_ms(&br->prog) : -1;
	uint64_t now = clock_now_ns();
	int status_ms;

	if (!br->cfg.run.status_interval_us)
		return ms;
	status_ms =
	    now >= br->next_status_ns ? 0 : (int)((br->next_status_ns - now + 999999) / 1000000);
	return ms < 0 || status_ms < ms ? status_ms : ms;
}

/* Waits for `started` jobs to finish, handling signals, the display and
 * the status reports. */
static void wait_jobs(struct bench_run *br, unsigned started)
{
	unsigned done = 0;

	while (done < started) {
		struct pollfd pfd[2] = {{br->sig_fd, POLLIN, 0}, {br->done_fd, POLLIN, 0}};
		uint64_t v;

		if (poll(pfd, 2, wait_ms(br)) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN)
			on_signal(br);
		if ((pfd[1].revents & POLLIN) && read(br->done_fd, &v, sizeof(v)) == sizeof(v))
			done += (unsigned)v;
		if (br->cfg.run.status_interval_us && clock_now_ns() >= br->next_status_ns &&
		    done < started) {
			bench_status(br);
			br->next_status_ns += br->cfg.run.status_interval_us * 1000;
		}
		if (br->progress)
			progress_show(&br->prog, br->jobs, br->nr_jobs);
	}
}

/* The runs of group_reporting jobs of one group among `nr` jobs, each an
 * ss_group of groups[] (room for nr). */
static void ss_groups(struct job *jobs, unsigned nr, struct ss_group *groups)
{
	for (unsigned i = 0, k; i < nr; i = k) {
		for (k = i + 1; k < nr && reported_together(&jobs[i], &jobs[k]); k++)
			;
		if (!jobs[i].o->group_reporting)
			continue;
		*groups = (struct ss_group){.jobs = &jobs[i], .nr = k - i};
		for (unsigned m = i; m < k; m++)
			jobs[m].ss_group = groups;
		groups++;
	}
}

static void run_group(struct bench_run *br, unsigned first, unsigned nr)
{
	struct job *jobs = &br->jobs[first];
	struct ss_group *groups = calloc(nr, sizeof(*groups));
	struct start_gate gate;
	unsigned started = 0;

	if (!groups) {
		fprintf(stderr, "blkring: out of memory starting the jobs\n");
		br->start_failed = true;
		return;
	}
	ss_groups(jobs, nr, groups);
	start_gate_init(&gate);
	atomic_store(&br->phase_stop, atomic_load(&br->stop));
	for (unsigned i = 0; i < nr && !atomic_load(&br->stop); i++) {
		int ret;

		jobs[i].done_fd = br->done_fd;
		jobs[i].gate = &gate;
		ret = pthread_create(&jobs[i].thread, NULL, job_thread, &jobs[i]);
		if (ret) {
			fprintf(stderr, "blkring: job '%s': cannot start its thread: %s\n",
			        jobs[i].o->name, strerror(ret));
			br->start_failed = true;
			continue;
		}
		jobs[i].started = true;
		started++;
	}
	start_gate_expect(&gate, started);
	wait_jobs(br, started);
	for (unsigned i = 0; i < nr; i++)
		if (jobs[i].started)
			pthread_join(jobs[i].thread, NULL);
	start_gate_destroy(&gate);
	free(groups);
}

static void run_groups(struct bench_run *br)
{
	unsigned i = 0;

	while (i < br->nr_jobs && !atomic_load(&br->stop)) {
		unsigned phase = br->jobs[i].def->phase, n = 0;

		while (i + n < br->nr_jobs && br->jobs[i + n].def->phase == phase)
			n++;
		run_group(br, i, n);
		i += n;
	}
}

/* Results that did not reach their file fail the run (fio exits 0 there). */
static int bench_close_output(struct bench_run *br)
{
	FILE *f = br->out;
	int ret = 0;

	br->out = NULL;
	if (fflush(f) || ferror(f))
		ret = errno ? -errno : -EIO;
	if (f != stdout && fclose(f) && !ret)
		ret = -errno;
	if (ret)
		fprintf(stderr, "blkring: writing the results to %s: %s\n",
		        f == stdout ? "standard output" : br->cfg.run.output, strerror(-ret));
	return ret;
}

static int bench_open_output(struct bench_run *br)
{
	br->out = stdout;
	if (!br->cfg.run.output[0])
		return 0;
	br->out = fopen(br->cfg.run.output, "w");
	if (!br->out)
		return tool_error(-errno, "output=%s: %s", br->cfg.run.output, strerror(errno));
	return 0;
}

/* fio's rule: never with --eta=never, nor when only JSON or terse output
 * goes to standard output; otherwise on a terminal, or anywhere with
 * --eta=always. */
static bool bench_shows_progress(const struct run_opts *run)
{
	if (run->eta == ETA_NEVER || (!(run->output_format & FORMAT_NORMAL) && !run->output[0]))
		return false;
	return run->eta == ETA_ALWAYS || isatty(STDOUT_FILENO);
}

static int bench_prepare(struct bench_run *br)
{
	const char *why;
	sigset_t set;
	unsigned nr;
	int ret;

	bench_block_signals(&set);
	ret = bench_check_output(br) ?: bench_jobs(br) ?: bench_open_jobs(br);
	if (ret)
		return ret;
	nr = bench_notes(&br->cfg);
	if (nr && br->cfg.warnings_fatal)
		return tool_error(-EINVAL,
		                  "%u note%s above, and --warnings-fatal makes them errors", nr,
		                  nr == 1 ? "" : "s");
	if (clock_init((int)br->cfg.run.clocksource, &why) != (int)br->cfg.run.clocksource)
		fprintf(stderr, "blkring: note: timing with clock_gettime: %s\n", why);
	br->progress = bench_shows_progress(&br->cfg.run);
	return bench_signals(br, &set) ?: bench_open_output(br);
}

static void bench_cleanup(struct bench_run *br)
{
	for (unsigned i = 0; i < br->nr_jobs; i++) {
		job_files_close(&br->jobs[i]);
		timing_free(&br->jobs[i]);
	}
	if (br->out && br->out != stdout)
		fclose(br->out);
	if (br->sig_fd > 0)
		close(br->sig_fd);
	if (br->done_fd > 0)
		close(br->done_fd);
	free(br->jobs);
	free(br->stats);
	free(br->snaps);
	bench_cfg_free(&br->cfg);
}

/*
 * Runs the groups and reports: 1 for an I/O error, a job that could not
 * start or results not written, plus fio's 128 when a signal stopped the
 * run (the results so far are printed all the same).
 */
static int bench_run(struct bench_run *br)
{
	int status = EXIT_CLEAN, ret;

	br->start_ns = clock_now_ns();
	br->next_status_ns = br->start_ns + br->cfg.run.status_interval_us * 1000;
	if (br->cfg.run.output_format & FORMAT_NORMAL) {
		output_header(br->out, &br->cfg, br->nr_jobs);
		fflush(br->out);
	}
	if (br->progress)
		progress_start(&br->prog, stdout, br->cfg.run.eta_newline_us * 1000);
	run_groups(br);
	if (br->progress)
		progress_clear(&br->prog);
	ret = bench_output(br, &status);
	if (bench_close_output(br) || ret || br->start_failed)
		status = EXIT_IO_ERROR;
	return br->interrupted ? EXIT_INTERRUPTED + status : status;
}

/* What the command flags ask for instead of a run: 1 when one was done. */
static int bench_flags(const struct bench_cfg *cfg, int *status)
{
	if (cfg->cmdhelp) {
		if (opts_cmdhelp(stdout, cfg->cmdhelp)) {
			fprintf(stderr, "blkring: %s\n", tool_last_error());
			*status = EXIT_USAGE;
		}
	} else if (cfg->help) {
		usage(stdout);
	} else if (cfg->version) {
		printf("blkring-%s\n", BLKRING_VERSION_STRING);
	} else if (cfg->showcmd) {
		printf("%s\n", cfg->showcmd_text ? cfg->showcmd_text : "blkring bench");
	} else {
		return cfg->parse_only;
	}
	return 1;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_run br = {.sig_fd = -1, .done_fd = -1};
	int status = EXIT_CLEAN;
	int ret = bench_cfg_parse(&br.cfg, argc, argv);

	if (!ret && !bench_flags(&br.cfg, &status) && !(ret = bench_prepare(&br)))
		status = bench_run(&br);
	if (ret) {
		fprintf(stderr, "blkring: %s\n", tool_last_error());
		status = EXIT_USAGE;
	}
	bench_cleanup(&br);
	return status;
}
