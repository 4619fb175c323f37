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
#include "job.h"
#include "latlog.h"
#include "output.h"
#include "progress.h"
#include "text.h"

struct bench_run {
	struct bench_cfg cfg;
	struct job *jobs;
	struct job_stats *stats;
	unsigned nr_jobs;
	_Atomic bool stop;
	bool interrupted;  /* by SIGINT or SIGTERM */
	uint64_t start_ns; /* the run's, for the JSON's elapsed */
	bool start_failed;
	int sig_fd, done_fd;
	FILE *out;
	bool progress;
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
	        "Options:\n");
	opts_help(f);
}

static int def_error(const struct job_def *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Built at its length: a nested table's message can be kilobytes long. */
static int def_error(const struct job_def *d, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int ret;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	ret = tool_error(-EINVAL, "%s: job '%s': %s", d->where, d->o.name, msg ? msg : fmt);
	free(msg);
	return ret;
}

static uint64_t pct_of(uint64_t size, unsigned pct, uint64_t align)
{
	uint64_t v = (uint64_t)((unsigned __int128)size * pct / 100);

	return v - v % align;
}

/*
 * A size or offset as the job gave it, for messages: "size=4096", or with
 * a percentage what it came to ("size=1% (0 bytes of 1048576, in whole
 * blocks)"), which alone would puzzle.
 */
static const char *given_as(char *buf, size_t size, const char *key, const struct size_pct *sp,
                            uint64_t bytes, uint64_t dev_size)
{
	if (sp->pct)
		snprintf(buf, size, "%s=%u%% (%" PRIu64 " bytes of %" PRIu64 ", in whole blocks)",
		         key, sp->pct, bytes, dev_size);
	else
		snprintf(buf, size, "%s=%" PRIu64, key, bytes);
	return buf;
}

/* The region a job works on, checked against its device's size and blocks. */
static int job_region(struct job *j, const struct blkring_dev_info *info)
{
	const struct job_opts *o = j->o;
	const struct job_def *d = j->def;
	unsigned ddirs = rw_modes[o->rw].ddirs;
	uint64_t lbs = info->logical_block_size, off, len, max_bs = 0;
	char off_text[96], len_text[96];

	for (unsigned k = 0; k < BENCH_DDIR_NR; k++) {
		if (!(ddirs & (1U << k)))
			continue;
		if (o->bs[k] % lbs)
			return def_error(d,
			                 "bs=%" PRIu64 " is not a multiple of %s's logical block "
			                 "size (%" PRIu64 ")",
			                 o->bs[k], o->filename, lbs);
		if (o->bs[k] > max_bs)
			max_bs = o->bs[k];
	}
	off = o->offset.pct ? pct_of(info->size, o->offset.pct, lbs) : o->offset.bytes;
	given_as(off_text, sizeof(off_text), "offset", &o->offset, off, info->size);
	if (off % lbs)
		return def_error(d, "%s is not a multiple of the logical block size (%" PRIu64 ")",
		                 off_text, lbs);
	if (off >= info->size)
		return def_error(d, "%s is at or past the end of %s (%" PRIu64 " bytes)", off_text,
		                 o->filename, info->size);
	len = o->size.pct     ? pct_of(info->size, o->size.pct, max_bs)
	      : o->size.bytes ? o->size.bytes
	                      : info->size - off;
	given_as(len_text, sizeof(len_text), "size", &o->size, len, info->size);
	if (len > info->size - off)
		return def_error(d, "%s at %s goes past the end of %s (%" PRIu64 " bytes)",
		                 len_text, off_text, o->filename, info->size);
	if (len < max_bs)
		return def_error(d, "%s is smaller than one block (bs=%" PRIu64 ")", len_text,
		                 max_bs);
	j->region_start = off;
	j->region_len = len;
	return 0;
}

/*
 * Discard and write zeroes the device cannot do, and verify on jobs it
 * cannot check, fail before anything runs.
 */
static int job_ops_fit(struct job *j, const struct blkring_dev_info *info)
{
	const struct job_opts *o = j->o;
	unsigned ddirs = rw_modes[o->rw].ddirs, rw = (1U << DDIR_READ) | (1U << DDIR_WRITE);

	if (o->verify && !(ddirs & rw))
		return def_error(j->def, "verify checks reads and writes; rw=%s does neither",
		                 rw_modes[o->rw].name);
	/* The verify phase reads blocks of the size written. */
	if (o->verify && (ddirs & rw) == rw && o->bs[DDIR_READ] != o->bs[DDIR_WRITE])
		return def_error(j->def,
		                 "verify with rw=%s needs one block size for reads and writes "
		                 "(bs=%" PRIu64 ",%" PRIu64 ")",
		                 rw_modes[o->rw].name, o->bs[DDIR_READ], o->bs[DDIR_WRITE]);

	if ((ddirs & ~(1U << DDIR_READ)) && info->read_only)
		return def_error(j->def, "rw=%s: %s is read-only", rw_modes[o->rw].name,
		                 o->filename);
	/* Discards and zeroes are never polled, as in Linux. */
	if (o->hipri && (ddirs & rw) && !(info->features & BLKRING_FEAT_POLL))
		return def_error(j->def, "hipri=1: %s has no poll queues", o->filename);
	if ((ddirs & (1U << DDIR_TRIM)) && !(info->features & BLKRING_FEAT_DISCARD))
		return def_error(j->def, "rw=%s: %s does not support discard", rw_modes[o->rw].name,
		                 o->filename);
	if ((ddirs & (1U << DDIR_ZERO)) && (o->zero_flags & BLKRING_ZERO_NOFALLBACK) &&
	    !(info->features & BLKRING_FEAT_WRITE_ZEROES))
		return def_error(j->def,
		                 "rw=%s with zero_flags=nofallback: %s does not support write "
		                 "zeroes",
		                 rw_modes[o->rw].name, o->filename);
	return 0;
}

/* The library's message for a spec that did not parse, change or open. */
static int job_open_error(const struct job *j, int ret)
{
	char *why = strdup(*blkring_last_error() ? blkring_last_error() : strerror(-ret));

	def_error(j->def, "filename=%s: %s", j->o->filename, why ? why : strerror(-ret));
	free(why);
	return -EINVAL;
}

/* --poll_strategy overrides a volume's poll=, so the job opens another
 * device over the same legs. */
static int job_spec_poll(const struct job *j, struct blkring_spec *spec)
{
	const char *value = poll_strategy_names[j->o->poll_strategy];
	int ret;

	if (!opt_is_set(j->o, "poll_strategy"))
		return 0;
	if (strcmp(blkring_spec_type(spec), "table"))
		return def_error(j->def, "poll_strategy=%s applies to table: volumes, not %s",
		                 value, j->o->filename);
	ret = blkring_spec_set(spec, "poll", value);
	return ret ? job_open_error(j, ret) : 0;
}

/*
 * A file device's direct= follows fio's direct (default 0, buffered): the
 * option when given, else the spec's own key when it has one; the file
 * driver's default (O_DIRECT) is for library users.
 */
static int job_spec_direct(const struct job *j, struct blkring_spec *spec)
{
	int ret;

	if (strcmp(blkring_spec_type(spec), "file") ||
	    (!opt_is_set(j->o, "direct") && blkring_spec_get(spec, "direct")))
		return 0;
	ret = blkring_spec_set(spec, "direct", j->o->direct ? "1" : "0");
	return ret ? job_open_error(j, ret) : 0;
}

static int job_open_dev(struct job *j)
{
	struct blkring_spec *spec;
	int ret = blkring_spec_parse(j->o->filename, &spec);

	if (ret)
		return job_open_error(j, ret);
	ret = job_spec_poll(j, spec) ?: job_spec_direct(j, spec);
	if (!ret) {
		ret = blkring_dev_open_spec(spec, &j->dev);
		if (ret) {
			j->dev = NULL;
			ret = job_open_error(j, ret);
		}
	}
	blkring_spec_free(spec);
	return ret;
}

static int job_open(struct job *j)
{
	struct blkring_dev_info info;
	int ret = job_open_dev(j);

	if (ret)
		return ret;
	ret = blkring_dev_info(j->dev, &info);
	if (ret)
		return def_error(j->def, "filename=%s: %s", j->o->filename, strerror(-ret));
	return job_region(j, &info) ?: job_ops_fit(j, &info);
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
	return def_error(d, "%s=%s: no CPU this process may use (it runs on CPUs %s)", opt, given,
	                 list);
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

/* A job's latency logs, checked as --output is: a log that cannot be
 * created refuses the run rather than failing the job once it started. */
static int job_check_logs(const struct job *j)
{
	const char *name = j->o->write_lat_log;
	char path[BENCH_PATH_MAX + 64], what[sizeof(path) + BENCH_NAME_MAX + 64];

	for (unsigned k = 0; name[0] && k < LATLOG_NR; k++) {
		if (latlog_path(path, sizeof(path), name, k, j->number))
			return -EINVAL;
		snprintf(what, sizeof(what), "job '%s': write_lat_log: cannot create %s",
		         j->o->name, path);
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
	if (!br->jobs || !br->stats)
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
			j->engine = d->o.ioengine->engine;
			j->stop = &br->stop;
			j->st = &br->stats[j->number - 1];
			job_stats_init(j->st);
			if (job_check_logs(j))
				return -EINVAL;
		}
	}
	return 0;
}

/* Opens every job's device and checks the job against it. */
static int bench_open_jobs(struct bench_run *br)
{
	for (unsigned i = 0; i < br->nr_jobs; i++) {
		int ret = job_open(&br->jobs[i]);

		if (ret)
			return ret;
	}
	return 0;
}

/* Options that set up a ring, on a job that has none. */
static void note_ring_options(const struct job_opts *o)
{
	static const char *const ring_opts[] = {
	    "sqthread_poll", "sqthread_poll_cpu", "tw_prio", "tw_issue",
	    "taskrun",       "fixedbufs",         "nowait",  "force_async",
	};

	for (unsigned i = 0; i < ARRAY_SIZE(ring_opts); i++)
		if (opt_is_set(o, ring_opts[i]))
			fprintf(stderr,
			        "blkring: note: job '%s': %s sets up a ring; ioengine=%s has "
			        "none, so it has no effect\n",
			        o->name, ring_opts[i], o->ioengine->name);
}

/* Kernel engines' options that mean nothing here (their table rows say why). */
static void note_noted_options(const struct job_opts *o)
{
	for (unsigned i = 0; i < bench_nr_opts; i++)
		if (bench_opts[i].note && o->set[i])
			fprintf(stderr, "blkring: note: job '%s': %s has no effect: %s\n", o->name,
			        bench_opts[i].name, bench_opts[i].note);
}

/* fio's engine names: what runs each, once per run. */
static void note_engine(const struct engine_name *e, uint32_t *noted)
{
	uint32_t bit = 1U << (e - engine_names);

	if (!e->note || (*noted & bit))
		return;
	*noted |= bit;
	fprintf(stderr, "blkring: note: ioengine=%s %s\n", e->name, e->note);
}

static void bench_notes(const struct bench_cfg *cfg)
{
	bool thread_note = false;
	uint32_t engines_noted = 0;

	for (unsigned i = 0; i < cfg->nr_defs; i++) {
		const struct job_opts *o = &cfg->defs[i].o;
		bool sync = o->ioengine->engine == &engine_sync;

		if (!o->thread && !thread_note) {
			fprintf(stderr,
			        "blkring: note: jobs always run as threads; thread=0 has no "
			        "effect\n");
			thread_note = true;
		}
		note_engine(o->ioengine, &engines_noted);
		if (opt_is_set(o, "sqthread_poll_cpu") && !o->sqthread_poll && !sync)
			fprintf(stderr,
			        "blkring: note: job '%s': sqthread_poll_cpu=%u has no effect "
			        "without sqthread_poll=1\n",
			        o->name, o->sqthread_poll_cpu);
		if (sync && o->iodepth > 1)
			fprintf(stderr,
			        "blkring: note: job '%s': ioengine=%s does one I/O at a time; "
			        "iodepth=%u has no effect\n",
			        o->name, o->ioengine->name, o->iodepth);
		if (sync)
			note_ring_options(o);
		note_noted_options(o);
	}
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
}

/* Waits for `started` jobs to finish, handling signals and the display. */
static void wait_jobs(struct bench_run *br, struct job *jobs, unsigned nr, unsigned started)
{
	struct progress prog;
	unsigned done = 0;

	if (br->progress)
		progress_start(&prog, stdout, jobs, nr);
	while (done < started) {
		struct pollfd pfd[2] = {{br->sig_fd, POLLIN, 0}, {br->done_fd, POLLIN, 0}};
		uint64_t v;

		if (poll(pfd, 2, br->progress ? 1000 : -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN)
			on_signal(br);
		if ((pfd[1].revents & POLLIN) && read(br->done_fd, &v, sizeof(v)) == sizeof(v))
			done += (unsigned)v;
		if (br->progress && done < started)
			progress_show(&prog, jobs, nr);
	}
	if (br->progress)
		progress_clear(&prog);
}

static void run_group(struct bench_run *br, unsigned first, unsigned nr)
{
	struct job *jobs = &br->jobs[first];
	unsigned started = 0;

	for (unsigned i = 0; i < nr && !atomic_load(&br->stop); i++) {
		int ret;

		jobs[i].done_fd = br->done_fd;
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
	wait_jobs(br, jobs, nr, started);
	for (unsigned i = 0; i < nr; i++)
		if (jobs[i].started)
			pthread_join(jobs[i].thread, NULL);
}

static void run_groups(struct bench_run *br)
{
	unsigned i = 0;

	while (i < br->nr_jobs && !atomic_load(&br->stop)) {
		unsigned gid = br->jobs[i].def->groupid, n = 0;

		while (i + n < br->nr_jobs && br->jobs[i + n].def->groupid == gid)
			n++;
		run_group(br, i, n);
		i += n;
	}
}

/*
 * One report per job, or per run of group_reporting jobs of one group,
 * merged into the first job's statistics (the jobs are over).
 */
static unsigned build_reports(struct bench_run *br, struct report *out)
{
	unsigned n = 0;
	bool merging = false;

	for (unsigned i = 0; i < br->nr_jobs; i++) {
		const struct job *j = &br->jobs[i];
		bool grouped = j->o->group_reporting;

		if (!j->started)
			continue;
		if (grouped && merging && out[n - 1].groupid == j->def->groupid) {
			job_stats_merge(out[n - 1].st, j->st);
			out[n - 1].nr_jobs++;
			continue;
		}
		out[n++] = (struct report){.def = j->def,
		                           .groupid = j->def->groupid,
		                           .nr_jobs = 1,
		                           .tid = j->tid,
		                           .st = j->st};
		merging = grouped;
	}
	return n;
}

static int bench_output(struct bench_run *br, int *status)
{
	struct report *reports = calloc(br->nr_jobs ? br->nr_jobs : 1, sizeof(*reports));
	unsigned nr;
	int ret;

	if (!reports)
		return -ENOMEM;
	nr = build_reports(br, reports);
	errno = 0; /* a failed write's, for bench_close_output() */
	for (unsigned i = 0; i < nr; i++)
		if (reports[i].st->error || reports[i].st->total_err)
			*status = EXIT_IO_ERROR;
	if (br->cfg.run.output_format != FORMAT_NORMAL)
		ret = output_json(br->out, reports, nr, &br->cfg, time(NULL),
		                  since(clock_now_ns(), br->start_ns));
	else
		ret = output_normal(br->out, reports, nr);
	free(reports);
	if (ret)
		fprintf(stderr, "blkring: out of memory writing the results\n");
	return ret;
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

static int bench_prepare(struct bench_run *br)
{
	const char *why;
	sigset_t set;
	int ret;

	bench_block_signals(&set);
	ret = bench_check_output(br) ?: bench_jobs(br) ?: bench_open_jobs(br);
	if (ret)
		return ret;
	bench_notes(&br->cfg);
	if (clock_init((int)br->cfg.run.clocksource, &why) != (int)br->cfg.run.clocksource)
		fprintf(stderr, "blkring: note: timing with clock_gettime: %s\n", why);
	br->progress = isatty(STDOUT_FILENO) && br->cfg.run.output_format == FORMAT_NORMAL;
	return bench_signals(br, &set) ?: bench_open_output(br);
}

static void bench_cleanup(struct bench_run *br)
{
	for (unsigned i = 0; i < br->nr_jobs; i++)
		if (br->jobs[i].dev)
			blkring_dev_close(br->jobs[i].dev);
	if (br->out && br->out != stdout)
		fclose(br->out);
	if (br->sig_fd > 0)
		close(br->sig_fd);
	if (br->done_fd > 0)
		close(br->done_fd);
	free(br->jobs);
	free(br->stats);
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
	if (br->cfg.run.output_format == FORMAT_NORMAL) {
		output_header(br->out, &br->cfg, br->nr_jobs);
		fflush(br->out);
	}
	run_groups(br);
	ret = bench_output(br, &status);
	if (bench_close_output(br) || ret || br->start_failed)
		status = EXIT_IO_ERROR;
	return br->interrupted ? EXIT_INTERRUPTED + status : status;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_run br = {.sig_fd = -1, .done_fd = -1};
	int status = EXIT_CLEAN;
	int ret = bench_cfg_parse(&br.cfg, argc, argv);

	if (!ret && br.cfg.help)
		usage(stdout);
	else if (!ret && br.cfg.version)
		printf("blkring-%s\n", BLKRING_VERSION_STRING);
	else if (!ret && !(ret = bench_prepare(&br)))
		status = bench_run(&br);
	if (ret) {
		fprintf(stderr, "blkring: %s\n", tool_last_error());
		status = EXIT_USAGE;
	}
	bench_cleanup(&br);
	return status;
}
