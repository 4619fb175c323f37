/* SPDX-License-Identifier: MIT */
/* A volume's resolved layout, for `blkring table check` and `blkring info`. */
#ifndef BLKRING_TOOLS_TABLE_H
#define BLKRING_TOOLS_TABLE_H

#include <json-c/json.h>
#include <stdio.h>

#include "blkring.h"

/* Each target of the live table (its line, sectors, type, arguments) and
 * below it each leg with the sectors the target uses on it.  0 or -errno. */
int table_show(FILE *f, struct blkring_dev *dev, const char *indent);
/* The same as a JSON array of targets; 0 or -errno. */
int table_json(struct blkring_dev *dev, json_object **out);

#endif
