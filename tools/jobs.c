// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkring.h"
#include "engine.h"
#include "error.h"
#include "jobfile.h"
#include "jobs.h"

int kvlist_set(struct kvlist *l, const char *key, const char *val)
{
	char *k, *v;

	for (unsigned i = 0; i < l->nr; i++) {
		if (strcmp(l->v[i].key, key))
			continue;
		v = strdup(val);
		if (!v)
			return -ENOMEM;
		free(l->v[i].val);
		l->v[i].val = v;
		return 0;
	}
	if (l->nr == l->cap) {
		unsigned cap = l->cap ? 2 * l->cap : 8;
		struct kv *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	k = strdup(key);
	v = strdup(val);
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	l->v[l->nr++] = (struct kv){k, v};
	return 0;
}

void kvlist_free(struct kvlist *l)
{
	for (unsigned i = 0; i < l->nr; i++) {
		free(l->v[i].key);
		free(l->v[i].val);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Options as they were typed, before they are applied. */
struct arg_opt {
	const char *name, *val; /* val NULL: bare */
	char buf[256];          /* holds name when it came as name=value */
};

struct cl_job {
	struct arg_opt *opts;
	unsigned nr;
};

static bool is_run_opt(const struct arg_opt *a)
{
	const struct bench_opt *opt = opt_find(a->name);

	return opt && (opt->flags & OPT_RUN);
}

struct parse_state {
	struct bench_cfg *cfg;
	struct arg_opt *cl_global; /* before the first --name */
	unsigned nr_cl_global;
	struct job_opts file_global; /* a job file's [global] so far */
	struct job_def *cur;         /* the job section being read, or NULL */
	bool skipping;               /* in a section --section leaves out */
	bool stonewall_next;         /* the next job starts a group: a later file's first */
	FILE *showcmd;               /* --showcmd: the command line being written */
};

static int add_def(struct bench_cfg *cfg, struct job_def **out)
{
	struct job_def *defs = realloc(cfg->defs, (cfg->nr_defs + 1) * sizeof(*defs));

	if (!defs)
		return -ENOMEM;
	cfg->defs = defs;
	*out = &defs[cfg->nr_defs++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* The configuration's copy of a place, kept for messages. */
static const char *place(struct bench_cfg *cfg, const char *where)
{
	char **places;

	if (cfg->nr_places && !strcmp(cfg->places[cfg->nr_places - 1], where))
		return cfg->places[cfg->nr_places - 1];
	places = realloc(cfg->places, (cfg->nr_places + 1) * sizeof(*places));
	if (!places)
		return NULL;
	cfg->places = places;
	places[cfg->nr_places] = strdup(where);
	return places[cfg->nr_places] ? places[cfg->nr_places++] : NULL;
}

const char *def_where(const struct job_def *d, const char *opt)
{
	const struct bench_opt *o = opt_find(opt);

	return o && d->o.where[opt_index(o)] ? d->o.where[opt_index(o)] : d->where;
}

/* Built at its length: a nested table's message can be kilobytes long. */
int def_error(const struct job_def *d, const char *opt, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int ret;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	ret = tool_error(-EINVAL, "%s: job '%s': %s", opt ? def_where(d, opt) : d->where, d->o.name,
	                 msg ? msg : fmt);
	free(msg);
	return ret;
}

/* Applies an option, records where, and unless it is a whole-run one or a
 * bare key (fio's "job options" leave those out), its text. */
static int apply(struct bench_cfg *cfg, struct job_opts *o, struct kvlist *given, const char *name,
                 const char *val, const char *where, bool cmdline, bool in_job)
{
	const struct bench_opt *opt;
	int ret = opt_set(o, &cfg->run, name, val, where, cmdline, in_job);

	if (ret)
		return ret;
	opt = opt_find(name);
	if (opt->flags & OPT_RUN)
		return 0;
	o->where[opt_index(opt)] = place(cfg, where);
	if (!o->where[opt_index(opt)])
		return -ENOMEM;
	return given && val ? kvlist_set(given, name, val) : 0;
}

static int apply_cl_global(struct parse_state *ps, struct job_opts *o, struct kvlist *given)
{
	for (unsigned i = 0; i < ps->nr_cl_global; i++) {
		struct arg_opt *a = &ps->cl_global[i];
		int ret;

		if (is_run_opt(a))
			continue;
		ret = apply(ps->cfg, o, given, a->name, a->val, "command line", true, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* Command-line global options win over the file's: applied once more last. */
static int finish_section(struct parse_state *ps)
{
	int ret = 0;

	if (ps->cur)
		ret = apply_cl_global(ps, &ps->cur->o, NULL);
	ps->cur = NULL;
	return ret;
}

/* --section: global sections always run, jobs only when named. */
static bool section_skipped(const struct bench_cfg *cfg, const char *section)
{
	if (!cfg->nr_sections || !strcmp(section, "global"))
		return false;
	for (unsigned i = 0; i < cfg->nr_sections; i++)
		if (!strcmp(cfg->sections[i], section))
			return false;
	return true;
}

/* fio's --showcmd: sections as --name=, [global]'s options first. */
static void showcmd_add(struct parse_state *ps, const char *section, const char *key,
                        const char *val)
{
	if (!ps->showcmd)
		return;
	if (!key && strcmp(section, "global"))
		fprintf(ps->showcmd, " --name=%s", section);
	else if (key)
		fprintf(ps->showcmd, val ? " --%s=%s" : " --%s", key, val);
}

static int on_jobfile(void *ctx, const char *section, const char *key, const char *val,
                      const char *where)
{
	struct parse_state *ps = ctx;
	struct bench_cfg *cfg = ps->cfg;
	bool global = !strcmp(section, "global");
	int ret;

	if (!key)
		ps->skipping = section_skipped(cfg, section);
	if (ps->skipping)
		return 0;
	showcmd_add(ps, section, key, val);
	if (!key) {
		ret = finish_section(ps);
		if (ret || global)
			return ret;
		ret = add_def(cfg, &ps->cur);
		if (ret)
			return ret;
		ps->cur->o = ps->file_global;
		ps->cur->o.stonewall |= ps->stonewall_next;
		ps->stonewall_next = false;
		snprintf(ps->cur->where, sizeof(ps->cur->where), "%s", where);
		if (strlen(section) >= sizeof(ps->cur->o.name))
			return tool_error(-EINVAL, "%s: job name longer than %zu characters", where,
			                  sizeof(ps->cur->o.name) - 1);
		strcpy(ps->cur->o.name, section);
		return 0;
	}
	if (global)
		return apply(cfg, &ps->file_global, &cfg->global_given, key, val, where, false,
		             false);
	return apply(cfg, &ps->cur->o, &ps->cur->given, key, val, where, false, true);
}

/* As fio, every job file after the first starts a group of its own. */
static int parse_file(struct parse_state *ps, const char *path, bool first)
{
	struct run_opts scratch;
	int ret;

	opts_defaults(&ps->file_global, &scratch);
	ps->cur = NULL;
	ps->stonewall_next = !first;
	ret = jobfile_parse(path, on_jobfile, ps);
	if (!ret)
		ret = finish_section(ps);
	return ret;
}

/* "--key=value" or "--key": splits into a, pointing into arg. */
static int split_arg(const char *arg, struct arg_opt *a)
{
	const char *eq = strchr(arg + 2, '=');

	a->val = NULL;
	a->name = arg + 2;
	if (eq) {
		size_t len = (size_t)(eq - (arg + 2));

		if (len >= sizeof(a->buf))
			return tool_error(-EINVAL, "command line: option name too long: %s", arg);
		memcpy(a->buf, arg + 2, len);
		a->buf[len] = '\0';
		a->name = a->buf;
		a->val = eq + 1;
	}
	if (!*a->name)
		return tool_error(-EINVAL, "command line: '%s' has no option name", arg);
	return 0;
}

static int build_cl_job(struct parse_state *ps, struct cl_job *cj)
{
	struct bench_cfg *cfg = ps->cfg;
	struct job_def *def;
	int ret = add_def(cfg, &def);

	if (ret)
		return ret;
	opts_defaults(&def->o, &(struct run_opts){0});
	snprintf(def->where, sizeof(def->where), "command line");
	ret = apply_cl_global(ps, &def->o, NULL);
	for (unsigned i = 0; !ret && i < cj->nr; i++) {
		if (!is_run_opt(&cj->opts[i]))
			ret = apply(cfg, &def->o, &def->given, cj->opts[i].name, cj->opts[i].val,
			            "command line", true, true);
	}
	return ret;
}

/*
 * A blkring job's ring has an SQ entry per I/O in flight, and a ring takes
 * at most BLKRING_MAX_ENTRIES: more would fail only once the job starts.
 */
static int check_ring_depth(const struct job_def *d)
{
	const struct job_opts *o = &d->o;

	if (o->ioengine->engine != &engine_blkring || o->iodepth <= BLKRING_MAX_ENTRIES)
		return 0;
	return tool_error(-EINVAL,
	                  "%s: job '%s': option 'iodepth': %u is out of range for "
	                  "ioengine=%s (1 to %u, the most entries a ring takes)",
	                  def_where(d, "iodepth"), o->name, o->iodepth, o->ioengine->name,
	                  BLKRING_MAX_ENTRIES);
}

/*
 * fio's null engine needs no file: the job's filename becomes a null
 * device as large as the end of its region, completing inside submit and
 * moving no data, as fio's engine does.
 */
/* The spec fio's null, nbd and rbd engines describe, as the job's filename. */
static int engine_spec(struct job_def *d, const char *text, const char *arg, const char *key,
                       const char *val, const char *key2, const char *val2)
{
	struct job_opts *o = &d->o;
	struct blkring_spec *spec;
	int ret = blkring_spec_parse(text, &spec), len;

	if (ret)
		return tool_error(ret, "%s: job '%s': ioengine=%s: %s", def_where(d, "ioengine"),
		                  o->name, o->ioengine->name, blkring_last_error());
	ret = (arg ? blkring_spec_set_arg(spec, arg) : 0) ?:
	      (val ? blkring_spec_set(spec, key, val) : 0) ?:
	      (val2 ? blkring_spec_set(spec, key2, val2) : 0);
	len = ret ? ret : blkring_spec_format(spec, o->filename, sizeof(o->filename));
	blkring_spec_free(spec);
	if (len < 0 || (size_t)len >= sizeof(o->filename))
		return tool_error(-EINVAL, "%s: job '%s': ioengine=%s: no device spec",
		                  def_where(d, "ioengine"), o->name, o->ioengine->name);
	return 0;
}

static int engine_needs(struct job_def *d, const char *key, const char *what)
{
	return tool_error(-EINVAL, "%s: job '%s': ioengine=%s needs %s= (%s)",
	                  def_where(d, "ioengine"), d->o.name, d->o.ioengine->name, key, what);
}

/*
 * ioengine=null's device: as large as the clones' regions reach, whole 4k
 * blocks; a percentage offset_increment is of the device itself, so the
 * device is what the regions leave that share of.
 */
static int null_engine_size(struct job_def *d, uint64_t *bytes)
{
	const struct job_opts *o = &d->o;
	uint64_t base = o->offset.bytes + o->size.bytes, rest;
	unsigned pct = (o->numjobs - 1) * o->offset_increment.pct;

	/* A percentage start is rounded up to the smallest block: room for it. */
	if (o->offset_increment.pct)
		base += opts_unit(o, true);
	if (pct >= 100)
		return tool_error(-EINVAL,
		                  "%s: job '%s': offset_increment=%u%% with numjobs=%u: the clones "
		                  "would start past the end of any null device (ioengine=null)",
		                  def_where(d, "offset_increment"), o->name,
		                  o->offset_increment.pct, o->numjobs);
	rest = o->offset_increment.pct ? 100 - pct : 100;
	*bytes = (uint64_t)(((unsigned __int128)base * 100 + rest - 1) / rest) +
	         (o->numjobs - 1) * o->offset_increment.bytes;
	*bytes = (*bytes + 4095) / 4096 * 4096;
	return 0;
}

static int engine_dev(struct job_def *d)
{
	struct job_opts *o = &d->o;
	char size[32], image[2 * BENCH_NAME_MAX + 1];
	uint64_t bytes = 0;
	int ret;

	switch (o->ioengine->dev) {
	case ENGINE_DEV_FILENAME:
		return 0;
	case ENGINE_DEV_NULL:
		if (!o->size.bytes)
			return engine_needs(d, "size", "in bytes: the size of its null device");
		ret = null_engine_size(d, &bytes);
		if (ret)
			return ret;
		snprintf(size, sizeof(size), "%" PRIu64, bytes);
		return engine_spec(d, "null:", NULL, "irqmode", "none", "size", size);
	case ENGINE_DEV_NBD:
		if (!o->uri[0])
			return engine_needs(d, "uri", "the NBD server's URI");
		return engine_spec(d, o->uri, NULL, NULL, NULL, NULL, NULL);
	case ENGINE_DEV_RBD:
		if (!o->pool[0] || !o->rbdname[0])
			return engine_needs(d, o->pool[0] ? "rbdname" : "pool",
			                    "the image is pool=POOL rbdname=IMAGE");
		snprintf(image, sizeof(image), "%s/%s", o->pool, o->rbdname);
		return engine_spec(d, "rbd:", image, "id", o->clientname[0] ? o->clientname : NULL,
		                   NULL, NULL);
	}
	return 0;
}

/* fio's --readonly: no job may write, trim or zero. */
/* No filename: fio's NAME.JOB.FILE, made for each clone when it opens;
 * filename shows the first clone's first. */
static void generated_filename(struct job_def *d)
{
	d->o.filename_generated = true;
	snprintf(d->o.filename, sizeof(d->o.filename), "%.*s.0.0", (int)(sizeof(d->o.filename) - 8),
	         d->o.name);
}

static int check_readonly(const struct bench_cfg *cfg, const struct job_def *d)
{
	const struct job_opts *o = &d->o;

	if (!cfg->readonly || rw_modes[o->rw.mode].ddirs == 1U << DDIR_READ)
		return 0;
	return tool_error(-EINVAL,
	                  "%s: job '%s': rw=%s changes data, and --readonly allows reads only",
	                  def_where(d, "rw"), o->name, rw_modes[o->rw.mode].name);
}

/* fio's rules for strided zones, and a zone that holds a block. */
static int check_zones(const struct job_def *d)
{
	const struct job_opts *o = &d->o;
	unsigned ddirs = rw_modes[o->rw.mode].ddirs;

	if (o->zonemode == ZONEMODE_NONE && o->zonesize)
		return def_error(d, "zonesize", "zonesize needs zonemode=strided (fio's rule)");
	if (opts_strided(o) && !o->zonesize)
		return def_error(d, "zonemode", "zonemode=strided needs zonesize");
	for (unsigned k = 0; opts_strided(o) && k < BENCH_DDIR_NR; k++)
		if ((ddirs & (1U << k)) && opts_zonerange(o) < opts_min_bs(o, k))
			return def_error(d, o->zonerange ? "zonerange" : "zonesize",
			                 "a zone of %" PRIu64 " bytes is smaller than one %s block "
			                 "(%" PRIu64 ")",
			                 opts_zonerange(o), ddir_names[k], opts_min_bs(o, k));
	return 0;
}

/* rate paces I/Os of one size: block sizes that vary need rate_iops. */
static int check_rate(const struct job_def *d)
{
	const struct job_opts *o = &d->o;

	for (unsigned k = 0; k < BENCH_DDIR_NR; k++)
		if (o->rate[k] && opts_min_bs(o, k) != opts_max_bs(o, k))
			return def_error(
			    d, "rate",
			    "rate= with block sizes that vary (bsrange, bssplit): blkring "
			    "paces I/Os, so give rate_iops=");
	return 0;
}

static bool ddir_any(const uint64_t *v)
{
	return v[DDIR_READ] || v[DDIR_WRITE] || v[DDIR_TRIM];
}

/* fio's rules: a byte rate or an I/O rate, not both, and a minimum at
 * most the rate. */
static int check_rate_min(const struct job_def *d)
{
	const struct job_opts *o = &d->o;

	if ((ddir_any(o->rate) && ddir_any(o->rate_iops)) ||
	    (ddir_any(o->rate_min) && ddir_any(o->rate_iops_min)))
		return def_error(d, ddir_any(o->rate_min) ? "rate_min" : "rate",
		                 "%s and %s are mutually exclusive (fio's rule)",
		                 ddir_any(o->rate_min) ? "rate_min" : "rate",
		                 ddir_any(o->rate_min) ? "rate_iops_min" : "rate_iops");
	for (unsigned k = 0; k < FIO_DDIR_NR; k++)
		if ((o->rate[k] && o->rate[k] < o->rate_min[k]) ||
		    (o->rate_iops[k] && o->rate_iops[k] < o->rate_iops_min[k]))
			return def_error(d, o->rate[k] ? "rate_min" : "rate_iops_min",
			                 "the %s minimum rate exceeds its rate (fio's rule)",
			                 ddir_names[k]);
	return 0;
}

static int check_def(const struct job_def *d)
{
	const struct job_opts *o = &d->o;

	if (o->hipri && o->ioengine->engine == &engine_sync)
		return tool_error(-EINVAL,
		                  "%s: job '%s': hipri=1 needs ioengine=blkring (polling is a "
		                  "ring's), not %s",
		                  def_where(d, "hipri"), o->name, o->ioengine->name);
	/* Linux refuses the pair (a deferring ring runs its work in its owner's
	 * waits, and an SQ thread never waits there): say so before running. */
	if (o->sqthread_poll && opt_is_set(o, "taskrun") && o->taskrun == TASKRUN_DEFER)
		return tool_error(-EINVAL,
		                  "%s: job '%s': taskrun=defer cannot be combined with "
		                  "sqthread_poll=1 (DEFER_TASKRUN needs the owner to wait)",
		                  def_where(d, "taskrun"), o->name);
	for (unsigned k = 0; k < BENCH_DDIR_NR; k++)
		if ((o->rate[k] || o->rate_iops[k]) &&
		    __builtin_popcount(rw_modes[o->rw.mode].ddirs) != 1)
			return tool_error(-EINVAL,
			                  "%s: job '%s': rate and rate_iops are for jobs of one "
			                  "direction here (rw=%s has two)",
			                  def_where(d, o->rate[k] ? "rate" : "rate_iops"), o->name,
			                  rw_modes[o->rw.mode].name);
	if (o->time_based && !o->runtime_us)
		return tool_error(-EINVAL, "%s: job '%s': time_based needs a runtime",
		                  def_where(d, "time_based"), o->name);
	if (o->iodepth_batch_complete_max &&
	    o->iodepth_batch_complete_min > o->iodepth_batch_complete_max)
		return tool_error(-EINVAL,
		                  "%s: job '%s': iodepth_batch_complete_min (%u) is above "
		                  "iodepth_batch_complete_max (%u)",
		                  def_where(d, "iodepth_batch_complete_min"), o->name,
		                  o->iodepth_batch_complete_min, o->iodepth_batch_complete_max);
	return check_ring_depth(d) ?: check_zones(d) ?: check_rate(d) ?: check_rate_min(d);
}

/* A stonewall starts a new phase and reporting group; new_group only a
 * group, whose jobs still run beside the ones before (fio's). */
static void assign_groups(struct bench_cfg *cfg)
{
	unsigned gid = 0, phase = 0, in_group = 0, in_phase = 0;

	for (unsigned i = 0; i < cfg->nr_defs; i++) {
		const struct job_opts *o = &cfg->defs[i].o;

		if ((o->stonewall || o->new_group) && in_group) {
			gid++;
			in_group = 0;
		}
		if (o->stonewall && in_phase) {
			phase++;
			in_phase = 0;
		}
		cfg->defs[i].groupid = gid;
		cfg->defs[i].phase = phase;
		in_group++;
		in_phase++;
	}
	cfg->nr_groups = cfg->nr_defs ? gid + 1 : 0;
}

struct cl_args {
	struct arg_opt *opts; /* every --option, in order */
	unsigned nr;
	const char **files;
	unsigned nr_files;
};

/* A bare flag: an error when given a value. */
static int flag_bare(const struct arg_opt *a, bool *flag)
{
	if (a->val)
		return tool_error(-EINVAL, "command line: --%s takes no value", a->name);
	*flag = true;
	return 1;
}

static int flag_section(struct bench_cfg *cfg, const struct arg_opt *a)
{
	if (!a->val || !*a->val)
		return tool_error(-EINVAL, "command line: --section needs a section name");
	cfg->sections[cfg->nr_sections++] = a->val;
	return 1;
}

/*
 * fio's command flags, which are no job options: 1 when a is one (taken),
 * 0 when it is not, or -EINVAL.  --section takes its value as an option
 * does (a->val already holds a following argument).
 */
static int scan_flag(struct bench_cfg *cfg, const struct arg_opt *a)
{
	if (!strcmp(a->name, "help"))
		return flag_bare(a, &cfg->help);
	if (!strcmp(a->name, "version"))
		return flag_bare(a, &cfg->version);
	if (!strcmp(a->name, "showcmd"))
		return flag_bare(a, &cfg->showcmd);
	if (!strcmp(a->name, "parse-only"))
		return flag_bare(a, &cfg->parse_only);
	if (!strcmp(a->name, "readonly"))
		return flag_bare(a, &cfg->readonly);
	if (!strcmp(a->name, "warnings-fatal"))
		return flag_bare(a, &cfg->warnings_fatal);
	if (!strcmp(a->name, "section"))
		return flag_section(cfg, a);
	if (strcmp(a->name, "cmdhelp"))
		return 0;
	cfg->help = true;
	cfg->cmdhelp = a->val ? a->val : "all";
	return 1;
}

/* fio takes "--name value" as "--name=value" for every option that needs a
 * value (and for --section); bare flags and 0/1 options take none. */
static bool takes_next_arg(const struct arg_opt *a)
{
	const struct bench_opt *opt = opt_find(a->name);

	if (a->val)
		return false;
	return !strcmp(a->name, "section") || (opt && !(opt->flags & (OPT_BARE | OPT_BARE_EMPTY)));
}

static int scan_args(struct bench_cfg *cfg, int argc, char **argv, struct cl_args *ca)
{
	ca->opts = calloc((size_t)argc + 1, sizeof(*ca->opts));
	ca->files = calloc((size_t)argc + 1, sizeof(*ca->files));
	cfg->sections = calloc((size_t)argc + 1, sizeof(*cfg->sections));
	if (!ca->opts || !ca->files || !cfg->sections)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		struct arg_opt *a = &ca->opts[ca->nr];
		int ret;

		if (!strcmp(arg, "-h")) {
			cfg->help = true;
		} else if (!strcmp(arg, "--minimal")) {
			/* fio's shorthand for terse output */
			*a = (struct arg_opt){.name = "output-format", .val = "terse"};
			ca->nr++;
		} else if (!strncmp(arg, "--", 2)) {
			ret = split_arg(arg, a);
			if (!ret && takes_next_arg(a) && i + 1 < argc)
				a->val = argv[++i];
			ret = ret ?: scan_flag(cfg, a);
			if (ret < 0)
				return ret;
			ca->nr += !ret;
		} else if (arg[0] == '-' && arg[1]) {
			return tool_error(
			    -EINVAL, "command line: unknown flag '%s' (options are --name=value)",
			    arg);
		} else {
			ca->files[ca->nr_files++] = arg;
		}
	}
	return 0;
}

/* Whole-run options apply wherever they stand on the command line. */
static int apply_run_opts(struct bench_cfg *cfg, struct cl_args *ca)
{
	struct job_opts scratch;

	for (unsigned i = 0; i < ca->nr; i++) {
		const struct bench_opt *opt = opt_find(ca->opts[i].name);
		int ret;

		if (!opt || !(opt->flags & OPT_RUN))
			continue;
		ret = opt_set(&scratch, &cfg->run, ca->opts[i].name, ca->opts[i].val,
		              "command line", true, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* Splits the command line's options into globals and jobs, and builds the jobs. */
static int build_cl(struct parse_state *ps, struct cl_args *ca)
{
	struct cl_job *jobs = calloc(ca->nr + 1, sizeof(*jobs));
	struct cl_job *cur = NULL;
	unsigned nr_jobs = 0;
	struct job_opts scratch;
	int ret = 0;

	if (!jobs)
		return -ENOMEM;
	ps->cl_global = ca->opts;
	for (unsigned i = 0; i < ca->nr; i++) {
		struct arg_opt *a = &ca->opts[i];

		if (is_run_opt(a))
			continue;
		if (!strcmp(a->name, "name")) {
			cur = &jobs[nr_jobs++];
			cur->opts = a;
		}
		if (cur)
			cur->nr = (unsigned)(a - cur->opts) + 1;
		else
			ps->nr_cl_global = i + 1;
	}
	/* Check the globals once, and record them as "global options". */
	opts_defaults(&scratch, &(struct run_opts){0});
	for (unsigned i = 0; !ret && i < ps->nr_cl_global; i++) {
		struct arg_opt *a = &ca->opts[i];

		if (!is_run_opt(a))
			ret = apply(ps->cfg, &scratch, &ps->cfg->global_given, a->name, a->val,
			            "command line", true, false);
	}
	for (unsigned i = 0; !ret && i < nr_jobs; i++)
		ret = build_cl_job(ps, &jobs[i]);
	free(jobs);
	return ret;
}

static int showcmd_open(struct parse_state *ps)
{
	size_t len;

	ps->showcmd = open_memstream(&ps->cfg->showcmd_text, &len);
	if (!ps->showcmd)
		return -ENOMEM;
	fputs("blkring bench", ps->showcmd);
	return 0;
}

static int parse_all(struct bench_cfg *cfg, int argc, char **argv, struct cl_args *ca)
{
	struct parse_state ps = {.cfg = cfg};
	int ret;

	opts_defaults(&ps.file_global, &cfg->run);
	ret = scan_args(cfg, argc, argv, ca);
	if (ret || cfg->help || cfg->version)
		return ret;
	ret = build_cl(&ps, ca);
	if (!ret && cfg->showcmd)
		ret = showcmd_open(&ps);
	for (unsigned i = 0; !ret && i < ca->nr_files; i++)
		ret = parse_file(&ps, ca->files[i], !i);
	if (ps.showcmd && fclose(ps.showcmd) && !ret)
		ret = -ENOMEM;
	/* Command-line globals override the files': in effect and as recorded. */
	for (unsigned i = 0; !ret && i < ps.nr_cl_global; i++)
		if (!is_run_opt(&ca->opts[i]) && ca->opts[i].val)
			ret = kvlist_set(&cfg->global_given, ca->opts[i].name, ca->opts[i].val);
	if (!ret)
		ret = apply_run_opts(cfg, ca);
	if (ret)
		return ret;
	if (!cfg->nr_defs)
		return tool_error(-EINVAL,
		                  "no jobs: give --name=NAME and its options, or a job file");
	for (unsigned i = 0; i < cfg->nr_defs; i++) {
		struct job_def *d = &cfg->defs[i];

		ret = engine_dev(d);
		if (!d->o.filename[0])
			generated_filename(d);
		ret = ret ?: check_def(d) ?: check_readonly(cfg, d);
		if (ret)
			return ret;
	}
	assign_groups(cfg);
	return 0;
}

int bench_cfg_parse(struct bench_cfg *cfg, int argc, char **argv)
{
	struct cl_args ca = {0};
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	ret = parse_all(cfg, argc, argv, &ca);
	free(ca.opts);
	free(ca.files);
	return ret;
}

void bench_cfg_free(struct bench_cfg *cfg)
{
	for (unsigned i = 0; i < cfg->nr_defs; i++)
		kvlist_free(&cfg->defs[i].given);
	free(cfg->defs);
	kvlist_free(&cfg->global_given);
	free(cfg->sections);
	free(cfg->showcmd_text);
	for (unsigned i = 0; i < cfg->nr_places; i++)
		free(cfg->places[i]);
	free(cfg->places);
	memset(cfg, 0, sizeof(*cfg));
}
