// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "job.h"
#include "verify.h"

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

/* Data from start to *end, as fio writes a file a job reads: random bytes.
 * With fill (fio's fill_device), a full file system ends it there: *end is
 * where. */
static int layout_write(int fd, uint64_t start, uint64_t *end, uint64_t seed, bool fill)
{
	uint64_t *buf = malloc(LAYOUT_CHUNK);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < LAYOUT_CHUNK / sizeof(*buf); i++)
		buf[i] = rng_next(&seed);
	while (start < *end && !ret) {
		size_t n = *end - start < LAYOUT_CHUNK ? (size_t)(*end - start) : LAYOUT_CHUNK;
		ssize_t done = pwrite(fd, buf, n, (off_t)start);

		if (done < 0 && fill && (errno == ENOSPC || errno == EDQUOT))
			*end = start;
		else if (done < 0 && errno != EINTR)
			ret = -errno;
		else if (done > 0)
			start += (uint64_t)done;
	}
	free(buf);
	return ret;
}

/* fio's fill_device for a file that is not there: as large as its file
 * system's free space (0 when that cannot be known). */
static uint64_t fs_free(const char *path)
{
	char dir[BENCH_PATH_MAX];
	struct statvfs sv;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	return statvfs(slash ? dir : ".", &sv) ? 0 : (uint64_t)sv.f_bavail * sv.f_frsize;
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
 * whole file anew.  With fill_device a file takes its size (without one,
 * its file system's free space) sparse for a job that only writes (its
 * writes fill it, and ENOSPC ends the job), written until it is full for
 * one that reads.  Returns 1 when it laid the file out (*need bytes), 0 when it
 * needed nothing.
 */
static int file_layout(const struct job *j, const struct job_file *f, uint64_t *need, bool readonly)
{
	bool reads = rw_modes[j->o->rw.mode].ddirs & (1U << DDIR_READ);
	bool fill = j->o->fill_device;
	uint64_t from = 0;
	struct stat st;
	int fd, ret;

	if (!stat(f->name, &st)) {
		if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size >= *need)
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
	if (fill && !*need)
		*need = fs_free(f->name);
	if (!*need)
		return def_error(j->def, "size",
		                 "%s does not exist: give size= or filesize= (in bytes) to lay it "
		                 "out",
		                 f->name);
	fd = open(f->name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return def_error(j->def, "filename", "%s: cannot create it: %s", f->name,
		                 strerror(errno));
	if (reads)
		ret = layout_write(fd, from, need, j->number, fill);
	else
		ret = fill ? (ftruncate(fd, (off_t)*need) ? -errno : 0)
		           : layout_allocate(fd, from, *need);
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
	uint64_t need = j->o->offset.bytes + j->clone * j->o->offset_increment.bytes +
	                file_size_wanted(j),
	         bytes = 0;
	unsigned laid = 0;

	for (unsigned k = 0; k < j->nr_files; k++) {
		uint64_t laid_bytes = need;
		int ret = file_layout(j, &j->files[k], &laid_bytes, readonly);

		if (ret < 0)
			return ret;
		laid += (unsigned)ret;
		bytes += ret ? laid_bytes : 0;
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

/* what: the option and how v comes from it ("bs=", "bsrange: a size of "). */
static int not_in_blocks(const struct job *j, const struct job_file *f, const char *opt,
                         const char *what, uint64_t v, uint64_t lbs)
{
	return def_error(j->def, opt,
	                 "%s%" PRIu64 " is not a multiple of %s's logical block size (%" PRIu64 ")",
	                 what, v, f->name, lbs);
}

/* Every size and offset step the job's options give is whole logical
 * blocks of the device, which takes nothing finer. */
static int file_blocks_fit(const struct job *j, const struct job_file *f, uint64_t lbs)
{
	const struct job_opts *o = j->o;
	const struct rw_mode *m = &rw_modes[o->rw.mode];

	for (unsigned k = 0; k < BENCH_DDIR_NR; k++) {
		const struct bs_split *split = &o->bssplit[k];

		if (!(m->ddirs & (1U << k)))
			continue;
		for (unsigned i = 0; i < split->nr; i++)
			if (split->e[i].bs % lbs)
				return not_in_blocks(j, f, "bssplit", "bssplit: a size of ",
				                     split->e[i].bs, lbs);
		if (!split->nr && o->bsrange[k].min &&
		    (o->bsrange[k].min % lbs || o->bsrange[k].max % lbs))
			return not_in_blocks(
			    j, f, "bsrange", "bsrange: a size of ",
			    o->bsrange[k].min % lbs ? o->bsrange[k].min : o->bsrange[k].max, lbs);
		if (!split->nr && !o->bsrange[k].min && o->bs[k] % lbs)
			return not_in_blocks(j, f, "bs", "bs=", o->bs[k], lbs);
	}
	if (!m->random && o->rw.nr % lbs)
		return not_in_blocks(j, f, "rw", "rw=MODE:N: a skip of ", o->rw.nr, lbs);
	if (opts_strided(o) && opts_zonerange(o) % lbs)
		return not_in_blocks(j, f, o->zonerange ? "zonerange" : "zonesize",
		                     "zonemode=strided: a zone of ", opts_zonerange(o), lbs);
	if (opts_strided(o) && o->zoneskip % lbs)
		return not_in_blocks(j, f, "zoneskip", "zoneskip=", o->zoneskip, lbs);
	return 0;
}

/*
 * Where the job's region starts, as fio's get_start_offset(): offset, and
 * with fio's offset_increment that much more for each clone before this
 * one; when either is a percentage of the device, the sum rounded up to
 * the job's smallest block.  Sets `text` to how the job gave it, for
 * messages.
 */
static int region_start(const struct job *j, const struct job_file *f, uint64_t dev_size,
                        uint64_t *off, char *text, size_t len)
{
	const struct job_opts *o = j->o;
	const struct size_pct *inc = &o->offset_increment;
	uint64_t step = inc->pct ? pct_of(dev_size, inc->pct, 1) : inc->bytes, more;

	*off = o->offset.pct ? pct_of(dev_size, o->offset.pct, 1) : o->offset.bytes;
	if (step && j->clone &&
	    (__builtin_mul_overflow(step, (uint64_t)j->clone, &more) ||
	     __builtin_add_overflow(*off, more, off)))
		return def_error(j->def, "offset_increment",
		                 "offset_increment=%" PRIu64 ": clone %u starts past the end of %s",
		                 step, j->clone, f->name);
	if ((o->offset.pct || inc->pct) && *off < dev_size) {
		uint64_t unit = opts_unit(o, true);

		*off = (*off + unit - 1) / unit * unit;
	}
	if (step && j->clone)
		snprintf(text, len, "offset=%" PRIu64 " (clone %u, offset_increment=%" PRIu64 ")",
		         *off, j->clone, step);
	else
		given_as(text, len, "offset", &o->offset, *off, dev_size);
	return 0;
}

/* fio's zoned_abs zones lie in the job's window: its region, or a zone. */
static int file_zones_fit(const struct job *j, const struct job_file *f, uint64_t len)
{
	const struct job_opts *o = j->o;
	const struct rand_dist *rd = &o->random_distribution;
	uint64_t window = opts_strided(o) && j->nr_files == 1 ? opts_zonerange(o) : len;

	if (rd->kind != DIST_ZONED_ABS || !rw_modes[o->rw.mode].random)
		return 0;
	for (unsigned k = 0; k < BENCH_DDIR_NR; k++) {
		uint64_t end = 0;

		for (unsigned i = 0; rd->zones[k].set && i < 100; i++)
			end = rd->zones[k].at[i].end > end ? rd->zones[k].at[i].end : end;
		if ((rw_modes[o->rw.mode].ddirs & (1U << k)) && end > window)
			return def_error(j->def, "random_distribution",
			                 "zoned_abs: the %s zones take %" PRIu64
			                 " bytes, more than the job's %" PRIu64 " on %s",
			                 ddir_names[k], end, window, f->name);
	}
	return 0;
}

/* A random strided job draws offsets over its zone: one zone past the
 * device's end would end the job at its first offset there (fio's runs
 * one I/O, or none). */
static int file_random_zone_fits(const struct job *j, const struct job_file *f)
{
	const struct job_opts *o = j->o;
	uint64_t range = opts_zonerange(o);

	if (!opts_strided(o) || j->nr_files != 1 || !rw_modes[o->rw.mode].random ||
	    range <= f->dev_size - f->start)
		return 0;
	return def_error(j->def, o->zonerange ? "zonerange" : "zonesize",
	                 "zonemode=strided: a zone of %" PRIu64 " bytes at %" PRIu64
	                 " goes past the end of %s (%" PRIu64
	                 " bytes), so a random job's offsets would fall past it",
	                 range, f->start, f->name, f->dev_size);
}

/* The region a job works on in one file, checked against its size and blocks. */
static int file_region(const struct job *j, struct job_file *f, const struct blkring_dev_info *info)
{
	const struct job_opts *o = j->o;
	uint64_t lbs = info->logical_block_size, off, len, unit = opts_unit(o, false);
	uint64_t wanted = file_size_wanted(j);
	char off_text[128], len_text[96];
	int ret = file_blocks_fit(j, f, lbs)
	              ?: region_start(j, f, info->size, &off, off_text, sizeof(off_text));

	if (ret)
		return ret;
	if (off % lbs)
		return def_error(j->def, "offset",
		                 "%s is not a multiple of the logical block size (%" PRIu64 ")",
		                 off_text, lbs);
	if (off >= info->size)
		return def_error(j->def, "offset",
		                 "%s is at or past the end of %s (%" PRIu64 " bytes)", off_text,
		                 f->name, info->size);
	len = o->size.pct && !o->filesize ? pct_of(info->size, o->size.pct, unit)
	      : wanted                    ? wanted
	                                  : info->size - off;
	given_as(len_text, sizeof(len_text), "size", &o->size, len, info->size);
	if (len > info->size - off)
		return def_error(j->def, "size",
		                 "%s at %s goes past the end of %s (%" PRIu64 " bytes)", len_text,
		                 off_text, f->name, info->size);
	if (len < unit)
		return def_error(j->def, "size", "%s is smaller than one block (bs=%" PRIu64 ")",
		                 len_text, unit);
	f->start = off;
	f->len = len;
	f->dev_size = info->size;
	f->lbs = (uint32_t)lbs;
	return file_random_zone_fits(j, f) ?: file_zones_fit(j, f, len);
}

/* verify's blocks are of one size per direction, at whole blocks of the
 * job's region: shapes that break either cannot be checked. */
static int file_verify_shape(const struct job *j)
{
	const struct job_opts *o = j->o;
	const struct rw_mode *m = &rw_modes[o->rw.mode];

	if (!o->verify)
		return 0;
	for (unsigned k = DDIR_READ; k <= DDIR_WRITE; k++)
		if ((m->ddirs & (1U << k)) && opts_min_bs(o, k) != opts_max_bs(o, k))
			return def_error(
			    j->def, "verify",
			    "verify needs one block size per direction, and bsrange or "
			    "bssplit gives %s several",
			    ddir_names[k]);
	if (opts_strided(o))
		return def_error(j->def, "verify",
		                 "verify checks the job's region, which zonemode=strided leaves");
	if (!m->random && o->rw.nr % o->bs[m->ddirs & (1U << DDIR_WRITE) ? DDIR_WRITE : DDIR_READ])
		return def_error(j->def, "verify",
		                 "verify with rw=%s:%" PRIu64 " needs holes of whole blocks",
		                 m->name, o->rw.nr);
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
	unsigned ddirs = rw_modes[o->rw.mode].ddirs, rw = (1U << DDIR_READ) | (1U << DDIR_WRITE);

	if (o->verify && !(ddirs & rw))
		return def_error(j->def, "verify",
		                 "verify checks reads and writes; rw=%s does neither",
		                 rw_modes[o->rw.mode].name);
	/* The verify phase reads blocks of the size written. */
	if (o->verify && (ddirs & rw) == rw && o->bs[DDIR_READ] != o->bs[DDIR_WRITE])
		return def_error(j->def, "verify",
		                 "verify with rw=%s needs one block size for reads and writes "
		                 "(bs=%" PRIu64 ",%" PRIu64 ")",
		                 rw_modes[o->rw.mode].name, o->bs[DDIR_READ], o->bs[DDIR_WRITE]);
	if (o->verify && j->nr_files > 1)
		return def_error(j->def, "verify", "verify works on one file, not %u", j->nr_files);
	if (o->verify && verify_method_init(
	                     &(struct verify_method){0}, o,
	                     (uint32_t)o->bs[ddirs & (1U << DDIR_WRITE) ? DDIR_WRITE : DDIR_READ]))
		return def_error(j->def, "verify", "%s", tool_last_error());
	if ((ddirs & ~(1U << DDIR_READ)) && info->read_only)
		return def_error(j->def, "rw", "rw=%s: %s is read-only", rw_modes[o->rw.mode].name,
		                 f->name);
	/* Discards and zeroes are never polled, as in Linux. */
	if (o->hipri && (ddirs & rw) && !(info->features & BLKRING_FEAT_POLL))
		return def_error(j->def, "hipri", "hipri=1: %s has no poll queues", f->name);
	if ((ddirs & (1U << DDIR_TRIM)) && !(info->features & BLKRING_FEAT_DISCARD))
		return def_error(j->def, "rw", "rw=%s: %s does not support discard",
		                 rw_modes[o->rw.mode].name, f->name);
	if ((ddirs & (1U << DDIR_ZERO)) && (o->zero_flags & BLKRING_ZERO_NOFALLBACK) &&
	    !(info->features & BLKRING_FEAT_WRITE_ZEROES))
		return def_error(j->def, "zero_flags",
		                 "rw=%s with zero_flags=nofallback: %s does not support write "
		                 "zeroes",
		                 rw_modes[o->rw.mode].name, f->name);
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
	return file_region(j, f, &info) ?: file_verify_shape(j) ?: file_ops_fit(j, f, &info);
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
