/* SPDX-License-Identifier: MIT */
/* What tests may ask a null device beyond the ops table. */
#ifndef BLKRING_DRIVERS_NULL_H
#define BLKRING_DRIVERS_NULL_H

#include <stdint.h>

struct blkring_dev;

/* Pages a memory-backed null device holds (4 KiB each). */
uint64_t blkring__null_nr_pages(struct blkring_dev *dev);

#endif
