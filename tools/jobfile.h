/* SPDX-License-Identifier: MIT */
/*
 * fio job files: ini sections ([global] or a job name), key=value or bare
 * keys, comments from a ';' or '#' anywhere on a line (fio's rule),
 * ${VAR} from the environment in options, and `include FILE` inside a
 * section (options only, nested at most 16 deep).
 */
#ifndef BLKRING_TOOLS_JOBFILE_H
#define BLKRING_TOOLS_JOBFILE_H

/*
 * Called for each section header (key NULL) and each key in a section (val
 * NULL for a bare key), with `where` = "FILE:LINE".  A non-zero return stops
 * the parse and is returned.
 */
typedef int (*jobfile_fn)(void *ctx, const char *section, const char *key, const char *val,
                          const char *where);

/* Parses text already in memory; `name` is the file name for messages. */
int jobfile_parse_text(const char *name, char *text, jobfile_fn fn, void *ctx);
int jobfile_parse(const char *path, jobfile_fn fn, void *ctx);

#endif
