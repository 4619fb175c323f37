// SPDX-License-Identifier: MIT
/*
 * Tables (Linux's dm-table.c and dmsetup's parser): dmsetup text into
 * targets, legs opened and checked, the volume's limits and features from
 * its legs.  Every error names the line, the target and the argument, and
 * a failed build closes every device it opened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "lib/error.h"

static const struct dm_target_type *const target_types[] = {
    &blkring__dm_linear, &blkring__dm_striped, &blkring__dm_zero,
    &blkring__dm_error,  &blkring__dm_flakey,
};

/* ---- messages ---- */

static int line_verror(const struct dm_table *t, unsigned line, int err, const char *fmt,
                       va_list ap)
{
	char *msg = blkring__vformat(fmt, ap);

	if (t->source)
		err = blkring__error(err, "%s:%u: %s", t->source, line, msg ? msg : fmt);
	else
		err = blkring__error(err, "line %u: %s", line, msg ? msg : fmt);
	free(msg);
	return err;
}

static int __attribute__((format(printf, 4, 5)))
line_error(const struct dm_table *t, unsigned line, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = line_verror(t, line, err, fmt, ap);
	va_end(ap);
	return err;
}

int blkring__dm_target_error(struct dm_target *ti, int err, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = blkring__vformat(fmt, ap);
	va_end(ap);
	err = line_error(ti->table, ti->line, err, "%s: %s", ti->type->name, msg ? msg : fmt);
	free(msg);
	return err;
}

int blkring__dm_arg_error(struct dm_target *ti, unsigned arg, int err, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = blkring__vformat(fmt, ap);
	va_end(ap);
	err = line_error(ti->table, ti->line, err, "%s: argument %u '%s': %s", ti->type->name, arg,
	                 ti->argv[arg - 1], msg ? msg : fmt);
	free(msg);
	return err;
}

/* ---- numbers ---- */

/* Decimal digits only, as dm's sscanf("%llu%c") checks: no sign, no
 * trailing text, no overflow. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
			return -ERANGE;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int blkring__dm_arg_u64(struct dm_target *ti, unsigned arg, uint64_t max, const char *what,
                        uint64_t *out)
{
	int ret = parse_u64(ti->argv[arg - 1], max, out);

	if (ret == -ERANGE)
		return blkring__dm_arg_error(ti, arg, -EINVAL, "%s: expected a number up to %llu",
		                             what, (unsigned long long)max);
	if (ret)
		return blkring__dm_arg_error(ti, arg, -EINVAL, "%s: expected a decimal number",
		                             what);
	return 0;
}

/* ---- legs ---- */

/* The directory as spec text: commas and backslashes escaped. */
static char *escape_dir(const char *dir)
{
	char *out = malloc(2 * strlen(dir) + 1), *p = out;

	for (; out && *dir; dir++) {
		if (*dir == ',' || *dir == '\\')
			*p++ = '\\';
		*p++ = *dir;
	}
	if (out)
		*p = '\0';
	return out;
}

/* "TYPE:rel" and "./rel" name files next to the table, as dmsetup users
 * expect of a table file that sits beside its images. */
static char *resolve_spec(const struct dm_table *t, const char *text)
{
	struct blkring_spec spec;
	char *dir, *out = NULL;
	size_t at;

	if (!t->base_dir || blkring__spec_parse(text, &spec))
		return strdup(text);
	if (spec.drv->arg != SPEC_ARG_PATH || !spec.arg || spec.arg[0] == '/') {
		blkring__spec_free(&spec);
		return strdup(text);
	}
	at = text[0] == '.' ? 0 : strlen(spec.type) + 1;
	dir = escape_dir(t->base_dir);
	if (dir && asprintf(&out, "%.*s%s/%s", (int)at, text, dir, text + at) < 0)
		out = NULL;
	free(dir);
	blkring__spec_free(&spec);
	return out;
}

static int add_leg(struct dm_target *ti, struct blkring_dev *dev, uint64_t start, uint64_t len)
{
	struct dm_leg *legs = realloc(ti->legs, (ti->nr_legs + 1) * sizeof(*legs));

	if (!legs)
		return -ENOMEM;
	ti->legs = legs;
	legs[ti->nr_legs++] = (struct dm_leg){.dev = dev, .start = start, .len = len};
	return 0;
}

static int open_leg(struct dm_target *ti, unsigned arg, struct blkring_dev **devp)
{
	char *spec = resolve_spec(ti->table, ti->argv[arg - 1]), *inner;
	int ret;

	if (!spec)
		return -ENOMEM;
	ret = blkring_dev_open(spec, devp);
	free(spec);
	if (!ret)
		return 0;
	/* The leg's message, whole: a nested table's carries its own chain. */
	inner = strdup(blkring_last_error());
	blkring__dm_arg_error(ti, arg, ret, "device does not open: %s",
	                      inner && inner[0] ? inner : strerror(-ret));
	free(inner);
	return ret;
}

static int check_leg(struct dm_target *ti, unsigned arg, struct blkring_dev *dev, uint64_t start,
                     uint64_t len)
{
	uint64_t sectors = READ_ONCE(dev->size) >> SECTOR_SHIFT, end;
	uint32_t lbs = READ_ONCE(dev->limits.logical_block_size);
	bool cycle = false;

	if (ti->table->owner) {
		blkring__dm_lock();
		cycle = blkring__dm_dev_reaches(dev, ti->table->owner);
		blkring__dm_unlock();
	}
	if (cycle)
		return blkring__dm_arg_error(ti, arg, -ELOOP,
		                             "cycle: the volume being loaded would contain itself");
	if (__builtin_add_overflow(start, len, &end))
		return blkring__dm_arg_error(ti, arg, -EINVAL,
		                             "offset %llu plus the %llu sectors it needs passes "
		                             "the last sector number",
		                             (unsigned long long)start, (unsigned long long)len);
	if (end > sectors)
		return blkring__dm_arg_error(ti, arg, -EINVAL,
		                             "device has %llu sectors, the target needs sectors "
		                             "%llu to %llu",
		                             (unsigned long long)sectors, (unsigned long long)start,
		                             (unsigned long long)end);
	if (((start | len) << SECTOR_SHIFT) & (lbs - 1))
		return blkring__dm_arg_error(ti, arg, -EINVAL,
		                             "sectors %llu+%llu are not aligned to the device's "
		                             "logical block size %u",
		                             (unsigned long long)start, (unsigned long long)len,
		                             lbs);
	return 0;
}

int blkring__dm_get_device(struct dm_target *ti, unsigned arg, uint64_t start, uint64_t len,
                           struct blkring_dev **devp)
{
	struct blkring_dev *dev;
	int ret = open_leg(ti, arg, &dev);

	if (ret)
		return ret;
	ret = add_leg(ti, dev, start, len);
	if (ret) {
		blkring__dev_put(dev);
		return ret;
	}
	ret = check_leg(ti, arg, dev, start, len);
	if (!ret)
		*devp = dev;
	return ret;
}

bool blkring__dm_dev_reaches(struct blkring_dev *dev, struct blkring_dev *of)
{
	struct dm_table *tables[2];

	if (dev == of)
		return true;
	if (!blkring__dm_is_volume(dev))
		return false;
	tables[0] = blkring__dm_live(dev);
	tables[1] = blkring__dm_inactive(dev);
	for (unsigned i = 0; i < 2; i++)
		for (unsigned n = 0; tables[i] && n < tables[i]->nr_targets; n++)
			for (unsigned l = 0; l < tables[i]->targets[n].nr_legs; l++)
				if (blkring__dm_dev_reaches(tables[i]->targets[n].legs[l].dev, of))
					return true;
	return false;
}

/* ---- lines ---- */

/* Splits a line on blanks in place; argv grows as needed. */
static int split_words(char *line, char ***argvp, unsigned *argcp)
{
	unsigned argc = 0, cap = 0;
	char **argv = NULL, *save;

	for (char *tok = strtok_r(line, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		if (argc == cap) {
			char **n = realloc(argv, (cap = cap ? cap * 2 : 8) * sizeof(*argv));

			if (!n) {
				free(argv);
				return -ENOMEM;
			}
			argv = n;
		}
		argv[argc++] = tok;
	}
	*argvp = argv;
	*argcp = argc;
	return 0;
}

static const struct dm_target_type *find_type(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(target_types); i++)
		if (!strcmp(target_types[i]->name, name))
			return target_types[i];
	return NULL;
}

static int unknown_type(const struct dm_table *t, unsigned line, const char *name)
{
	char known[128];
	size_t len = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(target_types); i++)
		len += snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
		                target_types[i]->name);
	return line_error(t, line, -EINVAL, "unknown target '%s'; known targets: %s", name, known);
}

/* start and length: numbers, no gap, no overlap, no overflow. */
static int check_extent(const struct dm_table *t, unsigned line, char **argv, uint64_t *start,
                        uint64_t *len)
{
	uint64_t end;

	if (parse_u64(argv[0], UINT64_MAX, start))
		return line_error(t, line, -EINVAL, "start '%s': expected a sector number",
		                  argv[0]);
	if (parse_u64(argv[1], UINT64_MAX, len) || !*len)
		return line_error(t, line, -EINVAL,
		                  "length '%s': expected a number of sectors above 0", argv[1]);
	if (*start > t->sectors)
		return line_error(t, line, -EINVAL,
		                  "start %llu leaves a gap: the previous target ends at sector "
		                  "%llu",
		                  (unsigned long long)*start, (unsigned long long)t->sectors);
	if (*start < t->sectors)
		return line_error(t, line, -EINVAL,
		                  "start %llu overlaps the previous target, which ends at sector "
		                  "%llu",
		                  (unsigned long long)*start, (unsigned long long)t->sectors);
	if (__builtin_add_overflow(*start, *len, &end) || end > (UINT64_MAX >> SECTOR_SHIFT))
		return line_error(t, line, -EINVAL, "length %llu: the volume would pass 2^64 bytes",
		                  (unsigned long long)*len);
	return 0;
}

static int add_target(struct dm_table *t, unsigned line, unsigned argc, char **argv)
{
	const struct dm_target_type *type;
	struct dm_target *ti;
	uint64_t start = 0, len = 0;
	int ret;

	if (argc < 3)
		return line_error(t, line, -EINVAL, "expected 'start length target [arguments]'");
	ret = check_extent(t, line, argv, &start, &len);
	if (ret)
		return ret;
	type = find_type(argv[2]);
	if (!type)
		return unknown_type(t, line, argv[2]);
	ti = realloc(t->targets, (t->nr_targets + 1) * sizeof(*ti));
	if (!ti)
		return -ENOMEM;
	t->targets = ti;
	ti = &t->targets[t->nr_targets++];
	*ti = (struct dm_target){
	    .table = t, .type = type, .begin = start, .len = len, .line = line, .argv = argv + 3};
	ret = type->ctr(ti, argc - 3, argv + 3);
	ti->argv = NULL;
	if (!ret)
		t->sectors = start + len;
	return ret;
}

static int parse_line(struct dm_table *t, unsigned line, char *text)
{
	unsigned argc;
	char **argv;
	int ret;

	text += strspn(text, " \t\r");
	if (!*text || *text == '#')
		return 0;
	ret = split_words(text, &argv, &argc);
	if (ret)
		return ret;
	ret = add_target(t, line, argc, argv);
	free(argv);
	return ret;
}

static int parse_text(struct dm_table *t, const char *text)
{
	char *buf = strdup(text), *p = buf;
	unsigned line = 0;
	int ret = buf ? 0 : -ENOMEM;

	while (!ret && p) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		ret = parse_line(t, ++line, p);
		p = nl ? nl + 1 : NULL;
	}
	free(buf);
	return ret;
}

/* ---- limits and features ---- */

#define NO_LIMIT (UINT32_MAX >> SECTOR_SHIFT)
#define FEAT_ALL                                                        \
	(BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD | \
	 BLKRING_FEAT_WRITE_ZEROES | BLKRING_FEAT_POLL)

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/* Linux's lcm_not_zero(): either when the other is 0; 0 (no hint) when
 * the multiple does not fit. */
static uint32_t lcm_not_zero(uint32_t a, uint32_t b)
{
	uint64_t l;

	if (!a || !b)
		return a ? a : b;
	l = (uint64_t)(a / gcd_u32(a, b)) * b;
	return l <= UINT32_MAX ? (uint32_t)l : 0;
}

/* Linux's blk_stack_limits, the parts we keep: the strictest of each.  A
 * leg that is a volume may be swapping its table: each field read once. */
static void stack_limits(struct blkring_limits *l, const struct blkring_limits *leg)
{
	l->logical_block_size = max_u32(l->logical_block_size, READ_ONCE(leg->logical_block_size));
	l->physical_block_size =
	    max_u32(l->physical_block_size, READ_ONCE(leg->physical_block_size));
	l->max_sectors = min_u32(l->max_sectors, READ_ONCE(leg->max_sectors));
	l->max_discard_sectors =
	    min_u32(l->max_discard_sectors, READ_ONCE(leg->max_discard_sectors));
	l->discard_granularity =
	    max_u32(l->discard_granularity, READ_ONCE(leg->discard_granularity));
	l->max_write_zeroes_sectors =
	    min_u32(l->max_write_zeroes_sectors, READ_ONCE(leg->max_write_zeroes_sectors));
	l->dma_alignment = l->dma_alignment | READ_ONCE(leg->dma_alignment);
	l->io_min = max_u32(l->io_min, READ_ONCE(leg->io_min));
	l->io_opt = lcm_not_zero(l->io_opt, READ_ONCE(leg->io_opt));
}

static const struct blkring_limits no_limits = {
    .logical_block_size = SECTOR_SIZE,
    .physical_block_size = SECTOR_SIZE,
    .max_sectors = NO_LIMIT,
    .max_discard_sectors = NO_LIMIT,
    .discard_granularity = SECTOR_SIZE,
    .max_write_zeroes_sectors = NO_LIMIT,
};

/* A target's limits: its legs', then its own hints, as Linux's
 * dm_calculate_queue_limits() does before stacking them into the table's. */
static void stack_target(struct dm_table *t, struct dm_target *ti)
{
	struct blkring_limits l = no_limits;

	for (unsigned i = 0; i < ti->nr_legs; i++) {
		stack_limits(&l, &ti->legs[i].dev->limits);
		t->read_only |= READ_ONCE(ti->legs[i].dev->read_only);
	}
	if (ti->type->io_hints)
		ti->type->io_hints(ti, &l);
	stack_limits(&t->limits, &l);
}

/*
 * Features are the intersection over targets, a target's the intersection
 * of its legs'.  So a volume polls only if every leg does (a target
 * without legs, zero or error, never does, as in Linux); otherwise polled
 * I/O gets -EOPNOTSUPP.
 */
static void stack_table(struct dm_table *t)
{
	t->limits = no_limits;
	t->features = FEAT_ALL;
	for (unsigned i = 0; i < t->nr_targets; i++) {
		struct dm_target *ti = &t->targets[i];
		uint32_t features = ti->nr_legs ? FEAT_ALL : ti->features;

		for (unsigned l = 0; l < ti->nr_legs; l++)
			features &= READ_ONCE(ti->legs[l].dev->features);
		t->features &= features;
		stack_target(t, ti);
	}
	blkring__io_hints_validate(&t->limits);
	if (!(t->features & BLKRING_FEAT_DISCARD))
		t->limits.max_discard_sectors = 0;
	if (!(t->features & BLKRING_FEAT_WRITE_ZEROES))
		t->limits.max_write_zeroes_sectors = 0;
}

/* Every target boundary, and every boundary a target cuts its I/O at (a
 * stripe's chunk), on a logical block of the table's devices (Linux's
 * validate_hardware_logical_block_alignment): a piece cut inside a block
 * would fail on its leg. */
static int check_alignment(const struct dm_table *t)
{
	uint64_t mask = (t->limits.logical_block_size >> SECTOR_SHIFT) - 1;

	for (unsigned i = 0; i < t->nr_targets; i++) {
		const struct dm_target *ti = &t->targets[i];

		if ((ti->begin | ti->len) & mask)
			return line_error(t, ti->line, -EINVAL,
			                  "%s: start %llu and length %llu must be multiples of "
			                  "%llu sectors, the logical block size of the table's "
			                  "devices",
			                  ti->type->name, (unsigned long long)ti->begin,
			                  (unsigned long long)ti->len,
			                  (unsigned long long)mask + 1);
		if (ti->max_io_len & mask)
			return line_error(t, ti->line, -EINVAL,
			                  "%s: a chunk of %u sectors must be a multiple of %llu "
			                  "sectors, the logical block size of the table's devices",
			                  ti->type->name, ti->max_io_len,
			                  (unsigned long long)mask + 1);
	}
	return 0;
}

/* The fast path's checks (dm.h): the table's limits (check_alignment()
 * keeps every cut on a logical block). */
static void fast_limits(struct dm_table *t)
{
	bool fast = !t->limits.dma_alignment;

	t->fast_mask = t->limits.logical_block_size - 1;
	t->fast_bytes[REQ_OP_READ] = fast ? (uint64_t)t->limits.max_sectors << SECTOR_SHIFT : 0;
	t->fast_bytes[REQ_OP_WRITE] = t->read_only ? 0 : t->fast_bytes[REQ_OP_READ];
}

static int complete_table(struct dm_table *t)
{
	if (!t->nr_targets) {
		if (t->source)
			return blkring__error(-EINVAL, "%s: the table has no targets", t->source);
		return blkring__error(-EINVAL, "the table has no targets");
	}
	stack_table(t);
	fast_limits(t);
	return check_alignment(t) ?: blkring__dm_poll_build(t);
}

int blkring__dm_table_create(const char *text, const char *source, const char *base_dir,
                             struct blkring_dev *owner, struct dm_table **tp)
{
	struct dm_table *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	t->owner = owner;
	t->source = source ? strdup(source) : NULL;
	t->base_dir = base_dir ? strdup(base_dir) : NULL;
	if ((source && !t->source) || (base_dir && !t->base_dir))
		ret = -ENOMEM;
	else
		ret = parse_text(t, text);
	if (!ret)
		ret = complete_table(t);
	if (ret) {
		blkring__dm_table_destroy(t);
		return ret;
	}
	t->owner = NULL;
	*tp = t;
	return 0;
}

void blkring__dm_table_destroy(struct dm_table *t)
{
	blkring__dm_poll_free(t);
	for (unsigned i = 0; i < t->nr_targets; i++) {
		struct dm_target *ti = &t->targets[i];

		if (ti->private && ti->type->dtr)
			ti->type->dtr(ti);
		for (unsigned l = 0; l < ti->nr_legs; l++)
			blkring__dev_put(ti->legs[l].dev);
		free(ti->legs);
	}
	free(t->targets);
	free(t->source);
	free(t->base_dir);
	free(t);
}

struct dm_target *blkring__dm_table_find(const struct dm_table *t, uint64_t sector)
{
	unsigned lo = 0, hi = t->nr_targets;

	if (sector >= t->sectors)
		return NULL;
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;

		if (t->targets[mid].begin <= sector)
			lo = mid;
		else
			hi = mid;
	}
	return &t->targets[lo];
}

int blkring__dm_ctr_no_args(struct dm_target *ti, unsigned argc, char **argv)
{
	(void)argv;
	if (argc)
		return blkring__dm_target_error(ti, -EINVAL, "expected no arguments, got %u", argc);
	ti->features = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD |
	               BLKRING_FEAT_WRITE_ZEROES;
	ti->num_discard_clones = 1;
	return 0;
}

/* ---- describe ---- */

static int describe_target(struct dm_target *ti, blkring_vol_target_fn fn, void *arg)
{
	struct blkring_vol_leg *legs = calloc(ti->nr_legs ? ti->nr_legs : 1, sizeof(*legs));
	int len = ti->type->status ? ti->type->status(ti, NULL, 0) : 0;
	char *params = malloc(len + 1);
	int ret = -ENOMEM;

	if (legs && params) {
		params[0] = '\0';
		if (ti->type->status)
			ti->type->status(ti, params, len + 1);
		for (unsigned l = 0; l < ti->nr_legs; l++)
			legs[l] = (struct blkring_vol_leg){.spec = ti->legs[l].dev->spec,
			                                   .start = ti->legs[l].start,
			                                   .len = ti->legs[l].len};
		ret = fn(&(struct blkring_vol_target){.line = ti->line,
		                                      .type = ti->type->name,
		                                      .start = ti->begin,
		                                      .len = ti->len,
		                                      .params = params,
		                                      .nr_legs = ti->nr_legs,
		                                      .legs = legs},
		         arg);
	}
	free(params);
	free(legs);
	return ret;
}

int blkring__dm_table_describe(const struct dm_table *t, blkring_vol_target_fn fn, void *arg)
{
	int ret = 0;

	for (unsigned i = 0; !ret && i < t->nr_targets; i++)
		ret = describe_target(&t->targets[i], fn, arg);
	return ret;
}
