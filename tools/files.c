// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "job.h"

/* Layout writes (or allocates) in pieces this large. */
#define LAYOUT_CHUNK (1U << 20)

bool files_is_spec(const char *text)
{
	size_t len = strcspn(text, ":");
	struct blkring_spec *spec;
	char type[64];
	bool known;

	if (!len || !text[len] || len + 1 >= sizeof(type))
		return false;
	if (!strncmp(text + len, "://", 3))
		return true;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)text[i]) && !strchr("_-+", text[i]))
			return false;
	memcpy(type, text, len + 1);
	type[len + 1] = '\0';
	if (blkring_spec_parse(type, &spec))
		return false;
	known =
	    strlen(blkring_spec_type(spec)) == len && !strncmp(blkring_spec_type(spec), text, len);
	blkring_spec_free(spec);
	return known;
}

/* ---- names ---- */

/* The name of fio's list at *p, up to an unescaped ':' ("\:" is a ':'). */
static int next_name(const char **p, char *out, size_t size)
{
	size_t n = 0;
	const char *s = *p;

	for (; *s && *s != ':'; s++) {
		if (s[0] == '\\' && s[1] == ':')
			s++;
		if (n + 1 >= size)
			return -ENAMETOOLONG;
		out[n++] = *s;
	}
	out[n] = '\0';
	*p = *s ? s + 1 : s;
	return n ? 0 : -EINVAL;
}

static unsigned count_names(const char *list)
{
	unsigned n = 1;

	for (const char *s = list; *s; s++) {
		if (s[0] == '\\' && s[1] == ':')
			s++;
		else if (*s == ':')
			n++;
	}
	return n;
}

/* The k-th directory of directory= (its entries take turns), or NULL. */
static int directory_of(const struct job_opts *o, unsigned k, char *out, size_t size)
{
	const char *p = o->directory;
	unsigned n = count_names(o->directory);
	int ret = 0;

	for (unsigned i = 0; i <= k % n && !ret; i++)
		ret = next_name(&p, out, size);
	return ret;
}

/* File k's name: from the list, or fio's NAME.JOB.FILE; under directory=
 * when relative. */
static int file_name(const struct job *j, unsigned clone, unsigned k, const char **list, char *out,
                     size_t size)
{
	const struct job_opts *o = j->o;
	char name[BENCH_PATH_MAX], dir[BENCH_PATH_MAX];
	int ret = 0, len;

	if (o->filename_generated)
		snprintf(name, sizeof(name), "%s.%u.%u", o->name, clone, k);
	else
		ret = next_name(list, name, sizeof(name));
	if (ret)
		return def_error(j->def, "filename", "filename=%s: %s", o->filename,
		                 ret == -EINVAL ? "an empty name in the file list"
		                                : "a name is too long");
	if (name[0] == '/' || !o->directory[0]) {
		snprintf(out, size, "%s", name);
		return 0;
	}
	if (directory_of(o, k, dir, sizeof(dir)))
		return def_error(j->def, "directory", "directory=%s: an empty or too long entry",
		                 o->directory);
	len = snprintf(out, size, "%s/%s", dir, name);
	if (len < 0 || (size_t)len >= size)
		return def_error(j->def, "directory", "%s/%s: the path is too long", dir, name);
	return 0;
}

/* The job's files by name; one for a device spec. */
static int job_names(struct job *j, unsigned clone, bool *paths)
{
	const struct job_opts *o = j->o;
	const char *list = o->filename;
	int ret = 0;

	*paths = o->filename_generated || !files_is_spec(o->filename);
	j->nr_files = !*paths ? 1 : o->filename_generated ? o->nrfiles : count_names(o->filename);
	if (j->nr_files > UINT16_MAX + 1U)
		return def_error(j->def, "filename", "more than %u files", UINT16_MAX + 1U);
	j->files = calloc(j->nr_files, sizeof(*j->files));
	if (!j->files)
		return tool_error(-ENOMEM, "out of memory for %u files", j->nr_files);
	if (!*paths) {
		snprintf(j->files[0].name, sizeof(j->files[0].name), "%s", o->filename);
		return 0;
	}
	for (unsigned k = 0; k < j->nr_files && !ret; k++)
		ret = file_name(j, clone, k, &list, j->files[k].name, sizeof(j->files[k].name));
	return ret;
}

/* ---- sizes and layout ---- */

/* Each file's share: filesize, or size split among the files; 0 when the
 * file's own size decides (no size, or a percentage). */
static uint64_t file_size_wanted(const struct job *j)
{
	const struct job_opts *o = j->o;

	if (o->filesize)
		return o->filesize;
	return o->size.pct ? 0 : o->size.bytes / j->nr_files;
}

/* Data from start to end, as fio writes a file a job reads: random bytes. */
static int layout_write(int fd, uint64_t start, uint64_t end, uint64_t seed)
{
	uint64_t *buf = malloc(LAYOUT_CHUNK);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < LAYOUT_CHUNK / sizeof(*buf); i++)
		buf[i] = rng_next(&seed);
	while (start < end && !ret) {
		size_t n = end - start < LAYOUT_CHUNK ? (size_t)(end - start) : LAYOUT_CHUNK;
		ssize_t done = pwrite(fd, buf, n, (off_t)start);

		if (done < 0 && errno != EINTR)
			ret = -errno;
		else if (done > 0)
			start += (uint64_t)done;
	}
	free(buf);
	return ret;
}

/* Blocks for a job that only writes, as fio's fallocate=native, or a
 * sparse extension where the filesystem has no fallocate. */
static int layout_allocate(int fd, uint64_t start, uint64_t end)
{
	if (!fallocate(fd, 0, (off_t)start, (off_t)(end - start)))
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	return ftruncate(fd, (off_t)end) ? -errno : 0;
}

/*
 * fio's extend_file(): a missing file is created, a short regular one
 * extended, to the end of the job's region, then synced (fio's
 * create_fsync).  A file's existing bytes are kept, where fio writes the
 * whole file anew.  Returns 1 when it laid the file out, 0 when it needed
 * nothing.
 */
static int file_layout(const struct job *j, const struct job_file *f, uint64_t need, bool readonly)
{
	bool reads = rw_modes[j->o->rw].ddirs & (1U << DDIR_READ);
	uint64_t from = 0;
	struct stat st;
	int fd, ret;

	if (!stat(f->name, &st)) {
		if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size >= need)
			return 0;
		from = (uint64_t)st.st_size;
	} else if (errno != ENOENT) {
		return def_error(j->def, "filename", "%s: %s", f->name, strerror(errno));
	}
	if (readonly)
		return def_error(j->def, "filename",
		                 "%s would be laid out, and --readonly changes no file (as fio "
		                 "refuses to)",
		                 f->name);
	if (!need)
		return def_error(j->def, "size",
		                 "%s does not exist: give size= or filesize= (in bytes) to lay it "
		                 "out",
		                 f->name);
	fd = open(f->name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return def_error(j->def, "filename", "%s: cannot create it: %s", f->name,
		                 strerror(errno));
	ret = reads ? layout_write(fd, from, need, j->number) : layout_allocate(fd, from, need);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret)
		return def_error(j->def, "filename", "%s: laying it out: %s", f->name,
		                 strerror(-ret));
	return 1;
}

/* Lays out the job's files that need it, saying so as fio does. */
static int job_layout(const struct job *j, bool readonly)
{
	uint64_t need = j->o->offset.bytes + file_size_wanted(j), bytes = 0;
	unsigned laid = 0;

	for (unsigned k = 0; k < j->nr_files; k++) {
		int ret = file_layout(j, &j->files[k], need, readonly);

		if (ret < 0)
			return ret;
		laid += (unsigned)ret;
		bytes += ret ? need : 0;
	}
	if (laid)
		fprintf(stderr, "%s: Laying out IO file%s (%u file%s / %s%" PRIu64 "MiB)\n",
		        j->o->name, laid > 1 ? "s" : "", laid, laid > 1 ? "s" : "",
		        laid > 1 ? "total " : "", bytes >> 20);
	return 0;
}

/* ---- regions and checks ---- */

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

static uint64_t job_max_bs(const struct job_opts *o)
{
	unsigned ddirs = rw_modes[o->rw].ddirs;
	uint64_t max = 0;

	for (unsigned k = 0; k < BENCH_DDIR_NR; k++)
		if ((ddirs & (1U << k)) && o->bs[k] > max)
			max = o->bs[k];
	return max;
}

/* The region a job works on in one file, checked against its size and blocks. */
static int file_region(const struct job *j, struct job_file *f, const struct blkring_dev_info *info)
{
	const struct job_opts *o = j->o;
	unsigned ddirs = rw_modes[o->rw].ddirs;
	uint64_t lbs = info->logical_block_size, off, len, max_bs = job_max_bs(o);
	uint64_t wanted = file_size_wanted(j);
	char off_text[96], len_text[96];

	for (unsigned k = 0; k < BENCH_DDIR_NR; k++)
		if ((ddirs & (1U << k)) && o->bs[k] % lbs)
			return def_error(j->def, "bs",
			                 "bs=%" PRIu64 " is not a multiple of %s's logical block "
			                 "size (%" PRIu64 ")",
			                 o->bs[k], f->name, lbs);
	off = o->offset.pct ? pct_of(info->size, o->offset.pct, lbs) : o->offset.bytes;
	given_as(off_text, sizeof(off_text), "offset", &o->offset, off, info->size);
	if (off % lbs)
		return def_error(j->def, "offset",
		                 "%s is not a multiple of the logical block size (%" PRIu64 ")",
		                 off_text, lbs);
	if (off >= info->size)
		return def_error(j->def, "offset",
		                 "%s is at or past the end of %s (%" PRIu64 " bytes)", off_text,
		                 f->name, info->size);
	len = o->size.pct && !o->filesize ? pct_of(info->size, o->size.pct, max_bs)
	      : wanted                    ? wanted
	                                  : info->size - off;
	given_as(len_text, sizeof(len_text), "size", &o->size, len, info->size);
	if (len > info->size - off)
		return def_error(j->def, "size",
		                 "%s at %s goes past the end of %s (%" PRIu64 " bytes)", len_text,
		                 off_text, f->name, info->size);
	if (len < max_bs)
		return def_error(j->def, "size", "%s is smaller than one block (bs=%" PRIu64 ")",
		                 len_text, max_bs);
	f->start = off;
	f->len = len;
	return 0;
}

/*
 * Discard and write zeroes the device cannot do, and verify on jobs it
 * cannot check, fail before anything runs.
 */
static int file_ops_fit(const struct job *j, const struct job_file *f,
                        const struct blkring_dev_info *info)
{
	const struct job_opts *o = j->o;
	unsigned ddirs = rw_modes[o->rw].ddirs, rw = (1U << DDIR_READ) | (1U << DDIR_WRITE);

	if (o->verify && !(ddirs & rw))
		return def_error(j->def, "verify",
		                 "verify checks reads and writes; rw=%s does neither",
		                 rw_modes[o->rw].name);
	/* The verify phase reads blocks of the size written. */
	if (o->verify && (ddirs & rw) == rw && o->bs[DDIR_READ] != o->bs[DDIR_WRITE])
		return def_error(j->def, "verify",
		                 "verify with rw=%s needs one block size for reads and writes "
		                 "(bs=%" PRIu64 ",%" PRIu64 ")",
		                 rw_modes[o->rw].name, o->bs[DDIR_READ], o->bs[DDIR_WRITE]);
	if (o->verify && j->nr_files > 1)
		return def_error(j->def, "verify", "verify works on one file, not %u", j->nr_files);
	if ((ddirs & ~(1U << DDIR_READ)) && info->read_only)
		return def_error(j->def, "rw", "rw=%s: %s is read-only", rw_modes[o->rw].name,
		                 f->name);
	/* Discards and zeroes are never polled, as in Linux. */
	if (o->hipri && (ddirs & rw) && !(info->features & BLKRING_FEAT_POLL))
		return def_error(j->def, "hipri", "hipri=1: %s has no poll queues", f->name);
	if ((ddirs & (1U << DDIR_TRIM)) && !(info->features & BLKRING_FEAT_DISCARD))
		return def_error(j->def, "rw", "rw=%s: %s does not support discard",
		                 rw_modes[o->rw].name, f->name);
	if ((ddirs & (1U << DDIR_ZERO)) && (o->zero_flags & BLKRING_ZERO_NOFALLBACK) &&
	    !(info->features & BLKRING_FEAT_WRITE_ZEROES))
		return def_error(j->def, "zero_flags",
		                 "rw=%s with zero_flags=nofallback: %s does not support write "
		                 "zeroes",
		                 rw_modes[o->rw].name, f->name);
	return 0;
}

/* ---- opening ---- */

/* The library's message for a spec that did not parse, change or open. */
static int file_open_error(const struct job *j, const struct job_file *f, int ret)
{
	char *why = strdup(*blkring_last_error() ? blkring_last_error() : strerror(-ret));

	def_error(j->def, "filename", "filename=%s: %s", f->name, why ? why : strerror(-ret));
	free(why);
	return -EINVAL;
}

/* --poll_strategy overrides a volume's poll=, so the job opens another
 * device over the same legs. */
static int spec_poll(const struct job *j, const struct job_file *f, struct blkring_spec *spec)
{
	const char *value = poll_strategy_names[j->o->poll_strategy];
	int ret;

	if (!opt_is_set(j->o, "poll_strategy"))
		return 0;
	if (strcmp(blkring_spec_type(spec), "table"))
		return def_error(j->def, "poll_strategy",
		                 "poll_strategy=%s applies to table: volumes, not %s", value,
		                 f->name);
	ret = blkring_spec_set(spec, "poll", value);
	return ret ? file_open_error(j, f, ret) : 0;
}

/*
 * A file device's direct= follows fio's direct (default 0, buffered): the
 * option when given, else the spec's own key when it has one; the file
 * driver's default (O_DIRECT) is for library users.
 */
static int spec_direct(const struct job *j, const struct job_file *f, struct blkring_spec *spec)
{
	int ret;

	if (strcmp(blkring_spec_type(spec), "file") ||
	    (!opt_is_set(j->o, "direct") && blkring_spec_get(spec, "direct")))
		return 0;
	ret = blkring_spec_set(spec, "direct", j->o->direct ? "1" : "0");
	return ret ? file_open_error(j, f, ret) : 0;
}

/* A device spec as written, or a path as the file driver's. */
static int file_spec(const struct job_file *f, bool path, struct blkring_spec **specp)
{
	int ret;

	if (!path)
		return blkring_spec_parse(f->name, specp);
	ret = blkring_spec_parse("file:", specp);
	if (ret)
		return ret;
	ret = blkring_spec_set_arg(*specp, f->name);
	if (ret)
		blkring_spec_free(*specp);
	return ret;
}

static int file_open(const struct job *j, struct job_file *f, bool path)
{
	struct blkring_dev_info info;
	struct blkring_spec *spec;
	int ret = file_spec(f, path, &spec);

	if (ret)
		return file_open_error(j, f, ret);
	ret = spec_poll(j, f, spec) ?: spec_direct(j, f, spec);
	if (!ret) {
		ret = blkring_dev_open_spec(spec, &f->dev);
		if (ret) {
			f->dev = NULL;
			ret = file_open_error(j, f, ret);
		}
	}
	blkring_spec_free(spec);
	if (ret)
		return ret;
	ret = blkring_dev_info(f->dev, &info);
	if (ret)
		return def_error(j->def, "filename", "filename=%s: %s", f->name, strerror(-ret));
	return file_region(j, f, &info) ?: file_ops_fit(j, f, &info);
}

int job_files_open(struct job *j, unsigned clone, bool readonly)
{
	bool paths;
	int ret = job_names(j, clone, &paths);

	if (!ret && paths)
		ret = job_layout(j, readonly);
	for (unsigned k = 0; k < j->nr_files && !ret; k++) {
		ret = file_open(j, &j->files[k], paths);
		j->io_size += j->files[k].len;
	}
	return ret;
}

void job_files_close(struct job *j)
{
	for (unsigned k = 0; k < j->nr_files && j->files; k++)
		if (j->files[k].dev)
			blkring_dev_close(j->files[k].dev);
	free(j->files);
	j->files = NULL;
	j->nr_files = 0;
}
