// SPDX-License-Identifier: MIT
/*
 * The driver registry: every spec TYPE and the driver that opens it.  The
 * block layer looks drivers up here by name and names none of them; a new
 * driver adds its file and one line below.  A driver built as a separately
 * loaded module registers itself when it is loaded, so applications that
 * never open its type do not depend on its libraries.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "lib/compiler.h"
#include "lib/error.h"

extern const struct blkring_driver blkring__null_driver;  /* null.c */
extern const struct blkring_driver blkring__file_driver;  /* file.c */
extern const struct blkring_driver blkring__table_driver; /* src/dm/dm-spec.c */

static const struct blkring_driver *const builtin[] = {
    &blkring__null_driver,
    &blkring__file_driver,
    &blkring__table_driver,
};

/* Drivers built as modules (src/drivers/modules/TYPE.c), found as
 * MODULE_SUBDIR/TYPE.so beside the library, or in $BLKRING_MODULE_DIR;
 * each defines blkring__TYPE_driver. */
struct module {
	const char *type;
	const char *packages; /* what building it needs (Debian) */
	/* Specs that are the driver's without TYPE: (it is loaded to open them). */
	const char *const *prefixes;
};

static const char *const nbd_uris[] = {"nbd://", "nbds://", "nbd+unix://", "nbds+unix://", NULL};

static const struct module modules[] = {
    {"nbd", "libnbd-dev", nbd_uris},
    {"rbd", "librbd-dev and librados-dev", NULL},
};

#define MODULE_SUBDIR "blkring-modules"
#ifndef BLKRING_MODULE_DEFAULT_DIR /* the Makefile's: PREFIX/lib/MODULE_SUBDIR */
#define BLKRING_MODULE_DEFAULT_DIR "/usr/local/lib/" MODULE_SUBDIR
#endif

#define MAX_LOADED 8
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct blkring_driver *loaded[MAX_LOADED];
static unsigned nr_loaded;
static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct blkring_driver *find_in(const struct blkring_driver *const *list, unsigned n,
                                            const char *type)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(list[i]->type, type))
			return list[i];
	return NULL;
}

const struct blkring_driver *blkring__driver_find(const char *type)
{
	const struct blkring_driver *drv = find_in(builtin, ARRAY_SIZE(builtin), type);

	if (drv)
		return drv;
	pthread_mutex_lock(&loaded_lock);
	drv = find_in(loaded, nr_loaded, type);
	pthread_mutex_unlock(&loaded_lock);
	return drv;
}

static const struct blkring_driver *claim_in(const struct blkring_driver *const *list, unsigned n,
                                             const char *text)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i]->claims && list[i]->claims(text))
			return list[i];
	return NULL;
}

const char *blkring__module_claim(const char *text)
{
	for (unsigned i = 0; i < ARRAY_SIZE(modules); i++)
		for (const char *const *p = modules[i].prefixes; p && *p; p++)
			if (!strncmp(text, *p, strlen(*p)))
				return modules[i].type;
	return NULL;
}

const struct blkring_driver *blkring__driver_claim(const char *text)
{
	const struct blkring_driver *drv = claim_in(builtin, ARRAY_SIZE(builtin), text);

	if (drv)
		return drv;
	pthread_mutex_lock(&loaded_lock);
	drv = claim_in(loaded, nr_loaded, text);
	pthread_mutex_unlock(&loaded_lock);
	return drv;
}

int blkring__driver_register(const struct blkring_driver *drv)
{
	int ret = 0;

	pthread_mutex_lock(&loaded_lock);
	if (find_in(builtin, ARRAY_SIZE(builtin), drv->type) ||
	    find_in(loaded, nr_loaded, drv->type))
		ret = -EEXIST;
	else if (nr_loaded == MAX_LOADED)
		ret = -ENOSPC;
	else
		loaded[nr_loaded++] = drv;
	pthread_mutex_unlock(&loaded_lock);
	return ret;
}

static const struct module *module_of(const char *type)
{
	for (unsigned i = 0; i < ARRAY_SIZE(modules); i++)
		if (!strcmp(modules[i].type, type))
			return &modules[i];
	return NULL;
}

/* Where modules live: $BLKRING_MODULE_DIR, else beside the object that
 * holds this code (the shared library in PREFIX/lib, the build tree's
 * command), or in PREFIX/lib for a program in PREFIX/bin linked with the
 * static library, else the PREFIX the library was built for. */
static void module_dir(char *dir, size_t size)
{
	static const char *const rel[] = {"/" MODULE_SUBDIR, "/../lib/" MODULE_SUBDIR};
	const char *env = getenv("BLKRING_MODULE_DIR");
	Dl_info info;
	const char *slash;

	if (env && *env) {
		snprintf(dir, size, "%s", env);
		return;
	}
	if (dladdr((void *)module_dir, &info) && info.dli_fname &&
	    (slash = strrchr(info.dli_fname, '/'))) {
		for (unsigned i = 0; i < ARRAY_SIZE(rel); i++) {
			snprintf(dir, size, "%.*s%s", (int)(slash - info.dli_fname), info.dli_fname,
			         rel[i]);
			if (!access(dir, F_OK))
				return;
		}
	}
	snprintf(dir, size, "%s", BLKRING_MODULE_DEFAULT_DIR);
}

/* A module's calls into the library resolve in the global scope: when the
 * library was itself loaded with RTLD_LOCAL (by an nbdkit plugin, say),
 * promote it first. */
static void export_library(void)
{
	Dl_info info;

	if (dladdr((void *)export_library, &info) && info.dli_fname)
		dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

static int module_load(const struct module *m, const struct blkring_driver **drvp)
{
	char dir[4096], path[4200], symbol[64];
	const struct blkring_driver *drv;
	void *h;

	module_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.so", dir, m->type);
	if (access(path, F_OK))
		return blkring__error(-ENODEV,
		                      "%s: support is not installed: no module %s (build it with "
		                      "%s installed, then make install; BLKRING_MODULE_DIR names "
		                      "another directory)",
		                      m->type, path, m->packages);
	export_library();
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return blkring__error(-ENODEV,
		                      "%s: cannot load module %s: %s (a program linked with "
		                      "libblkring.a must export the module interface: "
		                      "-Wl,--export-dynamic-symbol='blkring__*')",
		                      m->type, path, dlerror());
	snprintf(symbol, sizeof(symbol), "blkring__%s_driver", m->type);
	drv = dlsym(h, symbol);
	if (!drv || strcmp(drv->type, m->type)) {
		dlclose(h);
		return blkring__error(-ENODEV, "%s: module %s has no driver %s", m->type, path,
		                      symbol);
	}
	*drvp = drv;
	return 0;
}

int blkring__driver_load(const char *type, const struct blkring_driver **drvp)
{
	const struct module *m = module_of(type);
	const struct blkring_driver *drv;
	int ret;

	if (!m)
		return -ENOENT;
	/* Loaded once: the handle is never closed, as the driver's ops live in it. */
	pthread_mutex_lock(&module_lock);
	drv = blkring__driver_find(type);
	ret = drv ? 0 : module_load(m, &drv);
	if (!ret && !blkring__driver_find(type))
		ret = blkring__driver_register(drv);
	pthread_mutex_unlock(&module_lock);
	if (!ret)
		*drvp = drv;
	return ret;
}

void blkring__driver_types(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < ARRAY_SIZE(builtin) && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
		                        builtin[i]->type);
	pthread_mutex_lock(&loaded_lock);
	for (unsigned i = 0; i < nr_loaded && len < size; i++)
		if (!module_of(loaded[i]->type))
			len += (size_t)snprintf(buf + len, size - len, ", %s", loaded[i]->type);
	pthread_mutex_unlock(&loaded_lock);
	for (unsigned i = 0; i < ARRAY_SIZE(modules) && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, ", %s", modules[i].type);
}
