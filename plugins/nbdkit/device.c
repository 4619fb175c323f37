// SPDX-License-Identifier: MIT
/*
 * The served device: the plugin's parameters and the spec they make, the
 * open after nbdkit forked (threads started before the fork are gone in
 * the child), and the flush and close when nbdkit stops.
 */
#define NBDKIT_API_VERSION 2
#include <errno.h>
#include <nbdkit-plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

struct plug_device plug = {.depth = PLUG_DEFAULT_DEPTH};

/* blkring's own message where it has one, else the errno's text. */
static const char *lib_error(int err)
{
	const char *msg = blkring_last_error();

	return msg && *msg ? msg : strerror(-err);
}

static void spec_text(char *buf, size_t size)
{
	if (blkring_spec_format(plug.spec, buf, size) < 0)
		snprintf(buf, size, "?");
}

static int parse_bool(const char *value, bool *out)
{
	int r = nbdkit_parse_bool(value);

	if (r < 0)
		return -1;
	*out = r;
	return 0;
}

static int parse_depth(const char *value)
{
	unsigned depth;

	if (nbdkit_parse_unsigned("depth", value, &depth) < 0)
		return -1;
	if (depth < 1 || depth > BLKRING_MAX_ENTRIES) {
		nbdkit_error("depth=%s: expected 1..%u ring entries", value, BLKRING_MAX_ENTRIES);
		return -1;
	}
	plug.depth = depth;
	return 0;
}

/* nbdkit chdirs to / when it daemonises: paths become absolute now.  Of
 * the library's drivers, file and table take a path as their first item. */
static int absolute_arg(struct blkring_spec *spec)
{
	const char *type = blkring_spec_type(spec), *arg = blkring_spec_arg(spec);
	char *path;
	int ret;

	if (!arg || (strcmp(type, "file") && strcmp(type, "table")))
		return 0;
	path = nbdkit_absolute_path(arg);
	if (!path)
		return -1;
	ret = blkring_spec_set_arg(spec, path);
	free(path);
	if (ret < 0)
		nbdkit_error("'%s': %s", arg, lib_error(ret));
	return ret < 0 ? -1 : 0;
}

/* A table volume is reloaded from its file on SIGHUP. */
static int note_table(struct blkring_spec *spec)
{
	if (strcmp(blkring_spec_type(spec), "table"))
		return 0;
	plug.table = strdup(blkring_spec_arg(spec));
	if (!plug.table) {
		nbdkit_error("strdup: %m");
		return -1;
	}
	return 0;
}

static int parse_spec(const char *key, const char *type, const char *value)
{
	struct blkring_spec *spec;
	int ret;

	if (plug.spec) {
		nbdkit_error("%s=%s: give one spec= or table=", key, value);
		return -1;
	}
	ret = blkring_spec_parse(type ? type : value, &spec);
	if (ret < 0) {
		nbdkit_error("%s=%s: %s", key, value, lib_error(ret));
		return -1;
	}
	if (type && (ret = blkring_spec_set_arg(spec, value)) < 0) {
		nbdkit_error("%s=%s: %s", key, value, lib_error(ret));
		blkring_spec_free(spec);
		return -1;
	}
	plug.spec = spec;
	if (absolute_arg(spec) < 0 || note_table(spec) < 0)
		return -1;
	return 0;
}

int plug_config(const char *key, const char *value)
{
	if (!strcmp(key, "spec"))
		return parse_spec(key, NULL, value);
	if (!strcmp(key, "table"))
		return parse_spec(key, "table:", value);
	if (!strcmp(key, "readonly"))
		return parse_bool(value, &plug.readonly);
	if (!strcmp(key, "sqpoll"))
		return parse_bool(value, &plug.sqpoll);
	if (!strcmp(key, "poll"))
		return parse_bool(value, &plug.poll);
	if (!strcmp(key, "depth"))
		return parse_depth(value);
	nbdkit_error("unknown parameter '%s' (spec=, table=, readonly=, sqpoll=, poll=, depth=)",
	             key);
	return -1;
}

int plug_config_complete(void)
{
	int ret;

	if (!plug.spec) {
		nbdkit_error("spec=SPEC or table=FILE is required");
		return -1;
	}
	if (!plug.readonly)
		return 0;
	/* Every driver takes ro=1, and a read-only open needs no write access. */
	ret = blkring_spec_set(plug.spec, "ro", "1");
	if (ret < 0) {
		nbdkit_error("readonly=1: %s", lib_error(ret));
		return -1;
	}
	return 0;
}

/*
 * The public API does not say whether a device wants aligned buffers, so
 * ask it: a read into a misaligned buffer is -EINVAL only where it does.
 */
void plug_probe_alignment(void)
{
	struct blkring_dev_info info;
	char *buf;

	if (plug_info(&info) < 0 || info.size < info.logical_block_size)
		return;
	buf = aligned_alloc(4096, (info.logical_block_size + 2 * 4096 - 1) & ~4095U);
	if (!buf)
		return;
	plug.align = info.logical_block_size;
	atomic_store(&plug.aligned_only,
	             blkring_dev_pread(plug.dev, buf + 1, info.logical_block_size, 0) == -EINVAL);
	free(buf);
}

static int check_poll(void)
{
	struct blkring_dev_info info;
	char text[512];

	if (!plug.poll || (plug_info(&info) == 0 && (info.features & BLKRING_FEAT_POLL)))
		return 0;
	spec_text(text, sizeof(text));
	nbdkit_error("poll=1: '%s' has no poll queues", text);
	return -1;
}

int plug_open_device(void)
{
	char text[512];
	int ret = blkring_dev_open_spec(plug.spec, &plug.dev);

	if (ret < 0) {
		spec_text(text, sizeof(text));
		nbdkit_error("'%s': %s", text, lib_error(ret));
		plug.dev = NULL;
		return -1;
	}
	if (check_poll() < 0) {
		plug_close_device();
		return -1;
	}
	plug_probe_alignment();
	return 0;
}

int plug_info(struct blkring_dev_info *info)
{
	return blkring_dev_info(plug.dev, info);
}

/* What clients wrote reaches the device's media before nbdkit exits. */
void plug_close_device(void)
{
	struct blkring_dev_info info;
	int ret;

	if (!plug.dev)
		return;
	if (plug_info(&info) == 0 && !info.read_only && (info.features & BLKRING_FEAT_FLUSH)) {
		ret = blkring_dev_flush(plug.dev);
		if (ret < 0)
			nbdkit_error("flush: %s", strerror(-ret));
	}
	ret = blkring_dev_close(plug.dev);
	if (ret < 0)
		nbdkit_error("close: %s", strerror(-ret));
	plug.dev = NULL;
}

void plug_free_config(void)
{
	blkring_spec_free(plug.spec);
	free(plug.table);
	plug.spec = NULL;
	plug.table = NULL;
}
