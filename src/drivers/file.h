/* SPDX-License-Identifier: MIT */
/*
 * The file driver's private state, shared by its parts: file.c (specs,
 * opening, limits), file-io.c (bios to SQEs and CQEs back, the fallbacks),
 * file-queue.c (the kernel io_urings: the device's shared one and one per
 * ring) and file-blocking.c (the ioctl fallbacks, run off the I/O path).
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
 * on to the next, for good).  See zero_first_mode() in file-io.c.
 */
enum file_zero_mode {
	ZERO_WRITE_ZEROES, /* fallocate(FALLOC_FL_WRITE_ZEROES) */
	ZERO_RANGE,        /* fallocate(ZERO_RANGE | KEEP_SIZE) */
	ZERO_PUNCH_ALLOC,  /* fallocate(PUNCH_HOLE | KEEP_SIZE), then ZERO_ALLOC */
	ZERO_PUNCH,        /* fallocate(PUNCH_HOLE | KEEP_SIZE) */
	ZERO_IOCTL,        /* ioctl(BLKZEROOUT), blocking */
	ZERO_ALLOC,        /* fallocate(KEEP_SIZE): the second step of ZERO_PUNCH_ALLOC */
};

enum file_queue_kind {
	QUEUE_SHARED, /* the device's: any thread, under sq_lock, reaped by a thread */
	QUEUE_RING,   /* one ring's: its owner only, reaped in the ring's enter and wait */
	QUEUE_POLL,   /* one ring's polled I/O: reaped only by polling */
};

/* One kernel io_uring, with the device's file registered as fixed file 0. */
struct file_queue {
	struct io_uring ring;
	struct file_dev *fd;
	struct blkring_ioc *ioc; /* the ring's, for QUEUE_RING and QUEUE_POLL */
	uint8_t kind;
	bool iopoll;     /* IORING_SETUP_IOPOLL: completions need an enter */
	bool defer;      /* IORING_SETUP_DEFER_TASKRUN: only a waiter inside it is woken */
	pthread_t maker; /* the thread that made it: the only one DEFER_TASKRUN lets in */
	bool has_ring;
	unsigned inflight; /* a ring's: bios in the kernel */
	bool fixed_bufs;   /* the ioc's buffers are registered here */
	uint32_t bufs_gen; /* the ioc registration they came from */
};

/* The device's queue for bios no ring's owner submits (blocking calls,
 * worker pools, bios that waited for a tag): a reaper thread ends them. */
struct file_shared {
	struct file_queue q;
	pthread_mutex_t sq_lock;
	/* Submissions, for the sanitizers: see shared_queue_bio(). */
	_Atomic uint32_t handoff;
	pthread_t reaper;
	bool has_reaper;
};

/* A watch before a sleep that found nothing makes this many sleeps start
 * at once (see ring_queue_spin()). */
#define FILE_SPIN_BACKOFF 16

/* One ring's queues for the device, made on the ring's first I/O to it. */
struct file_ring_queue {
	struct blkring_ioc_queue link;
	struct file_queue q;    /* interrupt-driven: reaped in the ring's enter and wait */
	struct file_queue poll; /* polled I/O, made on the first */
	bool failed;            /* no kernel ring could be had: the shared queue serves */
	bool primary;           /* the ring's first: the owner sleeps in it */
	bool wake_armed;        /* primary: q has a multishot poll on the ring's eventfd */
	bool signals;           /* not primary, DEFER_TASKRUN: q signals the ring's eventfd */
	uint8_t spin_skip;      /* primary: sleeps left that start without watching */
};

/* The thread that runs the blocking ioctls, so no submitter waits on one. */
struct file_blocking {
	struct llist_head bios;
	_Atomic uint32_t state; /* SLEEPER_* (lib/futex.h) */
	_Atomic bool stop;
	pthread_mutex_t start_lock; /* started on first use */
	bool started;
	pthread_t thread;
};

struct file_dev {
	struct blkring_dev *dev;
	int fd;
	bool bdev;           /* a block device, else a regular file */
	bool direct;         /* O_DIRECT */
	bool iopoll;         /* polled I/O through IORING_SETUP_IOPOLL, else busy-polled */
	bool zero_falloc;    /* block device: write zeroes through fallocate, not BLKZEROOUT */
	unsigned depth;      /* kernel ring entries: the tags of one hardware queue */
	unsigned io_workers; /* a ring's io-wq limit for bounded work; 0: the kernel's */
	uint64_t spin_nsec;  /* a ring's owner watches its kernel ring this long before it sleeps */
	/* Block device: BLOCK_URING_CMD_DISCARD works here.  Cleared for good
	 * when the device refuses the command's non-blocking bios. */
	_Atomic bool discard_cmd;
	/* Regular file: the first mode to try for NOUNMAP zeroes. */
	_Atomic uint8_t nounmap_mode;
	struct file_shared shared;
	struct file_blocking blocking;
};

/* file-io.c */
int file_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio);
int file_poll(struct blkring_dev *dev, struct blkring_bio *bio);
/* Ends a bio that holds a tag, and dispatches a bio that was waiting for it. */
void file_end(struct file_dev *fd, struct blkring_bio *bio, int status);
/* A CQE of queue q: ends its bio, or carries it on (the rest of a short
 * transfer, the next zeroing mode, a fallback). */
void file_complete(struct file_queue *q, struct blkring_bio *bio, int res);
/* Fills an SQE of queue q for the bio. */
void file_prep(struct file_queue *q, struct io_uring_sqe *sqe, struct blkring_bio *bio);
bool file_probe_discard_cmd(struct file_queue *q);

/* file-queue.c */
/* io_uring_queue_init() and _exit() for every kernel ring of the driver
 * (see ring_map_lock). */
int file_ring_init(unsigned entries, struct io_uring *ring, unsigned flags);
void file_ring_exit(struct io_uring *ring);
int file_queue_setup(struct file_queue *q, struct file_dev *fd, unsigned kind, bool iopoll);
void file_queue_teardown(struct file_queue *q);
/* Queues the bio on q: submitted at once on the shared queue, at the end of
 * the ring's batch otherwise. */
void file_queue_bio(struct file_queue *q, struct blkring_bio *bio);
/* The queue a bio goes to: its ring's queue for ioc, the shared one for NULL. */
struct file_queue *file_queue_of(struct file_dev *fd, struct blkring_bio *bio,
                                 struct blkring_ioc *ioc);
/* Polled I/O: submits what is queued and ends what completed. */
unsigned file_queue_poll(struct file_queue *q);
int file_shared_init(struct file_dev *fd);
void file_shared_exit(struct file_dev *fd);

/* file-blocking.c */
void file_blocking_init(struct file_blocking *b);
void file_blocking_exit(struct file_blocking *b);
/* Queues a discard or write-zeroes bio for its ioctl; it ends there. */
void file_blocking_queue(struct file_dev *fd, struct blkring_bio *bio);
/* Runs its ioctl and ends it in the calling thread. */
void file_blocking_run(struct file_dev *fd, struct blkring_bio *bio);

#endif
