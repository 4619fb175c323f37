// SPDX-License-Identifier: MIT
/* The option table and its value parsers. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkring.h"
#include "clock.h"
#include "compiler.h"
#include "engine.h"
#include "error.h"
#include "options.h"
#include "verify.h"

const char *const ddir_names[BENCH_DDIR_NR] = {"read", "write", "trim", "zero"};

#define R (1U << DDIR_READ)
#define W (1U << DDIR_WRITE)
#define T (1U << DDIR_TRIM)
#define Z (1U << DDIR_ZERO)
const struct rw_mode rw_modes[] = {
    {"read", R, false},      {"write", W, false},   {"randread", R, true},
    {"randwrite", W, true},  {"rw", R | W, false},  {"readwrite", R | W, false},
    {"randrw", R | W, true}, {"trim", T, false},    {"randtrim", T, true},
    {"zero", Z, false},      {"randzero", Z, true}, {NULL, 0, false},
};
#undef R
#undef W
#undef T
#undef Z

static const char *const eta_names[] = {"auto", "always", "never", NULL};
static const char *const clock_names[] = {"cpu", "clock_gettime", NULL};
static const char *const taskrun_names[] = {"normal", "defer", NULL};
static const char *const rw_sequencer_names[] = {"sequential", "identical", NULL};
static const char *const random_generator_names[] = {"tausworthe", "lfsr", "tausworthe64", NULL};
static const char *const zonemode_names[] = {"none", "strided", NULL};
const char *const poll_strategy_names[] = {"all", "cookie", NULL};
static const char *const rate_process_names[] = {"linear", "poisson", NULL};
static const char *const submit_mode_names[] = {"inline", "offload", NULL};
/* fio's words for unified_rw_reporting, then its older numbers for them. */
static const char *const unified_names[] = {"none", "mixed", "both", "0", "1", "2", NULL};
static const char *const kb_base_names[] = {"1024", "1000", NULL};
static const char *const unit_base_names[] = {"0", "8", "1", NULL};

/* ---- value parsers: each explains what it expected ---- */

static int parse_u64(const char *s, uint64_t *out, char **end)
{
	int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, end, base);
	return errno ? -ERANGE : 0;
}

static int mul_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

/* The job's kb_base (1024 or 1000) while its options are read: opt_set()
 * sets it, as fio reads sizes with the kb_base given before them. */
static unsigned size_kb_base = 1024;

/*
 * fio's sizes: k, m, g, t, p (with an optional b) are powers of kb_base;
 * their IEC spellings kib, mib... the other base, as fio's
 * __get_mult_bytes has it ("inverted for compatibility": 4KiB is 4000
 * bytes with kb_base=1024).  A bare i (4ki) is as the letter alone.
 */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmgtp";
	uint64_t v, mult = 1, base = size_kb_base;
	char *end;
	const char *u;

	if (parse_u64(s, &v, &end))
		return -EINVAL;
	if (*end && (u = strchr(units, tolower((unsigned char)*end)))) {
		end++;
		if ((end[0] == 'i' || end[0] == 'I') && (end[1] == 'b' || end[1] == 'B'))
			base = base == 1024 ? 1000 : 1024;
		if (*end == 'i' || *end == 'I')
			end++;
		for (long i = 0; i <= u - units; i++)
			mult *= base;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || mul_overflows(v, mult, out))
		return -EINVAL;
	return 0;
}

static int check_range(const struct bench_opt *opt, const char *val, uint64_t v)
{
	if (v < opt->minval || v > opt->maxval)
		return tool_error(-EINVAL, "'%s' is out of range (%" PRIu64 " to %" PRIu64 ")", val,
		                  opt->minval, opt->maxval);
	return 0;
}

/* A whole number, stored at its field's width: unsigned or uint64_t.  As
 * fio's, it takes a size suffix (iodepth=4k is 4096). */
static int opt_int(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v;

	if (parse_size(val, &v))
		return tool_error(-EINVAL, "'%s' is not a whole number", val);
	if (check_range(opt, val, v))
		return -EINVAL;
	if (opt->size == sizeof(uint64_t))
		*(uint64_t *)field = v;
	else
		*(unsigned *)field = (unsigned)v;
	return 0;
}

static int opt_bool(const struct bench_opt *opt, const char *val, void *field)
{
	(void)opt;
	if (strcmp(val, "0") && strcmp(val, "1"))
		return tool_error(-EINVAL, "'%s' is not 0 or 1", val);
	*(bool *)field = val[0] == '1';
	return 0;
}

static int size_error(const char *val)
{
	return tool_error(
	    -EINVAL, "'%s' is not a size (bytes, with an optional k, m, g, t or p suffix)", val);
}

static int opt_size(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v;

	if (parse_size(val, &v))
		return size_error(val);
	if (check_range(opt, val, v))
		return -EINVAL;
	*(uint64_t *)field = v;
	return 0;
}

/* A size, or N% of the device. */
static int opt_size_pct(const struct bench_opt *opt, const char *val, void *field)
{
	struct size_pct *sp = field;
	size_t len = strlen(val);

	if (len > 1 && val[len - 1] == '%') {
		char num[32];
		uint64_t v;
		char *end;

		if (len >= sizeof(num))
			return size_error(val);
		memcpy(num, val, len - 1);
		num[len - 1] = '\0';
		if (parse_u64(num, &v, &end) || *end || v < 1 || v > 100)
			return tool_error(-EINVAL, "'%s' is not a percentage from 1%% to 100%%",
			                  val);
		sp->pct = (unsigned)v;
		sp->bytes = 0;
		return 0;
	}
	sp->pct = 0;
	return opt_size(opt, val, &sp->bytes);
}

/* One direction's entry of a ddir_list(): parses part into elem. */
typedef int (*ddir_entry_fn)(const struct bench_opt *opt, const char *part, void *elem);

#define DDIR_ELEM_MAX sizeof(struct zone_table) /* the largest element a list holds */
#define DDIR_PART_MAX 4096

/*
 * fio's per-direction lists (bs=R[,W[,T]]): each entry sets its direction's
 * element of out, elem bytes each; an empty entry leaves its direction as
 * it was (bs=4k,,8k keeps the write size), and the last entry given also
 * sets the directions after it.  Write zeroes, which fio does not have,
 * takes the trim entry.  `what` names the entries in messages.  Nothing
 * changes unless every entry parses.
 */
static int ddir_list(const struct bench_opt *opt, const char *val, void *out, size_t elem,
                     const char *what, ddir_entry_fn one)
{
	unsigned char tmp[BENCH_DDIR_NR * DDIR_ELEM_MAX];
	char part[DDIR_PART_MAX];
	const char *p = val;
	unsigned d = 0;

	if (!*val)
		return one(opt, val, tmp);
	memcpy(tmp, out, BENCH_DDIR_NR * elem);
	for (;;) {
		size_t len = strcspn(p, ",");

		if (d == FIO_DDIR_NR)
			return tool_error(-EINVAL, "'%s' has more than %u %s (read,write,trim)",
			                  val, FIO_DDIR_NR, what);
		if (len >= sizeof(part))
			return tool_error(-EINVAL, "an entry is longer than %zu characters",
			                  sizeof(part) - 1);
		memcpy(part, p, len);
		part[len] = '\0';
		if (len && one(opt, part, tmp + d * elem))
			return -EINVAL;
		for (unsigned k = d + 1; len && !p[len] && k < FIO_DDIR_NR; k++)
			memcpy(tmp + k * elem, tmp + d * elem, elem);
		d++;
		if (!p[len])
			break;
		p += len + 1;
	}
	memcpy(tmp + DDIR_ZERO * elem, tmp + DDIR_TRIM * elem, elem);
	memcpy(out, tmp, BENCH_DDIR_NR * elem);
	return 0;
}

static int bs_entry(const struct bench_opt *opt, const char *part, void *elem)
{
	uint64_t v;

	if (parse_size(part, &v))
		return size_error(part);
	if (check_range(opt, part, v))
		return -EINVAL;
	*(uint64_t *)elem = v;
	return 0;
}

/* bs=R[,W[,T]], and rate's lists of the same shape. */
static int opt_bs(const struct bench_opt *opt, const char *val, void *field)
{
	return ddir_list(opt, val, field, sizeof(uint64_t), "sizes", bs_entry);
}

/* One direction's bsrange: MIN-MAX, or fio's MIN:MAX, either way round. */
static int bsrange_entry(const struct bench_opt *opt, const char *part, void *elem)
{
	struct bs_range *r = elem;
	size_t len = strcspn(part, "-:");
	uint64_t lo, hi;
	char first[64];

	if (!part[len] || len >= sizeof(first))
		goto bad;
	memcpy(first, part, len);
	first[len] = '\0';
	if (parse_size(first, &lo) || parse_size(part + len + 1, &hi))
		goto bad;
	if (check_range(opt, part, lo) || check_range(opt, part, hi))
		return -EINVAL;
	r->min = lo < hi ? lo : hi;
	r->max = lo < hi ? hi : lo;
	return 0;
bad:
	return tool_error(-EINVAL, "'%s' is not a block size range (MIN-MAX, e.g. 4k-64k)", part);
}

static int opt_bsrange(const struct bench_opt *opt, const char *val, void *field)
{
	return ddir_list(opt, val, field, sizeof(struct bs_range), "ranges", bsrange_entry);
}

/* A percentage, len bytes at p: 0 to 100, % optional. */
static int pct_digits(const char *p, size_t len, unsigned *pct)
{
	unsigned v = 0;

	if (len && p[len - 1] == '%')
		len--;
	if (len > 3 || strspn(p, "0123456789") < len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		v = v * 10 + (unsigned)(p[i] - '0');
	*pct = v;
	return v > 100 ? -EINVAL : 0;
}

/* A share's percentage: none (or fio's 0) is UINT_MAX, a share of what
 * the others leave. */
static int share_pct(const char *p, size_t len, unsigned *pct)
{
	if (pct_digits(p, len, pct))
		return -EINVAL;
	if (!*pct)
		*pct = UINT_MAX;
	return 0;
}

/*
 * fio's split of the 100%: the shares without a percentage take what the
 * others leave, evenly (a lone one takes it all; nothing is left past
 * 100%).  *sum is the given ones' total; returns how many were not given.
 */
static unsigned share_rest(unsigned *pct, unsigned nr, unsigned *sum)
{
	unsigned missing = 0;

	*sum = 0;
	for (unsigned i = 0; i < nr; i++) {
		missing += pct[i] == UINT_MAX;
		*sum += pct[i] == UINT_MAX ? 0 : pct[i];
	}
	for (unsigned i = 0; i < nr; i++)
		if (pct[i] == UINT_MAX)
			pct[i] = nr == 1 ? 100 : *sum > 100 ? 0 : (100 - *sum) / missing;
	return missing;
}

/* SIZE[/PERCENT] of a bssplit, len bytes at p. */
static int bs_share(const struct bench_opt *opt, const char *p, size_t len, uint64_t *bs,
                    unsigned *pct)
{
	size_t size_len = strcspn(p, "/:");
	char size[64];

	if (!len || size_len >= sizeof(size))
		goto bad;
	memcpy(size, p, size_len);
	size[size_len] = '\0';
	if (parse_size(size, bs))
		goto bad;
	if (check_range(opt, size, *bs))
		return -EINVAL;
	*pct = UINT_MAX;
	if (size_len < len && share_pct(p + size_len + 1, len - size_len - 1, pct))
		goto bad;
	return 0;
bad:
	return tool_error(-EINVAL,
	                  "'%.*s' is not a block size and its share (SIZE/PERCENT, e.g. "
	                  "4k/10:64k/50:32k/40)",
	                  (int)len, p);
}

/* The sizes with a share, in fio's order: shares ascending (stable, as
 * glibc's qsort sorts them); shares of nothing are never drawn.  sum: the
 * shares given, kept when over 100% for the note. */
static void bssplit_store(struct bs_split *s, const uint64_t *bs, const unsigned *pct, unsigned nr,
                          unsigned sum)
{
	s->over = sum > 100 ? sum : 0;
	s->nr = 0;
	for (unsigned i = 0; i < nr; i++) {
		unsigned k;

		if (!pct[i])
			continue;
		for (k = s->nr++; k && s->e[k - 1].pct > pct[i]; k--)
			s->e[k] = s->e[k - 1];
		s->e[k] = (struct bs_share){bs[i], pct[i]};
	}
}

/* One direction's bssplit: SIZE/PERCENT:SIZE/PERCENT:... */
static int bssplit_entry(const struct bench_opt *opt, const char *part, void *elem)
{
	uint64_t bs[BENCH_MAX_BSSPLIT];
	unsigned pct[BENCH_MAX_BSSPLIT], nr = 0, sum;
	const char *p = part;

	do {
		size_t len = strcspn(p, ":");

		if (nr == BENCH_MAX_BSSPLIT)
			return tool_error(-EINVAL, "'%s' has more than %u block sizes", part,
			                  BENCH_MAX_BSSPLIT);
		if (bs_share(opt, p, len, &bs[nr], &pct[nr]))
			return -EINVAL;
		nr++;
		p += len;
	} while (*p++ == ':');
	/* As fio's: over 100% only one size may go without a share (all
	 * over 100% is a note: the draw stops at 100%, the sizes past it get
	 * what is left). */
	if (share_rest(pct, nr, &sum) > 1 && sum > 100)
		return tool_error(-EINVAL, "'%s': the shares add up to %u%%, more than 100%%", part,
		                  sum);
	bssplit_store(elem, bs, pct, nr, sum);
	return 0;
}

static int opt_bssplit(const struct bench_opt *opt, const char *val, void *field)
{
	return ddir_list(opt, val, field, sizeof(struct bs_split), "splits", bssplit_entry);
}

#define US_PER_DAY 86400000000ULL

/* Microseconds in one of a time's unit: us, ms, s, m, h or d; seconds by default. */
static uint64_t time_unit_us(const char *suffix)
{
	static const struct {
		const char *suffix;
		uint64_t us;
	} units[] = {
	    {"", 1000000ULL},     {"s", 1000000ULL},    {"sec", 1000000ULL}, {"us", 1ULL},
	    {"usec", 1ULL},       {"ms", 1000ULL},      {"msec", 1000ULL},   {"m", 60000000ULL},
	    {"min", 60000000ULL}, {"h", 3600000000ULL}, {"d", US_PER_DAY},
	};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcasecmp(suffix, units[i].suffix))
			return units[i].us;
	return 0;
}

/*
 * fio's times.  The job counts them in nanoseconds from a clock reading,
 * so a longer one than opt->maxval would wrap and end the job at once.
 */
static int opt_time(const struct bench_opt *opt, const char *val, void *field)
{
	uint64_t v, unit, us;
	char *end;

	if (parse_u64(val, &v, &end) || !(unit = time_unit_us(end)))
		return tool_error(-EINVAL,
		                  "'%s' is not a time (a whole number with us, ms, s, m, h or "
		                  "d; seconds without)",
		                  val);
	if (mul_overflows(v, unit, &us) || us > opt->maxval)
		return tool_error(
		    -EINVAL, "'%s' is too long (at most %" PRIu64 "d, about %" PRIu64 " years)",
		    val, (uint64_t)(opt->maxval / US_PER_DAY),
		    (uint64_t)(opt->maxval / US_PER_DAY / 365));
	*(uint64_t *)field = us;
	return 0;
}

/* A time whose bare number is microseconds (fio's thinktime). */
static int opt_time_us(const struct bench_opt *opt, const char *val, void *field)
{
	size_t digits = strspn(val, "0123456789");
	char with_unit[32];

	if (digits && !val[digits] && digits < sizeof(with_unit) - 3) {
		snprintf(with_unit, sizeof(with_unit), "%sus", val);
		return opt_time(opt, with_unit, field);
	}
	return opt_time(opt, val, field);
}

/* The words a value may be, for "'x' is not one of a, b, c". */
struct word_list {
	char text[256];
	size_t len;
};

static void word_add(struct word_list *l, const char *word)
{
	if (l->len < sizeof(l->text))
		l->len += (size_t)snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s%s",
		                           l->len ? ", " : "", word);
}

static int not_one_of(const char *val, const struct word_list *l)
{
	return tool_error(-EINVAL, "'%s' is not one of %s", val, l->text);
}

static int opt_choice(const struct bench_opt *opt, const char *val, void *field)
{
	struct word_list l = {.len = 0};

	for (unsigned i = 0; opt->choices[i]; i++) {
		if (!strcmp(val, opt->choices[i])) {
			*(unsigned *)field = i;
			return 0;
		}
	}
	for (unsigned i = 0; opt->choices[i]; i++)
		word_add(&l, opt->choices[i]);
	return not_one_of(val, &l);
}

/* rw='s offset modifier, after the ':': for a random mode the I/Os per
 * random offset, for a sequential one the bytes skipped after each I/O. */
static int rw_modifier(const char *val, const char *text, bool random, uint64_t *nr, bool *back)
{
	/* fio's backwards skip: rw=read:-8k. */
	*back = !random && *text == '-';
	text += *back;

	/* As fio since 3.34 (3.33's atoi read 8k as 8): 8k is 8192. */
	if (random && (parse_size(text, nr) || !*nr || *nr > UINT_MAX))
		return tool_error(-EINVAL,
		                  "'%s': after ':' comes the number of I/Os per random offset (a "
		                  "whole number from 1, such as 8 or 8k)",
		                  val);
	if (!random && parse_size(text, nr))
		return tool_error(-EINVAL,
		                  "'%s': after ':' comes the bytes to skip after each I/O (a size "
		                  "such as 8k, or -8k to go back)",
		                  val);
	if (*back && !*nr)
		return tool_error(-EINVAL, "'%s': a backwards skip of 0 bytes", val);
	return 0;
}

/* rw=MODE[:N]. */
static int opt_rw(const struct bench_opt *opt, const char *val, void *field)
{
	struct rw_opt *rw = field;
	struct word_list l = {.len = 0};
	size_t len = strcspn(val, ":");

	(void)opt;
	for (unsigned i = 0; rw_modes[i].name; i++) {
		uint64_t nr = rw_modes[i].random;
		bool back = false;

		if (len != strlen(rw_modes[i].name) || strncmp(val, rw_modes[i].name, len))
			continue;
		if (val[len] && rw_modifier(val, val + len + 1, rw_modes[i].random, &nr, &back))
			return -EINVAL;
		*rw = (struct rw_opt){i, nr, back};
		return 0;
	}
	for (unsigned i = 0; rw_modes[i].name; i++)
		word_add(&l, rw_modes[i].name);
	return not_one_of(val, &l);
}

/* ioengine=: a name of the engine table. */
static int opt_engine(const struct bench_opt *opt, const char *val, void *field)
{
	const struct engine_name *e = engine_find(val);
	struct word_list l = {.len = 0};

	(void)opt;
	if (e) {
		*(const struct engine_name **)field = e;
		return 0;
	}
	for (e = engine_names; e->name; e++)
		word_add(&l, e->name);
	return not_one_of(val, &l);
}

static int opt_str(const struct bench_opt *opt, const char *val, void *field)
{
	size_t len = strlen(val);

	if (!len)
		return tool_error(-EINVAL, "the value is empty");
	if (len > opt->maxval)
		return tool_error(-EINVAL, "the value is longer than %" PRIu64 " characters",
		                  opt->maxval);
	memcpy(field, val, len + 1);
	return 0;
}

/* A log's prefix: a path, or empty when the key is bare (the job's name). */
static int opt_log_name(const struct bench_opt *opt, const char *val, void *field)
{
	size_t len = strlen(val);

	if (len > opt->maxval)
		return tool_error(-EINVAL, "the value is longer than %" PRIu64 " characters",
		                  opt->maxval);
	memcpy(field, val, len + 1);
	return 0;
}

/* unified_rw_reporting: none, mixed, both, or fio's 0, 1, 2 for them. */
static int opt_unified(const struct bench_opt *opt, const char *val, void *field)
{
	if (opt_choice(opt, val, field))
		return -EINVAL;
	*(unsigned *)field %= 3;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* percentile_list=99:99.9: colon-separated, each above 0 and at most 100. */
static int opt_percentiles(const struct bench_opt *opt, const char *val, void *field)
{
	struct percentiles *pl = field;
	struct percentiles tmp = {.nr = 0};
	const char *p = val;

	(void)opt;
	while (*p) {
		char *end;
		double v;

		if (tmp.nr == BENCH_MAX_PERCENTILES)
			return tool_error(-EINVAL, "'%s' has more than %u percentiles", val,
			                  BENCH_MAX_PERCENTILES);
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || (*end && *end != ':') || !(v > 0.0 && v <= 100.0))
			return tool_error(-EINVAL,
			                  "'%s' is not a list of percentiles (numbers above 0 "
			                  "and at most 100, separated by ':')",
			                  val);
		tmp.p[tmp.nr++] = v;
		p = *end ? end + 1 : end;
	}
	if (!tmp.nr)
		return tool_error(-EINVAL, "the list is empty");
	qsort(tmp.p, tmp.nr, sizeof(tmp.p[0]), cmp_double);
	*pl = tmp;
	return 0;
}

/* cpus_allowed=0-3,6: CPUs of this machine. */
static int opt_cpus(const struct bench_opt *opt, const char *val, void *field)
{
	long nr_cpus = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t set;
	const char *p = val;

	(void)opt;
	CPU_ZERO(&set);
	while (*p) {
		uint64_t lo, hi;
		char *end;

		if (parse_u64(p, &lo, &end))
			goto bad;
		hi = lo;
		if (*end == '-' && parse_u64(end + 1, &hi, &end))
			goto bad;
		if ((*end && *end != ',') || hi < lo)
			goto bad;
		if (hi >= (uint64_t)nr_cpus || hi >= CPU_SETSIZE)
			return tool_error(-EINVAL, "CPU %" PRIu64 " does not exist (CPUs 0-%ld)",
			                  hi, nr_cpus - 1);
		for (uint64_t c = lo; c <= hi; c++)
			CPU_SET(c, &set);
		p = *end ? end + 1 : end;
	}
	if (!CPU_COUNT(&set))
		goto bad;
	*(cpu_set_t *)field = set;
	return 0;
bad:
	return tool_error(-EINVAL, "'%s' is not a CPU list (e.g. 0-3,6)", val);
}

static int opt_coe(const struct bench_opt *opt, const char *val, void *field)
{
	static const struct {
		const char *name;
		unsigned mask;
	} kinds[] = {
	    {"none", 0},
	    {"0", 0},
	    {"read", COE_READ},
	    {"write", COE_WRITE},
	    {"io", COE_READ | COE_WRITE},
	    {"verify", COE_VERIFY},
	    {"all", COE_READ | COE_WRITE | COE_VERIFY},
	    {"1", COE_READ | COE_WRITE | COE_VERIFY},
	};

	(void)opt;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(val, kinds[i].name)) {
			*(unsigned *)field = kinds[i].mask;
			return 0;
		}
	}
	return tool_error(-EINVAL, "'%s' is not one of none, read, write, io, verify, all", val);
}

/* zero_flags=nounmap,nofallback: BLKRING_ZERO_* for write zeroes. */
static int opt_zero_flags(const struct bench_opt *opt, const char *val, void *field)
{
	static const struct {
		const char *name;
		unsigned flag;
	} flags[] = {
	    {"nounmap", BLKRING_ZERO_NOUNMAP},
	    {"nofallback", BLKRING_ZERO_NOFALLBACK},
	};
	const char *p = val;
	unsigned mask = 0;

	(void)opt;
	do {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < ARRAY_SIZE(flags); i++)
			if (len == strlen(flags[i].name) && !strncmp(p, flags[i].name, len))
				break;
		if (i == ARRAY_SIZE(flags))
			return tool_error(-EINVAL,
			                  "'%.*s' is not a write zeroes flag (expected "
			                  "nounmap and/or nofallback, separated by ',')",
			                  (int)len, p);
		mask |= flags[i].flag;
		p += len;
	} while (*p++ == ',');
	*(unsigned *)field = mask;
	return 0;
}

/* A share: N or N% (fio takes both). */
static int opt_percent(const struct bench_opt *opt, const char *val, void *field)
{
	char num[32];
	size_t len = strlen(val);

	if (!len || len >= sizeof(num))
		return tool_error(-EINVAL, "'%s' is not a percentage", val);
	memcpy(num, val, len + 1);
	if (num[len - 1] == '%')
		num[len - 1] = '\0';
	if (opt_int(opt, num, field))
		return tool_error(-EINVAL, "'%s' is not a percentage (0 to 100, %% optional)", val);
	return 0;
}

/* percentage_random=R[,W[,T]]. */
static int opt_percent_list(const struct bench_opt *opt, const char *val, void *field)
{
	return ddir_list(opt, val, field, sizeof(unsigned), "percentages", opt_percent);
}

/* zonemode=: none or strided; fio's zbd needs a zoned device. */
static int opt_zonemode(const struct bench_opt *opt, const char *val, void *field)
{
	if (!strcmp(val, "zbd"))
		return tool_error(-EINVAL,
		                  "'zbd' needs a zoned block device, and blkring's devices are not "
		                  "zoned (none or strided)");
	return opt_choice(opt, val, field);
}

/* A number as fio's str_to_float takes it, all of text. */
static int parse_double(const char *text, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	return end == text || *end || errno || !isfinite(*out) ? -EINVAL : 0;
}

/* One zone of a zoned distribution, ACCESS[/SIZE], len bytes at p: the
 * size in percent (none: a share of the rest) or, absolute, in bytes. */
static int zone_entry(const char *p, size_t len, bool absolute, unsigned *access, uint64_t *size,
                      unsigned *pct)
{
	size_t a_len = strcspn(p, "/:");
	const char *s = p + a_len + 1;
	char text[64];

	*size = 0;
	*pct = UINT_MAX;
	if (!a_len || pct_digits(p, a_len, access))
		return -EINVAL;
	if (a_len == len)
		return 0;
	if (!absolute)
		return share_pct(s, len - a_len - 1, pct);
	if (len - a_len - 1 >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, len - a_len - 1);
	text[len - a_len - 1] = '\0';
	return parse_size(text, size);
}

/* fio's zone_state_index: the zone of each 1% of the accesses. */
static void zone_index(struct zone_table *t, const unsigned *access, const uint64_t *size,
                       unsigned nr)
{
	unsigned a = 0;
	uint64_t at = 0;

	for (unsigned i = 0; i < nr; i++) {
		for (unsigned k = a; k < a + access[i]; k++)
			t->at[k] = (struct zone_span){at, at + size[i]};
		a += access[i];
		at += size[i];
	}
	t->set = true;
}

/* One direction's zones, ACCESS/SIZE:...: accesses adding up to 100%, sizes
 * (of zoned) to at most 100%, as fio takes them. */
static int zones_entry(const char *part, bool absolute, struct zone_table *t)
{
	unsigned access[BENCH_MAX_ZONES], pct[BENCH_MAX_ZONES], nr = 0, sum = 0;
	uint64_t size[BENCH_MAX_ZONES];
	const char *p = part;

	do {
		size_t len = strcspn(p, ":");

		if (nr == BENCH_MAX_ZONES)
			return tool_error(-EINVAL, "'%s' has more than %u zones", part,
			                  BENCH_MAX_ZONES);
		if (zone_entry(p, len, absolute, &access[nr], &size[nr], &pct[nr]))
			return tool_error(-EINVAL, "'%.*s' is not a zone (ACCESS%%/%s, e.g. %s)",
			                  (int)len, p, absolute ? "SIZE" : "SIZE%",
			                  absolute ? "60/20G:40/100G" : "60/10:30/20:10/70");
		sum += access[nr++];
		p += len;
	} while (*p++ == ':');
	if (sum != 100)
		return tool_error(-EINVAL, "'%s': the accesses add up to %u%%, not 100%%", part,
		                  sum);
	if (!absolute && (share_rest(pct, nr, &sum), sum > 100))
		return tool_error(-EINVAL, "'%s': the sizes add up to %u%%, more than 100%%", part,
		                  sum);
	for (unsigned i = 0; !absolute && i < nr; i++)
		size[i] = pct[i];
	zone_index(t, access, size, nr);
	return 0;
}

static int zoned_entry(const struct bench_opt *opt, const char *part, void *elem)
{
	(void)opt;
	return zones_entry(part, false, elem);
}

static int zoned_abs_entry(const struct bench_opt *opt, const char *part, void *elem)
{
	(void)opt;
	return zones_entry(part, true, elem);
}

/* zipf, pareto and normal: [:VALUE[:CENTER]], fio's defaults and ranges. */
static int dist_value(const char *val, const char *text, struct rand_dist *d)
{
	static const double defaults[DIST_NORMAL + 1] = {[DIST_ZIPF] = 1.1, [DIST_PARETO] = 0.2};
	size_t len = strcspn(text, ":");
	char num[64];

	d->value = defaults[d->kind];
	d->center = -1;
	if (len >= sizeof(num))
		return -EINVAL;
	memcpy(num, text, len);
	num[len] = '\0';
	if ((len && parse_double(num, &d->value)) ||
	    (text[len] &&
	     (parse_double(text + len + 1, &d->center) || d->center < 0 || d->center > 1)))
		return tool_error(-EINVAL,
		                  "'%s' is not KIND:VALUE[:CENTER] (the center from 0 to 1)", val);
	if (d->kind == DIST_ZIPF && d->value == 1.0)
		return tool_error(-EINVAL, "'%s': zipf's theta cannot be 1", val);
	if (d->kind == DIST_PARETO && !(d->value > 0 && d->value < 1))
		return tool_error(-EINVAL, "'%s': pareto's power is above 0 and below 1", val);
	if (d->kind == DIST_NORMAL && !(d->value >= 0 && d->value < 100))
		return tool_error(-EINVAL, "'%s': normal's deviation is from 0 to below 100", val);
	return 0;
}

/* random_distribution=random, zipf[:THETA[:CENTER]], pareto[:H[:CENTER]],
 * normal[:DEV[:CENTER]], zoned:LIST or zoned_abs:LIST (LIST per direction
 * as bssplit's). */
static int opt_random_dist(const struct bench_opt *opt, const char *val, void *field)
{
	static const char *const kinds[] = {"random", "zipf",  "pareto",
	                                    "normal", "zoned", "zoned_abs"};
	struct rand_dist d = {.kind = 0};
	size_t len = strcspn(val, ":");
	unsigned k;

	for (k = 0; k < ARRAY_SIZE(kinds); k++)
		if (len == strlen(kinds[k]) && !strncmp(val, kinds[k], len))
			break;
	if (k == ARRAY_SIZE(kinds))
		return tool_error(-EINVAL,
		                  "'%s' is not one of random, zipf, pareto, normal, zoned, "
		                  "zoned_abs",
		                  val);
	d.kind = k;
	d.center = -1;
	if (k == DIST_ZONED || k == DIST_ZONED_ABS) {
		if (!val[len])
			return tool_error(-EINVAL, "'%s' needs its zones (e.g. %s:60/10:40/90)",
			                  val, val);
		if (ddir_list(opt, val + len + 1, d.zones, sizeof(d.zones[0]), "zone lists",
		              k == DIST_ZONED ? zoned_entry : zoned_abs_entry))
			return -EINVAL;
	} else if (k != DIST_RANDOM) {
		if (dist_value(val, val[len] ? val + len + 1 : "", &d))
			return -EINVAL;
	} else if (val[len]) {
		return tool_error(-EINVAL, "'%s': random takes no value", val);
	}
	*(struct rand_dist *)field = d;
	return 0;
}

/* --output-format=normal,json,json+,terse: one or more, as fio takes them. */
static int opt_formats(const struct bench_opt *opt, const char *val, void *field)
{
	static const struct {
		const char *name;
		unsigned bit;
	} formats[] = {
	    {"normal", FORMAT_NORMAL},
	    {"json", FORMAT_JSON},
	    {"json+", FORMAT_JSON | FORMAT_JSON_PLUS},
	    {"terse", FORMAT_TERSE},
	};
	const char *p = val;
	unsigned mask = 0;

	(void)opt;
	do {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(formats); i++)
			if (len == strlen(formats[i].name) && !strncmp(p, formats[i].name, len))
				break;
		if (i == ARRAY_SIZE(formats))
			return tool_error(-EINVAL,
			                  "'%.*s' is not one of normal, json, json+, terse (one or "
			                  "more, separated by ',')",
			                  (int)len, p);
		mask |= formats[i].bit;
		p += len;
	} while (*p++ == ',');
	*(unsigned *)field = mask;
	return 0;
}

/* --terse-version: fio's 3 is the one written. */
static int opt_terse_version(const struct bench_opt *opt, const char *val, void *field)
{
	(void)opt;
	if (strcmp(val, "3"))
		return tool_error(-EINVAL,
		                  "'%s': blkring writes fio's terse version 3 only (fio's "
		                  "default)",
		                  val);
	*(unsigned *)field = 3;
	return 0;
}

/* file_service_type=TYPE[:N], fio's: roundrobin (the default), sequential
 * or random, switching files every N I/Os. */
static int opt_file_service(const struct bench_opt *opt, const char *val, void *field)
{
	static const char *const types[] = {"roundrobin", "sequential", "random"};
	struct file_service *fs = field;
	size_t len = strcspn(val, ":");
	uint64_t n = 1;
	char *end;

	(void)opt;
	for (unsigned i = 0; i < ARRAY_SIZE(types); i++) {
		if (len != strlen(types[i]) || strncmp(val, types[i], len))
			continue;
		if (val[len] &&
		    (parse_u64(val + len + 1, &n, &end) || *end || !n || n > UINT32_MAX))
			return tool_error(
			    -EINVAL, "'%s': the I/Os per file after ':' are not a number from 1",
			    val);
		fs->type = i;
		fs->nr = (unsigned)n;
		return 0;
	}
	return tool_error(-EINVAL,
	                  "'%s' is not one of roundrobin, sequential, random (with an optional :N; "
	                  "fio's zipf, pareto and normal distributions are not supported)",
	                  val);
}

/* steadystate=KIND:LIMIT, fio's: iops, iops_slope, bw or bw_slope, and a
 * limit in percent (N%), IOPS, or bytes per second (a size: bw:10m). */
static int opt_steadystate(const struct bench_opt *opt, const char *val, void *field)
{
	static const struct {
		const char *name;
		unsigned state;
	} kinds[] = {
	    {"iops", SS_IOPS},
	    {"iops_slope", SS_IOPS | SS_SLOPE},
	    {"bw", SS_BW},
	    {"bw_slope", SS_BW | SS_SLOPE},
	};
	struct ss_opt ss = {.state = 0};
	size_t len = strcspn(val, ":"), nlen;
	const char *limit = val + len + 1;
	uint64_t bytes;
	char num[64];

	(void)opt;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (len == strlen(kinds[i].name) && !strncmp(val, kinds[i].name, len))
			ss.state = kinds[i].state;
	if (!ss.state)
		return tool_error(-EINVAL,
		                  "'%s' is not one of iops, iops_slope, bw, bw_slope (with :LIMIT, "
		                  "e.g. iops_slope:0.01%%)",
		                  val);
	if (!val[len] || !*limit)
		return tool_error(-EINVAL,
		                  "'%s' needs a limit after ':' (e.g. %.*s:2%%), as fio's does",
		                  val, (int)len, val);
	nlen = strlen(limit);
	if (limit[nlen - 1] == '%') {
		ss.state |= SS_PCT;
		nlen--;
	}
	if (nlen >= sizeof(num))
		goto bad;
	memcpy(num, limit, nlen);
	num[nlen] = '\0';
	if ((ss.state & (SS_PCT | SS_IOPS)) ? parse_double(num, &ss.limit) || ss.limit < 0
	                                    : parse_size(num, &bytes))
		goto bad;
	if (!(ss.state & (SS_PCT | SS_IOPS)))
		ss.limit = (double)bytes;
	*(struct ss_opt *)field = ss;
	return 0;
bad:
	return tool_error(-EINVAL,
	                  "'%s': the limit is a number from 0, N%% (a percentage), or for bw a "
	                  "size in bytes per second (10m)",
	                  val);
}

/* max_latency=R[,W[,T]]: a time per direction, microseconds without a unit. */
static int opt_max_latency(const struct bench_opt *opt, const char *val, void *field)
{
	return ddir_list(opt, val, field, sizeof(uint64_t), "times", opt_time_us);
}

/* latency_percentile: one number from 0 to 100, as fio's. */
static int opt_lat_pct(const struct bench_opt *opt, const char *val, void *field)
{
	double v;

	(void)opt;
	if (parse_double(val, &v) || v < 0 || v > 100)
		return tool_error(-EINVAL, "'%s' is not a percentile (a number from 0 to 100)",
		                  val);
	*(double *)field = v;
	return 0;
}

/* steadystate_duration: whole seconds, as fio counts it (a second's samples). */
static int opt_ss_dur(const struct bench_opt *opt, const char *val, void *field)
{
	if (opt_time(opt, val, field))
		return -EINVAL;
	if (*(uint64_t *)field % 1000000)
		return tool_error(-EINVAL,
		                  "'%s' is not whole seconds (fio counts it in 1 s samples and "
		                  "drops the rest)",
		                  val);
	return 0;
}

/* An option with a note: taken, whatever its value, and left unused. */
static int opt_noted(const struct bench_opt *opt, const char *val, void *field)
{
	(void)opt;
	(void)val;
	(void)field;
	return 0;
}

/* fio's patterns: verify_pattern takes %o, buffer_pattern does not (as in fio). */
static int opt_verify_pattern(const struct bench_opt *opt, const char *val, void *field)
{
	(void)opt;
	return pattern_parse(field, val, true);
}

static int opt_buffer_pattern(const struct bench_opt *opt, const char *val, void *field)
{
	(void)opt;
	return pattern_parse(field, val, false);
}

/* rwmixwrite=N is rwmixread=100-N. */
static int opt_rwmixwrite(const struct bench_opt *opt, const char *val, void *field)
{
	unsigned v;

	if (opt_percent(opt, val, &v))
		return -EINVAL;
	*(unsigned *)field = 100 - v;
	return 0;
}

/* ---- the table ---- */

/* A row's field: where it is and how large (the integer parser stores by size). */
#define JOB(f) .off = offsetof(struct job_opts, f), .size = sizeof(((struct job_opts *)0)->f)
#define RUN(f) .off = offsetof(struct run_opts, f), .size = sizeof(((struct run_opts *)0)->f)
/* A kernel engine's option with no meaning here: accepted with a note. */
#define NOTED(opt_name, why)                                                                  \
	{                                                                                     \
		.name = opt_name, .arg = "ANY", .help = "accepted: " why, .parse = opt_noted, \
		.flags = OPT_BARE, .note = why,                                               \
	}
#define EXPERIMENTAL_VERIFY_NOTE \
	"blkring's verify always reads back the blocks its map says were written"
#define CMDPRIO_NOTE "blkring's devices do not order I/O by priority"
#define DEFAULT_PERCENTILES "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"

const struct bench_opt bench_opts[] = {
    {
        .name = "name",
        .arg = "NAME",
        .help = "job name; on the command line it starts a new job",
        .parse = opt_str,
        JOB(name),
        .maxval = BENCH_NAME_MAX - 1,
    },
    {
        .name = "filename",
        .arg = "SPEC",
        .help = "a device spec (null:irqmode=none), or fio's file list (a:b, \\: in a name)",
        .parse = opt_str,
        JOB(filename),
        .maxval = BENCH_PATH_MAX - 1,
    },
    {
        .name = "description",
        .arg = "TEXT",
        .help = "shown with the job's results, as fio shows it",
        .parse = opt_str,
        JOB(description),
        .maxval = BENCH_NAME_MAX - 1,
    },
    {
        .name = "uri",
        .arg = "URI",
        .help = "ioengine=nbd: the NBD server (fio's nbd engine), the job's nbd: spec",
        .parse = opt_str,
        JOB(uri),
        .maxval = BENCH_PATH_MAX - 1,
    },
    {
        .name = "pool",
        .arg = "POOL",
        .help = "ioengine=rbd: the Ceph pool (fio's rbd engine), with rbdname the job's rbd: spec",
        .parse = opt_str,
        JOB(pool),
        .maxval = BENCH_NAME_MAX - 1,
    },
    {
        .name = "rbdname",
        .arg = "IMAGE",
        .help = "ioengine=rbd: the RBD image in pool",
        .parse = opt_str,
        JOB(rbdname),
        .maxval = BENCH_NAME_MAX - 1,
    },
    {
        .name = "clientname",
        .arg = "ID",
        .help = "ioengine=rbd: the cephx user (default admin)",
        .parse = opt_str,
        JOB(clientname),
        .maxval = BENCH_NAME_MAX - 1,
    },
    {
        .name = "directory",
        .arg = "DIR",
        .help = "where the relative names of a file list are (DIR:DIR... take turns)",
        .parse = opt_str,
        JOB(directory),
        .maxval = BENCH_PATH_MAX - 1,
    },
    {
        .name = "nrfiles",
        .alias = "nr_files",
        .arg = "N",
        .help = "files of a job without a filename (NAME.JOB.FILE), the size split among them",
        .def = "1",
        .parse = opt_int,
        JOB(nrfiles),
        .minval = 1,
        .maxval = 4096,
    },
    {
        .name = "filesize",
        .arg = "SIZE",
        .help = "each file's size (default: size split among the files)",
        .parse = opt_size,
        JOB(filesize),
        .minval = 1,
        .maxval = UINT64_MAX,
    },
    {
        .name = "file_service_type",
        .arg = "TYPE[:N]",
        .help = "roundrobin, sequential or random: which file the next I/O goes to, every N",
        .def = "roundrobin",
        .parse = opt_file_service,
        JOB(file_service),
    },
    {
        .name = "ioengine",
        .arg = "ENGINE",
        .help = "blkring (a ring per job) or sync (one blocking call at a time); fio's "
                "io_uring, libaio, posixaio run as blkring, psync, vsync, pvsync, pvsync2 as "
                "sync, null on a null device of the job's size",
        .def = "blkring",
        .parse = opt_engine,
        JOB(ioengine),
    },
    {
        .name = "rw",
        .alias = "readwrite",
        .arg = "MODE[:N]",
        .help = "read, write, randread, randwrite, rw, randrw, trim, randtrim, zero, randzero; "
                ":N, the I/Os per random offset, or bytes skipped after each sequential I/O",
        .def = "read",
        .parse = opt_rw,
        JOB(rw),
    },
    {
        .name = "rw_sequencer",
        .arg = "sequential|identical",
        .help = "with rw=MODE:N, the I/Os between random offsets: sequential from the last one, "
                "or at its offset again",
        .def = "sequential",
        .parse = opt_choice,
        JOB(rw_sequencer),
        .choices = rw_sequencer_names,
    },
    {
        .name = "zero_flags",
        .arg = "FLAG[,FLAG]",
        .help =
            "write zeroes flags: nounmap (keep the range allocated), nofallback (fail rather than "
            "write zero pages)",
        .parse = opt_zero_flags,
        JOB(zero_flags),
    },
    {
        .name = "bs",
        .alias = "blocksize",
        .arg = "SIZE[,SIZE[,SIZE]]",
        .help = "block size (read,write,trim)",
        .def = "4k",
        .parse = opt_bs,
        JOB(bs),
        .minval = 1,
        .maxval = 1ULL << 30,
    },
    {
        .name = "bsrange",
        .alias = "blocksize_range",
        .arg = "MIN-MAX[,MIN-MAX[,MIN-MAX]]",
        .help = "block sizes drawn from a range, multiples of its minimum (read,write,trim)",
        .parse = opt_bsrange,
        JOB(bsrange),
        .minval = 1,
        .maxval = 1ULL << 30,
    },
    {
        .name = "bssplit",
        .arg = "SIZE/PCT:...[,...]",
        .help = "block sizes by share, e.g. 4k/10:64k/50:32k/40, a share left out takes what the "
                "others leave (read,write,trim)",
        .parse = opt_bssplit,
        JOB(bssplit),
        .minval = 1,
        .maxval = 1ULL << 30,
    },
    {
        .name = "bs_unaligned",
        .alias = "blocksize_unaligned",
        .arg = "BOOL",
        .help = "bsrange and bssplit sizes in the device's logical blocks, not multiples of the "
                "smallest",
        .def = "0",
        .parse = opt_bool,
        JOB(bs_unaligned),
        .flags = OPT_BARE,
    },
    {
        .name = "iodepth",
        .arg = "N",
        .help = "I/Os in flight per job",
        .def = "1",
        .parse = opt_int,
        JOB(iodepth),
        .minval = 1,
        .maxval = 65536,
    },
    {
        .name = "iodepth_batch_submit",
        .alias = "iodepth_batch",
        .arg = "N",
        .help = "I/Os queued before a submit (0: iodepth)",
        .def = "1",
        .parse = opt_int,
        JOB(iodepth_batch_submit),
        .maxval = 65536,
    },
    {
        .name = "iodepth_batch_complete_min",
        .alias = "iodepth_batch_complete",
        .arg = "N",
        .help = "completions to wait for when the queue is full",
        .def = "1",
        .parse = opt_int,
        JOB(iodepth_batch_complete_min),
        .maxval = 65536,
    },
    {
        .name = "iodepth_batch_complete_max",
        .arg = "N",
        .help = "completions reaped at once (0: iodepth)",
        .def = "0",
        .parse = opt_int,
        JOB(iodepth_batch_complete_max),
        .maxval = 65536,
    },
    {
        .name = "numjobs",
        .arg = "N",
        .help = "clones of this job",
        .def = "1",
        .parse = opt_int,
        JOB(numjobs),
        .minval = 1,
        .maxval = 4096,
    },
    {
        .name = "thread",
        .alias = "threads",
        .arg = "BOOL",
        .help = "jobs are threads (always; 0 is accepted with a note)",
        .def = "1",
        .parse = opt_bool,
        JOB(thread),
        .flags = OPT_BARE,
    },
    {
        .name = "size",
        .arg = "SIZE|N%",
        .help = "region of the device a job uses (default: from offset to the end)",
        .parse = opt_size_pct,
        JOB(size),
        .minval = 1,
        .maxval = UINT64_MAX,
    },
    {
        .name = "offset",
        .alias = "fileoffset",
        .arg = "SIZE|N%",
        .help = "start of the region",
        .parse = opt_size_pct,
        JOB(offset),
        .maxval = UINT64_MAX,
    },
    {
        .name = "offset_increment",
        .arg = "SIZE|N%",
        .help = "each clone of numjobs starts this much after the one before",
        .parse = opt_size_pct,
        JOB(offset_increment),
        .maxval = UINT64_MAX,
    },
    {
        .name = "zonemode",
        .arg = "none|strided",
        .help = "strided: zonesize bytes in each zone of zonerange bytes, zoneskip bytes apart",
        .def = "none",
        .parse = opt_zonemode,
        JOB(zonemode),
        .choices = zonemode_names,
    },
    {
        .name = "zonesize",
        .arg = "SIZE",
        .help = "zonemode=strided: bytes moved in a zone before the next",
        .parse = opt_size,
        JOB(zonesize),
        .maxval = UINT64_MAX,
    },
    {
        .name = "zonerange",
        .arg = "SIZE",
        .help = "zonemode=strided: the size of a zone (default: zonesize)",
        .parse = opt_size,
        JOB(zonerange),
        .maxval = UINT64_MAX,
    },
    {
        .name = "zoneskip",
        .arg = "SIZE",
        .help = "zonemode=strided: bytes skipped after each zone",
        .parse = opt_size,
        JOB(zoneskip),
        .maxval = UINT64_MAX,
    },
    {
        .name = "fill_device",
        .alias = "fill_fs",
        .arg = "BOOL",
        .help = "a write's ENOSPC or EDQUOT (a full file system) ends the job, not as an error",
        .def = "0",
        .parse = opt_bool,
        JOB(fill_device),
        .flags = OPT_BARE,
    },
    {
        .name = "runtime",
        .alias = "timeout",
        .arg = "TIME",
        .help = "stop after this long (seconds without a unit)",
        .parse = opt_time,
        JOB(runtime_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "time_based",
        .arg = "BOOL",
        .help = "run for runtime, going over the region again",
        .def = "0",
        .parse = opt_bool,
        JOB(time_based),
        .flags = OPT_BARE,
    },
    {
        .name = "startdelay",
        .arg = "TIME",
        .help = "wait this long before starting (seconds without a unit); not in the runtime",
        .parse = opt_time,
        JOB(startdelay_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "loops",
        .arg = "N",
        .help = "run the job's I/O N times, measured as one run (not with time_based)",
        .def = "1",
        .parse = opt_int,
        JOB(loops),
        .minval = 1,
        .maxval = 1000000,
    },
    {
        .name = "io_size",
        .alias = "io_limit",
        .arg = "SIZE",
        .help = "bytes to move, going round the region as often as it takes (default: size)",
        .parse = opt_size,
        JOB(io_size),
        .maxval = UINT64_MAX,
    },
    {
        .name = "number_ios",
        .arg = "N",
        .help = "stop after N reads and writes (0: when size is done)",
        .parse = opt_int,
        JOB(number_ios),
        .maxval = UINT64_MAX,
    },
    {
        .name = "rate",
        .arg = "SIZE[,SIZE[,SIZE]]",
        .help = "bytes per second at most (read,write,trim), as fio's linear rate",
        .parse = opt_bs,
        JOB(rate),
        .maxval = UINT64_MAX,
    },
    {
        .name = "rate_iops",
        .arg = "N[,N[,N]]",
        .help = "I/Os per second at most (read,write,trim), as fio's linear rate",
        .parse = opt_bs,
        JOB(rate_iops),
        .maxval = UINT64_MAX,
    },
    {
        .name = "thinktime",
        .arg = "TIME",
        .help = "after thinktime_blocks I/Os, let them end and pause this long (microseconds "
                "without a unit)",
        .parse = opt_time_us,
        JOB(thinktime_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "thinktime_blocks",
        .arg = "N",
        .help = "I/Os between pauses",
        .def = "1",
        .parse = opt_int,
        JOB(thinktime_blocks),
        .minval = 1,
        .maxval = 1U << 30,
    },
    {
        .name = "thinktime_spin",
        .arg = "TIME",
        .help = "spin for this part of each pause, sleep the rest (microseconds without a unit)",
        .parse = opt_time_us,
        JOB(thinktime_spin_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "rate_min",
        .alias = "ratemin",
        .arg = "SIZE[,SIZE[,SIZE]]",
        .help = "bytes per second at least (read,write,trim) over each rate_cycle, after 2 s; "
                "below it the job fails",
        .parse = opt_bs,
        JOB(rate_min),
        .maxval = UINT64_MAX,
    },
    {
        .name = "rate_iops_min",
        .arg = "N[,N[,N]]",
        .help = "I/Os per second at least (read,write,trim), as rate_min",
        .parse = opt_bs,
        JOB(rate_iops_min),
        .maxval = UINT32_MAX,
    },
    {
        .name = "rate_cycle",
        .alias = "ratecycle",
        .arg = "MSEC",
        .help = "the window rate_min and rate_iops_min average over (milliseconds)",
        .def = "1000",
        .parse = opt_int,
        JOB(rate_cycle_ms),
        .maxval = UINT32_MAX,
    },
    {
        .name = "rate_process",
        .arg = "linear|poisson",
        .help = "how rate and rate_iops space I/Os: evenly, or as a Poisson process "
                "(exponential gaps of the same mean)",
        .def = "linear",
        .parse = opt_choice,
        JOB(rate_process),
        .choices = rate_process_names,
    },
    {
        .name = "flow_id",
        .arg = "N",
        .help = "the flow this job's flow weight counts in",
        .def = "0",
        .parse = opt_int,
        JOB(flow_id),
        .maxval = UINT32_MAX,
    },
    {
        .name = "flow",
        .arg = "N",
        .help = "weight in its flow_id: jobs of a flow issue I/Os in the ratio of their "
                "weights (0: no flow)",
        .def = "0",
        .parse = opt_int,
        JOB(flow),
        .maxval = 1000,
    },
    {
        .name = "flow_sleep",
        .arg = "USEC",
        .help = "a job held back by its flow waits for its I/Os, then sleeps this long "
                "(microseconds; 0: tries again at once)",
        .def = "0",
        .parse = opt_int,
        JOB(flow_sleep_us),
        .maxval = UINT32_MAX,
    },
    NOTED("flow_watermark", "fio 3.33 has no flow_watermark: flow weights replaced it"),
    {
        .name = "latency_target",
        .arg = "TIME",
        .help = "find the deepest queue (up to iodepth) whose I/O latency meets this "
                "(microseconds without a unit)",
        .parse = opt_time_us,
        JOB(latency_target_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "latency_window",
        .arg = "TIME",
        .help = "latency_target: how long each depth is tried (microseconds without a unit)",
        .parse = opt_time_us,
        JOB(latency_window_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "latency_percentile",
        .arg = "PCT",
        .help = "latency_target: the share of I/Os that must meet it",
        .def = "100",
        .parse = opt_lat_pct,
        JOB(latency_percentile),
    },
    {
        .name = "latency_run",
        .arg = "BOOL",
        .help = "latency_target: keep adjusting the depth rather than end once it settles",
        .def = "0",
        .parse = opt_bool,
        JOB(latency_run),
        .flags = OPT_BARE,
    },
    {
        .name = "max_latency",
        .arg = "TIME[,TIME[,TIME]]",
        .help = "an I/O whose latency (lat) exceeds this fails the job with ETIMEDOUT "
                "(read,write,trim; microseconds without a unit)",
        .parse = opt_max_latency,
        JOB(max_latency_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "steadystate",
        .alias = "ss",
        .arg = "KIND:LIMIT",
        .help = "with ss_dur: stop once steady (iops, iops_slope, bw, bw_slope; limit N% or "
                "absolute)",
        .def = "iops_slope:0.01%",
        .parse = opt_steadystate,
        JOB(steadystate),
    },
    {
        .name = "steadystate_duration",
        .alias = "ss_dur",
        .arg = "TIME",
        .help = "steadystate: the window of 1 s samples that must meet it (whole seconds; 0: "
                "no check)",
        .def = "0",
        .parse = opt_ss_dur,
        JOB(ss_dur_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "steadystate_ramp_time",
        .alias = "ss_ramp",
        .arg = "TIME",
        .help = "steadystate: wait this long before collecting samples (seconds without a unit)",
        .def = "0",
        .parse = opt_time,
        JOB(ss_ramp_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "io_submit_mode",
        .arg = "inline|offload",
        .help = "accepted: blkring submits inline, as a ring has one owner thread (offload: a "
                "note)",
        .def = "inline",
        .parse = opt_choice,
        JOB(io_submit_mode),
        .choices = submit_mode_names,
    },
    {
        .name = "ramp_time",
        .arg = "TIME",
        .help = "run this long before measuring",
        .parse = opt_time,
        JOB(ramp_time_us),
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "randrepeat",
        .arg = "BOOL",
        .help = "the same random offsets on every run",
        .def = "1",
        .parse = opt_bool,
        JOB(randrepeat),
        .flags = OPT_BARE,
    },
    {
        .name = "randseed",
        .arg = "N",
        .help = "seed of the random offsets",
        .def = "0xb1899bed",
        .parse = opt_int,
        JOB(randseed),
        .maxval = UINT64_MAX,
    },
    {
        .name = "norandommap",
        .arg = "BOOL",
        .help = "random offsets may repeat before the region is covered",
        .def = "0",
        .parse = opt_bool,
        JOB(norandommap),
        .flags = OPT_BARE,
    },
    {
        .name = "random_generator",
        .arg = "GENERATOR",
        .help = "tausworthe, lfsr or tausworthe64 (blkring's generator either way; lfsr visits "
                "every block once per pass even with norandommap)",
        .def = "tausworthe",
        .parse = opt_choice,
        JOB(random_generator),
        .choices = random_generator_names,
    },
    {
        .name = "random_distribution",
        .arg = "DIST",
        .help = "random, zipf[:THETA[:CENTER]], pareto[:H[:CENTER]], normal[:DEV[:CENTER]], "
                "zoned:ACCESS/SIZE%:... or zoned_abs:ACCESS/SIZE:... (per direction, as bs)",
        .def = "random",
        .parse = opt_random_dist,
        JOB(random_distribution),
    },
    {
        .name = "percentage_random",
        .arg = "PERCENT[,PERCENT[,PERCENT]]",
        .help = "share of a random job's I/Os at random offsets, the rest sequential "
                "(read,write,trim)",
        .def = "100",
        .parse = opt_percent_list,
        JOB(percentage_random),
        .maxval = 100,
    },
    {
        .name = "rwmixread",
        .arg = "PERCENT",
        .help = "share of reads in rw and randrw",
        .def = "50",
        .parse = opt_percent,
        JOB(rwmixread),
        .maxval = 100,
    },
    {
        .name = "rwmixwrite",
        .arg = "PERCENT",
        .help = "share of writes in rw and randrw",
        .parse = opt_rwmixwrite,
        JOB(rwmixread),
        .maxval = 100,
    },
    {
        .name = "hipri",
        .arg = "BOOL",
        .help = "polled I/O: a ring with BLKRING_SETUP_IOPOLL (blkring engine)",
        .def = "0",
        .parse = opt_bool,
        JOB(hipri),
        .flags = OPT_BARE,
    },
    {
        .name = "poll_strategy",
        .arg = "all|cookie",
        .help = "how a table: volume polls, overriding its spec's poll= (default: the spec's)",
        .def = "cookie",
        .parse = opt_choice,
        JOB(poll_strategy),
        .choices = poll_strategy_names,
    },
    {
        .name = "direct",
        .arg = "BOOL",
        .help = "O_DIRECT on file devices; given, overrides the spec's direct=",
        .def = "0",
        .parse = opt_bool,
        JOB(direct),
        .flags = OPT_BARE,
    },
    {
        .name = "fixedbufs",
        .arg = "BOOL",
        .help = "the job's buffers registered with its ring; reads and writes as "
                "READ_FIXED/WRITE_FIXED",
        .def = "0",
        .parse = opt_bool,
        JOB(fixedbufs),
        .flags = OPT_BARE,
    },
    {
        .name = "nowait",
        .arg = "BOOL",
        .help = "reads and writes fail with EAGAIN rather than wait (RWF_NOWAIT; fio's "
                "io_uring and libaio option)",
        .def = "0",
        .parse = opt_bool,
        JOB(nowait),
        .flags = OPT_BARE,
    },
    {
        .name = "force_async",
        .arg = "N",
        .help = "every Nth I/O goes to the ring's worker pool (IOSQE_ASYNC; fio's io_uring "
                "option)",
        .parse = opt_int,
        JOB(force_async),
        .maxval = UINT32_MAX,
    },
    NOTED("registerfiles", "a job's device is always registered with its ring"),
    NOTED("nonvectored", "the ring engine issues non-vectored reads and writes"),
    NOTED("uncached", "blkring has no uncached buffered I/O (RWF_UNCACHED)"),
    NOTED("userspace_reap", "the ring engine always reaps completions from the CQ itself"),
    NOTED("hipri_percentage", "the sync engine does not poll (hipri=1 needs a ring)"),
    NOTED("cmdprio_percentage", CMDPRIO_NOTE),
    NOTED("cmdprio_class", CMDPRIO_NOTE),
    NOTED("cmdprio", CMDPRIO_NOTE),
    NOTED("cmdprio_bssplit", CMDPRIO_NOTE),
    {
        .name = "fsync",
        .arg = "N",
        .help = "flush the device after every N writes",
        .def = "0",
        .parse = opt_int,
        JOB(fsync),
        .maxval = UINT32_MAX,
    },
    {
        .name = "end_fsync",
        .arg = "BOOL",
        .help = "flush the device when the job's writes are done",
        .def = "0",
        .parse = opt_bool,
        JOB(end_fsync),
        .flags = OPT_BARE,
    },
    {
        .name = "cpus_allowed",
        .arg = "CPULIST",
        .help = "CPUs the job's thread may run on, e.g. 0-1,3",
        .parse = opt_cpus,
        JOB(cpus_allowed),
    },
    {
        .name = "group_reporting",
        .arg = "BOOL",
        .help = "report each group's jobs as one",
        .def = "0",
        .parse = opt_bool,
        JOB(group_reporting),
        .flags = OPT_BARE,
    },
    {
        .name = "percentile_list",
        .arg = "P:P:...",
        .help = "completion latency percentiles to report",
        .def = DEFAULT_PERCENTILES,
        .parse = opt_percentiles,
        JOB(percentile_list),
    },
    {
        .name = "lat_percentiles",
        .arg = "BOOL",
        .help = "report total latency percentiles too",
        .def = "0",
        .parse = opt_bool,
        JOB(lat_percentiles),
        .flags = OPT_BARE,
    },
    {
        .name = "clat_percentiles",
        .arg = "BOOL",
        .help = "report completion latency percentiles",
        .def = "1",
        .parse = opt_bool,
        JOB(clat_percentiles),
        .flags = OPT_BARE,
    },
    {
        .name = "slat_percentiles",
        .arg = "BOOL",
        .help = "report submission latency percentiles too",
        .def = "0",
        .parse = opt_bool,
        JOB(slat_percentiles),
        .flags = OPT_BARE,
    },
    {
        .name = "stats",
        .arg = "BOOL",
        .help = "0: the job is measured for nothing and left out of the results",
        .def = "1",
        .parse = opt_bool,
        JOB(stats),
        .flags = OPT_BARE,
    },
    {
        .name = "unified_rw_reporting",
        .arg = "none|mixed|both",
        .help = "mixed: the directions reported as one, \"mixed\"; both: each, then mixed "
                "(0, 1, 2 are fio's old names)",
        .def = "none",
        .parse = opt_unified,
        JOB(unified_rw_reporting),
        .choices = unified_names,
    },
    {
        .name = "kb_base",
        .arg = "1024|1000",
        .help = "the normal output's units: 1024, binary (KiB) first; 1000, decimal (kB) first",
        .def = "1024",
        .parse = opt_choice,
        JOB(kb_base),
        .choices = kb_base_names,
    },
    {
        .name = "unit_base",
        .arg = "0|8|1",
        .help = "the normal output's bandwidth: 8 (or 0) in bytes, 1 in bits",
        .def = "0",
        .parse = opt_choice,
        JOB(unit_base),
        .choices = unit_base_names,
    },
    {
        .name = "write_lat_log",
        .arg = "NAME",
        .help = "latency logs NAME_{slat,clat,lat}.N.log (bare: the job's name)",
        .parse = opt_log_name,
        JOB(write_lat_log),
        .flags = OPT_BARE_EMPTY,
        .maxval = BENCH_PATH_MAX - 1 - 32, /* a path, less the logs' suffixes */
    },
    {
        .name = "write_bw_log",
        .arg = "NAME",
        .help = "bandwidth log NAME_bw.N.log, KiB/s (bare: the job's name)",
        .parse = opt_log_name,
        JOB(write_bw_log),
        .flags = OPT_BARE_EMPTY,
        .maxval = BENCH_PATH_MAX - 1 - 32,
    },
    {
        .name = "write_iops_log",
        .arg = "NAME",
        .help = "IOPS log NAME_iops.N.log (bare: the job's name)",
        .parse = opt_log_name,
        JOB(write_iops_log),
        .flags = OPT_BARE_EMPTY,
        .maxval = BENCH_PATH_MAX - 1 - 32,
    },
    {
        .name = "write_hist_log",
        .arg = "NAME",
        .help = "completion latency histogram log NAME_clat_hist.N.log, every log_hist_msec "
                "(bare: the job's name)",
        .parse = opt_log_name,
        JOB(write_hist_log),
        .flags = OPT_BARE_EMPTY,
        .maxval = BENCH_PATH_MAX - 1 - 32,
    },
    {
        .name = "log_avg_msec",
        .arg = "MSEC",
        .help = "log lines averaged over this many ms (0: bw, iops and latency per I/O)",
        .def = "0",
        .parse = opt_int,
        JOB(log_avg_msec),
        .maxval = INT32_MAX,
    },
    {
        .name = "log_hist_msec",
        .arg = "MSEC",
        .help = "write_hist_log: a histogram line this often (0: none)",
        .def = "0",
        .parse = opt_int,
        JOB(log_hist_msec),
        .maxval = INT32_MAX,
    },
    {
        .name = "log_max_value",
        .arg = "BOOL",
        .help = "with log_avg_msec, log each window's largest value, not its mean",
        .def = "0",
        .parse = opt_bool,
        JOB(log_max_value),
        .flags = OPT_BARE,
    },
    {
        .name = "per_job_logs",
        .arg = "BOOL",
        .help = "logs named NAME_KIND.N.log; 0: NAME_KIND.log, appended to by every job",
        .def = "1",
        .parse = opt_bool,
        JOB(per_job_logs),
        .flags = OPT_BARE,
    },
    {
        .name = "log_offset",
        .arg = "BOOL",
        .help = "log lines carry the I/O's offset",
        .def = "0",
        .parse = opt_bool,
        JOB(log_offset),
        .flags = OPT_BARE,
    },
    {
        .name = "disable_bw_measurement",
        .alias = "disable_bw",
        .arg = "BOOL",
        .help = "no per-I/O bandwidth (write_bw_log without log_avg_msec): as fio 3.33, the "
                "interval samples stay",
        .def = "0",
        .parse = opt_bool,
        JOB(disable_bw),
        .flags = OPT_BARE,
    },
    {
        .name = "continue_on_error",
        .arg = "KIND",
        .help = "none, read, write, io, verify or all",
        .def = "none",
        .parse = opt_coe,
        JOB(continue_on_error),
    },
    {
        .name = "verify",
        .arg = "METHOD",
        .help = "a checksum (md5, crc64, crc32c, crc32c-intel, crc32, crc16, crc7, sha1, "
                "sha256, sha512, xxhash), meta or pattern: written blocks carry a checked "
                "header (pattern: verify_pattern alone); reads check it",
        .def = "0",
        .parse = opt_choice,
        JOB(verify),
        .choices = verify_kinds,
    },
    {
        .name = "verify_pattern",
        .arg = "PATTERN",
        .help = "fio's pattern (0x hex, decimal, \"string\", 'file', %o: the block's "
                "offset): the data after the header (all of a block with verify=pattern), "
                "checked on reads",
        .parse = opt_verify_pattern,
        JOB(verify_pattern),
    },
    {
        .name = "verify_interval",
        .arg = "BYTES",
        .help = "a header and checksum for every this many bytes of a block (default: the "
                "block)",
        .parse = opt_size,
        JOB(verify_interval),
        .maxval = UINT32_MAX,
    },
    {
        .name = "verify_offset",
        .arg = "BYTES",
        .help = "where in the block the header goes (swapped with the data there)",
        .parse = opt_size,
        JOB(verify_offset),
        .maxval = UINT32_MAX,
    },
    {
        .name = "verify_fatal",
        .arg = "BOOL",
        .help = "stop the job at the first verify failure (default: check everything, then "
                "fail)",
        .def = "0",
        .parse = opt_bool,
        JOB(verify_fatal),
        .flags = OPT_BARE,
    },
    {
        .name = "verify_only",
        .arg = "BOOL",
        .help = "write nothing: check what an earlier run of the job wrote",
        .def = "0",
        .parse = opt_bool,
        JOB(verify_only),
        .flags = OPT_BARE,
    },
    {
        .name = "do_verify",
        .arg = "BOOL",
        .help = "with verify, read a write job's blocks back when it is done",
        .def = "1",
        .parse = opt_bool,
        JOB(do_verify),
        .flags = OPT_BARE,
    },
    {
        .name = "verify_backlog",
        .arg = "N",
        .help = "check written blocks every N writes, not only when the writes are done",
        .parse = opt_int,
        JOB(verify_backlog),
        .maxval = UINT32_MAX,
    },
    {
        .name = "verify_backlog_batch",
        .arg = "N",
        .help = "blocks each verify_backlog check reads (default: verify_backlog)",
        .parse = opt_int,
        JOB(verify_backlog_batch),
        .maxval = UINT32_MAX,
    },
    {
        .name = "verify_state_save",
        .arg = "BOOL",
        .help = "a verify write job saves which blocks it wrote in "
                "local-NAME-N-verify.state when it ends",
        .def = "1",
        .parse = opt_bool,
        JOB(verify_state_save),
        .flags = OPT_BARE,
    },
    {
        .name = "verify_state_load",
        .arg = "BOOL",
        .help = "verify_only checks only the blocks the saved state says were written",
        .def = "0",
        .parse = opt_bool,
        JOB(verify_state_load),
        .flags = OPT_BARE,
    },
    {
        .name = "experimental_verify",
        .arg = "BOOL",
        .help = "accepted: " EXPERIMENTAL_VERIFY_NOTE,
        .def = "0",
        .parse = opt_bool,
        JOB(experimental_verify),
        .flags = OPT_BARE,
        .note = EXPERIMENTAL_VERIFY_NOTE,
    },
    {
        .name = "buffer_pattern",
        .arg = "PATTERN",
        .help = "fio's pattern (0x hex, decimal, \"string\", 'file') written blocks hold "
                "over and over",
        .parse = opt_buffer_pattern,
        JOB(buffer_pattern),
    },
    {
        .name = "zero_buffers",
        .arg = "BOOL",
        .help = "written blocks are zeroes",
        .def = "0",
        .parse = opt_bool,
        JOB(zero_buffers),
        .flags = OPT_BARE,
    },
    {
        .name = "refill_buffers",
        .arg = "BOOL",
        .help = "new data in every write's buffer",
        .def = "0",
        .parse = opt_bool,
        JOB(refill_buffers),
        .flags = OPT_BARE,
    },
    {
        .name = "scramble_buffers",
        .arg = "BOOL",
        .help = "every write's 512-byte sectors get its offset and time, so no two blocks "
                "are the same",
        .def = "1",
        .parse = opt_bool,
        JOB(scramble_buffers),
        .flags = OPT_BARE,
    },
    {
        .name = "buffer_compress_percentage",
        .arg = "PERCENT",
        .help = "written data compresses to about this much: random data then zeroes (or "
                "buffer_pattern) in every chunk",
        .parse = opt_percent,
        JOB(compress_percentage),
        .maxval = 100,
    },
    {
        .name = "buffer_compress_chunk",
        .arg = "BYTES",
        .help = "the chunks of buffer_compress_percentage (0: the block)",
        .def = "512",
        .parse = opt_size,
        JOB(compress_chunk),
        .maxval = UINT32_MAX,
    },
    {
        .name = "dedupe_percentage",
        .arg = "PERCENT",
        .help = "this share of written blocks repeat an earlier one",
        .parse = opt_percent,
        JOB(dedupe_percentage),
        .maxval = 100,
    },
    {
        .name = "gtod_reduce",
        .arg = "BOOL",
        .help = "leave out every latency, as fio does (blkring stamps batches, not each I/O, so "
                "the run costs the same)",
        .def = "0",
        .parse = opt_bool,
        JOB(gtod_reduce),
        .flags = OPT_BARE,
    },
    {
        .name = "disable_lat",
        .arg = "BOOL",
        .help = "leave out the total latency (lat)",
        .def = "0",
        .parse = opt_bool,
        JOB(disable_lat),
        .flags = OPT_BARE,
    },
    {
        .name = "disable_clat",
        .arg = "BOOL",
        .help = "leave out the completion latency (clat) and its percentiles",
        .def = "0",
        .parse = opt_bool,
        JOB(disable_clat),
        .flags = OPT_BARE,
    },
    {
        .name = "disable_slat",
        .arg = "BOOL",
        .help = "leave out the submission latency (slat)",
        .def = "0",
        .parse = opt_bool,
        JOB(disable_slat),
        .flags = OPT_BARE,
    },
    {
        .name = "exitall",
        .arg = "BOOL",
        .help = "when this job ends, the jobs running beside it end too (not later groups)",
        .def = "0",
        .parse = opt_bool,
        JOB(exitall),
        .flags = OPT_BARE,
    },
    {
        .name = "exitall_on_error",
        .arg = "BOOL",
        .help = "as exitall, when this job ends with an error",
        .def = "0",
        .parse = opt_bool,
        JOB(exitall_on_error),
        .flags = OPT_BARE,
    },
    {
        .name = "new_group",
        .arg = "BOOL",
        .help = "start a new reporting group (its jobs still run beside the ones before)",
        .def = "0",
        .parse = opt_bool,
        JOB(new_group),
        .flags = OPT_BARE,
    },
    {
        .name = "stonewall",
        .alias = "wait_for_previous",
        .arg = "BOOL",
        .help = "wait for the jobs before; starts a new group",
        .def = "0",
        .parse = opt_bool,
        JOB(stonewall),
        .flags = OPT_BARE,
    },
    {
        .name = "sqthread_poll",
        .arg = "BOOL",
        .help = "a ring thread consumes SQEs and posts CQEs (SQPOLL)",
        .def = "0",
        .parse = opt_bool,
        JOB(sqthread_poll),
        .flags = OPT_BARE,
    },
    {
        .name = "sqthread_poll_cpu",
        .arg = "CPU",
        .help = "CPU of the SQPOLL thread",
        .parse = opt_int,
        JOB(sqthread_poll_cpu),
        .maxval = CPU_SETSIZE - 1,
    },
    {
        .name = "tw_prio",
        .arg = "BOOL",
        .help = "completion task work runs before other task work (TW_PRIO)",
        .def = "0",
        .parse = opt_bool,
        JOB(tw_prio),
        .flags = OPT_BARE,
    },
    {
        .name = "tw_issue",
        .arg = "BOOL",
        .help = "every issue becomes task work (TW_ISSUE, a benchmark knob)",
        .def = "0",
        .parse = opt_bool,
        JOB(tw_issue),
        .flags = OPT_BARE,
    },
    {
        .name = "taskrun",
        .arg = "MODE",
        .help =
            "normal, or defer: task work runs only in waits (DEFER_TASKRUN); default defer, normal "
            "with sqthread_poll, as fio's io_uring engine asks",
        .parse = opt_choice,
        JOB(taskrun),
        .choices = taskrun_names,
    },
    {
        .name = "clocksource",
        .arg = "SOURCE",
        .help = "cpu (the TSC, where invariant) or clock_gettime",
        .def = "cpu",
        .parse = opt_choice,
        RUN(clocksource),
        .flags = OPT_RUN,
        .choices = clock_names,
    },
    {
        .name = "output",
        .arg = "FILE",
        .help = "write the results to FILE",
        .parse = opt_str,
        RUN(output),
        .flags = OPT_RUN | OPT_CMDLINE,
        .maxval = BENCH_PATH_MAX - 1,
    },
    {
        .name = "output-format",
        .arg = "FORMAT",
        .help = "normal, json, json+ (json with histogram bins) or terse (fio's version 3), "
                "or several: json,normal",
        .def = "normal",
        .parse = opt_formats,
        RUN(output_format),
        .flags = OPT_RUN | OPT_CMDLINE,
    },
    {
        .name = "terse-version",
        .arg = "3",
        .help = "the terse format's version: 3 (fio's default) only",
        .def = "3",
        .parse = opt_terse_version,
        RUN(terse_version),
        .flags = OPT_RUN | OPT_CMDLINE,
    },
    {
        .name = "eta",
        .arg = "WHEN",
        .help = "the live line: auto (on a terminal, with normal output), always, never",
        .def = "auto",
        .parse = opt_choice,
        RUN(eta),
        .flags = OPT_RUN | OPT_CMDLINE,
        .choices = eta_names,
    },
    {
        .name = "status-interval",
        .arg = "TIME",
        .help = "print the results so far this often, as they are printed at the end",
        .parse = opt_time,
        RUN(status_interval_us),
        .flags = OPT_RUN | OPT_CMDLINE,
        .maxval = BENCH_TIME_MAX_US,
    },
    {
        .name = "eta-newline",
        .arg = "TIME",
        .help = "start a new live line this often instead of rewriting one",
        .parse = opt_time,
        RUN(eta_newline_us),
        .flags = OPT_RUN | OPT_CMDLINE,
        .maxval = BENCH_TIME_MAX_US,
    },
};

const unsigned bench_nr_opts = ARRAY_SIZE(bench_opts);

_Static_assert(ARRAY_SIZE(bench_opts) <= BENCH_MAX_OPTS, "BENCH_MAX_OPTS too small");

/* fio options blkring does not have: named as such rather than "unknown". */
static const char *const fio_only[] = {
    "allow_file_create",
    "allrandrepeat",
    "atomic",
    "buffered",
    "blockalign",
    "ba",
    "bwavgtime",
    "cgroup",
    "cpumask",
    "cpus_allowed_policy",
    "create_fsync",
    "create_on_open",
    "create_serialize",
    "dedupe_global",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "end_fsync_on_close",
    "exec_prerun",
    "exec_postrun",
    "fadvise_hint",
    "fallocate",
    "fdatasync",
    "filename_format",
    "gtod_cpu",
    "hugepage-size",
    "ignore_error",
    "invalidate",
    "iodepth_low",
    "iomem",
    "mem",
    "iomem_align",
    "iopsavgtime",
    "ioscheduler",
    "lat_log",
    "lockfile",
    "nice",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "openfiles",
    "overwrite",
    "pre_read",
    "prio",
    "prioclass",
    "readonly",
    "replay_redirect",
    "serialize_overlap",
    "significant_figures",
    "sync",
    "trim_backlog",
    "trim_percentage",
    "uid",
    "gid",
    "unlink",
    "unlink_each_loop",
    "verify_async",
    "wait_for",
    "write_iolog",
    "read_iolog",
    "enghelp",
    "debug",
    "server",
    "client",
    "daemonize",
    "alloc-size",
    "max-jobs",
    "idle-prof",
    "inflate-log",
    "trigger",
    "aux-path",
    NULL,
};

const struct bench_opt *opt_find(const char *name)
{
	for (unsigned i = 0; i < bench_nr_opts; i++) {
		const struct bench_opt *o = &bench_opts[i];

		if (!strcmp(name, o->name) || (o->alias && !strcmp(name, o->alias)))
			return o;
	}
	return NULL;
}

bool opt_is_fio_only(const char *name)
{
	for (const char *const *n = fio_only; *n; n++)
		if (!strcmp(name, *n))
			return true;
	return false;
}

uint64_t opts_min_bs(const struct job_opts *o, unsigned d)
{
	const struct bs_split *s = &o->bssplit[d];
	uint64_t min = UINT64_MAX;

	for (unsigned i = 0; i < s->nr; i++)
		min = s->e[i].bs < min ? s->e[i].bs : min;
	return s->nr ? min : o->bsrange[d].min ? o->bsrange[d].min : o->bs[d];
}

uint64_t opts_max_bs(const struct job_opts *o, unsigned d)
{
	const struct bs_split *s = &o->bssplit[d];
	uint64_t max = 0;

	for (unsigned i = 0; i < s->nr; i++)
		max = s->e[i].bs > max ? s->e[i].bs : max;
	return s->nr ? max : o->bsrange[d].min ? o->bsrange[d].max : o->bs[d];
}

uint64_t opts_unit(const struct job_opts *o, bool smallest)
{
	unsigned ddirs = rw_modes[o->rw.mode].ddirs;
	uint64_t unit = smallest ? UINT64_MAX : 0;

	for (unsigned k = 0; k < BENCH_DDIR_NR; k++) {
		uint64_t min = opts_min_bs(o, k);

		if ((ddirs & (1U << k)) && (smallest ? min < unit : min > unit))
			unit = min;
	}
	return unit;
}

bool opts_strided(const struct job_opts *o)
{
	return o->zonemode == ZONEMODE_STRIDED;
}

uint64_t opts_zonerange(const struct job_opts *o)
{
	return o->zonerange ? o->zonerange : o->zonesize;
}

static void *opt_field(const struct bench_opt *opt, struct job_opts *o, struct run_opts *r)
{
	return (char *)((opt->flags & OPT_RUN) ? (void *)r : (void *)o) + opt->off;
}

void opts_defaults(struct job_opts *o, struct run_opts *r)
{
	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < bench_nr_opts; i++) {
		const struct bench_opt *opt = &bench_opts[i];

		/* The table's defaults are valid option text: parsing cannot fail. */
		if (opt->def)
			opt->parse(opt, opt->def, opt_field(opt, o, r));
	}
	CPU_ZERO(&o->cpus_allowed);
}

int opt_set(struct job_opts *o, struct run_opts *r, const char *name, const char *val,
            const char *where, bool cmdline, bool in_job)
{
	const struct bench_opt *opt = opt_find(name);
	char why[512];

	if (!opt) {
		if (opt_is_fio_only(name))
			return tool_error(
			    -EINVAL, "%s: option '%s' is a fio option blkring does not support",
			    where, name);
		return tool_error(-EINVAL,
		                  "%s: unknown option '%s' ('blkring bench --help' lists them)",
		                  where, name);
	}
	if ((opt->flags & OPT_CMDLINE) && !cmdline)
		return tool_error(-EINVAL, "%s: option '%s' is taken on the command line only",
		                  where, name);
	if ((opt->flags & OPT_RUN) && in_job)
		return tool_error(-EINVAL,
		                  "%s: option '%s' applies to the whole run: give it in [global] "
		                  "or on the command line",
		                  where, name);
	if (!val) {
		if (!(opt->flags & (OPT_BARE | OPT_BARE_EMPTY)))
			return tool_error(-EINVAL, "%s: option '%s' needs a value (%s=%s)", where,
			                  name, name, opt->arg);
		val = (opt->flags & OPT_BARE) ? "1" : "";
	}
	size_kb_base = o->kb_base == KB_BASE_1000 ? 1000 : 1024;
	if (opt->parse(opt, val, opt_field(opt, o, r))) {
		snprintf(why, sizeof(why), "%s", tool_last_error());
		return tool_error(-EINVAL, "%s: option '%s': %s", where, name, why);
	}
	if (!(opt->flags & OPT_RUN))
		o->set[opt_index(opt)] = 1;
	return 0;
}

bool opt_is_set(const struct job_opts *o, const char *name)
{
	const struct bench_opt *opt = opt_find(name);

	return opt && o->set[opt_index(opt)];
}

const char *opts_log_name(const struct job_opts *o, const char *name)
{
	const struct bench_opt *opt = opt_find(name);
	const char *v = (const char *)o + opt->off;

	if (!o->set[opt_index(opt)])
		return NULL;
	return v[0] ? v : o->name;
}

void opts_help(FILE *f)
{
	for (unsigned i = 0; i < bench_nr_opts; i++) {
		const struct bench_opt *opt = &bench_opts[i];
		char lhs[64];

		snprintf(lhs, sizeof(lhs), "--%s=%s", opt->name, opt->arg);
		fprintf(f, "  %-36s %s", lhs, opt->help);
		if (opt->def && strcmp(opt->def, "0"))
			fprintf(f, " [%s]", opt->def);
		if (opt->alias)
			fprintf(f, " (also %s)", opt->alias);
		fputc('\n', f);
	}
}

static void cmdhelp_one(FILE *f, const struct bench_opt *opt)
{
	fprintf(f, "%20s: %s\n", opt->name, opt->help);
	if (opt->alias)
		fprintf(f, "%20s: %s\n", "alias", opt->alias);
	fprintf(f, "%20s: %s%s\n", "type", opt->arg,
	        (opt->flags & OPT_BARE)         ? " (alone: 1)"
	        : (opt->flags & OPT_BARE_EMPTY) ? " (alone: the job's name)"
	                                        : "");
	fprintf(f, "%20s: %s\n", "default", opt->def ? opt->def : "no default");
	for (unsigned i = 0; opt->choices && opt->choices[i]; i++)
		fprintf(f, "%20s: %s\n", i ? "" : "valid values", opt->choices[i]);
}

int opts_cmdhelp(FILE *f, const char *name)
{
	const struct bench_opt *opt;

	if (strcmp(name, "all")) {
		opt = opt_find(name);
		if (!opt)
			return tool_error(-EINVAL,
			                  "--cmdhelp: no option '%s' ('--cmdhelp' lists them all)",
			                  name);
		cmdhelp_one(f, opt);
		return 0;
	}
	for (unsigned i = 0; i < bench_nr_opts; i++)
		fprintf(f, "%-24s: %s\n", bench_opts[i].name, bench_opts[i].help);
	return 0;
}
