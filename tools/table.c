// SPDX-License-Identifier: MIT
/*
 * `blkring table check FILE`: loads a dmsetup table as a volume (every
 * check the library makes: numbers, argument counts, gaps and overlaps,
 * striped rules, legs that open and are large enough, cycles) and prints
 * the layout it resolved to, from blkring_vol_describe().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "output.h"
#include "table.h"

/* Sectors [start, start + len) as "A-B" with B the last one. */
static void show_range(FILE *f, uint64_t start, uint64_t len)
{
	fprintf(f, "sectors %" PRIu64 "-%" PRIu64 " (%" PRIu64 ")", start, start + len - 1, len);
}

struct show {
	FILE *f;
	const char *indent;
};

static int show_target(const struct blkring_vol_target *t, void *arg)
{
	const struct show *s = arg;
	FILE *f = s->f;

	fprintf(f, "%sline %u: ", s->indent, t->line);
	show_range(f, t->start, t->len);
	fprintf(f, " %s%s%s\n", t->type, *t->params ? " " : "", t->params);
	for (unsigned i = 0; i < t->nr_legs; i++) {
		fprintf(f, "%s  leg %u: %s, ", s->indent, i, t->legs[i].spec);
		show_range(f, t->legs[i].start, t->legs[i].len);
		fputc('\n', f);
	}
	return 0;
}

int table_show(FILE *f, struct blkring_dev *dev, const char *indent)
{
	struct show s = {f, indent};

	return blkring_vol_describe(dev, show_target, &s);
}

static int jadd(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int jappend(json_object *array, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_array_add(array, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static json_object *json_leg(const struct blkring_vol_leg *leg)
{
	json_object *o = json_object_new_object();

	if (o && !(jadd(o, "spec", json_object_new_string(leg->spec)) ?:
	           jadd(o, "start", json_object_new_uint64(leg->start)) ?:
	           jadd(o, "length", json_object_new_uint64(leg->len))))
		return o;
	json_object_put(o);
	return NULL;
}

static int json_target(const struct blkring_vol_target *t, void *arg)
{
	json_object *o = json_object_new_object(), *legs = json_object_new_array();
	int ret = -ENOMEM;

	if (o && legs) {
		ret = jadd(o, "line", json_object_new_int64(t->line)) ?:
		      jadd(o, "start", json_object_new_uint64(t->start)) ?:
		      jadd(o, "length", json_object_new_uint64(t->len)) ?:
		      jadd(o, "type", json_object_new_string(t->type)) ?:
		      jadd(o, "params", json_object_new_string(t->params));
		for (unsigned i = 0; !ret && i < t->nr_legs; i++)
			ret = jappend(legs, json_leg(&t->legs[i]));
		if (!ret) {
			ret = jadd(o, "legs", legs);
			legs = NULL;
		}
	}
	json_object_put(legs);
	if (!ret)
		return jappend(arg, o);
	json_object_put(o);
	return ret;
}

int table_json(struct blkring_dev *dev, json_object **out)
{
	json_object *targets = json_object_new_array();
	int ret = targets ? blkring_vol_describe(dev, json_target, targets) : -ENOMEM;

	if (ret) {
		json_object_put(targets);
		return ret;
	}
	*out = targets;
	return 0;
}

/* ---- blkring table ---- */

static void table_usage(FILE *f)
{
	fprintf(f, "usage: blkring table check FILE [--output-format=normal|json]\n"
	           "Loads a dmsetup table as blkring would (every device it names is opened)\n"
	           "and prints the layout: each target, its legs and their sector ranges.\n"
	           "Exit status: 0 the table is valid, 2 it is not (the message names\n"
	           "FILE:LINE and what was expected).\n");
}

/* table:FILE, whatever FILE holds (commas, '='). */
static int table_open(const char *path, struct blkring_dev **devp)
{
	struct blkring_spec *spec;
	int ret = blkring_spec_parse("table:", &spec);

	if (ret)
		return ret;
	ret = blkring_spec_set_arg(spec, path) ?: blkring_dev_open_spec(spec, devp);
	blkring_spec_free(spec);
	return ret;
}

static int check_normal(struct blkring_dev *dev, const struct blkring_dev_info *info)
{
	char size[32];

	fmt_num(size, sizeof(size), (double)info->size, true);
	printf("%s: valid\n  size: %" PRIu64 " sectors (%sB)\n", info->spec, info->size >> 9, size);
	return table_show(stdout, dev, "  ");
}

static void print_json(json_object *o)
{
	printf("%s\n",
	       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                             JSON_C_TO_STRING_NOSLASHESCAPE));
}

/*
 * A load error as JSON: the message, and the file and line it starts with
 * ("FILE:N: ..."; an error in a nested table names the outer line first).
 * The line number is the first ":N:" followed by a space, so a name with
 * ":N:" in it (v:12:x.table) is not taken for one.
 */
static void check_json_error(const char *file, const char *msg)
{
	json_object *o = json_object_new_object();
	const char *p = msg;
	unsigned line = 0;
	int n = 0;

	while ((p = strchr(p, ':')) && !(sscanf(p, ":%u:%n", &line, &n) == 1 && n && p[n] == ' '))
		p++;
	if (o && !(jadd(o, "table", json_object_new_string(file)) ?:
	           jadd(o, "valid", json_object_new_boolean(0)) ?:
	           jadd(o, "error", json_object_new_string(msg))) &&
	    (!p || !(jadd(o, "file", json_object_new_string_len(msg, (int)(p - msg))) ?:
	             jadd(o, "line", json_object_new_int64(line)))))
		print_json(o);
	json_object_put(o);
}

static int check_json(struct blkring_dev *dev, const struct blkring_dev_info *info)
{
	json_object *o = json_object_new_object(), *targets = NULL;
	int ret = o ? table_json(dev, &targets) : -ENOMEM;

	if (!ret)
		ret = jadd(o, "spec", json_object_new_string(info->spec)) ?:
		      jadd(o, "valid", json_object_new_boolean(1)) ?:
		      jadd(o, "size", json_object_new_uint64(info->size)) ?:
		      jadd(o, "sectors", json_object_new_uint64(info->size >> 9)) ?:
		      jadd(o, "targets", targets);
	else
		json_object_put(targets);
	if (!ret)
		print_json(o);
	json_object_put(o);
	return ret;
}

static int table_check(int argc, char **argv)
{
	struct blkring_dev_info info;
	struct blkring_dev *dev;
	const char *file;
	bool json;
	int ret;

	ret = cmd_args(&(const struct cmd_args_spec){"table", "FILE", table_usage}, argc, argv,
	               &file, &json);
	if (ret > 0)
		table_usage(stdout);
	if (ret)
		return ret > 0 ? EXIT_CLEAN : EXIT_USAGE;
	ret = table_open(file, &dev);
	if (ret) {
		const char *msg = *blkring_last_error() ? blkring_last_error() : strerror(-ret);

		fprintf(stderr, "blkring: table check: %s\n", msg);
		if (json)
			check_json_error(file, msg);
		return EXIT_USAGE;
	}
	ret = blkring_dev_info(dev, &info);
	if (!ret)
		ret = json ? check_json(dev, &info) : check_normal(dev, &info);
	if (ret)
		fprintf(stderr, "blkring: table check: %s: %s\n", file, strerror(-ret));
	blkring_dev_close(dev);
	return ret ? EXIT_IO_ERROR : EXIT_CLEAN;
}

int cmd_table(int argc, char **argv)
{
	if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
		table_usage(stdout);
		return EXIT_CLEAN;
	}
	if (argc >= 1 && !strcmp(argv[0], "check"))
		return table_check(argc - 1, argv + 1);
	if (argc >= 1)
		fprintf(stderr, "blkring: table: unknown subcommand '%s'\n", argv[0]);
	table_usage(stderr);
	return EXIT_USAGE;
}
