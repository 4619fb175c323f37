// SPDX-License-Identifier: MIT
/*
 * dmsetup table text, with reload: the input is up to three tables split
 * by lines "%%".  The first builds a volume (blkring_vol_create), each
 * further one is loaded into it (blkring_vol_load) and, when it loads,
 * made live with suspend and resume.  Every call answers 0 or -errno; a
 * failed load leaves the live table alone; the live table always covers
 * the volume from sector 0 with no gap; a first and a last block read
 * through it answer the block or an error; closing the volume succeeds.
 */
#include <errno.h>
#include <string.h>

#include "blkring.h"
#include "util.h"

#define MAX_TABLES 3
#define SECTOR 512ULL

static void *block;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_scratch_enter("table");
	fuzz_scratch_keep("z.table", "0 64 zero\n");
	fuzz_scratch_keep("n.table", "0 2048 linear null:size=1M,irqmode=none,name=n 0\n");
	fuzz_scratch_keep("loop.table", "0 8 linear table:loop.table 0\n");
	block = aligned_alloc(4096, 65536);
	return 0;
}

struct walk {
	uint64_t next; /* the sector the next target must start at */
	unsigned nr;
};

static const char *const targets[] = {"linear", "striped", "zero", "error", "flakey"};

static bool known_target(const char *type)
{
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		if (!strcmp(type, targets[i]))
			return true;
	return false;
}

static int check_target(const struct blkring_vol_target *t, void *arg)
{
	struct walk *w = arg;

	FUZZ_CHECK(t->type && known_target(t->type), "target %u: type %s", w->nr,
	           t->type ? t->type : "(null)");
	FUZZ_CHECK(t->start == w->next && t->len, "target %u (%s): sectors %llu+%llu after %llu",
	           w->nr, t->type, (unsigned long long)t->start, (unsigned long long)t->len,
	           (unsigned long long)w->next);
	FUZZ_CHECK(t->params, "target %u: no params", w->nr);
	FUZZ_CHECK(!t->nr_legs || t->legs, "target %u: %u legs, none given", w->nr, t->nr_legs);
	for (unsigned i = 0; i < t->nr_legs; i++)
		FUZZ_CHECK(t->legs[i].spec && t->legs[i].len, "target %u leg %u", w->nr, i);
	w->next += t->len;
	w->nr++;
	return 0;
}

/* The live table against the volume's size; returns the size. */
static uint64_t check_live(struct blkring_dev *dev)
{
	struct blkring_dev_info info;
	struct walk w = {0, 0};
	int ret = blkring_dev_info(dev, &info);

	FUZZ_CHECK(!ret, "dev_info %d", ret);
	ret = blkring_vol_describe(dev, check_target, &w);
	FUZZ_CHECK(!ret, "describe %d", ret);
	FUZZ_CHECK(w.nr && w.next * SECTOR == info.size, "%u targets cover %llu sectors, size %llu",
	           w.nr, (unsigned long long)w.next, (unsigned long long)info.size);
	FUZZ_CHECK(info.logical_block_size >= 512 && info.logical_block_size <= 65536,
	           "logical block size %u", info.logical_block_size);
	return info.size;
}

static void read_at(struct blkring_dev *dev, uint64_t off, uint32_t bs)
{
	ssize_t ret = blkring_dev_pread(dev, block, bs, off);

	FUZZ_CHECK(ret == bs || (ret < 0 && ret > -4096), "pread %u at %llu: %zd", bs,
	           (unsigned long long)off, ret);
}

/* The first and the last block, through whatever the live table maps. */
static void read_ends(struct blkring_dev *dev)
{
	struct blkring_dev_info info;
	uint64_t size = check_live(dev);

	blkring_dev_info(dev, &info);
	if (size < info.logical_block_size)
		return;
	read_at(dev, 0, info.logical_block_size);
	read_at(dev, size - info.logical_block_size, info.logical_block_size);
}

/* The message may be empty: the errno says it all. */
static void check_error(int ret, const char *what)
{
	FUZZ_CHECK(ret < 0 && ret > -4096 && blkring_last_error(), "%s: %d", what, ret);
}

/* Loads a table; when it loads, makes it live. */
static void reload(struct blkring_dev *dev, const char *text)
{
	uint64_t before = check_live(dev);
	int ret = blkring_vol_load(dev, text, fuzz_scratch_dir());

	if (ret) {
		check_error(ret, "load");
		FUZZ_CHECK(check_live(dev) == before, "a failed load changed the volume");
		return;
	}
	ret = blkring_vol_suspend(dev);
	FUZZ_CHECK(!ret, "suspend %d", ret);
	ret = blkring_vol_suspend(dev);
	FUZZ_CHECK(ret == -EINVAL, "a second suspend answered %d", ret);
	ret = blkring_vol_resume(dev);
	FUZZ_CHECK(!ret, "resume %d", ret);
	read_ends(dev);
}

/* Cuts the text at lines "%%". */
static unsigned split(char *text, char **parts)
{
	unsigned nr = 0;
	char *p = text;

	parts[nr++] = text;
	while (nr < MAX_TABLES && (p = strstr(p, "%%\n"))) {
		if (p != text && p[-1] != '\n') {
			p++;
			continue;
		}
		*p = '\0';
		p += 3;
		parts[nr++] = p;
	}
	return nr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *parts[MAX_TABLES];
	struct blkring_dev *dev;
	unsigned nr;
	int ret;

	if (size > 16384)
		return 0;
	text = fuzz_strndup(data, size);
	if (!text || !fuzz_text_safe(text)) {
		free(text);
		return 0;
	}
	nr = split(text, parts);
	ret = blkring_vol_create(parts[0], fuzz_scratch_dir(), &dev);
	if (ret) {
		check_error(ret, "create");
	} else {
		read_ends(dev);
		for (unsigned i = 1; i < nr; i++)
			reload(dev, parts[i]);
		ret = blkring_dev_close(dev);
		FUZZ_CHECK(!ret, "close %d", ret);
	}
	free(text);
	fuzz_scratch_clean();
	return 0;
}
