/* SPDX-License-Identifier: MIT */
/*
 * blkring: the Linux block I/O path (io_uring rings, blk-mq hardware queues,
 * device-mapper stacking) as a userspace library.
 *
 * One public header, liburing's shape: rings with 64-byte SQEs and 16-byte
 * CQEs, prep helpers that fill SQEs, inline fast paths for getting SQEs and
 * reaping CQEs.  Every call returns a negative errno on failure; errno is
 * never used.  docs/API.md documents every call.
 */
#ifndef BLKRING_H
#define BLKRING_H

/* As liburing: sigset_t (blkring_wait_cqes) is POSIX, not ISO C. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 500
#endif
#include <errno.h>
#include <linux/time_types.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

/*
 * The ring heads and tails the application and the ring share: C11 atomics
 * in C, std::atomic in C++ (the same layout for a lock-free 32-bit word, as
 * liburing relies on), so the header and its inline helpers build as
 * either language.
 */
#ifdef __cplusplus
#include <atomic>
#define BLKRING_ATOMIC(type) std::atomic<type>
#define blkring__load(p, order) std::atomic_load_explicit(p, std::memory_order_##order)
#define blkring__store(p, v, order) std::atomic_store_explicit(p, v, std::memory_order_##order)
#else
#include <stdatomic.h>
#define BLKRING_ATOMIC(type) _Atomic type
#define blkring__load(p, order) atomic_load_explicit(p, memory_order_##order)
#define blkring__store(p, v, order) atomic_store_explicit(p, v, memory_order_##order)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports: the library is built with hidden
 * visibility, so calls inside it bind locally and inline freely. */
#define BLKRING_API __attribute__((visibility("default")))

#define BLKRING_VERSION_MAJOR 0
#define BLKRING_VERSION_MINOR 2
#define BLKRING_VERSION_STRING "0.2.0"

/* The real-time signal that null devices with irqmode=signal raise their
 * completions with, on the threads that submit to them: such a thread must
 * not block it, and nothing else in the process may handle it. */
#define BLKRING_IRQ_SIGNAL (SIGRTMIN + 6)

/* ------------------------------------------------------------------ */
/* Ring ABI: the same layout and field names as io_uring's.           */
/* ------------------------------------------------------------------ */

/* Submission queue entry, 64 bytes. */
struct blkring_sqe {
	uint8_t opcode; /* BLKRING_OP_* */
	uint8_t flags;  /* BLKRING_SQE_* */
	uint16_t ioprio;
	int32_t fd; /* index of a registered device */
	union {
		uint64_t off;   /* byte offset on the device */
		uint64_t addr2; /* io_uring's name for the word, for opcodes that take one */
		struct {
			uint32_t cmd_op; /* BLKRING_OP_URING_CMD: what to do */
			uint32_t __pad1;
		};
	};
	uint64_t addr; /* buffer, iovec array, or command offset */
	uint32_t len;  /* bytes, or iovec count */
	union {
		uint32_t rw_flags; /* BLKRING_RWF_* */
		uint32_t fsync_flags;
		uint32_t cmd_flags;     /* command flags (BLKRING_ZERO_*) */
		uint32_t timeout_flags; /* BLKRING_TIMEOUT_* */
		uint32_t cancel_flags;  /* BLKRING_ASYNC_CANCEL_* */
	};
	uint64_t user_data;
	uint16_t buf_index;
	uint16_t personality;
	uint32_t file_index;
	uint64_t addr3; /* command length */
	uint64_t __pad2[1];
};

/* Completion queue entry, 16 bytes. */
struct blkring_cqe {
	uint64_t user_data;
	int32_t res; /* result, or -errno */
	uint32_t flags;
};

/* Opcodes: io_uring's numbers, so a reader of either knows the other. */
enum {
	BLKRING_OP_NOP = 0,
	BLKRING_OP_READV = 1,
	BLKRING_OP_WRITEV = 2,
	BLKRING_OP_FSYNC = 3,
	BLKRING_OP_READ_FIXED = 4, /* a registered buffer: sqe->buf_index */
	BLKRING_OP_WRITE_FIXED = 5,
	BLKRING_OP_TIMEOUT = 11,        /* addr: a struct __kernel_timespec; off: a count */
	BLKRING_OP_TIMEOUT_REMOVE = 12, /* addr: the timeout's user_data */
	BLKRING_OP_ASYNC_CANCEL = 14,   /* addr: the user_data to cancel */
	BLKRING_OP_LINK_TIMEOUT = 15,   /* bounds the request it is linked after */
	BLKRING_OP_READ = 22,
	BLKRING_OP_WRITE = 23,
	BLKRING_OP_URING_CMD = 46, /* a command the device defines: sqe->cmd_op */
	BLKRING_OP_LAST
};

/* SQE flags (io_uring's bits and values). */
#define BLKRING_SQE_FIXED_FILE (1U << 0)  /* sqe->fd is a registered index: always so */
#define BLKRING_SQE_IO_DRAIN (1U << 1)    /* issue after everything before it completed */
#define BLKRING_SQE_IO_LINK (1U << 2)     /* next SQE starts when this one succeeded */
#define BLKRING_SQE_IO_HARDLINK (1U << 3) /* next SQE starts when this one ended, however */
#define BLKRING_SQE_ASYNC (1U << 4)       /* issue from the worker pool */
/* No CQE when it succeeds; once used on a ring, IO_DRAIN there is -EOPNOTSUPP. */
#define BLKRING_SQE_CQE_SKIP_SUCCESS (1U << 6)

/* Per-I/O flags in sqe->rw_flags: Linux's RWF_* names and values. */
#define BLKRING_RWF_HIPRI (1U << 0)  /* polled: only on an IOPOLL ring (-EINVAL elsewhere) */
#define BLKRING_RWF_DSYNC (1U << 1)  /* a write durable on completion (FUA) */
#define BLKRING_RWF_SYNC (1U << 2)   /* the same: a block device has no metadata apart */
#define BLKRING_RWF_NOWAIT (1U << 3) /* fail with -EAGAIN rather than wait */

/* sqe->timeout_flags (io_uring's values). */
#define BLKRING_TIMEOUT_ABS (1U << 0)      /* an absolute time, not a length */
#define BLKRING_TIMEOUT_UPDATE (1U << 1)   /* TIMEOUT_REMOVE: re-arm it with sqe->addr2 */
#define BLKRING_TIMEOUT_BOOTTIME (1U << 2) /* CLOCK_BOOTTIME (default CLOCK_MONOTONIC) */
#define BLKRING_TIMEOUT_REALTIME (1U << 3) /* CLOCK_REALTIME */

/* sqe->cancel_flags (io_uring's values). */
#define BLKRING_ASYNC_CANCEL_ALL (1U << 0) /* every match, not the first: res is the count */
#define BLKRING_ASYNC_CANCEL_FD (1U << 1)  /* match sqe->fd's device, not user_data */
#define BLKRING_ASYNC_CANCEL_ANY (1U << 2) /* match any request */

/* sqe->fsync_flags (io_uring's IORING_FSYNC_DATASYNC): a device flush either way. */
#define BLKRING_FSYNC_DATASYNC (1U << 0)

/*
 * Block device commands for BLKRING_OP_URING_CMD: addr = byte offset,
 * addr3 = byte length, every other field zero but cmd_flags.
 * BLKRING_CMD_DISCARD is Linux's BLOCK_URING_CMD_DISCARD, _IO(0x12, 0).
 * Linux has no write-zeroes command (the series' patches were dropped), and
 * numbers its next block commands _IO(0x12, 1), (0x12, 2)...; ours takes an
 * ioctl type byte of its own, 0xb7, so no future Linux value can equal it.
 */
#define BLKRING_CMD_DISCARD ((0x12U << 8) | 0)
#define BLKRING_CMD_WRITE_ZEROES ((0xb7U << 8) | 0)

/* cmd_flags of BLKRING_CMD_WRITE_ZEROES. */
#define BLKRING_ZERO_NOUNMAP (1U << 0)    /* the zeroed range stays allocated */
#define BLKRING_ZERO_NOFALLBACK (1U << 1) /* -EOPNOTSUPP rather than writing zero pages */

/* Setup flags (io_uring's bits where io_uring has them). */
#define BLKRING_SETUP_IOPOLL (1U << 0)
/* A thread of the ring's own consumes SQEs, issues them, runs the ring's
 * task work and posts CQEs; sleeps after sq_thread_idle ms without work,
 * with BLKRING_SQ_NEED_WAKEUP set, until blkring_submit wakes it. */
#define BLKRING_SETUP_SQPOLL (1U << 1)
#define BLKRING_SETUP_SQ_AFF (1U << 2) /* the SQ thread runs on sq_thread_cpu */
#define BLKRING_SETUP_CQSIZE (1U << 3)
#define BLKRING_SETUP_SINGLE_ISSUER (1U << 12) /* always in force; accepted */
/* Task work runs only when the owner waits for CQEs, and a sleeping waiter
 * is woken once enough completions for its wait arrived.  Not with SQPOLL. */
#define BLKRING_SETUP_DEFER_TASKRUN (1U << 13)
/*
 * blkring's own flags take bits from the top down: io_uring numbers its
 * setup flags from bit 0 up (none has reached bit 20), so the two sets stay
 * apart.
 *
 * TW_PRIO: Linux 5.17's priority task-work list.  Completions handed to the
 * owner from other threads run before other task work (issues turned into
 * task work), and the CQEs they post are committed (an SQPOLL ring's
 * waiting application woken) before that other work runs.  FIFO within
 * each kind.
 * TW_ISSUE: a benchmark knob (the seed's way to make task work heavy): every
 * issue is queued as task work instead of being done inline.
 */
#define BLKRING_SETUP_TW_PRIO (1U << 31)
#define BLKRING_SETUP_TW_ISSUE (1U << 30)

/* Flags the ring publishes in *sq.kflags (io_uring's bits). */
#define BLKRING_SQ_NEED_WAKEUP (1U << 0)
#define BLKRING_SQ_CQ_OVERFLOW (1U << 1)

/* Flags the application sets in *cq.kflags (io_uring's bits). */
#define BLKRING_CQ_EVENTFD_DISABLED (1U << 0) /* the registered eventfd is not signalled */

struct blkring_params {
	uint32_t sq_entries;     /* out: SQ size (entries rounded up to a power of 2) */
	uint32_t cq_entries;     /* in with BLKRING_SETUP_CQSIZE, out always */
	uint32_t flags;          /* BLKRING_SETUP_* */
	uint32_t sq_thread_cpu;  /* with BLKRING_SETUP_SQ_AFF */
	uint32_t sq_thread_idle; /* milliseconds, with BLKRING_SETUP_SQPOLL; 0: 1000 */
	uint32_t wq_max_workers; /* worker pool bound; 0 picks the default */
	uint32_t resv[10];
};

struct blkring__ctx;

struct blkring_sq {
	BLKRING_ATOMIC(uint32_t) *khead;  /* consumer: the ring's issue side */
	BLKRING_ATOMIC(uint32_t) *ktail;  /* producer: the application */
	BLKRING_ATOMIC(uint32_t) *kflags; /* BLKRING_SQ_* */
	uint32_t ring_mask;
	uint32_t ring_entries;
	struct blkring_sqe *sqes;
	uint32_t sqe_tail; /* next SQE handed out, not yet published */
};

struct blkring_cq {
	BLKRING_ATOMIC(uint32_t) *khead;     /* consumer: the application */
	BLKRING_ATOMIC(uint32_t) *ktail;     /* producer: the ring */
	BLKRING_ATOMIC(uint32_t) *koverflow; /* completions that went to the overflow list */
	BLKRING_ATOMIC(uint32_t) *kflags;    /* BLKRING_CQ_*, set by the application (io_uring's) */
	uint32_t ring_mask;
	uint32_t ring_entries;
	struct blkring_cqe *cqes;
};

struct blkring {
	struct blkring_sq sq;
	struct blkring_cq cq;
	uint32_t flags;
	uint32_t resv[3]; /* for later fields, as io_uring's struct keeps room */
	struct blkring__ctx *ctx;
};

/* ------------------------------------------------------------------ */
/* Ring setup and teardown.                                           */
/* ------------------------------------------------------------------ */

/* The most SQEs a ring takes (io_uring's IORING_MAX_ENTRIES); the CQ takes
 * twice as many. */
#define BLKRING_MAX_ENTRIES 32768U

/* A ring of `entries` (1..BLKRING_MAX_ENTRIES, rounded up to a power of
 * two) SQEs owned by the calling thread; -EINVAL for bad sizes or flags (SQPOLL with
 * DEFER_TASKRUN, SQ_AFF without SQPOLL).  With SQPOLL the calling thread
 * stays the application's thread: it submits, waits and registers; the SQ
 * thread does the rest (docs/API.md).  With BLKRING_SETUP_IOPOLL reads and
 * writes are polled: they go to the devices' poll queues (-EOPNOTSUPP in the
 * CQE where a device or volume has none) and complete only while the owner
 * looks for completions (peek, wait, exit; with SQPOLL the SQ thread polls),
 * which polls instead of sleeping while any is in flight; other opcodes
 * complete as on any ring. */
BLKRING_API int blkring_queue_init(unsigned entries, struct blkring *ring, unsigned flags);
BLKRING_API int blkring_queue_init_params(unsigned entries, struct blkring *ring,
                                          struct blkring_params *p);
/* Cancels what has not started (-ECANCELED), waits for what has, frees the ring. */
BLKRING_API void blkring_queue_exit(struct blkring *ring);

/* ------------------------------------------------------------------ */
/* Devices.                                                           */
/* ------------------------------------------------------------------ */

struct blkring_dev;

/* Directions for per-device counters. */
enum {
	BLKRING_DIR_READ,
	BLKRING_DIR_WRITE,
	BLKRING_DIR_DISCARD,
	BLKRING_DIR_WRITE_ZEROES,
	BLKRING_DIR_FLUSH,
	BLKRING_DIR_NR
};

/* Device features. */
#define BLKRING_FEAT_FLUSH (1U << 0)
#define BLKRING_FEAT_FUA (1U << 1)
#define BLKRING_FEAT_DISCARD (1U << 2)
#define BLKRING_FEAT_WRITE_ZEROES (1U << 3)
#define BLKRING_FEAT_POLL (1U << 4)
/* Polled I/O polls the kernel (IORING_SETUP_IOPOLL) rather than a queue
 * the device completes into: files on devices with kernel poll queues. */
#define BLKRING_FEAT_KERNEL_POLL (1U << 5)
#define BLKRING_FEAT_MULTI_CONN (1U << 6) /* its queues share one consistent view (NBD) */

struct blkring_dev_info {
	const char *type; /* driver name: "null", ... */
	const char *spec; /* canonical spec; valid while the device is open */
	uint64_t size;    /* bytes */
	uint32_t logical_block_size;
	uint32_t physical_block_size;
	uint32_t max_sectors; /* per I/O, 512-byte sectors */
	uint32_t max_discard_sectors;
	uint32_t discard_granularity; /* bytes */
	uint32_t max_write_zeroes_sectors;
	uint32_t features;     /* BLKRING_FEAT_* */
	uint32_t nr_hw_queues; /* default map */
	uint32_t nr_poll_queues;
	uint32_t queue_depth; /* tags per hardware queue */
	int read_only;
	uint64_t ios[BLKRING_DIR_NR];
	uint64_t bytes[BLKRING_DIR_NR];
	uint64_t errors[BLKRING_DIR_NR];
};

BLKRING_API int blkring_dev_open(const char *spec, struct blkring_dev **devp);
BLKRING_API int blkring_dev_close(struct blkring_dev *dev);

/*
 * Device specs as the library reads them (docs/API.md, "Device specs"):
 * TYPE:[ARG,]KEY=VALUE,..., a bare path (the file driver's) or an NBD URI
 * (the nbd driver's).  Parse one, look at or change its keys, and open it
 * or format it back to text, so that no application edits spec text.
 * blkring_spec_parse() knows the driver: an unknown TYPE is -ENODEV.
 */
struct blkring_spec;
BLKRING_API int blkring_spec_parse(const char *text, struct blkring_spec **specp);
BLKRING_API void blkring_spec_free(struct blkring_spec *spec);
/* "null", "file", "table"... and the first item (a path or a URI), or NULL. */
BLKRING_API const char *blkring_spec_type(const struct blkring_spec *spec);
BLKRING_API const char *blkring_spec_arg(const struct blkring_spec *spec);
/* The value of KEY, or NULL. */
BLKRING_API const char *blkring_spec_get(const struct blkring_spec *spec, const char *key);
/* Sets the first item (a path or a URI; -EINVAL for a type without one). */
BLKRING_API int blkring_spec_set_arg(struct blkring_spec *spec, const char *arg);
/* Sets KEY to value (replacing it where given), or removes it (NULL). */
BLKRING_API int blkring_spec_set(struct blkring_spec *spec, const char *key, const char *value);
/* As snprintf: the length of the whole text, escapes included. */
BLKRING_API int blkring_spec_format(const struct blkring_spec *spec, char *buf, size_t size);
BLKRING_API int blkring_dev_open_spec(const struct blkring_spec *spec, struct blkring_dev **devp);
BLKRING_API int blkring_dev_info(struct blkring_dev *dev, struct blkring_dev_info *info);
/* Linux's minimum_io_size and optimal_io_size (BLKIOMIN, BLKIOOPT), bytes:
 * the smallest I/O without a penalty (at least the physical block: a
 * stripe's chunk) and the best size for large I/O (a stripe's width, an
 * RBD object; 0 when the device has none).  A call of its own: struct
 * blkring_dev_info keeps its size. */
BLKRING_API int blkring_dev_io_hints(struct blkring_dev *dev, uint32_t *io_min, uint32_t *io_opt);

/* Blocking calls, for code that does not want a ring. */
BLKRING_API ssize_t blkring_dev_pread(struct blkring_dev *dev, void *buf, size_t nbytes,
                                      uint64_t offset);
BLKRING_API ssize_t blkring_dev_pwrite(struct blkring_dev *dev, const void *buf, size_t nbytes,
                                       uint64_t offset);
BLKRING_API int blkring_dev_flush(struct blkring_dev *dev);
BLKRING_API int blkring_dev_discard(struct blkring_dev *dev, uint64_t offset, uint64_t nbytes);
BLKRING_API int blkring_dev_write_zeroes(struct blkring_dev *dev, uint64_t offset, uint64_t nbytes,
                                         unsigned flags);

/* Devices are always registered: sqe->fd is an index into this table (NULL
 * entries are empty slots; a bad index completes with -EBADF).  -EBUSY when a
 * table is registered already, or on unregister with requests in flight. */
BLKRING_API int blkring_register_devices(struct blkring *ring, struct blkring_dev *const *devs,
                                         unsigned n);
BLKRING_API int blkring_unregister_devices(struct blkring *ring);
/* liburing's register_files_sparse and _update: a table of n empty slots;
 * slots off..off+n-1 set to devs[] (NULL empties one) while other slots
 * have I/O in flight; returns how many changed. */
BLKRING_API int blkring_register_devices_sparse(struct blkring *ring, unsigned n);
BLKRING_API int blkring_register_devices_update(struct blkring *ring, unsigned off,
                                                struct blkring_dev *const *devs, unsigned n);

/*
 * Buffers for BLKRING_OP_READ_FIXED / WRITE_FIXED, as io_uring's: at most
 * 16384, each 1 byte to 1 GiB; -EBUSY when the ring has some already.
 * Devices that can (files: the kernel's own registered buffers) spare the
 * per-I/O mapping; others treat fixed I/O as plain reads and writes.
 * Unregistering needs the ring idle (-EBUSY otherwise).
 */
BLKRING_API int blkring_register_buffers(struct blkring *ring, const struct iovec *iovecs,
                                         unsigned n);
BLKRING_API int blkring_unregister_buffers(struct blkring *ring);

/* Text of the last error on this thread that has one (spec, table, option). */
BLKRING_API const char *blkring_last_error(void);

/* ------------------------------------------------------------------ */
/* Volumes: device-mapper tables (spec `table:PATH[,ro=1][,poll=M]`). */
/* ------------------------------------------------------------------ */

/*
 * Builds a volume from dmsetup table text (`start length target args...`
 * per line, 512-byte sectors; targets linear, striped, zero, error,
 * flakey).  Device specs in the text that are relative paths are taken
 * relative to base_dir (NULL: the working directory).  The volume is an
 * ordinary device: register it on rings, close it with blkring_dev_close().
 * Errors name the line (`line N`), the target and the argument.
 */
BLKRING_API int blkring_vol_create(const char *table_text, const char *base_dir,
                                   struct blkring_dev **devp);
/* Builds a table into the volume's inactive slot (replacing one already
 * there); the live table keeps serving I/O until blkring_vol_resume(). */
BLKRING_API int blkring_vol_load(struct blkring_dev *dev, const char *table_text,
                                 const char *base_dir);
/* Holds new I/O (queued inside the volume and replayed on resume; I/O
 * with BLKRING_RWF_NOWAIT fails with -EAGAIN) and waits until the I/O in
 * flight has ended.  A ring's submit never blocks on a suspended volume.
 * -EINVAL when already suspended. */
BLKRING_API int blkring_vol_suspend(struct blkring_dev *dev);
/* Suspends first if needed, makes the inactive table live (if one was
 * loaded), and replays the held I/O in arrival order. */
BLKRING_API int blkring_vol_resume(struct blkring_dev *dev);

/* One device under a target, and the sectors the target uses on it. */
struct blkring_vol_leg {
	const char *spec; /* the leg's canonical spec */
	uint64_t start;
	uint64_t len;
};

/* One target of a volume's live table. */
struct blkring_vol_target {
	unsigned line;    /* in the table text */
	const char *type; /* "linear", "striped", ... */
	uint64_t start;   /* volume sectors */
	uint64_t len;
	const char *params; /* the line's arguments, legs as canonical specs */
	unsigned nr_legs;   /* linear and flakey 1, striped #stripes, else 0 */
	const struct blkring_vol_leg *legs;
};

/* Calls fn for every target of the live table, in order; a non-zero
 * return from fn stops the walk and is returned.  Pointers in *t are
 * valid during the call.  -EINVAL when dev is not a volume. */
typedef int (*blkring_vol_target_fn)(const struct blkring_vol_target *t, void *arg);
BLKRING_API int blkring_vol_describe(struct blkring_dev *dev, blkring_vol_target_fn fn, void *arg);

/* ------------------------------------------------------------------ */
/* Submission and completion.                                         */
/* ------------------------------------------------------------------ */

/* Consumes the SQEs taken since the last call; returns how many.  Owner
 * thread only (else -EEXIST); -EBUSY while overflowed CQEs have no room.
 * SQPOLL: publishes them for the SQ thread, waking it if it sleeps. */
BLKRING_API int blkring_submit(struct blkring *ring);
/* Submits, then waits for wait_nr CQEs; returns what submit returned. */
BLKRING_API int blkring_submit_and_wait(struct blkring *ring, unsigned wait_nr);
/* liburing's: ts is relative (NULL: no limit); -ETIME when it passes with
 * fewer than wait_nr ready, -EINTR when a signal handler ran while the owner
 * slept.  sigmask (NULL: the thread's own) is the signal mask while it
 * sleeps, set atomically with the sleep, as pselect's. */
BLKRING_API int blkring_wait_cqes(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                                  unsigned wait_nr, struct __kernel_timespec *ts,
                                  sigset_t *sigmask);
BLKRING_API int blkring_wait_cqe_timeout(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                                         struct __kernel_timespec *ts);
/* Submits, then waits as blkring_wait_cqes(); returns how many SQEs it
 * submitted, or the wait's error (-ETIME, -EINTR). */
BLKRING_API int blkring_submit_and_wait_timeout(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                                                unsigned wait_nr, struct __kernel_timespec *ts,
                                                sigset_t *sigmask);
/* Up to count ready CQEs, oldest first, not consumed (blkring_cq_advance). */
BLKRING_API unsigned blkring_peek_batch_cqe(struct blkring *ring, struct blkring_cqe **cqes,
                                            unsigned count);

/* Slow path of peek/wait: runs task work, flushes overflow, may sleep. */
BLKRING_API int blkring__get_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                                 unsigned wait_nr, const struct timespec *ts);

/*
 * What a ring did since setup.  Any thread may read them; the numbers are
 * each exact but not a snapshot taken at one instant.
 */
struct blkring_ring_stats {
	uint64_t issued;     /* requests started (inline or on the worker pool) */
	uint64_t punted;     /* non-blocking issues that answered -EAGAIN and went to a worker */
	uint64_t async;      /* requests run by the worker pool: ASYNC plus punted */
	uint64_t tw_run;     /* completions from other threads run as task work by the owner */
	uint64_t tw_wakes;   /* times a completing thread woke the sleeping owner */
	uint64_t sleeps;     /* times the owner slept waiting for completions */
	uint64_t overflowed; /* CQEs that went to the overflow list (as *cq.koverflow) */
	uint64_t workers;    /* worker threads started */
	/* CQEs of completions run as task work, and the time they waited in
	 * all, from the push of their task work to the CQ tail store that
	 * published them (mean: tw_wait_ns / tw_wait_nr). */
	uint64_t tw_wait_nr;
	uint64_t tw_wait_ns;
	uint64_t resv[6];
};

BLKRING_API int blkring_ring_stats(struct blkring *ring, struct blkring_ring_stats *stats);

/*
 * An eventfd signalled when completions come (io_uring's): for an event
 * loop that sits in epoll and then reaps the ring.  _async: only for
 * completions that end on other threads than the ring's owner.  -EBUSY
 * when one is registered; unregistering none is -ENXIO.
 */
BLKRING_API int blkring_register_eventfd(struct blkring *ring, int fd);
BLKRING_API int blkring_register_eventfd_async(struct blkring *ring, int fd);
BLKRING_API int blkring_unregister_eventfd(struct blkring *ring);

static inline int blkring_cq_eventfd_enabled(const struct blkring *ring)
{
	return !(blkring__load(ring->cq.kflags, relaxed) & BLKRING_CQ_EVENTFD_DISABLED);
}

/* As liburing's: 0, or -EOPNOTSUPP for a ring without a CQ flags word. */
static inline int blkring_cq_eventfd_toggle(struct blkring *ring, int enabled)
{
	uint32_t flags;

	if (!ring->cq.kflags)
		return -EOPNOTSUPP;
	flags = blkring__load(ring->cq.kflags, relaxed);
	if (!!enabled == blkring_cq_eventfd_enabled(ring))
		return 0;
	flags =
	    enabled ? flags & ~BLKRING_CQ_EVENTFD_DISABLED : flags | BLKRING_CQ_EVENTFD_DISABLED;
	blkring__store(ring->cq.kflags, flags, relaxed);
	return 0;
}

/* Cancel from the application's thread, waiting up to timeout (-1 seconds:
 * forever) for what was running to end (liburing's register_sync_cancel). */
struct blkring_sync_cancel_reg {
	uint64_t addr; /* user_data */
	int32_t fd;    /* with BLKRING_ASYNC_CANCEL_FD */
	uint32_t flags;
	struct __kernel_timespec timeout;
	uint8_t opcode;
	uint8_t pad[7];
	uint64_t pad2[3];
};
BLKRING_API int blkring_register_sync_cancel(struct blkring *ring,
                                             struct blkring_sync_cancel_reg *reg);

/* Which opcodes exist (io_uring's probe): ops[op].flags has
 * BLKRING_OP_SUPPORTED for each; free it with blkring_free_probe(). */
#define BLKRING_OP_SUPPORTED (1U << 0)
struct blkring_probe_op {
	uint8_t op;
	uint8_t resv;
	uint16_t flags; /* BLKRING_OP_SUPPORTED */
	uint32_t resv2;
};
struct blkring_probe {
	uint8_t last_op; /* the highest opcode this library knows */
	uint8_t ops_len; /* entries in ops[] */
	uint16_t resv;
	uint32_t resv2[3];
	struct blkring_probe_op ops[];
};
BLKRING_API struct blkring_probe *blkring_get_probe_ring(struct blkring *ring);
BLKRING_API struct blkring_probe *blkring_get_probe(void);
BLKRING_API void blkring_free_probe(struct blkring_probe *probe);
static inline int blkring_opcode_supported(const struct blkring_probe *p, int op)
{
	if (op < 0 || op > p->last_op)
		return 0;
	return (p->ops[op].flags & BLKRING_OP_SUPPORTED) != 0;
}

static inline struct blkring_sqe *blkring_get_sqe(struct blkring *ring)
{
	struct blkring_sq *sq = &ring->sq;
	uint32_t head = blkring__load(sq->khead, acquire);

	if (sq->sqe_tail - head >= sq->ring_entries)
		return NULL;
	return &sq->sqes[sq->sqe_tail++ & sq->ring_mask];
}

static inline unsigned blkring_sq_ready(const struct blkring *ring)
{
	return ring->sq.sqe_tail - blkring__load(ring->sq.khead, acquire);
}

static inline unsigned blkring_sq_space_left(const struct blkring *ring)
{
	return ring->sq.ring_entries - blkring_sq_ready(ring);
}

static inline unsigned blkring_cq_ready(const struct blkring *ring)
{
	return blkring__load(ring->cq.ktail, acquire) - blkring__load(ring->cq.khead, relaxed);
}

static inline void blkring_cq_advance(struct blkring *ring, unsigned nr)
{
	if (nr) {
		uint32_t head = blkring__load(ring->cq.khead, relaxed);
		blkring__store(ring->cq.khead, head + nr, release);
	}
}

static inline void blkring_cqe_seen(struct blkring *ring, struct blkring_cqe *cqe)
{
	if (cqe)
		blkring_cq_advance(ring, 1);
}

/* The oldest CQE not yet seen, or NULL (liburing's __io_uring_peek_cqe). */
static inline struct blkring_cqe *blkring__cq_first(struct blkring *ring)
{
	struct blkring_cq *cq = &ring->cq;
	uint32_t head = blkring__load(cq->khead, relaxed);

	if (blkring__load(cq->ktail, acquire) == head)
		return NULL;
	return &cq->cqes[head & cq->ring_mask];
}

static inline int blkring_peek_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr)
{
	*cqe_ptr = blkring__cq_first(ring);
	return *cqe_ptr ? 0 : blkring__get_cqe(ring, cqe_ptr, 0, NULL);
}

static inline int blkring_wait_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr)
{
	*cqe_ptr = blkring__cq_first(ring);
	return *cqe_ptr ? 0 : blkring__get_cqe(ring, cqe_ptr, 1, NULL);
}

/* Waits until wait_nr CQEs are ready; *cqe_ptr is the oldest. */
static inline int blkring_wait_cqe_nr(struct blkring *ring, struct blkring_cqe **cqe_ptr,
                                      unsigned wait_nr)
{
	return blkring__get_cqe(ring, cqe_ptr, wait_nr, NULL);
}

/* Completions wait on the overflow list for room in the CQ. */
static inline int blkring_cq_has_overflow(const struct blkring *ring)
{
	return (blkring__load(ring->sq.kflags, relaxed) & BLKRING_SQ_CQ_OVERFLOW) != 0;
}

#define blkring_for_each_cqe(ring, head, cqe)                       \
	for (head = blkring__load((ring)->cq.khead, relaxed);       \
	     head != blkring__load((ring)->cq.ktail, acquire) &&    \
	     (cqe = &(ring)->cq.cqes[head & (ring)->cq.ring_mask]); \
	     head++)

static inline void blkring_sqe_set_data(struct blkring_sqe *sqe, void *data)
{
	sqe->user_data = (uint64_t)(uintptr_t)data;
}

static inline void blkring_sqe_set_data64(struct blkring_sqe *sqe, uint64_t data)
{
	sqe->user_data = data;
}

static inline void *blkring_cqe_get_data(const struct blkring_cqe *cqe)
{
	return (void *)(uintptr_t)cqe->user_data;
}

static inline uint64_t blkring_cqe_get_data64(const struct blkring_cqe *cqe)
{
	return cqe->user_data;
}

static inline void blkring_sqe_set_flags(struct blkring_sqe *sqe, unsigned flags)
{
	sqe->flags = (uint8_t)flags;
}

/* ------------------------------------------------------------------ */
/* Prep helpers: `dev` is a registered device index.                  */
/* ------------------------------------------------------------------ */

static inline void blkring_prep_rw(int op, struct blkring_sqe *sqe, int dev, const void *addr,
                                   unsigned len, uint64_t offset)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = (uint8_t)op;
	sqe->fd = dev;
	sqe->off = offset;
	sqe->addr = (uint64_t)(uintptr_t)addr;
	sqe->len = len;
}

static inline void blkring_prep_nop(struct blkring_sqe *sqe)
{
	blkring_prep_rw(BLKRING_OP_NOP, sqe, -1, NULL, 0, 0);
}

static inline void blkring_prep_read(struct blkring_sqe *sqe, int dev, void *buf, unsigned nbytes,
                                     uint64_t offset)
{
	blkring_prep_rw(BLKRING_OP_READ, sqe, dev, buf, nbytes, offset);
}

static inline void blkring_prep_write(struct blkring_sqe *sqe, int dev, const void *buf,
                                      unsigned nbytes, uint64_t offset)
{
	blkring_prep_rw(BLKRING_OP_WRITE, sqe, dev, buf, nbytes, offset);
}

/* buf lies within registered buffer buf_index (blkring_register_buffers()). */
static inline void blkring_prep_read_fixed(struct blkring_sqe *sqe, int dev, void *buf,
                                           unsigned nbytes, uint64_t offset, int buf_index)
{
	blkring_prep_rw(BLKRING_OP_READ_FIXED, sqe, dev, buf, nbytes, offset);
	sqe->buf_index = (uint16_t)buf_index;
}

static inline void blkring_prep_write_fixed(struct blkring_sqe *sqe, int dev, const void *buf,
                                            unsigned nbytes, uint64_t offset, int buf_index)
{
	blkring_prep_rw(BLKRING_OP_WRITE_FIXED, sqe, dev, buf, nbytes, offset);
	sqe->buf_index = (uint16_t)buf_index;
}

static inline void blkring_prep_readv(struct blkring_sqe *sqe, int dev, const struct iovec *iovecs,
                                      unsigned nr_vecs, uint64_t offset)
{
	blkring_prep_rw(BLKRING_OP_READV, sqe, dev, iovecs, nr_vecs, offset);
}

static inline void blkring_prep_writev(struct blkring_sqe *sqe, int dev, const struct iovec *iovecs,
                                       unsigned nr_vecs, uint64_t offset)
{
	blkring_prep_rw(BLKRING_OP_WRITEV, sqe, dev, iovecs, nr_vecs, offset);
}

/* A device flush (REQ_PREFLUSH): everything completed before is durable. */
static inline void blkring_prep_fsync(struct blkring_sqe *sqe, int dev, unsigned fsync_flags)
{
	blkring_prep_rw(BLKRING_OP_FSYNC, sqe, dev, NULL, 0, 0);
	sqe->fsync_flags = fsync_flags;
}

/* liburing's: completes -ETIME when ts passes, 0 once count other CQEs
 * came first (0: no count); ts is read at submit. */
static inline void blkring_prep_timeout(struct blkring_sqe *sqe, struct __kernel_timespec *ts,
                                        unsigned count, unsigned flags)
{
	blkring_prep_rw(BLKRING_OP_TIMEOUT, sqe, -1, ts, 1, count);
	sqe->timeout_flags = flags;
}

static inline void blkring_prep_timeout_remove(struct blkring_sqe *sqe, uint64_t user_data,
                                               unsigned flags)
{
	blkring_prep_rw(BLKRING_OP_TIMEOUT_REMOVE, sqe, -1, NULL, 0, 0);
	sqe->addr = user_data;
	sqe->timeout_flags = flags;
}

static inline void blkring_prep_timeout_update(struct blkring_sqe *sqe,
                                               struct __kernel_timespec *ts, uint64_t user_data,
                                               unsigned flags)
{
	blkring_prep_rw(BLKRING_OP_TIMEOUT_REMOVE, sqe, -1, NULL, 0, (uintptr_t)ts);
	sqe->addr = user_data;
	sqe->timeout_flags = flags | BLKRING_TIMEOUT_UPDATE;
}

/* Cancels the request with user_data (0, -ENOENT, -EALREADY: running). */
static inline void blkring_prep_cancel64(struct blkring_sqe *sqe, uint64_t user_data, int flags)
{
	blkring_prep_rw(BLKRING_OP_ASYNC_CANCEL, sqe, -1, NULL, 0, 0);
	sqe->addr = user_data;
	sqe->cancel_flags = (uint32_t)flags;
}

static inline void blkring_prep_cancel(struct blkring_sqe *sqe, void *user_data, int flags)
{
	blkring_prep_cancel64(sqe, (uint64_t)(uintptr_t)user_data, flags);
}

static inline void blkring_prep_cancel_fd(struct blkring_sqe *sqe, int dev, unsigned flags)
{
	blkring_prep_rw(BLKRING_OP_ASYNC_CANCEL, sqe, dev, NULL, 0, 0);
	sqe->cancel_flags = flags | BLKRING_ASYNC_CANCEL_FD;
}

/* Linked after a request (IO_LINK on it): cancels it when ts passes first. */
static inline void blkring_prep_link_timeout(struct blkring_sqe *sqe, struct __kernel_timespec *ts,
                                             unsigned flags)
{
	blkring_prep_rw(BLKRING_OP_LINK_TIMEOUT, sqe, -1, ts, 1, 0);
	sqe->timeout_flags = flags;
}

static inline void blkring_prep_cmd_discard(struct blkring_sqe *sqe, int dev, uint64_t offset,
                                            uint64_t nbytes)
{
	blkring_prep_rw(BLKRING_OP_URING_CMD, sqe, dev, NULL, 0, 0);
	sqe->cmd_op = BLKRING_CMD_DISCARD;
	sqe->addr = offset;
	sqe->addr3 = nbytes;
}

static inline void blkring_prep_cmd_write_zeroes(struct blkring_sqe *sqe, int dev, uint64_t offset,
                                                 uint64_t nbytes, unsigned flags)
{
	blkring_prep_rw(BLKRING_OP_URING_CMD, sqe, dev, NULL, 0, 0);
	sqe->cmd_op = BLKRING_CMD_WRITE_ZEROES;
	sqe->addr = offset;
	sqe->addr3 = nbytes;
	sqe->cmd_flags = flags;
}

#ifdef __cplusplus
}
#endif

#endif /* BLKRING_H */
