// SPDX-License-Identifier: MIT
/* The engines ioengine= can name; adding one is its file and a line here. */
#include <string.h>

#include "engine.h"

#define RING_NOTE "runs on a blkring ring, as ioengine=blkring"
#define SYNC_NOTE "runs as blocking library calls, as ioengine=sync"

const struct engine_name engine_names[] = {
    {.name = "blkring", .engine = &engine_blkring},
    {.name = "sync", .engine = &engine_sync},
    {.name = "io_uring", .engine = &engine_blkring, .note = RING_NOTE},
    {.name = "libaio", .engine = &engine_blkring, .note = RING_NOTE},
    {.name = "posixaio", .engine = &engine_blkring, .note = RING_NOTE},
    {.name = "psync", .engine = &engine_sync, .note = SYNC_NOTE},
    {.name = "vsync", .engine = &engine_sync, .note = SYNC_NOTE},
    {.name = "pvsync", .engine = &engine_sync, .note = SYNC_NOTE},
    {.name = "pvsync2", .engine = &engine_sync, .note = SYNC_NOTE},
    {.name = "null",
     .engine = &engine_blkring,
     .note = "runs on a blkring ring over a null device of the job's size (null:irqmode=none), "
             "its filename unused",
     .dev = ENGINE_DEV_NULL},
    {.name = "nbd",
     .engine = &engine_blkring,
     .note = "runs on a blkring ring over the nbd: device of its uri=",
     .dev = ENGINE_DEV_NBD},
    {.name = "rbd",
     .engine = &engine_blkring,
     .note = "runs on a blkring ring over the rbd: device of its pool=, rbdname= and "
             "clientname=",
     .dev = ENGINE_DEV_RBD},
    {.name = NULL},
};

_Static_assert(sizeof(engine_names) / sizeof(engine_names[0]) <= ENGINE_NAMES_MAX,
               "ENGINE_NAMES_MAX too small");

const struct engine_name *engine_find(const char *name)
{
	for (const struct engine_name *e = engine_names; e->name; e++)
		if (!strcmp(name, e->name))
			return e;
	return NULL;
}
