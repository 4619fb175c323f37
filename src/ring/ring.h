/* SPDX-License-Identifier: MIT */
/*
 * The ring's private state (io_uring's role): the shared SQ/CQ memory, the
 * owner thread, the request cache, task work, the overflow list and the
 * worker pool.  Only src/ring/ includes this header.
 *
 * Threads: everything in struct blkring__ctx is owned by the ring's owner
 * thread except what is marked "shared": the task-work list (any thread
 * pushes), the worker pool (its own lock) and the statistics (read by any
 * thread, written by the owner with plain relaxed stores).  With SQPOLL the
 * owner is the ring's SQ thread (sqpoll.c), not the application's thread.
 */
#ifndef BLKRING_RING_RING_H
#define BLKRING_RING_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "blkring.h"
#include "block/blkdev.h"
#include "lib/compiler.h"
#include "lib/llist.h"

#define BLKRING_MAX_CQ_ENTRIES (2 * BLKRING_MAX_ENTRIES)
#define BLKRING_MAX_DEVICES 65536U
#define BLKRING_MAX_WORKERS 256U
#define BLKRING_DEFAULT_WORKERS 4U
#define BLKRING_MAX_IOVECS 1024U /* Linux's UIO_MAXIOV */
#define BLKRING_FAST_IOVECS 8U   /* Linux's UIO_FASTIOV: kept inside the request */

/* The memory both sides of the ring read and write: heads and tails on
 * cache lines of their own so producer and consumer do not share one. */
struct blkring__rings {
	_Atomic uint32_t sq_head __cacheline_aligned;
	_Atomic uint32_t sq_tail __cacheline_aligned;
	_Atomic uint32_t cq_head __cacheline_aligned;
	_Atomic uint32_t cq_tail __cacheline_aligned;
	_Atomic uint32_t sq_flags __cacheline_aligned;
	_Atomic uint32_t cq_overflow;
	_Atomic uint32_t cq_flags; /* what the application sets for the CQ side */
};

/* ---- task work (tw.c) ---- */

/*
 * A lock-free list whose head also says whether its runner sleeps: the
 * value BLKRING__TW_SLEEPING (an empty list with the runner asleep) lets the
 * first producer know it must wake the runner, with no access to the ring
 * after its push.  BLKRING__TW_SLEEPING_LAZY (deferred task running) says
 * the runner sleeps until nr_added reaches wake_at: each producer counts
 * itself before its push and wakes the runner when its count is the one.
 */
struct blkring__tw_list {
	_Atomic uintptr_t head;
	_Atomic uint32_t nr_added; /* DEFER_TASKRUN only: items added since setup */
	_Atomic uint32_t wake_at;  /* DEFER_TASKRUN only: the count a lazy sleeper waits for */
};

#define BLKRING__TW_SLEEPING ((uintptr_t)1)
#define BLKRING__TW_SLEEPING_LAZY ((uintptr_t)3)
/* An owner that sleeps in ppoll() (its ring has driver queues, ioc.c) marks
 * the head with its eventfd's descriptor, so the producer that ends the
 * sleep knows what to signal without touching the ring.  Bit 2 tells it
 * from a node, which is at least 8-byte aligned. */
#define BLKRING__TW_FD_BIT ((uintptr_t)4)
#define BLKRING__TW_SLEEPING_FD(fd) (((uintptr_t)(fd) << 3) | BLKRING__TW_FD_BIT)

/* A sleeping mark rather than a node (or the empty list). */
static inline bool blkring__tw_is_mark(uintptr_t head)
{
	return (head && head <= BLKRING__TW_SLEEPING_LAZY) || (head & BLKRING__TW_FD_BIT);
}

/* ---- worker pool (io-wq.c) ---- */

struct blkring__wq_work {
	struct blkring__wq_work *next;
};

struct blkring__io_wq {
	pthread_mutex_t lock;
	pthread_cond_t more_work;
	struct blkring__wq_work *head, *tail; /* queued, not yet taken */
	void (*run)(struct blkring__wq_work *work);
	pthread_t *threads;
	unsigned nr_queued, nr_workers, nr_idle, max_workers;
	bool exiting;
};

/* ---- requests (req.c) ---- */

/* req->flags */
#define REQ_F_FAIL (1U << 0)     /* prep failed: complete with req->result, issue nothing */
#define REQ_F_NOWAIT (1U << 1)   /* the user asked for -EAGAIN rather than a wait */
#define REQ_F_DRAIN (1U << 2)    /* the unit headed by this request drains */
#define REQ_F_IOV_HEAP (1U << 3) /* req->iov was allocated: more than the inline vectors */
#define REQ_F_SKIP (1U << 4)     /* CQE_SKIP_SUCCESS: a success posts nothing */
#define REQ_F_PUNTED (1U << 5)   /* issued by the worker pool: its bio is the worker's */

struct blkring_req {
	/* What submission and completion touch, first. */
	struct blkring__ctx *ctx;
	struct blkring_req *next; /* free list, defer list, ready list, overflow list */
	struct blkring_req *link; /* the next request of an IO_LINK chain */
	uint64_t user_data;
	int32_t result;       /* for CQE res: bytes expected, a prep error, or the final result */
	uint32_t seq;         /* submission order (chain heads and drains only) */
	uint32_t start_after; /* deferred: may start once this many requests completed */
	uint8_t opcode;
	uint8_t sqe_flags;
	uint16_t flags; /* REQ_F_* */
	/* IOPOLL: set (release) by the polled bio's end, on any thread; the
	 * owner reaps the request only once it reads it set (acquire). */
	_Atomic uint32_t iopoll_done;
	struct blkring_dev *dev;

	/* Read and write parameters, kept for a re-issue from a worker. */
	uint64_t off;
	uint64_t addr;
	uint32_t len; /* bytes */
	uint32_t rw_flags;
	uint32_t nr_vecs;
	uint16_t buf_index; /* READ_FIXED, WRITE_FIXED */

	struct blkring_tw_node tw;
	struct blkring__wq_work work;
	struct iovec *iov;
	struct blkring_bio bio;

	/* Inline space: the command's SQE copy, a short iovec array, or a
	 * timeout's state (timeout.c). */
	union {
		struct blkring_sqe cmd;
		struct iovec fast_iov[BLKRING_FAST_IOVECS];
		struct {
			struct blkring_req *prev, *next; /* ctx->timeouts, while armed */
			uint64_t deadline;               /* CLOCK_MONOTONIC ns */
			uint32_t target;                 /* count: the CQ tail it waits for */
			bool counted, armed;
			struct blkring_req *guarded; /* LINK_TIMEOUT: the request it bounds */
			uint64_t key;                /* TIMEOUT_REMOVE: whose user_data */
			uint64_t update; /* TIMEOUT_REMOVE with UPDATE: the new deadline */
		} tm;
	};
};

struct blkring__req_chunk {
	struct blkring__req_chunk *next;
	unsigned nr;
	struct blkring_req reqs[];
};

/* req->opcode of a request on the free list: cancel's walk skips it. */
#define BLKRING__REQ_FREE 0xff

/* ---- the ring ---- */

struct blkring__stats {
	_Atomic uint64_t issued, punted, async, tw_run, tw_wakes, sleeps, overflowed;
	_Atomic uint64_t tw_wait_nr, tw_wait_ns;
};

struct blkring__ctx {
	/* Owner-only, hot. */
	/* blkring__current() of the owner thread; exit may move it, while
	 * completions on other threads read it. */
	_Atomic(const void *) owner;
	struct blkring__rings *rings;
	struct blkring_sqe *sqes;
	struct blkring_cqe *cqes;
	uint32_t sq_mask, sq_entries, cq_mask, cq_entries;
	uint32_t cached_sq_head, cached_cq_tail;
	uint32_t cq_room_end; /* the CQ has room while cached_cq_tail is below it */
	bool cq_batch;        /* CQEs wait for blkring__cq_flush() to publish them */
	struct blkring_req *free_reqs;
	struct blkring_dev **devs;
	unsigned nr_devs;
	uint32_t queue_hint;

	/* Every consumed SQE gets a sequence number and, exactly once, a
	 * completion: nr_seq - nr_done requests are in flight. */
	uint32_t nr_seq, nr_done;

	/* Chains under construction, and requests waiting to start. */
	struct blkring_req *link_head, *link_tail;
	struct blkring_req *ready_head, *ready_tail; /* next links of chains */
	struct blkring_req *defer_head, *defer_tail; /* held back by IO_DRAIN */
	uint32_t drain_barrier; /* later requests start once nr_done reaches it */
	bool drain_active;
	bool drain_disabled; /* a CQE_SKIP_SUCCESS SQE was seen: IO_DRAIN is refused */
	bool exiting;

	struct blkring_req *ovf_head, *ovf_tail;
	struct blkring_req *timeouts; /* armed timeouts (timeout.c) */
	/* IOPOLL: polled requests in flight, in issue order (iopoll.c). */
	struct blkring_req *iopoll_head, *iopoll_tail;

	unsigned flags; /* BLKRING_SETUP_* */
	struct blkring__req_chunk *chunks;
	uint32_t tw_taken; /* task work items taken (DEFER_TASKRUN's lazy wake) */
	/* CQEs task work posted that no CQ tail store has published yet:
	 * how many, and the sum of their work's push times (tw.c). */
	uint32_t tw_wait_nr;
	uint64_t tw_wait_pushed;
	const sigset_t *wait_sigmask; /* blkring_wait_cqes()'s, while it sleeps */
	/* The registered eventfd (eventfd.c): the ring's dup, -1 for none;
	 * every dup it made, closed at exit. */
	_Atomic int ev_fd;
	_Atomic uint32_t ev_users; /* completing threads between their push and signal */
	bool ev_async;
	int *ev_kept;
	unsigned nr_ev_kept;
	struct blkring__sq_data *sq; /* the SQ thread (SQPOLL), else NULL */

	/* What drivers keep per ring (block/blkdev.h; ioc.c). */
	struct blkring_ioc ioc;

	/* Shared. */
	struct blkring__tw_list tw __cacheline_aligned;
	struct blkring__io_wq wq __cacheline_aligned;
	struct blkring__stats stats __cacheline_aligned;
};

/* The calling thread's identity: one address per thread, no syscall, and
 * (initial-exec) no call to find it. */
extern _Thread_local char blkring__thread_anchor __attribute__((tls_model("initial-exec")));

static inline const void *blkring__current(void)
{
	return &blkring__thread_anchor;
}

static inline bool blkring__is_owner(const struct blkring__ctx *ctx)
{
	return atomic_load_explicit(&ctx->owner, memory_order_relaxed) == blkring__current();
}

/* Owner-written counters readable from any thread: no read-modify-write. */
static inline void blkring__stat_add(_Atomic uint64_t *stat, uint64_t n)
{
	atomic_store_explicit(stat, atomic_load_explicit(stat, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

/* req.c */
int blkring__req_cache_init(struct blkring__ctx *ctx, unsigned nr);
void blkring__req_cache_exit(struct blkring__ctx *ctx);
struct blkring_req *blkring__req_grow(struct blkring__ctx *ctx);

static inline struct blkring_req *blkring__req_alloc(struct blkring__ctx *ctx)
{
	struct blkring_req *req = ctx->free_reqs;

	if (unlikely(!req))
		return blkring__req_grow(ctx);
	ctx->free_reqs = req->next;
	return req;
}

void blkring__req_release_iov(struct blkring_req *req);

static inline void blkring__req_free(struct blkring__ctx *ctx, struct blkring_req *req)
{
	if (unlikely(req->flags & REQ_F_IOV_HEAP))
		blkring__req_release_iov(req);
	req->opcode = BLKRING__REQ_FREE;
	req->next = ctx->free_reqs;
	ctx->free_reqs = req;
}

/* complete.c: posting CQEs, overflow, completion from any thread. */
void blkring__req_post(struct blkring__ctx *ctx, struct blkring_req *req, int res);

/*
 * Full when the tail reached the application's last known head plus the CQ
 * size; only then is the head read again (acquire: the application has
 * finished with the slots it freed), so most CQEs skip that load.
 */
static inline bool blkring__cq_full(struct blkring__ctx *ctx)
{
	uint32_t head;

	if (likely(ctx->cached_cq_tail != ctx->cq_room_end))
		return false;
	head = atomic_load_explicit(&ctx->rings->cq_head, memory_order_acquire);
	ctx->cq_room_end = head + ctx->cq_entries;
	return ctx->cached_cq_tail == ctx->cq_room_end;
}

static inline void blkring__cqe_fill(struct blkring__ctx *ctx, uint64_t user_data, int res)
{
	struct blkring_cqe *cqe = &ctx->cqes[ctx->cached_cq_tail & ctx->cq_mask];

	cqe->user_data = user_data;
	cqe->res = res;
	cqe->flags = 0;
	++ctx->cached_cq_tail;
	if (likely(!ctx->cq_batch))
		atomic_store_explicit(&ctx->rings->cq_tail, ctx->cached_cq_tail,
		                      memory_order_release);
}

/* The common completion inline: no chain to continue, room in the CQ. */
static inline void blkring__req_post_fast(struct blkring__ctx *ctx, struct blkring_req *req,
                                          int res)
{
	if (unlikely(req->link || (req->flags & REQ_F_SKIP) || ctx->ovf_head ||
	             blkring__cq_full(ctx))) {
		blkring__req_post(ctx, req, res);
		return;
	}
	ctx->nr_done++;
	blkring__cqe_fill(ctx, req->user_data, res);
	blkring__req_free(ctx, req);
}

void blkring__req_complete(struct blkring_req *req, int res);
void blkring__req_tw_complete(struct blkring_tw_node *tw);
void blkring__req_bio_end_io(struct blkring_bio *bio);
void blkring__overflow_flush(struct blkring__ctx *ctx);
void blkring__overflow_free(struct blkring__ctx *ctx);

/* issue.c: starting requests. */
int blkring__submit_sqes(struct blkring__ctx *ctx);
void blkring__issue_pending_slow(struct blkring__ctx *ctx);

/* Starts what completions made ready: next links, then drained units.
 * Every entry and submit asks; almost always nothing is. */
static inline void blkring__issue_pending(struct blkring__ctx *ctx)
{
	if (unlikely(ctx->ready_head || ctx->drain_active))
		blkring__issue_pending_slow(ctx);
}
void blkring__flush_queues(struct blkring__ctx *ctx);
void blkring__req_queue_next(struct blkring__ctx *ctx, struct blkring_req *req);
void blkring__req_run_blocking(struct blkring__wq_work *work);
void blkring__cancel_deferred(struct blkring__ctx *ctx);

/* ops.c: per-opcode prep (SQE fields into the request) and issue. */
struct blkring__op {
	int (*prep)(struct blkring__ctx *ctx, struct blkring_req *req,
	            const struct blkring_sqe *sqe);
	/* 0: started (the request completes later, maybe already did);
	 * negative: not started, complete with that. */
	int (*issue)(struct blkring_req *req, unsigned issue_flags);
};

extern const struct blkring__op blkring__ops[BLKRING_OP_LAST];

/* Opcodes that work on the owner's own lists (timeouts, cancel). */
static inline bool blkring__op_owner_only(unsigned op)
{
	return op == BLKRING_OP_TIMEOUT || op == BLKRING_OP_TIMEOUT_REMOVE ||
	       op == BLKRING_OP_ASYNC_CANCEL || op == BLKRING_OP_LINK_TIMEOUT;
}

/* tw.c */
void blkring__tw_init(struct blkring__tw_list *tw);
/* A completion for the owner to post (the priority list on a TW_PRIO ring). */
/* A completion handed to the owner; chain: its request starts another. */
void blkring__tw_add(struct blkring__ctx *ctx, struct blkring_tw_node *node, bool chain);
/* Other work for the owner (an issue turned into task work): the normal list. */
void blkring__tw_queue(struct blkring__ctx *ctx, struct blkring_tw_node *node);
unsigned blkring__tw_run(struct blkring__ctx *ctx);
void blkring__tw_wait_published(struct blkring__ctx *ctx);
void blkring__tw_irq_work(struct blkring_ioc *ioc, struct blkring_tw_node *work);
int blkring__tw_wait(struct blkring__ctx *ctx, const struct timespec *deadline);
int blkring__tw_wait_nr(struct blkring__ctx *ctx, unsigned nr, const struct timespec *deadline);
/* The SQ thread's sleep, until task work, a kick or the deadline (NULL: none). */
void blkring__tw_idle(struct blkring__ctx *ctx, bool (*busy)(struct blkring__ctx *ctx),
                      const struct timespec *deadline);
void blkring__tw_kick(struct blkring__ctx *ctx);
bool blkring__time_left(const struct timespec *deadline, struct timespec *left);

static inline bool blkring__tw_pending(struct blkring__ctx *ctx)
{
	uintptr_t head = atomic_load_explicit(&ctx->tw.head, memory_order_relaxed);

	return head > BLKRING__TW_SLEEPING_LAZY && !(head & BLKRING__TW_FD_BIT);
}

/* sqpoll.c: the SQ thread, and the application's side of an SQPOLL ring. */
int blkring__sq_start(struct blkring__ctx *ctx, const struct blkring_params *p);
void blkring__sq_stop(struct blkring__ctx *ctx);
int blkring__sq_park(struct blkring__ctx *ctx);
void blkring__sq_unpark(struct blkring__ctx *ctx);
/* timeout.c */
void blkring__timeouts_run(struct blkring__ctx *ctx);
/* Whether an armed timeout's time or count has come. */
bool blkring__timeouts_due(const struct blkring__ctx *ctx);
/* The earliest armed deadline (CLOCK_MONOTONIC ns), 0 for none. */
uint64_t blkring__timeouts_next(struct blkring__ctx *ctx);
void blkring__timeouts_cancel(struct blkring__ctx *ctx);
void blkring__ltimeout_arm(struct blkring__ctx *ctx, struct blkring_req *req);
struct blkring_req *blkring__ltimeout_done(struct blkring__ctx *ctx, struct blkring_req *t);
int blkring__timeout_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                          const struct blkring_sqe *sqe);
int blkring__timeout_issue(struct blkring_req *req, unsigned issue_flags);
int blkring__timeout_remove_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                                 const struct blkring_sqe *sqe);
int blkring__timeout_remove_issue(struct blkring_req *req, unsigned issue_flags);
int blkring__link_timeout_issue(struct blkring_req *req, unsigned issue_flags);
/* Disarms a plain timeout for its cancel (the caller posts it). */
void blkring__timeout_take(struct blkring__ctx *ctx, struct blkring_req *t);

/* cancel.c */
/* Takes back an issued request that has not reached its device: queued
 * for the worker pool, or (issued by the owner) its bio waiting for a tag
 * or held by a suspended volume.  True when taken; the caller ends it. */
bool blkring__req_take_back(struct blkring__ctx *ctx, struct blkring_req *req);
int blkring__cancel_prep(struct blkring__ctx *ctx, struct blkring_req *req,
                         const struct blkring_sqe *sqe);
int blkring__cancel_issue(struct blkring_req *req, unsigned issue_flags);

/* eventfd.c */
void blkring__ev_signal(struct blkring__ctx *ctx, int fd);
/* A completing thread's hold on the eventfd across its push: the fd, or -1
 * (no hold) when none is registered; put signals it when asked. */
int blkring__ev_get(struct blkring__ctx *ctx);
void blkring__ev_put(struct blkring__ctx *ctx, int fd, bool signal);
void blkring__ev_posted(struct blkring__ctx *ctx, uint32_t tail);
void blkring__ev_exit(struct blkring__ctx *ctx);

/* Registration (devices, buffers): the owner, or on an SQPOLL ring the
 * application's thread with the SQ thread parked. */
int blkring__register_begin(struct blkring__ctx *ctx);
void blkring__register_end(struct blkring__ctx *ctx);
int blkring__sq_submit(struct blkring *ring);
int blkring__sq_get_cqe(struct blkring *ring, struct blkring_cqe **cqe_ptr, unsigned wait_nr,
                        const struct timespec *deadline, const sigset_t *sigmask);
void blkring__sq_cq_flush(struct blkring__ctx *ctx);

/* Publishes the CQEs posted so far (io_uring's io_commit_cqring) and wakes
 * an SQPOLL ring's waiting application when its wait is complete. */
static inline void blkring__cq_flush(struct blkring__ctx *ctx)
{
	if (unlikely(ctx->sq))
		blkring__sq_cq_flush(ctx);
}

/* io-wq.c */
int blkring__io_wq_init(struct blkring__io_wq *wq, unsigned max_workers,
                        void (*run)(struct blkring__wq_work *work));
int blkring__io_wq_enqueue(struct blkring__io_wq *wq, struct blkring__wq_work *work);
struct blkring__wq_work *blkring__io_wq_cancel_queued(struct blkring__io_wq *wq);
/* Takes one work item off the queue: false when a worker has it already. */
bool blkring__io_wq_cancel_one(struct blkring__io_wq *wq, struct blkring__wq_work *work);
unsigned blkring__io_wq_workers(struct blkring__io_wq *wq);
void blkring__io_wq_exit(struct blkring__io_wq *wq);

/* register.c */
void blkring__devices_drop(struct blkring__ctx *ctx);

/* iopoll.c: polled reads and writes (BLKRING_SETUP_IOPOLL). */
int blkring__iopoll_submit(struct blkring__ctx *ctx, struct blkring_req *req,
                           struct blkring_bio *bio);
unsigned blkring__iopoll(struct blkring__ctx *ctx);
int blkring__iopoll_spin(const struct timespec *deadline);

static inline bool blkring__iopoll_pending(const struct blkring__ctx *ctx)
{
	return ctx->iopoll_head != NULL;
}

/* wait.c: what the owner does whenever it enters the ring. */
void blkring__enter(struct blkring__ctx *ctx);

/* ioc.c: the drivers' per-ring queues and the eventfd the owner then sleeps on. */
void blkring__ioc_init(struct blkring_ioc *ioc);
void blkring__ioc_flush(struct blkring_ioc *ioc);
/* Ends what the queues completed; returns how many. */
unsigned blkring__ioc_reap(struct blkring_ioc *ioc);
/* Fills ioc->pfds for a sleep: the owner's eventfd, then the queues'
 * descriptors.  Returns how many, -EAGAIN when completions are ready
 * already, or another -errno when no sleep can be had (look again). */
int blkring__ioc_prepare_sleep(struct blkring_ioc *ioc);
/* Sleeps on what prepare_sleep set up (nr from it; left: NULL for no
 * limit).  Returns 1 when woken, 0 at the limit, -EINTR for a signal. */
/* sigmask (or NULL): the signal mask for the sleep, set atomically with it. */
int blkring__ioc_sleep(struct blkring_ioc *ioc, unsigned nr, const struct timespec *left,
                       const sigset_t *sigmask);
/* Frees the queues (nothing in flight); exit also gives back the eventfd. */
void blkring__ioc_drop_queues(struct blkring_ioc *ioc);
void blkring__ioc_exit(struct blkring_ioc *ioc);

#endif
