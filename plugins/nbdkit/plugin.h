/* SPDX-License-Identifier: MIT */
/*
 * The nbdkit plugin's parts: the served device (device.c), a ring per
 * nbdkit worker thread (ring.c) and the table reload on SIGHUP (reload.c).
 * blkring-plugin.c maps nbdkit's callbacks onto them.  A client of
 * include/blkring.h only.
 */
#ifndef BLKRING_PLUGIN_NBDKIT_H
#define BLKRING_PLUGIN_NBDKIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "blkring.h"

#define PLUG_DEFAULT_DEPTH 64

/* What the parameters asked for, and the device once after_fork opened it. */
struct plug_device {
	struct blkring_spec *spec; /* spec= or table:FILE, paths absolute */
	char *table;               /* the table file SIGHUP reloads, or NULL */
	bool readonly;
	bool sqpoll;
	bool poll;
	unsigned depth;
	struct blkring_dev *dev;
	/* Buffers must be aligned to the logical block (an O_DIRECT file or
	 * leg): misaligned ones go through the thread's bounce buffer. */
	atomic_bool aligned_only;
	uint32_t align;
};

extern struct plug_device plug;

/* device.c */
int plug_config(const char *key, const char *value);
int plug_config_complete(void);
int plug_open_device(void);
void plug_probe_alignment(void);
void plug_close_device(void);
void plug_free_config(void);
int plug_info(struct blkring_dev_info *info);

/* ring.c: every call runs on the calling thread's own ring; 0 or -errno. */
int plug_rings_init(void);
void plug_rings_exit(void);
int plug_read(void *buf, uint32_t count, uint64_t offset);
int plug_write(const void *buf, uint32_t count, uint64_t offset, bool fua);
int plug_flush(void);
int plug_discard(uint32_t count, uint64_t offset);
int plug_write_zeroes(uint32_t count, uint64_t offset, unsigned flags);

/* reload.c */
int plug_reload_start(void);
void plug_reload_stop(void);
int plug_reload(void);

/* What NBD tells the client for a library error. */
int plug_nbd_errno(int err);

#endif
