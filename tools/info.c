// SPDX-License-Identifier: MIT
/*
 * `blkring info SPEC`: a device's size, limits, features, queues, counters,
 * and for a volume its targets and their legs.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>

#include "bench.h"
#include "blkring.h"
#include "compiler.h"
#include "output.h"
#include "table.h"

static const struct {
	unsigned bit;
	const char *name;
} features[] = {
    {BLKRING_FEAT_FLUSH, "flush"},
    {BLKRING_FEAT_FUA, "fua"},
    {BLKRING_FEAT_DISCARD, "discard"},
    {BLKRING_FEAT_WRITE_ZEROES, "write_zeroes"},
    {BLKRING_FEAT_POLL, "poll"},
    {BLKRING_FEAT_KERNEL_POLL, "kernel_poll"},
    {BLKRING_FEAT_MULTI_CONN, "multi_conn"},
};

static const char *const dir_names[BLKRING_DIR_NR] = {"read", "write", "discard", "write_zeroes",
                                                      "flush"};

static void info_normal(struct blkring_dev *dev, const struct blkring_dev_info *in)
{
	uint32_t io_min = 0, io_opt = 0;
	char size[32];

	blkring_dev_io_hints(dev, &io_min, &io_opt);

	fmt_num(size, sizeof(size), (double)in->size, true);
	printf("%s\n", in->spec);
	printf("  type:                     %s\n", in->type);
	printf("  size:                     %" PRIu64 " bytes (%sB)\n", in->size, size);
	printf("  logical block size:       %u\n", in->logical_block_size);
	printf("  physical block size:      %u\n", in->physical_block_size);
	printf("  max sectors:              %u\n", in->max_sectors);
	printf("  max discard sectors:      %u\n", in->max_discard_sectors);
	printf("  discard granularity:      %u\n", in->discard_granularity);
	printf("  max write zeroes sectors: %u\n", in->max_write_zeroes_sectors);
	printf("  minimum I/O size:         %u\n", io_min);
	printf("  optimal I/O size:         %u\n", io_opt);
	printf("  features:                ");
	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		if (in->features & features[i].bit)
			printf(" %s", features[i].name);
	printf("%s\n", in->features ? "" : " none");
	printf("  hardware queues:          %u (+%u poll), depth %u\n", in->nr_hw_queues,
	       in->nr_poll_queues, in->queue_depth);
	printf("  read only:                %s\n", in->read_only ? "yes" : "no");
	printf("  counters:\n");
	for (unsigned d = 0; d < BLKRING_DIR_NR; d++)
		printf("    %-13s ios=%" PRIu64 " bytes=%" PRIu64 " errors=%" PRIu64 "\n",
		       dir_names[d], in->ios[d], in->bytes[d], in->errors[d]);
}

static bool is_volume(const struct blkring_dev_info *in)
{
	return !strcmp(in->type, "table");
}

static int info_normal_volume(struct blkring_dev *dev, const struct blkring_dev_info *in)
{
	info_normal(dev, in);
	if (!is_volume(in))
		return 0;
	printf("  table:\n");
	return table_show(stdout, dev, "    ");
}

static json_object *info_json_build(struct blkring_dev *dev, const struct blkring_dev_info *in)
{
	json_object *o = json_object_new_object(), *feat = json_object_new_array();
	json_object *cnt = json_object_new_object();
	uint32_t io_min = 0, io_opt = 0;

	blkring_dev_io_hints(dev, &io_min, &io_opt);

	json_object_object_add(o, "spec", json_object_new_string(in->spec));
	json_object_object_add(o, "type", json_object_new_string(in->type));
	json_object_object_add(o, "size", json_object_new_uint64(in->size));
	json_object_object_add(o, "logical_block_size",
	                       json_object_new_int64(in->logical_block_size));
	json_object_object_add(o, "physical_block_size",
	                       json_object_new_int64(in->physical_block_size));
	json_object_object_add(o, "max_sectors", json_object_new_int64(in->max_sectors));
	json_object_object_add(o, "max_discard_sectors",
	                       json_object_new_int64(in->max_discard_sectors));
	json_object_object_add(o, "discard_granularity",
	                       json_object_new_int64(in->discard_granularity));
	json_object_object_add(o, "max_write_zeroes_sectors",
	                       json_object_new_int64(in->max_write_zeroes_sectors));
	json_object_object_add(o, "minimum_io_size", json_object_new_int64(io_min));
	json_object_object_add(o, "optimal_io_size", json_object_new_int64(io_opt));
	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		if (in->features & features[i].bit)
			json_object_array_add(feat, json_object_new_string(features[i].name));
	json_object_object_add(o, "features", feat);
	json_object_object_add(o, "nr_hw_queues", json_object_new_int64(in->nr_hw_queues));
	json_object_object_add(o, "nr_poll_queues", json_object_new_int64(in->nr_poll_queues));
	json_object_object_add(o, "queue_depth", json_object_new_int64(in->queue_depth));
	json_object_object_add(o, "read_only", json_object_new_boolean(in->read_only));
	for (unsigned d = 0; d < BLKRING_DIR_NR; d++) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "ios", json_object_new_uint64(in->ios[d]));
		json_object_object_add(c, "bytes", json_object_new_uint64(in->bytes[d]));
		json_object_object_add(c, "errors", json_object_new_uint64(in->errors[d]));
		json_object_object_add(cnt, dir_names[d], c);
	}
	json_object_object_add(o, "counters", cnt);
	return o;
}

static int info_json(struct blkring_dev *dev, const struct blkring_dev_info *in)
{
	json_object *o = info_json_build(dev, in), *targets;
	const char *text;

	if (is_volume(in)) {
		int ret = table_json(dev, &targets);

		if (ret) {
			json_object_put(o);
			return ret;
		}
		json_object_object_add(o, "targets", targets);
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                             JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		json_object_put(o);
		return -ENOMEM;
	}
	printf("%s\n", text);
	json_object_put(o);
	return 0;
}

static void info_usage(FILE *f)
{
	fprintf(f, "usage: blkring info SPEC [--output-format=normal|json]\n"
	           "Shows a device's size, limits, features, queues and counters; for a\n"
	           "volume (table:FILE) also its targets, their legs and sector ranges.\n");
}

int cmd_info(int argc, char **argv)
{
	struct blkring_dev_info info;
	struct blkring_dev *dev;
	const char *spec;
	bool json;
	int ret;

	ret = cmd_args(&(const struct cmd_args_spec){"info", "SPEC", info_usage}, argc, argv, &spec,
	               &json);
	if (ret > 0)
		info_usage(stdout);
	if (ret)
		return ret > 0 ? EXIT_CLEAN : EXIT_USAGE;
	ret = blkring_dev_open(spec, &dev);
	if (ret) {
		fprintf(stderr, "blkring: info: %s: %s\n", spec,
		        *blkring_last_error() ? blkring_last_error() : strerror(-ret));
		return EXIT_USAGE;
	}
	ret = blkring_dev_info(dev, &info);
	if (!ret)
		ret = json ? info_json(dev, &info) : info_normal_volume(dev, &info);
	if (ret)
		fprintf(stderr, "blkring: info: %s: %s\n", spec, strerror(-ret));
	blkring_dev_close(dev);
	return ret ? EXIT_IO_ERROR : EXIT_CLEAN;
}
