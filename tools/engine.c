// SPDX-License-Identifier: MIT
/* The engines ioengine= can name; adding one is its file and a line here. */
#include <string.h>

#include "engine.h"

const struct bench_engine *const bench_engines[] = {&engine_blkring, &engine_sync, NULL};

const struct bench_engine *engine_find(const char *name)
{
	for (const struct bench_engine *const *e = bench_engines; *e; e++)
		if (!strcmp(name, (*e)->name))
			return *e;
	return NULL;
}
