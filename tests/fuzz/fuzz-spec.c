// SPDX-License-Identifier: MIT
/*
 * Device specs: up to 8 specs, one per line, each parsed and formatted
 * back (blkring_spec_*: the text must read back as the same spec), then
 * opened in order and closed in reverse.  Every call answers 0 or -errno;
 * an open device has sane limits, its canonical spec opens the same
 * device, the same text twice is the same device, and every close of an
 * idle device succeeds.
 * Relative paths name files in a scratch directory emptied after each
 * input; text naming anything outside it is skipped (util.c).
 */
#include <errno.h>
#include <string.h>

#include "blkring.h"
#include "util.h"

#define MAX_SPECS 8

struct opened {
	char *text; /* its path, if any, in the scratch directory */
	struct blkring_dev *dev;
};

/* Table files a fuzzed table: spec can name: a plain one and a loop. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_scratch_enter("spec");
	fuzz_scratch_keep("z.table", "0 64 zero\n");
	fuzz_scratch_keep("n.table", "0 2048 linear null:size=1M,irqmode=none 0\n"
	                             "2048 64 linear table:z.table 0\n");
	fuzz_scratch_keep("loop.table", "0 8 linear table:loop.table 0\n");
	return 0;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void check_info(const char *text, struct blkring_dev *dev)
{
	struct blkring_dev_info info;
	struct blkring_dev *again;
	int ret = blkring_dev_info(dev, &info);

	FUZZ_CHECK(!ret, "'%s': dev_info %d", text, ret);
	FUZZ_CHECK(info.type && info.spec, "'%s': no type or spec", text);
	FUZZ_CHECK(is_pow2(info.logical_block_size) && info.logical_block_size >= 512,
	           "'%s': logical block size %u", text, info.logical_block_size);
	FUZZ_CHECK(info.physical_block_size >= info.logical_block_size,
	           "'%s': physical block size %u", text, info.physical_block_size);
	FUZZ_CHECK(info.size % info.logical_block_size == 0, "'%s': size %llu", text,
	           (unsigned long long)info.size);
	/* Volumes have no queues of their own. */
	FUZZ_CHECK(!strcmp(info.type, "table") || (info.nr_hw_queues >= 1 && info.queue_depth >= 1),
	           "'%s': %s with %u queues, depth %u", text, info.type, info.nr_hw_queues,
	           info.queue_depth);
	/* The canonical spec names this very device. */
	ret = blkring_dev_open(info.spec, &again);
	FUZZ_CHECK(!ret && again == dev, "'%s': canonical '%s' opens %d %p, not %p", text,
	           info.spec, ret, (void *)again, (void *)dev);
	ret = blkring_dev_close(again);
	FUZZ_CHECK(!ret, "'%s': close of the second reference %d", text, ret);
}

static void open_one(struct opened *o, const struct opened *before, unsigned nr)
{
	int ret = blkring_dev_open(o->text, &o->dev);

	if (ret) {
		/* The message may be empty: the errno says it all. */
		FUZZ_CHECK(ret < 0 && ret > -4096 && blkring_last_error(), "'%s': open %d", o->text,
		           ret);
		o->dev = NULL;
		return;
	}
	check_info(o->text, o->dev);
	for (unsigned i = 0; i < nr; i++)
		FUZZ_CHECK(
		    !before[i].dev || strcmp(before[i].text, o->text) || before[i].dev == o->dev,
		    "'%s' opened twice: %p and %p", o->text, (void *)before[i].dev, (void *)o->dev);
}

static char *format(const struct blkring_spec *spec)
{
	int len = blkring_spec_format(spec, NULL, 0);
	char *text;

	FUZZ_CHECK(len > 0, "format %d", len);
	text = malloc((size_t)len + 1);
	FUZZ_CHECK(text && blkring_spec_format(spec, text, (size_t)len + 1) == len,
	           "format into %d bytes", len + 1);
	return text;
}

static void same_spec(const struct blkring_spec *a, const struct blkring_spec *b, const char *text)
{
	const char *arg_a = blkring_spec_arg(a), *arg_b = blkring_spec_arg(b);

	FUZZ_CHECK(!strcmp(blkring_spec_type(a), blkring_spec_type(b)), "'%s': type %s, then %s",
	           text, blkring_spec_type(a), blkring_spec_type(b));
	FUZZ_CHECK((!arg_a && !arg_b) || (arg_a && arg_b && !strcmp(arg_a, arg_b)),
	           "'%s': first item '%s', then '%s'", text, arg_a ? arg_a : "(none)",
	           arg_b ? arg_b : "(none)");
}

/* Formats, parses the text back: the same spec, formatted the same. */
static void round_trip(struct blkring_spec *spec, const char *text)
{
	struct blkring_spec *again;
	char *t1 = format(spec), *t2;
	int ret = blkring_spec_parse(t1, &again);

	FUZZ_CHECK(!ret, "'%s' formats as '%s', which parses as %d", text, t1, ret);
	same_spec(spec, again, t1);
	t2 = format(again);
	FUZZ_CHECK(!strcmp(t1, t2), "'%s' formats as '%s', then as '%s'", text, t1, t2);
	FUZZ_CHECK(
	    !strcmp(blkring_spec_get(again, "name") ?: "", blkring_spec_get(spec, "name") ?: ""),
	    "'%s': name changed in '%s'", text, t1);
	blkring_spec_free(again);
	free(t1);
	free(t2);
}

/*
 * The spec calls on the text as typed (they never touch a file): what
 * parses formats back to itself, also after a key whose value needs every
 * escape is set.
 */
static void check_spec_calls(const char *text)
{
	static const char awkward[] = "a,b\\c=d\\";
	struct blkring_spec *spec;
	int ret = blkring_spec_parse(text, &spec);

	if (ret) {
		FUZZ_CHECK(ret < 0 && ret > -4096, "'%s': parse %d", text, ret);
		return;
	}
	FUZZ_CHECK(blkring_spec_type(spec), "'%s': no type", text);
	round_trip(spec, text);
	ret = blkring_spec_set(spec, "name", awkward);
	FUZZ_CHECK(!ret && !strcmp(blkring_spec_get(spec, "name"), awkward), "'%s': set name %d",
	           text, ret);
	round_trip(spec, text);
	blkring_spec_free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct opened specs[MAX_SPECS];
	unsigned nr = 0;
	char *text, *line, *save;

	if (size > 4096)
		return 0;
	text = fuzz_strndup(data, size);
	if (!text || !fuzz_text_safe(text)) {
		free(text);
		return 0;
	}
	for (line = strtok_r(text, "\n", &save); line && nr < MAX_SPECS;
	     line = strtok_r(NULL, "\n", &save)) {
		check_spec_calls(line);
		specs[nr].text = fuzz_in_scratch(line);
		if (!specs[nr].text)
			break;
		open_one(&specs[nr], specs, nr);
		nr++;
	}
	while (nr--) {
		int ret = specs[nr].dev ? blkring_dev_close(specs[nr].dev) : 0;

		FUZZ_CHECK(!ret, "'%s': close %d", specs[nr].text, ret);
		free(specs[nr].text);
	}
	free(text);
	fuzz_scratch_clean();
	return 0;
}
