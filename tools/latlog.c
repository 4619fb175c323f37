// SPDX-License-Identifier: MIT
/*
 * A job's logs: buffered files, and fio's averaging windows.  printf would
 * cost more than the I/O being logged, so numbers are formatted by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler.h"
#include "error.h"
#include "latlog.h"
#include "options.h"

#define LATLOG_BUF (256U << 10)
#define LATLOG_LINE_MAX 128 /* five or six u64 numbers and their separators */
#define LATLOG_HIST_LINE_MAX ((HIST_NR + 3) * 22 + 2)
#define LOG_MSEC_SLACK 1 /* fio's: an interval this close to its end is over */

struct lat_file {
	int fd;
	size_t len;
	char *buf;
	char path[4096];
};

/* fio's avg_window: the values of one direction since its last line. */
struct log_window {
	uint64_t n, sum, max;
	uint64_t last_ms; /* fio's avg_last: where the window began */
};

/* A direction's histogram window: the buckets at its last line. */
struct hist_window {
	uint64_t last_ms;
	struct hist prev;
};

struct lat_log {
	struct log_spec spec;
	int err;      /* first write error, negative */
	unsigned bad; /* the file it came from */
	struct lat_file f[LATLOG_NR];
	struct log_window win[LATLOG_NR][BENCH_DDIR_NR];
	struct hist_window *hist; /* BENCH_DDIR_NR of them, with write_hist_log */
};

static const char *const kind_names[LATLOG_NR] = {"slat", "clat", "lat", "bw", "iops", "clat_hist"};
static const char *const option_names[LATLOG_NR] = {"write_lat_log",  "write_lat_log",
                                                    "write_lat_log",  "write_bw_log",
                                                    "write_iops_log", "write_hist_log"};

static void lat_file_flush(struct lat_log *l, unsigned kind)
{
	struct lat_file *f = &l->f[kind];
	size_t done = 0;

	while (done < f->len) {
		ssize_t n = write(f->fd, f->buf + done, f->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!l->err) {
				l->err = n < 0 ? -errno : -EIO;
				l->bad = kind;
			}
			break;
		}
		done += (size_t)n;
	}
	f->len = 0;
}

/* Decimal digits of v at p, returning the end. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	unsigned n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_field(char *p, uint64_t v)
{
	p = put_u64(p, v);
	*p++ = ',';
	*p++ = ' ';
	return p;
}

/* Room for a line of up to `need` bytes in the log's buffer. */
static char *line_start(struct lat_log *l, unsigned kind, size_t need)
{
	struct lat_file *f = &l->f[kind];

	if (unlikely(f->len > LATLOG_BUF - need))
		lat_file_flush(l, kind);
	return f->buf + f->len;
}

static void line_end(struct lat_log *l, unsigned kind, char *p)
{
	l->f[kind].len = (size_t)(p - l->f[kind].buf);
}

static void put_line(struct lat_log *l, unsigned kind, uint64_t ms, uint64_t value, unsigned ddir,
                     uint32_t bs, uint64_t offset)
{
	char *p = line_start(l, kind, LATLOG_LINE_MAX);

	p = put_field(p, ms);
	p = put_field(p, value);
	p = put_field(p, ddir);
	p = put_field(p, bs);
	if (l->spec.offsets)
		p = put_field(p, offset);
	*p++ = '0'; /* fio's priority column: no I/O here runs in the RT class */
	*p++ = '\n';
	line_end(l, kind, p);
}

/* fio's __add_stat_to_log: the window's mean, rounded, or its largest. */
static void window_line(struct lat_log *l, unsigned kind, unsigned ddir, uint64_t ms)
{
	struct log_window *w = &l->win[kind][ddir];

	if (w->n)
		put_line(l, kind, ms,
		         l->spec.log_max ? w->max : (uint64_t)((double)w->sum / (double)w->n + 0.5),
		         ddir, 0, 0);
	w->n = w->sum = w->max = 0;
}

/*
 * fio's add_log_sample with log_avg_msec: the value joins its window, and
 * the window is logged once it spans the period.  The interval logs (bw,
 * iops) come once a period and take a window short by LOG_MSEC_SLACK.
 */
static void window_add(struct lat_log *l, unsigned kind, uint64_t ms, uint64_t value, unsigned ddir)
{
	struct log_window *w = &l->win[kind][ddir];
	uint64_t avg = l->spec.avg_msec;

	w->n++;
	w->sum += value;
	if (value > w->max)
		w->max = value;
	if (ms < w->last_ms)
		return;
	if (ms - w->last_ms < avg &&
	    (kind <= LATLOG_LAT || avg - (ms - w->last_ms) > LOG_MSEC_SLACK))
		return;
	window_line(l, kind, ddir, ms);
	w->last_ms = ms - ms % avg;
}

void latlog_add(struct lat_log *l, unsigned kind, uint64_t elapsed_ns, uint64_t value,
                unsigned ddir, uint32_t bs, uint64_t offset)
{
	uint64_t ms = elapsed_ns / 1000000;

	if (l->f[kind].fd < 0)
		return;
	if (l->spec.avg_msec)
		window_add(l, kind, ms, value, ddir);
	else
		put_line(l, kind, ms, value, ddir, bs, offset);
}

/* fio's histogram line: the window's count in every bucket. */
static void hist_line(struct lat_log *l, uint64_t ms, unsigned ddir, uint32_t bs,
                      const struct hist *clat)
{
	struct hist *prev = &l->hist[ddir].prev;
	char *p = line_start(l, LATLOG_HIST, LATLOG_HIST_LINE_MAX);

	p = put_field(p, ms);
	p = put_field(p, ddir);
	p = put_field(p, bs);
	for (unsigned i = 0; i < HIST_NR; i++) {
		p = put_u64(p, clat->bucket[i] - prev->bucket[i]);
		*p++ = i + 1 < HIST_NR ? ',' : '\n';
		if (i + 1 < HIST_NR)
			*p++ = ' ';
	}
	line_end(l, LATLOG_HIST, p);
	*prev = *clat;
}

/* fio's add_clat_sample with log_hist_msec: a window starts at the first
 * completion, and a late line's lateness comes off the next window. */
void latlog_hist(struct lat_log *l, uint64_t elapsed_ns, unsigned ddir, uint32_t bs,
                 const struct hist *clat)
{
	struct hist_window *w = &l->hist[ddir];
	uint64_t ms = elapsed_ns / 1000000, span;

	if (!w->last_ms)
		w->last_ms = ms;
	span = ms - w->last_ms;
	if (span < l->spec.hist_msec)
		return;
	hist_line(l, ms, ddir, bs, clat);
	w->last_ms = ms - (span - l->spec.hist_msec);
}

static void lat_file_close(struct lat_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	f->fd = -1;
	f->buf = NULL;
}

static void latlog_free(struct lat_log *l)
{
	for (unsigned k = 0; k < LATLOG_NR; k++)
		lat_file_close(&l->f[k]);
	free(l->hist);
	free(l);
}

int latlog_close(struct lat_log *l, uint64_t elapsed_ns)
{
	int err;

	if (!l)
		return 0;
	for (unsigned k = 0; k < LATLOG_HIST; k++)
		for (unsigned d = 0; l->f[k].fd >= 0 && l->spec.avg_msec && d < BENCH_DDIR_NR; d++)
			window_line(l, k, d, elapsed_ns / 1000000);
	for (unsigned k = 0; k < LATLOG_NR; k++)
		if (l->f[k].fd >= 0)
			lat_file_flush(l, k);
	err = l->err;
	if (err)
		tool_error(err, "writing the log %s", l->f[l->bad].path);
	latlog_free(l);
	return err;
}

int latlog_path(char *buf, size_t size, const char *name, unsigned kind, unsigned number,
                bool per_job)
{
	int len = per_job ? snprintf(buf, size, "%s_%s.%u.log", name, kind_names[kind], number)
	                  : snprintf(buf, size, "%s_%s.log", name, kind_names[kind]);

	if (len < 0 || (size_t)len >= size)
		return tool_error(-ENAMETOOLONG, "%s=%s: the file name is too long",
		                  option_names[kind], name);
	return 0;
}

/* per_job_logs=0: every job's lines go to one file, after what it had. */
static int lat_file_open(struct lat_file *f, const struct log_spec *spec, unsigned kind)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (spec->per_job ? O_TRUNC : O_APPEND);
	int ret = latlog_path(f->path, sizeof(f->path), spec->name[kind], kind, spec->number,
	                      spec->per_job);

	if (ret)
		return ret;
	f->buf = malloc(LATLOG_BUF);
	if (!f->buf)
		return tool_error(-ENOMEM, "allocating the log buffers");
	f->fd = open(f->path, flags, 0644);
	if (f->fd < 0)
		return tool_error(-errno, "creating the log %s", f->path);
	return 0;
}

int latlog_open(struct lat_log **out, const struct log_spec *spec)
{
	struct lat_log *l = calloc(1, sizeof(*l));
	int ret = 0;

	if (!l)
		return -ENOMEM;
	l->spec = *spec;
	for (unsigned k = 0; k < LATLOG_NR; k++)
		l->f[k].fd = -1;
	for (unsigned k = 0; k < LATLOG_NR && !ret; k++)
		if (spec->name[k])
			ret = lat_file_open(&l->f[k], spec, k);
	if (!ret && spec->name[LATLOG_HIST]) {
		l->hist = calloc(BENCH_DDIR_NR, sizeof(*l->hist));
		if (!l->hist)
			ret = tool_error(-ENOMEM, "allocating the histogram log");
	}
	if (ret) {
		latlog_free(l);
		return ret;
	}
	*out = l;
	return 0;
}
