/* SPDX-License-Identifier: MIT */
/*
 * The file driver's private state, shared by its parts: file.c (specs,
 * opening, limits), file-uring.c (the kernel io_uring that carries every
 * bio) and file-blocking.c (the ioctl fallbacks, run off the I/O path).
 */
#ifndef BLKRING_DRIVERS_FILE_H
#define BLKRING_DRIVERS_FILE_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "block/blkdev.h"
#include "lib/llist.h"

/* Linux 6.17's fallocate mode: zero the range through the device's
 * write-zeroes offload, leaving it allocated and written. */
#ifndef FALLOC_FL_WRITE_ZEROES
#define FALLOC_FL_WRITE_ZEROES 0x80
#endif

/*
 * How a write-zeroes bio is carried out, in the order a regular file tries
 * them for BLKRING_ZERO_NOUNMAP (each answering -EOPNOTSUPP moves the file
 * on to the next, for good).  See zero_first_mode() in file-uring.c.
 */
enum file_zero_mode {
	ZERO_WRITE_ZEROES, /* fallocate(FALLOC_FL_WRITE_ZEROES) */
	ZERO_RANGE,        /* fallocate(ZERO_RANGE | KEEP_SIZE) */
	ZERO_PUNCH_ALLOC,  /* fallocate(PUNCH_HOLE | KEEP_SIZE), then ZERO_ALLOC */
	ZERO_PUNCH,        /* fallocate(PUNCH_HOLE | KEEP_SIZE) */
	ZERO_IOCTL,        /* ioctl(BLKZEROOUT), blocking */
	ZERO_ALLOC,        /* fallocate(KEEP_SIZE): the second step of ZERO_PUNCH_ALLOC */
};

/* One kernel io_uring and the thread that reaps it. */
struct file_queue {
	struct io_uring ring;
	pthread_mutex_t sq_lock;  /* any thread may submit */
	_Atomic uint32_t handoff; /* submissions, for the sanitizers: see queue_bio() */
	pthread_t reaper;
	bool has_ring, has_reaper;
};

/* The thread that runs the blocking ioctls, so no submitter waits on one. */
struct file_blocking {
	struct llist_head bios;
	_Atomic uint32_t state; /* BLOCKING_*: wake it only when it sleeps */
	_Atomic bool stop;
	pthread_mutex_t start_lock; /* started on first use */
	bool started;
	pthread_t thread;
};

struct file_dev {
	struct blkring_dev *dev;
	int fd;
	bool bdev;   /* a block device, else a regular file */
	bool direct; /* O_DIRECT */
	/* Block device: BLOCK_URING_CMD_DISCARD works here.  Cleared for good
	 * when the device refuses the command's non-blocking bios. */
	_Atomic bool discard_cmd;
	bool zero_falloc; /* block device: write zeroes through fallocate, not BLKZEROOUT */
	/* Regular file: the first mode to try for NOUNMAP zeroes. */
	_Atomic uint8_t nounmap_mode;
	struct file_queue queue;
	struct file_blocking blocking;
};

/* file-uring.c */
int file_queue_init(struct file_dev *fd, unsigned depth);
void file_queue_exit(struct file_dev *fd);
int file_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio);
/* Ends a bio that holds a tag, and dispatches a bio that was waiting for it. */
void file_end(struct file_dev *fd, struct blkring_bio *bio, int status);

/* file-blocking.c */
void file_blocking_init(struct file_blocking *b);
void file_blocking_exit(struct file_blocking *b);
/* Queues a discard or write-zeroes bio for its ioctl; it ends there. */
void file_blocking_queue(struct file_dev *fd, struct blkring_bio *bio);

#endif
