// SPDX-License-Identifier: MIT
/*
 * The file driver's kernel io_urings.
 *
 * Each ring that does I/O to the device gets its own kernel ring, made on
 * its first bio and used only by the ring's owner thread, so no lock is
 * shared between rings: bios queue SQEs, the ring's submit batch ends with
 * one io_uring_enter (flush), and completions are reaped whenever the owner
 * enters the ring, or wake its sleep (prepare_sleep, sleep).  Polled
 * bios go to a second kernel ring of the pair, with IORING_SETUP_IOPOLL
 * where the device polls, else reaped by looking at its CQ without
 * entering the kernel; only polling reaps it.
 *
 * Bios no ring's owner submits (blocking calls, worker pools, bios that
 * waited for a tag) go to the device's shared kernel ring: any thread
 * submits under its lock, and a reaper thread ends them.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "drivers/file.h"
#include "lib/clock.h"
#include "lib/thread.h"

/* user_data that is no bio. */
#define UD_STOP 1ULL /* the reaper's last CQE */
#define UD_WAKE 2ULL /* the ring's eventfd was signalled (a ring's queue) */

/* ---- one kernel ring ---- */

/*
 * The kernel orders a ring's unmapping before its address is mapped again
 * (the mm's mmap lock); liburing's raw mmap and munmap hide that from the
 * thread sanitizer, which then takes one kernel ring's accesses and the
 * next's at the same address for a race.  Every kernel ring of the driver
 * is made and unmade under this lock, which says it again where the
 * sanitizer sees it.  Not on any I/O path.
 */
static pthread_mutex_t ring_map_lock = PTHREAD_MUTEX_INITIALIZER;

int file_ring_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
	int ret;

	pthread_mutex_lock(&ring_map_lock);
	ret = io_uring_queue_init(entries, ring, flags);
	pthread_mutex_unlock(&ring_map_lock);
	return ret;
}

void file_ring_exit(struct io_uring *ring)
{
	pthread_mutex_lock(&ring_map_lock);
	io_uring_queue_exit(ring);
	pthread_mutex_unlock(&ring_map_lock);
}

/*
 * SUBMIT_ALL: an SQE the kernel refuses (it posts its CQE) does not hold
 * back the rest of the batch.  A ring's own queue asks for COOP_TASKRUN
 * (Linux 5.19): its completions wait for the owner's next entry into the
 * kernel (a batch's submit, or a sleep, which they wake) instead of
 * interrupting it; TASKRUN_FLAG says when some wait, so the owner can
 * fetch them without submitting.  On a ring with DEFER_TASKRUN, whose
 * owner promised to be the thread that waits for its I/O, the kernel ring
 * defers too (Linux 6.1, as fio's engine asks): only a wait inside it is
 * woken, and only once a completion is there.  Only its maker may then enter it: a thread
 * that ends with its I/O in flight leaves it there for good, so the
 * ring's promise is needed, and without it no other thread could exit the
 * ring (or, on an SQ thread's ring, park it) with I/O in flight.  The shared
 * queue and the poll queues keep the interruption: their CQs are looked at
 * by a thread that did not submit, or without entering the kernel.  Older
 * kernels get a plain ring.
 */
static int ring_init(struct io_uring *ring, unsigned depth, unsigned kind, bool iopoll,
                     bool one_thread, bool *defer)
{
	unsigned flags = iopoll ? IORING_SETUP_IOPOLL : 0;
	unsigned extra = IORING_SETUP_SUBMIT_ALL;
	int ret = -EINVAL;

	*defer = false;
	if (kind == QUEUE_RING && one_thread) {
		ret = file_ring_init(depth, ring,
		                     flags | extra | IORING_SETUP_SINGLE_ISSUER |
		                         IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
		*defer = !ret;
	}
	if (kind == QUEUE_RING && ret == -EINVAL)
		ret = file_ring_init(depth, ring,
		                     flags | extra | IORING_SETUP_COOP_TASKRUN |
		                         IORING_SETUP_TASKRUN_FLAG);
	if (ret == -EINVAL)
		ret = file_ring_init(depth, ring, flags | extra);
	if (ret == -EINVAL)
		ret = file_ring_init(depth, ring, flags);
	return ret;
}

/* The thread's io-wq runs what this ring punts: at most io_workers at once
 * (bounded work: regular files and block devices).  A kernel without the
 * call keeps its own limit. */
static void queue_limit_workers(struct file_queue *q)
{
	unsigned vals[2] = {q->fd->io_workers, 0};

	if (vals[0])
		(void)io_uring_register_iowq_max_workers(&q->ring, vals);
}

int file_queue_setup(struct file_queue *q, struct file_dev *fd, unsigned kind, bool iopoll)
{
	int ret =
	    ring_init(&q->ring, fd->depth, kind, iopoll, q->ioc && q->ioc->one_thread, &q->defer);

	if (ret)
		return ret;
	q->fd = fd;
	q->maker = pthread_self();
	q->kind = (uint8_t)kind;
	q->iopoll = iopoll;
	q->has_ring = true;
	ret = io_uring_register_files(&q->ring, &fd->fd, 1);
	if (ret)
		file_queue_teardown(q);
	else if (kind == QUEUE_RING)
		queue_limit_workers(q);
	return ret;
}

void file_queue_teardown(struct file_queue *q)
{
	if (q->has_ring)
		file_ring_exit(&q->ring);
	q->has_ring = false;
}

static bool transient(int ret)
{
	return ret == -EINTR || ret == -EAGAIN || ret == -EBUSY;
}

/* Pushes what the SQ holds to the kernel.  The ring never has more in
 * flight than its CQ holds, so only transient errors can happen: retried. */
static void queue_submit(struct file_queue *q)
{
	while (io_uring_sq_ready(&q->ring)) {
		int ret = io_uring_submit(&q->ring);

		if (ret < 0 && !transient(ret))
			break;
	}
}

/* The same, and the completions the kernel holds for this thread posted,
 * in one enter even with nothing to submit. */
static void queue_submit_and_get_events(struct file_queue *q)
{
	int ret;

	do {
		ret = io_uring_submit_and_get_events(&q->ring);
	} while ((ret < 0 && transient(ret)) || (ret >= 0 && io_uring_sq_ready(&q->ring)));
}

static void ring_queue_woken(struct file_queue *q, const struct io_uring_cqe *cqe);

/* Ends what the CQ holds; completions may queue more SQEs (the rest of a
 * short transfer, a fallback's next step).  Returns the bio CQEs. */
static unsigned queue_reap(struct file_queue *q)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, woken = 0;

	io_uring_for_each_cqe(&q->ring, head, cqe)
	{
		if (unlikely(cqe->user_data == UD_WAKE)) {
			ring_queue_woken(q, cqe);
			woken++;
			continue;
		}
		n++;
		file_complete(q, io_uring_cqe_get_data(cqe), cqe->res);
	}
	io_uring_cq_advance(&q->ring, n + woken);
	q->inflight -= n;
	return n;
}

/*
 * The ring's registered buffers, registered with this kernel ring when a
 * fixed bio first meets a registration it has not seen.  Where the kernel
 * refuses them (file-backed memory, limits), bios name their buffers
 * plainly: the same data moves.
 */
static void queue_sync_buffers(struct file_queue *q)
{
	struct blkring_ioc *ioc = q->ioc;

	if (q->fixed_bufs)
		io_uring_unregister_buffers(&q->ring);
	q->fixed_bufs =
	    ioc->nr_bufs && !io_uring_register_buffers(&q->ring, ioc->bufs, ioc->nr_bufs);
	q->bufs_gen = ioc->bufs_gen;
}

/* ---- the device's shared queue ---- */

static struct io_uring_sqe *shared_get_sqe(struct file_queue *q)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&q->ring)))
		queue_submit(q);
	return sqe;
}

static void shared_queue_bio(struct file_shared *s, struct blkring_bio *bio)
{
	pthread_mutex_lock(&s->sq_lock);
	file_prep(&s->q, shared_get_sqe(&s->q), bio);
	/* The reaper reads what this thread wrote into the bio: the kernel
	 * orders that for the CPU; this release orders it for the sanitizers,
	 * which cannot see through the kernel. */
	atomic_fetch_add_explicit(&s->handoff, 1, memory_order_release);
	queue_submit(&s->q);
	pthread_mutex_unlock(&s->sq_lock);
}

static void *reaper_thread(void *arg)
{
	struct file_shared *s = arg;
	struct io_uring *ring = &s->q.ring;
	bool stop = false;

	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		if (io_uring_wait_cqe(ring, &cqe))
			continue; /* interrupted: nothing taken */
		io_uring_for_each_cqe(ring, head, cqe)
		{
			/* Pairs with shared_queue_bio()'s release: the bio's fields. */
			atomic_load_explicit(&s->handoff, memory_order_acquire);
			n++;
			if (cqe->user_data == UD_STOP)
				stop = true;
			else
				file_complete(&s->q, io_uring_cqe_get_data(cqe), cqe->res);
		}
		io_uring_cq_advance(ring, n);
	}
	return NULL;
}

static int reaper_start(struct file_shared *s)
{
	int ret = blkring__thread_start(&s->reaper, NULL, reaper_thread, s, "blkring-file");

	if (ret)
		return ret;
	s->has_reaper = true;
	return 0;
}

static void reaper_stop(struct file_shared *s)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&s->sq_lock);
	sqe = shared_get_sqe(&s->q);
	io_uring_prep_nop(sqe);
	sqe->user_data = UD_STOP;
	queue_submit(&s->q);
	pthread_mutex_unlock(&s->sq_lock);
	pthread_join(s->reaper, NULL);
}

int file_shared_init(struct file_dev *fd)
{
	struct file_shared *s = &fd->shared;
	int ret;

	pthread_mutex_init(&s->sq_lock, NULL);
	atomic_init(&s->handoff, 0);
	ret = file_queue_setup(&s->q, fd, QUEUE_SHARED, false);
	if (ret)
		return ret;
	if (fd->bdev && atomic_load(&fd->discard_cmd))
		atomic_store(&fd->discard_cmd, file_probe_discard_cmd(&s->q));
	return reaper_start(s);
}

void file_shared_exit(struct file_dev *fd)
{
	struct file_shared *s = &fd->shared;

	if (s->has_reaper)
		reaper_stop(s);
	file_queue_teardown(&s->q);
	pthread_mutex_destroy(&s->sq_lock);
}

/* ---- a ring's queues ---- */

static struct file_ring_queue *ring_queue(struct blkring_ioc_queue *link)
{
	return container_of(link, struct file_ring_queue, link);
}

/* Completions the kernel holds back for the owner (COOP_ or DEFER_TASKRUN). */
static bool ring_queue_held(struct file_ring_queue *rq)
{
	return IO_URING_READ_ONCE(*rq->q.ring.sq.kflags) & IORING_SQ_TASKRUN;
}

/*
 * One enter pushes the batch and brings in the completions the kernel
 * held; what completed inside it (reads the page cache holds) is ready when
 * it returns: end it now, and push what that queued.
 */
static void ring_queue_flush(struct blkring_ioc_queue *link)
{
	struct file_ring_queue *rq = ring_queue(link);

	do {
		if (ring_queue_held(rq))
			queue_submit_and_get_events(&rq->q);
		else
			queue_submit(&rq->q);
	} while (queue_reap(&rq->q) && io_uring_sq_ready(&rq->q.ring));
	if (rq->poll.has_ring)
		queue_submit(&rq->poll);
}

/* Held completions are fetched by the next flush, with the next batch
 * when a submission follows: no enter of their own. */
static unsigned ring_queue_reap(struct blkring_ioc_queue *link)
{
	struct file_ring_queue *rq = ring_queue(link);

	if (unlikely(ring_queue_held(rq)))
		rq->q.ioc->flush_pending = true;
	return queue_reap(&rq->q);
}

/*
 * The ring's eventfd, which task work producers signal, is watched by a
 * multishot poll of the ring's first kernel ring (the primary), so the
 * owner sleeps on one descriptor instead of two.  Its CQEs only empty the
 * eventfd; a poll the kernel ended is armed again at the next sleep.
 */
static void ring_queue_woken(struct file_queue *q, const struct io_uring_cqe *cqe)
{
	struct file_ring_queue *rq = container_of(q, struct file_ring_queue, q);
	uint64_t count;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		rq->wake_armed = false;
	if (read(q->ioc->wake_fd, &count, sizeof(count)) < 0)
		return; /* already empty */
}

/* False when the SQ has no room even after a submit: look again later. */
static bool ring_queue_arm_wake(struct file_ring_queue *rq)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&rq->q.ring);

	if (!sqe) {
		queue_submit(&rq->q);
		sqe = io_uring_get_sqe(&rq->q.ring);
		if (!sqe)
			return false;
	}
	io_uring_prep_poll_multishot(sqe, rq->q.ioc->wake_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, UD_WAKE);
	queue_submit(&rq->q);
	rq->wake_armed = !io_uring_sq_ready(&rq->q.ring);
	return rq->wake_armed;
}

static const struct blkring_ioc_queue_ops ring_queue_ops;

/* The first working kernel ring of the ring (any file device's) from link
 * on, or NULL: the ring's list also holds failed queues and other drivers'. */
static struct file_ring_queue *ring_queue_from(struct blkring_ioc_queue *link)
{
	while (link && link->ops != &ring_queue_ops)
		link = link->next;
	return link ? ring_queue(link) : NULL;
}

/* Whether one of the ring's kernel rings (one per file device) has
 * completions to fetch; *busy tells whether any has I/O in flight. */
static bool ring_queues_ready(struct blkring_ioc *ioc, bool *busy)
{
	for (struct file_ring_queue *rq = ring_queue_from(ioc->queues); rq;
	     rq = ring_queue_from(rq->link.next)) {
		if (io_uring_cq_ready(&rq->q.ring) || ring_queue_held(rq))
			return true;
		*busy |= rq->q.inflight != 0;
	}
	return false;
}

/*
 * spin_nsec: with I/O in flight, the owner watches its kernel rings that
 * long before it sleeps.  The completion that wakes a sleeping owner costs
 * the thread that completes it (the kernel's io-wq worker, on tmpfs) a
 * wake-up of an idle CPU, and on a guest whose idle vCPUs halt that costs
 * more than a 4k read.  A watch that found nothing (a slow device) makes
 * the next FILE_SPIN_BACKOFF sleeps start at once, so the CPU it spends
 * stays small.  Returns true when something came: completions, or task
 * work.
 */
static bool ring_queue_spin(struct file_ring_queue *rq)
{
	struct blkring_ioc *ioc = rq->q.ioc;
	bool busy = false;
	uint64_t end;

	if (ring_queues_ready(ioc, &busy))
		return true;
	if (!rq->q.fd->spin_nsec || !busy)
		return false;
	if (rq->spin_skip) {
		rq->spin_skip--;
		return false;
	}
	end = blkring__now_ns() + rq->q.fd->spin_nsec;
	do {
		for (int i = 0; i < 16; i++) {
			if (ring_queues_ready(ioc, &busy) || ioc->work_pending(ioc))
				return true;
			cpu_relax();
		}
	} while (blkring__now_ns() < end);
	rq->spin_skip = FILE_SPIN_BACKOFF;
	return false;
}

/*
 * The primary: the owner sleeps on its kernel ring, which wakes for its own
 * completions and, through the poll, for the eventfd.  A kernel ring that
 * holds completions back (either TASKRUN mode) wakes that sleep when one
 * comes, and posts them on the way out.
 */
static int primary_prepare_sleep(struct file_ring_queue *rq, bool *wakes)
{
	struct io_uring *ring = &rq->q.ring;

	if (unlikely(!rq->wake_armed) && !ring_queue_arm_wake(rq))
		return -EAGAIN;
	if (ring_queue_spin(rq))
		return -EAGAIN;
	*wakes = true;
	return ring->ring_fd;
}

/*
 * Another kernel ring of the same ring.  Under COOP_TASKRUN its descriptor
 * polls readable once a completion waits, so it joins the ppoll().  Under
 * DEFER_TASKRUN nothing wakes a poller of it (only a waiter inside it): it
 * signals the ring's eventfd instead (when completions start to wait, and
 * when it posts CQEs), and offers no
 * descriptor, so the owner still sleeps in the primary.
 */
static int secondary_prepare_sleep(struct file_ring_queue *rq)
{
	struct io_uring *ring = &rq->q.ring;

	if (rq->q.defer && !rq->signals) {
		/* Without it no sleep would wake for this ring: the owner
		 * looks again instead of sleeping. */
		if (io_uring_register_eventfd(ring, rq->q.ioc->wake_fd))
			return -EAGAIN;
		rq->signals = true;
	}
	if (io_uring_cq_ready(ring) || ring_queue_held(rq))
		return -EAGAIN;
	return rq->q.defer ? -ENOENT : ring->ring_fd;
}

/*
 * A DEFER_TASKRUN ring's completions run only in the thread that made it.
 * Another thread sleeps on it only when it exits a ring whose owner broke
 * the ring's promise and left I/O in flight: they end when the maker
 * enters again, if ever.  Until then the waiter looks every millisecond
 * instead of sleeping where nothing would wake it.
 */
static bool foreign_waiter(const struct file_queue *q)
{
	if (!q->defer || pthread_equal(q->maker, pthread_self()))
		return false;
	nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	return true;
}

static int ring_queue_prepare_sleep(struct blkring_ioc_queue *link, bool *wakes)
{
	struct file_ring_queue *rq = ring_queue(link);

	if (unlikely(foreign_waiter(&rq->q)))
		return -EAGAIN;
	return rq->primary ? primary_prepare_sleep(rq, wakes) : secondary_prepare_sleep(rq);
}

/*
 * Where the primary is all the owner waits on, it sleeps inside it: the
 * completions it holds back are posted in the same enter that wakes, and no
 * poll is set up and torn down on each sleep.
 */
static int ring_queue_sleep(struct blkring_ioc_queue *link, const struct timespec *left)
{
	struct file_ring_queue *rq = ring_queue(link);
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	int ret;

	if (left)
		ts = (struct __kernel_timespec){.tv_sec = left->tv_sec, .tv_nsec = left->tv_nsec};
	ret = io_uring_wait_cqes(&rq->q.ring, &cqe, 1, left ? &ts : NULL, NULL);
	if (ret == -ETIME)
		return 0;
	return ret == -EINTR ? -EINTR : 1;
}

static bool ring_queue_idle(struct blkring_ioc_queue *link)
{
	struct file_ring_queue *rq = ring_queue(link);

	return !rq->q.inflight && !rq->poll.inflight;
}

/* The primary went (its device was closed): the owner sleeps in the next
 * kernel ring, which now watches the eventfd instead of signalling it. */
static void ring_queue_promote(struct blkring_ioc *ioc)
{
	struct file_ring_queue *rq = ring_queue_from(ioc->queues);

	if (!rq)
		return;
	/* Fails only for a thread that is not the kernel ring's maker (one
	 * exiting the ring, whose queues all go next); a signal left
	 * registered only ends a sleep early. */
	if (rq->signals)
		io_uring_unregister_eventfd(&rq->q.ring);
	rq->signals = false;
	rq->primary = true;
}

static void ring_queue_exit(struct blkring_ioc_queue *link)
{
	struct file_ring_queue *rq = ring_queue(link);

	if (rq->primary)
		ring_queue_promote(rq->q.ioc);
	file_queue_teardown(&rq->q);
	file_queue_teardown(&rq->poll);
	free(rq);
}

static const struct blkring_ioc_queue_ops ring_queue_ops = {
    .flush = ring_queue_flush,
    .reap = ring_queue_reap,
    .prepare_sleep = ring_queue_prepare_sleep,
    .sleep = ring_queue_sleep,
    .idle = ring_queue_idle,
    .exit = ring_queue_exit,
};

/* A failed queue stays on the ring's list, so the ring's bios find it and
 * go to the shared queue rather than try again: nothing to flush or reap. */

/* Nothing completes here: the shared queue's thread ends the ring's bios. */
static int no_prepare_sleep(struct blkring_ioc_queue *link, bool *wakes)
{
	(void)link;
	(void)wakes;
	return -ENOENT;
}

static bool always_idle(struct blkring_ioc_queue *link)
{
	(void)link;
	return true;
}

static const struct blkring_ioc_queue_ops failed_queue_ops = {
    .prepare_sleep = no_prepare_sleep,
    .idle = always_idle,
    .exit = ring_queue_exit,
};

static struct file_ring_queue *ring_queue_create(struct file_dev *fd, struct blkring_ioc *ioc)
{
	struct file_ring_queue *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	rq->link.dev = fd->dev;
	rq->link.ops = &ring_queue_ops;
	rq->q.ioc = ioc;
	rq->poll.ioc = ioc;
	if (file_queue_setup(&rq->q, fd, QUEUE_RING, false)) {
		rq->failed = true;
		rq->link.ops = &failed_queue_ops;
	}
	rq->primary = !rq->failed && !ring_queue_from(ioc->queues);
	blkring__ioc_add(ioc, &rq->link);
	return rq;
}

/* The ring's queue for the bio: made on the ring's first I/O to the device,
 * its poll half on the first polled one.  Only reads and writes are polled,
 * as in Linux. */
struct file_queue *file_queue_of(struct file_dev *fd, struct blkring_bio *bio,
                                 struct blkring_ioc *ioc)
{
	struct blkring_ioc_queue *link;
	struct file_ring_queue *rq;

	if (!ioc)
		return &fd->shared.q;
	link = blkring__ioc_find(ioc, fd->dev);
	rq = link ? ring_queue(link) : ring_queue_create(fd, ioc);
	if (unlikely(!rq || rq->failed))
		return &fd->shared.q;
	if (unlikely((bio->flags & BIO_POLLED) && bio->op <= REQ_OP_WRITE)) {
		if (!rq->poll.has_ring && file_queue_setup(&rq->poll, fd, QUEUE_POLL, fd->iopoll))
			return &rq->q;
		return &rq->poll;
	}
	return &rq->q;
}

void file_queue_bio(struct file_queue *q, struct blkring_bio *bio)
{
	struct io_uring_sqe *sqe;

	if (q->kind == QUEUE_SHARED) {
		shared_queue_bio(container_of(q, struct file_shared, q), bio);
		return;
	}
	if (unlikely((bio->flags & BIO_FIXED_BUF) && q->bufs_gen != q->ioc->bufs_gen))
		queue_sync_buffers(q);
	/* Tags bound what is in flight on the device to the ring's size, so
	 * the SQ has room but for a batch's continuations. */
	while (unlikely(!(sqe = io_uring_get_sqe(&q->ring))))
		queue_submit(q);
	file_prep(q, sqe, bio);
	q->inflight++;
	q->ioc->flush_pending = true;
}

unsigned file_queue_poll(struct file_queue *q)
{
	if (q->iopoll)
		io_uring_submit_and_get_events(&q->ring);
	else
		queue_submit(q);
	return queue_reap(q);
}
