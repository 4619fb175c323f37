// SPDX-License-Identifier: MIT
/*
 * The driver registry: every spec TYPE and the driver that opens it.  The
 * block layer looks drivers up here by name and names none of them; a new
 * driver adds its file and one line below.  A driver built as a separately
 * loaded module registers itself when it is loaded, so applications that
 * never open its type do not depend on its libraries.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "block/blkdev.h"
#include "lib/compiler.h"

extern const struct blkring_driver blkring__null_driver;  /* null.c */
extern const struct blkring_driver blkring__file_driver;  /* file.c */
extern const struct blkring_driver blkring__nbd_driver;   /* nbd.c */
extern const struct blkring_driver blkring__table_driver; /* src/dm/dm-spec.c */

static const struct blkring_driver *const builtin[] = {
    &blkring__null_driver,
    &blkring__file_driver,
    &blkring__nbd_driver,
    &blkring__table_driver,
};

#define MAX_LOADED 8
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct blkring_driver *loaded[MAX_LOADED];
static unsigned nr_loaded;

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

void blkring__driver_types(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < ARRAY_SIZE(builtin) && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
		                        builtin[i]->type);
	pthread_mutex_lock(&loaded_lock);
	for (unsigned i = 0; i < nr_loaded && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, ", %s", loaded[i]->type);
	pthread_mutex_unlock(&loaded_lock);
}
