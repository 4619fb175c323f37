// SPDX-License-Identifier: MIT
/*
 * Latency logs: three buffered files per job.  printf would cost more than
 * the I/O being logged, so numbers are formatted by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "compiler.h"
#include "error.h"
#include "latlog.h"

#define LATLOG_BUF (256U << 10)
#define LATLOG_LINE_MAX 128 /* five or six u64 numbers and their separators */

struct lat_file {
	int fd;
	size_t len;
	char *buf;
	char path[4096];
};

struct lat_log {
	bool offsets;
	int err;      /* first write error, negative */
	unsigned bad; /* the file it came from */
	struct lat_file f[LATLOG_NR];
};

static const char *const kind_names[LATLOG_NR] = {"slat", "clat", "lat"};

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

void latlog_add(struct lat_log *l, unsigned kind, uint64_t elapsed_ns, uint64_t value,
                unsigned ddir, uint32_t bs, uint64_t offset)
{
	struct lat_file *f = &l->f[kind];
	char *p;

	if (unlikely(f->len > LATLOG_BUF - LATLOG_LINE_MAX))
		lat_file_flush(l, kind);
	p = f->buf + f->len;
	p = put_field(p, elapsed_ns / 1000000);
	p = put_field(p, value);
	p = put_field(p, ddir);
	p = put_field(p, bs);
	if (l->offsets)
		p = put_field(p, offset);
	*p++ = '0'; /* fio's priority column: no I/O here runs in the RT class */
	*p++ = '\n';
	f->len = (size_t)(p - f->buf);
}

static void lat_file_close(struct lat_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	f->fd = -1;
	f->buf = NULL;
}

int latlog_close(struct lat_log *l)
{
	int err;

	if (!l)
		return 0;
	for (unsigned k = 0; k < LATLOG_NR; k++)
		if (l->f[k].fd >= 0)
			lat_file_flush(l, k);
	err = l->err;
	if (err)
		tool_error(err, "writing the latency log %s", l->f[l->bad].path);
	for (unsigned k = 0; k < LATLOG_NR; k++)
		lat_file_close(&l->f[k]);
	free(l);
	return err;
}

int latlog_path(char *buf, size_t size, const char *name, unsigned kind, unsigned number)
{
	int len = snprintf(buf, size, "%s_%s.%u.log", name, kind_names[kind], number);

	if (len < 0 || (size_t)len >= size)
		return tool_error(-ENAMETOOLONG, "write_lat_log=%s: the file name is too long",
		                  name);
	return 0;
}

static int lat_file_open(struct lat_file *f, const char *name, unsigned kind, unsigned number)
{
	int ret = latlog_path(f->path, sizeof(f->path), name, kind, number);

	if (ret)
		return ret;
	f->buf = malloc(LATLOG_BUF);
	if (!f->buf)
		return tool_error(-ENOMEM, "allocating the latency log buffers");
	f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0)
		return tool_error(-errno, "creating the latency log %s", f->path);
	return 0;
}

int latlog_open(struct lat_log **out, const char *name, unsigned number, bool offsets)
{
	struct lat_log *l = calloc(1, sizeof(*l));
	int ret = 0;

	if (!l)
		return -ENOMEM;
	l->offsets = offsets;
	for (unsigned k = 0; k < LATLOG_NR; k++)
		l->f[k].fd = -1;
	for (unsigned k = 0; k < LATLOG_NR && !ret; k++)
		ret = lat_file_open(&l->f[k], name, k, number);
	if (ret) {
		for (unsigned k = 0; k < LATLOG_NR; k++)
			lat_file_close(&l->f[k]);
		free(l);
		return ret;
	}
	*out = l;
	return 0;
}
