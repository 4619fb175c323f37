// SPDX-License-Identifier: MIT
/*
 * nbd devices: a disk exported by an NBD server (nbdkit, qemu-nbd,
 * nbd-server), driven through libnbd's asynchronous calls.  Built as a
 * module (blkring-modules/nbd.so) that the registry loads on the first
 * nbd: open, so programs that never open one do not load libnbd.
 * `nbd:URI[,key=value...]`, or the URI alone (nbd://, nbds://, nbd+unix://,
 * nbds+unix://); libnbd reads the URI, TLS query keys included.
 *
 *   connections=N         submit queues, one connection each (default 1)
 *   poll_queues=N         poll queues, one connection each (default 0)
 *   connect_timeout_ms=N  how long a connection may take (default 10000;
 *                         0: no limit)
 *   io_timeout_ms=N       how long the server may take to answer an I/O
 *                         (default 30000): then it fails with -EIO and the
 *                         device is dead, as the kernel's nbd driver does
 *   ro=0|1                read-only
 *
 * More than one connection needs a server that offers multi-conn (its
 * connections then see each other's writes).  Each hardware queue is one
 * connection.  libnbd has no threads: replies are read by whoever drives a
 * socket.  A thread of the device (the "interrupt") drives the submit
 * queues' sockets, but for the one a ring's owner sleeps on, which that
 * owner reads when it wakes; a poll queue's socket is driven by whoever
 * polls it.  One at a time: the queue's busy flag.  libnbd runs a
 * completion callback with the handle's lock held, so the callback only
 * puts the bio on its connection's done list, and whoever drove the
 * socket ends it afterwards.
 *
 * A connection that drops, or an I/O left unanswered past io_timeout_ms,
 * kills the device: every socket is shut down, libnbd then fails what it
 * still holds (each callback runs once), and later I/O fails at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "lib/clock.h"
#include "lib/error.h"
#include "lib/thread.h"

#define NBD_MAX_CONNS 64
#define NBD_DEPTH 128
#define NBD_DEFAULT_MAX_IO (32U << 20)
#define NBD_LIBNBD_MAX_IO (64U << 20)  /* libnbd refuses larger reads and writes */
#define NBD_MAX_RANGE (1ULL << 32)     /* trim and zero lengths are 32 bits */
#define NBD_MAX_BLOCK (64U << 10)      /* the protocol's largest minimum block size */
#define NBD_MAX_TIMEOUT_MS 86400000ULL /* a day */
#define NBD_MIN_IO_TIMEOUT_MS 10
/* In-flight commands are counted in buckets by the epoch they were sent in;
 * an epoch is a sixteenth of io_timeout_ms, so a command fails at most one
 * epoch (plus the watchdog's period, another) after its time is up. */
#define NBD_EPOCHS_PER_TIMEOUT 16
#define NBD_EPOCHS 32
#define NBD_POLL_BATCH 32 /* replies read before their bios end */
/* A ring's owner keeps its socket's watch while it reads the socket at
 * least this often, else the interrupt takes it back (Linux's
 * irq_suspend_timeout), or while it sleeps on the socket, up to the second
 * time (a thread held up in its sleep: parked, cancelled); an owner that
 * holds it looks at the socket when it enters, at most this often. */
#define NBD_WATCH_HOLD_NS 1000000ULL
#define NBD_WATCH_SLEEP_NS 100000000ULL
#define NBD_WATCH_LOOK_NS 50000ULL
#define NBD_WATCH_GONE UINT32_MAX /* watch_events of a socket out of the set */

static const char nbdev_keys[] = "connections, poll_queues, connect_timeout_ms, io_timeout_ms, ro";

static const char *const nbd_uri_schemes[] = {"nbd://", "nbds://", "nbd+unix://", "nbds+unix://"};

struct nbdev_conf {
	const char *uri;
	uint64_t connections, poll_queues, connect_timeout_ms, io_timeout_ms;
	bool ro;
};

struct nbdev;

/* One connection: one hardware queue. */
struct nbdev_conn {
	struct nbdev *nd;
	struct blkring_hctx *hctx;
	struct nbd_handle *h;
	/* Our own descriptor of the socket: polled, and shut down to kill the
	 * connection, so it never names another file once libnbd closed its. */
	int fd;
	_Atomic bool closed; /* a driver saw it go: no more polling */
	/* Whoever drives the socket is inside libnbd, holding the handle's
	 * lock: a submitter leaves its bio on `deferred` for the driver to
	 * send after, rather than sleep on the lock. */
	_Atomic uint32_t reading;
	struct llist_head deferred;
	_Atomic bool write_kicked; /* the interrupt was told a send waits */
	struct llist_head done;    /* replied bios, for the socket's driver to end */
	/* Who watches a submit queue's socket for replies: the interrupt, or
	 * the owner of a ring that sleeps on it (struct nbdev_ring), changed
	 * under watch_lock with what the interrupt's epoll set asks of the
	 * socket; and when that owner last read the socket, or that it
	 * sleeps on it now. */
	pthread_mutex_t watch_lock;
	struct nbdev_ring *_Atomic watcher;
	uint32_t watch_events; /* under watch_lock */
	_Atomic uint64_t watch_seen;
	_Atomic bool watch_asleep;
	_Atomic uint32_t pending[NBD_EPOCHS] __cacheline_aligned;
} __cacheline_aligned;

struct nbdev {
	struct nbdev_conf conf;
	char *uri; /* the conf's, kept for messages */
	unsigned nr_conns;
	struct nbdev_conn *conns;
	bool can_fua, can_flush, can_fast_zero;
	uint64_t epoch_ns;
	_Atomic bool dead;
	_Atomic bool stop;
	int wake_fd; /* the interrupt's eventfd */
	int epfd;    /* the interrupt's epoll set: wake_fd, the submit queues' sockets */
	bool has_thread;
	pthread_t thread;
};

/* ---- a bio's state while the server has it ---- */

/*
 * Kept in the fields the block layer leaves to drivers: deadline_ns holds
 * the epoch bucket the command was counted in (bits 0-7), the reply's errno
 * (bits 8-23), and whether the bio is in its FUA's flush (bit 24);
 * driver_data holds a bounce buffer, or NULL.
 */
#define CMD_BUCKET_MASK 0xffULL
#define CMD_ERRNO_SHIFT 8
#define CMD_ERRNO_MASK (0xffffULL << CMD_ERRNO_SHIFT)
#define CMD_FLUSHING (1ULL << 24)

static inline void cmd_init(struct blkring_bio *bio)
{
	bio->deadline_ns = 0;
	bio->driver_data = NULL;
}

static inline struct nbdev_conn *bio_conn(const struct blkring_bio *bio)
{
	struct nbdev *nd = bio->dev->private;

	return &nd->conns[bio->hctx->index];
}

static inline void cmd_stamp(struct nbdev_conn *c, struct blkring_bio *bio)
{
	unsigned e = (unsigned)((blkring__now_ns() / c->nd->epoch_ns) % NBD_EPOCHS);

	atomic_fetch_add_explicit(&c->pending[e], 1, memory_order_relaxed);
	bio->deadline_ns = (bio->deadline_ns & CMD_FLUSHING) | e;
}

static inline void cmd_unstamp(struct nbdev_conn *c, struct blkring_bio *bio)
{
	atomic_fetch_sub_explicit(&c->pending[bio->deadline_ns & CMD_BUCKET_MASK], 1,
	                          memory_order_relaxed);
}

static inline void cmd_set_errno(struct blkring_bio *bio, int err)
{
	bio->deadline_ns =
	    (bio->deadline_ns & ~CMD_ERRNO_MASK) | ((uint64_t)(err & 0xffff) << CMD_ERRNO_SHIFT);
}

static inline int cmd_errno(const struct blkring_bio *bio)
{
	return (int)((bio->deadline_ns & CMD_ERRNO_MASK) >> CMD_ERRNO_SHIFT);
}

/* ---- death ---- */

static void interrupt_wake(struct nbdev *nd)
{
	eventfd_write(nd->wake_fd, 1);
}

/* The device is dead from now on: shutting the sockets down makes libnbd
 * fail every command it still holds, wherever its socket is driven next. */
static void nbdev_kill(struct nbdev *nd)
{
	if (atomic_exchange_explicit(&nd->dead, true, memory_order_acq_rel))
		return;
	for (unsigned i = 0; i < nd->nr_conns; i++)
		if (nd->conns[i].fd >= 0)
			shutdown(nd->conns[i].fd, SHUT_RDWR);
	interrupt_wake(nd);
}

static inline bool nbdev_dead(struct nbdev *nd)
{
	return atomic_load_explicit(&nd->dead, memory_order_acquire);
}

/* A reply's errno as the bio's status.  ENOTCONN is libnbd failing what a
 * closed connection held; the server's own ESHUTDOWN means the same. */
static int reply_status(struct nbdev *nd, int err)
{
	if (!err)
		return 0;
	if (err == ENOTCONN || err == ESHUTDOWN) {
		nbdev_kill(nd);
		return -EIO;
	}
	return -err;
}

/* A call libnbd refused: nothing was queued, so no callback will run.  A
 * handle that is no longer connected says EINVAL; the bio gets -EIO. */
static int refused_status(struct nbdev_conn *c)
{
	int err = nbd_get_errno();

	if (nbdev_dead(c->nd) || nbd_aio_is_dead(c->h) == 1 || nbd_aio_is_closed(c->h) == 1) {
		nbdev_kill(c->nd);
		return -EIO;
	}
	return err ? -err : -EIO;
}

/* ---- data ---- */

/* The bio's data as one buffer: its own when its window lies in one
 * segment (every ring read or write), else a bounce buffer it owns. */
static void *bio_data(struct blkring_bio *bio)
{
	const struct iovec *v = bio->vec;
	void *buf;

	if (likely(v[0].iov_len - bio->vec_skip >= bio->size))
		return (char *)v[0].iov_base + bio->vec_skip;
	buf = malloc(bio->size);
	if (buf && bio->op == REQ_OP_WRITE)
		blkring__bio_copy_from(bio, buf);
	bio->driver_data = buf;
	return buf;
}

static void bio_data_done(struct blkring_bio *bio, int status)
{
	if (likely(!bio->driver_data))
		return;
	if (!status && bio->op == REQ_OP_READ)
		blkring__bio_copy_to(bio, bio->driver_data);
	free(bio->driver_data);
	bio->driver_data = NULL;
}

/* ---- issue ---- */

static int nbdev_reply(void *user_data, int *error);

/* A send libnbd could not finish waits for the socket: the interrupt
 * polls a submit queue's for writing once told; a poller looks itself. */
static void kick_writer(struct nbdev_conn *c)
{
	if (c->hctx->poll || !(nbd_aio_get_direction(c->h) & LIBNBD_AIO_DIRECTION_WRITE))
		return;
	if (!atomic_exchange_explicit(&c->write_kicked, true, memory_order_acq_rel))
		interrupt_wake(c->nd);
}

static uint32_t zero_flags(const struct blkring_bio *bio)
{
	return ((bio->flags & BIO_NOUNMAP) ? LIBNBD_CMD_FLAG_NO_HOLE : 0) |
	       ((bio->flags & BIO_NOFALLBACK) ? LIBNBD_CMD_FLAG_FAST_ZERO : 0);
}

/* Hands the command to libnbd; returns its cookie, or -1 when refused. */
static int64_t send_cmd(struct nbdev_conn *c, struct blkring_bio *bio, void *buf)
{
	nbd_completion_callback cb = {.callback = nbdev_reply, .user_data = bio};
	uint64_t off = bio->sector << SECTOR_SHIFT;

	if (bio->deadline_ns & CMD_FLUSHING)
		return nbd_aio_flush(c->h, cb, 0);
	switch (bio->op) {
	case REQ_OP_READ:
		return nbd_aio_pread(c->h, buf, bio->size, off, cb, 0);
	case REQ_OP_WRITE:
		return nbd_aio_pwrite(c->h, buf, bio->size, off, cb,
		                      (bio->flags & BIO_FUA) && c->nd->can_fua ? LIBNBD_CMD_FLAG_FUA
		                                                               : 0);
	case REQ_OP_FLUSH:
		return nbd_aio_flush(c->h, cb, 0);
	case REQ_OP_DISCARD:
		return nbd_aio_trim(c->h, bio->size, off, cb, 0);
	default:
		return nbd_aio_zero(c->h, bio->size, off, cb, zero_flags(bio));
	}
}

/* Starts a bio that holds a tag: 0 when libnbd has it (its callback runs
 * once, maybe already), else the status to end it with. */
static int nbdev_issue(struct nbdev_conn *c, struct blkring_bio *bio)
{
	void *buf = NULL;

	if (unlikely(nbdev_dead(c->nd)))
		return -EIO;
	if (unlikely(bio->op == REQ_OP_WRITE_ZEROES && (bio->flags & BIO_NOFALLBACK) &&
	             !c->nd->can_fast_zero))
		return -EOPNOTSUPP;
	if (bio->op <= REQ_OP_WRITE && !(bio->deadline_ns & CMD_FLUSHING)) {
		buf = bio_data(bio);
		if (unlikely(!buf))
			return -ENOMEM;
	}
	cmd_stamp(c, bio);
	if (unlikely(send_cmd(c, bio, buf) < 0)) {
		cmd_unstamp(c, bio);
		return refused_status(c);
	}
	kick_writer(c);
	return 0;
}

/* ---- completion ---- */

/* libnbd's completion callback, with the handle's lock held: no nbd_*
 * call on this handle here, and no end (its end_io may submit). */
static int nbdev_reply(void *user_data, int *error)
{
	struct blkring_bio *bio = user_data;
	struct nbdev_conn *c = bio_conn(bio);

	cmd_unstamp(c, bio);
	cmd_set_errno(bio, *error);
	llist_add(&bio->node, &c->done);
	return 1; /* retire the command */
}

/*
 * Ends a bio that holds a tag, and starts the bios its tag and the next
 * ones pass to; a start that fails at once is ended here too, in a loop
 * rather than by recursion.
 */
static void nbdev_end(struct nbdev_conn *c, struct blkring_bio *bio, int status)
{
	while (bio) {
		struct blkring_bio *next = blkring__hctx_put_tag(c->hctx);

		bio_data_done(bio, status);
		blkring__bio_endio(bio, status);
		bio = next;
		if (bio) {
			cmd_init(bio);
			status = nbdev_issue(c, bio);
			if (!status)
				bio = NULL;
		}
	}
}

/* FUA where the server has no FUA of its own: a flush after the write. */
static bool needs_flush(const struct nbdev_conn *c, const struct blkring_bio *bio)
{
	return bio->op == REQ_OP_WRITE && (bio->flags & BIO_FUA) && !c->nd->can_fua &&
	       !(bio->deadline_ns & CMD_FLUSHING);
}

/* A reply taken off the done list; returns 1 when the bio ended. */
static int complete_one(struct nbdev_conn *c, struct blkring_bio *bio)
{
	int status = reply_status(c->nd, cmd_errno(bio));

	if (!status && needs_flush(c, bio)) {
		bio->deadline_ns |= CMD_FLUSHING;
		status = nbdev_issue(c, bio);
		if (!status)
			return 0;
	}
	nbdev_end(c, bio, status);
	return 1;
}

/* Ends what the connection's callbacks left; any thread may, after its
 * nbd_* call on the handle returned.  Returns how many bios ended. */
static int drain(struct nbdev_conn *c)
{
	struct llist_node *n;
	int ended = 0;

	while ((n = llist_reverse_order(llist_del_all(&c->done)))) {
		while (n) {
			struct llist_node *next = n->next;

			ended += complete_one(c, container_of(n, struct blkring_bio, node));
			n = next;
		}
	}
	return ended;
}

/* ---- submission ---- */

/* Sends what submitters left while the socket's driver was reading. */
static void issue_deferred(struct nbdev_conn *c)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&c->deferred));

	while (n) {
		struct llist_node *next = n->next;
		struct blkring_bio *bio = container_of(n, struct blkring_bio, node);
		int status = nbdev_issue(c, bio);

		if (status)
			nbdev_end(c, bio, status);
		n = next;
	}
}

/*
 * The submitter's half of the hand-off with reading_end(): it publishes its
 * bio, then reads `reading` with a read-modify-write, which the driver's
 * exchange in reading_end() is ordered with.  Either the driver's exchange
 * comes after it and sees the bio, or it sees the driver done and sends
 * the list itself.
 */
static bool defer(struct nbdev_conn *c, struct blkring_bio *bio)
{
	if (!atomic_load_explicit(&c->reading, memory_order_relaxed))
		return false;
	llist_add(&bio->node, &c->deferred);
	if (!atomic_fetch_add_explicit(&c->reading, 0, memory_order_acq_rel))
		issue_deferred(c);
	return true;
}

static void reading_begin(struct nbdev_conn *c)
{
	atomic_store_explicit(&c->reading, 1, memory_order_relaxed);
}

static void reading_end(struct nbdev_conn *c)
{
	atomic_exchange_explicit(&c->reading, 0, memory_order_acq_rel);
	issue_deferred(c);
}

static void nbdev_start(struct nbdev_conn *c, struct blkring_bio *bio)
{
	int status;

	cmd_init(bio);
	if (defer(c, bio))
		return;
	status = nbdev_issue(c, bio);
	if (unlikely(status))
		nbdev_end(c, bio, status);
	drain(c);
}

static void nbdev_start_tagged(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct nbdev *nd = dev->private;

	nbdev_start(&nd->conns[bio->hctx->index], bio);
}

static void ring_attach(struct blkring_dev *dev, struct blkring_ioc *ioc, struct nbdev_conn *c);

static int nbdev_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct nbdev *nd = dev->private;
	struct blkring_hctx *hctx;
	int ret;

	if (unlikely(nbdev_dead(nd))) {
		blkring__bio_endio(bio, -EIO);
		return 0;
	}
	hctx = blkring__map_queue(dev, bio);
	bio->hctx = hctx;
	if (bio->ioc && !hctx->poll)
		ring_attach(dev, bio->ioc, &nd->conns[hctx->index]);
	ret = blkring__hctx_get_tag_plugged(hctx, bio);
	if (ret <= 0)
		return ret; /* waiting for a tag (0), or NOWAIT without one */
	nbdev_start(&nd->conns[hctx->index], bio);
	return 0;
}

/* ---- driving the sockets ---- */

static inline bool conn_closed(struct nbdev_conn *c)
{
	return atomic_load_explicit(&c->closed, memory_order_relaxed);
}

/*
 * What to wait for on a connection's socket.  nbd_aio_get_direction() takes
 * no lock, and while another thread issues a command it may see a state in
 * between; but a connected handle always takes a read notification, so
 * the socket is always watched for reading, and for writing when libnbd
 * says a send waits.
 */
static short conn_events(struct nbdev_conn *c)
{
	return (short)(POLLIN |
	               ((nbd_aio_get_direction(c->h) & LIBNBD_AIO_DIRECTION_WRITE) ? POLLOUT : 0));
}

/*
 * Lets libnbd read or write what poll() found.  libnbd must not be told
 * to read when nothing is there: in 1.14 that leaves it in a state where
 * it sends no new command until the next read, so only a socket poll()
 * found readable is read.  Returns false when the connection is gone.
 */
static bool conn_notify(struct nbdev_conn *c, short revents)
{
	int r = 0;

	if (revents & (POLLIN | POLLHUP | POLLERR))
		r = nbd_aio_notify_read(c->h);
	else if (revents & POLLOUT)
		r = nbd_aio_notify_write(c->h);
	/* A closed handle has no direction; an unlocked look may also see
	 * none while another thread issues, so the locked call decides. */
	if (r < 0 || (!nbd_aio_get_direction(c->h) && nbd_aio_is_closed(c->h) == 1)) {
		atomic_store_explicit(&c->closed, true, memory_order_relaxed);
		nbdev_kill(c->nd);
		return false;
	}
	return true;
}

/* Reads what the socket holds, up to a batch of replies, without waiting:
 * their bios then end together, and whoever waits for them is woken once. */
static void conn_pump(struct nbdev_conn *c)
{
	for (int i = 0; i < NBD_POLL_BATCH && !conn_closed(c); i++) {
		struct pollfd p = {.fd = c->fd, .events = conn_events(c)};

		if (poll(&p, 1, 0) <= 0 || !conn_notify(c, p.revents))
			break;
	}
}

/*
 * Reads what one socket holds and ends the bios replied to; returns how
 * many ended.  Several threads may want to (a poller, the interrupt, a
 * ring's owner that slept on it): the queue's busy flag picks one, and
 * -EBUSY tells the others.  What a poll() saw before the flag was taken
 * may be read already, so the socket is looked at again under it.
 */
static int drive_conn(struct nbdev_conn *c)
{
	if (!blkring__hctx_trylock_poll(c->hctx))
		return -EBUSY;
	reading_begin(c);
	conn_pump(c);
	reading_end(c);
	blkring__hctx_unlock_poll(c->hctx);
	kick_writer(c); /* libnbd may have begun a send it could not finish */
	return drain(c);
}

static int nbdev_poll_queue(struct blkring_dev *dev, struct blkring_hctx *hctx)
{
	struct nbdev *nd = dev->private;
	int ended = drive_conn(&nd->conns[hctx->index]);

	return ended > 0 ? ended : 0;
}

/*
 * What the interrupt's epoll set asks of a submit queue's socket: replies
 * unless a ring's owner watches for them, and room to send whenever libnbd
 * has a send waiting (a sleeping owner watches for replies only); nothing
 * once the connection is gone.  watch_lock held.
 */
static uint32_t watch_wanted(struct nbdev_conn *c)
{
	bool send = nbd_aio_get_direction(c->h) & LIBNBD_AIO_DIRECTION_WRITE;

	if (conn_closed(c))
		return 0;
	return (atomic_load_explicit(&c->watcher, memory_order_relaxed) ? 0 : EPOLLIN) |
	       (send ? EPOLLOUT : 0);
}

/* Brings the interrupt's epoll set up to date; watch_lock held.  Should
 * that fail, the interrupt is woken to try again (it does at every wake).
 * A socket that is gone leaves the set: epoll reports its hang-up whatever
 * it is asked for. */
static void watch_update(struct nbdev_conn *c)
{
	struct epoll_event ev = {.events = watch_wanted(c), .data.ptr = c};

	if (c->watch_events == NBD_WATCH_GONE)
		return;
	if (conn_closed(c)) {
		epoll_ctl(c->nd->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		c->watch_events = NBD_WATCH_GONE;
		return;
	}
	if (ev.events == c->watch_events)
		return;
	if (epoll_ctl(c->nd->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->watch_events = ev.events;
	else
		interrupt_wake(c->nd);
}

/* Some command on c has waited io_timeout_ms: an epoch that ended that
 * long ago still counts one.  Epochs older than NBD_EPOCHS alias newer
 * ones, but a command that old was caught before, or is caught when its
 * bucket's epoch comes round again. */
static bool conn_overdue(struct nbdev_conn *c, uint64_t now)
{
	uint64_t timeout = c->nd->conf.io_timeout_ms * 1000000ULL, g = c->nd->epoch_ns;
	uint64_t cur = now / g, last, e;

	if (now < timeout)
		return false;
	last = (now - timeout) / g;
	for (e = cur >= NBD_EPOCHS - 1 ? cur - (NBD_EPOCHS - 1) : 0; e < last; e++)
		if (atomic_load_explicit(&c->pending[e % NBD_EPOCHS], memory_order_relaxed))
			return true;
	return false;
}

static void watchdog(struct nbdev *nd)
{
	uint64_t now = blkring__now_ns();

	for (unsigned i = 0; i < nd->nr_conns && !nbdev_dead(nd); i++)
		if (conn_overdue(&nd->conns[i], now))
			nbdev_kill(nd);
}

/* An owner that holds the watch but has not read the socket for
 * NBD_WATCH_HOLD_NS, or slept on it for NBD_WATCH_SLEEP_NS, loses it (one
 * still asleep then sleeps beside the interrupt); watch_lock held. */
static void watch_expire(struct nbdev_conn *c, uint64_t now)
{
	uint64_t seen = atomic_load_explicit(&c->watch_seen, memory_order_relaxed);
	bool asleep = atomic_load_explicit(&c->watch_asleep, memory_order_relaxed);

	if (atomic_load_explicit(&c->watcher, memory_order_relaxed) &&
	    (int64_t)(now - seen) > (int64_t)(asleep ? NBD_WATCH_SLEEP_NS : NBD_WATCH_HOLD_NS))
		atomic_store_explicit(&c->watcher, NULL, memory_order_relaxed);
}

/* After each wake of the interrupt: the bios other threads' calls left
 * replied, and the socket's watch (a send may wait now, or no more; an
 * owner may have let it lapse).  True while an owner holds it. */
static bool interrupt_tend(struct nbdev_conn *c, uint64_t now)
{
	bool held;

	drain(c);
	atomic_exchange_explicit(&c->write_kicked, false, memory_order_acq_rel);
	pthread_mutex_lock(&c->watch_lock);
	watch_expire(c, now);
	watch_update(c);
	held = atomic_load_explicit(&c->watcher, memory_order_relaxed);
	pthread_mutex_unlock(&c->watch_lock);
	return held;
}

/* The "interrupt": reads the submit queues' replies that no ring's owner
 * waits on and ends their bios, and every epoch looks for commands past
 * their time on every queue. */
static void *interrupt_thread(void *arg)
{
	struct nbdev *nd = arg;
	int period_ms = (int)((nd->epoch_ns + 999999) / 1000000);
	struct epoll_event evs[NBD_MAX_CONNS + 1];
	uint64_t next_check = 0;
	bool held = false;

	while (!atomic_load_explicit(&nd->stop, memory_order_acquire)) {
		/* While an owner holds a watch, wake to see that it still reads. */
		int wait_ms = held ? (int)(NBD_WATCH_HOLD_NS / 1000000) : period_ms;
		int n = epoll_wait(nd->epfd, evs, (int)ARRAY_SIZE(evs), wait_ms);
		bool lost = false;
		uint64_t now;

		for (int i = 0; i < n; i++) {
			struct nbdev_conn *c = evs[i].data.ptr;
			eventfd_t v;

			if (!c)
				eventfd_read(nd->wake_fd, &v);
			else if (drive_conn(c) < 0)
				lost = true;
		}
		now = blkring__now_ns();
		held = false;
		for (unsigned i = 0; i < nd->conf.connections; i++)
			held |= interrupt_tend(&nd->conns[i], now);
		if (lost)
			sched_yield(); /* another reader has the socket: let it finish */
		if (now >= next_check) {
			watchdog(nd);
			next_check = now + nd->epoch_ns;
		}
	}
	return NULL;
}

/* ---- a ring's owner asleep on its queue ---- */

/*
 * A ring's owner that sleeps with bios on a submit queue watches that
 * queue's socket for replies instead of the interrupt, and reads them
 * itself when it wakes: its bios then end on its own thread, with no
 * hand-off from the interrupt (fio's nbd engine and a plain libnbd loop
 * have none).  It takes the watch at a sleep and keeps it while it comes
 * back to the socket (Linux suspends a device's interrupts so while an
 * application busy-polls it); the interrupt takes it back from an owner
 * that stays away, so replies nobody waits on still reach it.
 */
struct nbdev_ring {
	struct blkring_ioc_queue link;
	struct nbdev_conn *c; /* the submit queue the ring's bios map to */
	bool watching;        /* from a sleep until the reap after it */
};

static struct nbdev_ring *ring_of(struct blkring_ioc_queue *link)
{
	return container_of(link, struct nbdev_ring, link);
}

static bool conn_busy(struct nbdev_conn *c)
{
	return atomic_load_explicit(&c->hctx->inflight, memory_order_relaxed) != 0;
}

static bool ring_holds(struct nbdev_ring *r)
{
	return atomic_load_explicit(&r->c->watcher, memory_order_relaxed) == r;
}

/* The watch, unless another ring's owner has it.  The interrupt is woken
 * to time the new holder. */
static bool ring_take_watch(struct nbdev_ring *r)
{
	struct nbdev_conn *c = r->c;
	bool taken = false;

	pthread_mutex_lock(&c->watch_lock);
	if (!atomic_load_explicit(&c->watcher, memory_order_relaxed)) {
		atomic_store_explicit(&c->watch_seen, blkring__now_ns(), memory_order_relaxed);
		atomic_store_explicit(&c->watcher, r, memory_order_relaxed);
		watch_update(c);
		taken = true;
	}
	pthread_mutex_unlock(&c->watch_lock);
	if (taken)
		interrupt_wake(c->nd);
	return ring_holds(r);
}

static void ring_give_watch(struct nbdev_ring *r)
{
	struct nbdev_conn *c = r->c;

	pthread_mutex_lock(&c->watch_lock);
	if (ring_holds(r)) {
		atomic_store_explicit(&c->watch_asleep, false, memory_order_relaxed);
		atomic_store_explicit(&c->watcher, NULL, memory_order_relaxed);
		watch_update(c);
	}
	pthread_mutex_unlock(&c->watch_lock);
}

/* Sleeps on the socket where the ring holds its watch or can take it.  An
 * owner the interrupt lets go as it gets here sleeps beside the interrupt,
 * once: whoever wakes first reads. */
static int ring_prepare_sleep(struct blkring_ioc_queue *link, bool *wakes)
{
	struct nbdev_ring *r = ring_of(link);
	struct nbdev_conn *c = r->c;

	(void)wakes;
	r->watching = conn_busy(c) && !conn_closed(c) && !nbdev_dead(c->nd) &&
	              (ring_holds(r) || ring_take_watch(r));
	if (!r->watching)
		return -ENOENT;
	atomic_store_explicit(&c->watch_seen, blkring__now_ns(), memory_order_relaxed);
	atomic_store_explicit(&c->watch_asleep, true, memory_order_relaxed);
	return c->fd;
}

/* After a watched sleep (every wait enters once after its sleeps), and
 * now and then while the ring holds the watch: what the socket holds,
 * whoever it is for. */
static unsigned ring_reap(struct blkring_ioc_queue *link)
{
	struct nbdev_ring *r = ring_of(link);
	struct nbdev_conn *c = r->c;
	uint64_t now;
	int ended;

	if (likely(!r->watching)) {
		if (likely(!ring_holds(r)))
			return 0;
		now = blkring__now_ns();
		if (now - atomic_load_explicit(&c->watch_seen, memory_order_relaxed) <
		    NBD_WATCH_LOOK_NS)
			return 0;
	}
	r->watching = false;
	ended = drive_conn(c);
	atomic_store_explicit(&c->watch_seen, blkring__now_ns(), memory_order_relaxed);
	atomic_store_explicit(&c->watch_asleep, false, memory_order_relaxed);
	return ended > 0 ? (unsigned)ended : 0;
}

static bool ring_idle(struct blkring_ioc_queue *link)
{
	return !conn_busy(ring_of(link)->c);
}

static void ring_exit(struct blkring_ioc_queue *link)
{
	struct nbdev_ring *r = ring_of(link);

	ring_give_watch(r);
	free(r);
}

static const struct blkring_ioc_queue_ops nbdev_ring_ops = {
    .reap = ring_reap,
    .prepare_sleep = ring_prepare_sleep,
    .idle = ring_idle,
    .exit = ring_exit,
};

/* The submitting ring's queue for the device, from its owner's thread.
 * Without one (no memory) the interrupt ends the ring's bios. */
static void ring_attach(struct blkring_dev *dev, struct blkring_ioc *ioc, struct nbdev_conn *c)
{
	struct nbdev_ring *r;

	if (likely(blkring__ioc_find(ioc, dev)))
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	r->link.dev = dev;
	r->link.ops = &nbdev_ring_ops;
	r->c = c;
	blkring__ioc_add(ioc, &r->link);
}

/* ---- connecting ---- */

/* libnbd's message without the name of the call it came from. */
static const char *libnbd_cause(void)
{
	const char *msg = nbd_get_error(), *colon;

	if (!msg)
		return "unknown error";
	colon = strstr(msg, ": ");
	return !strncmp(msg, "nbd_", 4) && colon ? colon + 2 : msg;
}

static int connect_error(struct nbdev *nd)
{
	int err = nbd_get_errno();

	return blkring__error(err ? -err : -EIO, "nbd: '%s': %s", nd->uri, libnbd_cause());
}

static int connect_timed_out(struct nbdev *nd)
{
	return blkring__error(-ETIMEDOUT,
	                      "nbd: '%s': connect: no answer from the server within "
	                      "connect_timeout_ms=%" PRIu64,
	                      nd->uri, nd->conf.connect_timeout_ms);
}

/* Milliseconds to the deadline for poll(), -1 without one, 0 once past. */
static int ms_left(uint64_t deadline)
{
	uint64_t now;

	if (!deadline)
		return -1;
	now = blkring__now_ns();
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* During the handshake only this thread drives the handle: its direction
 * is what the handshake waits for. */
static short dir_events(unsigned dir)
{
	return (short)(((dir & LIBNBD_AIO_DIRECTION_READ) ? POLLIN : 0) |
	               ((dir & LIBNBD_AIO_DIRECTION_WRITE) ? POLLOUT : 0));
}

/* libnbd 1.14 has no connect timeout: drive its handshake with our own
 * poll loop until it is ready, it fails, or the deadline passes. */
static int connect_wait(struct nbdev *nd, struct nbd_handle *h)
{
	uint64_t limit = nd->conf.connect_timeout_ms * 1000000ULL;
	uint64_t deadline = limit ? blkring__now_ns() + limit : 0;

	while (nbd_aio_is_connecting(h)) {
		unsigned dir = nbd_aio_get_direction(h);
		struct pollfd p = {.fd = nbd_aio_get_fd(h), .events = dir_events(dir)};
		int left = ms_left(deadline), r;

		if (!left)
			return connect_timed_out(nd);
		r = poll(&p, 1, left);
		if (r < 0 && errno != EINTR)
			return blkring__error(-errno, "nbd: '%s': poll: %s", nd->uri,
			                      strerror(errno));
		if (r <= 0)
			continue;
		if ((dir & LIBNBD_AIO_DIRECTION_READ) && (p.revents & (POLLIN | POLLHUP | POLLERR)))
			r = nbd_aio_notify_read(h);
		else
			r = nbd_aio_notify_write(h);
		if (r < 0)
			break;
	}
	return nbd_aio_is_ready(h) ? 0 : connect_error(nd);
}

static int conn_connect(struct nbdev *nd, struct nbdev_conn *c)
{
	int ret;

	c->h = nbd_create();
	if (!c->h)
		return blkring__error(-ENOMEM, "nbd: '%s': %s", nd->uri, libnbd_cause());
	/* tls-psk-file= and the like name local files: the URI is the
	 * application's own.  Simple replies: a read's data comes in one
	 * piece after its header, where a structured reply takes two more
	 * reads of the socket, and a block device needs nothing else.  A
	 * read's buffer is not zeroed first: a bio that fails has no data. */
	if (nbd_set_uri_allow_local_file(c->h, true) ||
	    nbd_set_request_structured_replies(c->h, false) ||
	    nbd_set_pread_initialize(c->h, false) || nbd_aio_connect_uri(c->h, nd->uri))
		return connect_error(nd);
	ret = connect_wait(nd, c->h);
	if (ret)
		return ret;
	c->fd = fcntl(nbd_aio_get_fd(c->h), F_DUPFD_CLOEXEC, 0);
	if (c->fd < 0)
		return blkring__error(-errno, "nbd: '%s': %s", nd->uri, strerror(errno));
	return 0;
}

/* ---- the server's capabilities and limits ---- */

static int conf_error(const char *key, uint64_t val, const char *expected)
{
	return blkring__error(-EINVAL, "nbd: bad value %" PRIu64 " for key '%s': expected %s", val,
	                      key, expected);
}

/* More than one connection only where writes on one are seen on all. */
static int check_multi_conn(struct nbdev *nd, struct nbd_handle *h)
{
	if (nd->nr_conns == 1 || nbd_can_multi_conn(h) == 1)
		return 0;
	return blkring__error(-EINVAL,
	                      "nbd: '%s': connections=%" PRIu64 " with poll_queues=%" PRIu64
	                      " needs %u connections, and the server does not offer multi-conn "
	                      "(its connections may not see each other's writes)",
	                      nd->uri, nd->conf.connections, nd->conf.poll_queues, nd->nr_conns);
}

static int64_t block_size(struct nbd_handle *h, int which)
{
	int64_t v = nbd_get_block_size(h, which);

	return v > 0 ? v : 0;
}

/* Limits from the server's block sizes; trims and zeroes under 4 GiB, the
 * protocol's 32-bit length, so the block layer splits larger ones. */
static int set_limits(struct blkring_dev *dev, struct nbdev *nd, struct nbd_handle *h)
{
	struct blkring_limits *lim = &dev->limits;
	int64_t size = nbd_get_size(h), min = block_size(h, LIBNBD_SIZE_MINIMUM);
	int64_t pref = block_size(h, LIBNBD_SIZE_PREFERRED),
	        max = block_size(h, LIBNBD_SIZE_MAXIMUM);
	uint32_t lbs = min > SECTOR_SIZE ? (uint32_t)min : SECTOR_SIZE;
	uint32_t max_io = max ? (uint32_t)(max < NBD_LIBNBD_MAX_IO ? max : NBD_LIBNBD_MAX_IO)
	                      : NBD_DEFAULT_MAX_IO;
	uint32_t range_sectors = (uint32_t)((NBD_MAX_RANGE - lbs) >> SECTOR_SHIFT);

	if (size < 0)
		return connect_error(nd);
	if (lbs > NBD_MAX_BLOCK || (lbs & (lbs - 1)) || max_io < lbs)
		return blkring__error(-EINVAL,
		                      "nbd: '%s': block sizes the server announced are unusable: "
		                      "minimum %" PRId64 ", maximum %" PRId64,
		                      nd->uri, min, max);
	dev->size = (uint64_t)size & ~((uint64_t)lbs - 1);
	lim->logical_block_size = lbs;
	lim->physical_block_size =
	    pref > lbs && pref <= NBD_MAX_BLOCK && !(pref & (pref - 1)) ? (uint32_t)pref : lbs;
	lim->max_sectors = max_io >> SECTOR_SHIFT;
	lim->discard_granularity = lbs;
	lim->max_discard_sectors = nbd_can_trim(h) == 1 ? range_sectors : 0;
	lim->max_write_zeroes_sectors = nbd_can_zero(h) == 1 ? range_sectors : 0;
	return 0;
}

static void set_features(struct blkring_dev *dev, struct nbdev *nd, struct nbd_handle *h)
{
	nd->can_flush = nbd_can_flush(h) == 1;
	nd->can_fua = nbd_can_fua(h) == 1;
	nd->can_fast_zero = nbd_can_fast_zero(h) == 1;
	dev->read_only = nd->conf.ro || nbd_is_read_only(h) == 1;
	dev->features = (nd->can_flush ? BLKRING_FEAT_FLUSH : 0) |
	                (nd->can_fua || nd->can_flush ? BLKRING_FEAT_FUA : 0) |
	                (dev->limits.max_discard_sectors ? BLKRING_FEAT_DISCARD : 0) |
	                (dev->limits.max_write_zeroes_sectors ? BLKRING_FEAT_WRITE_ZEROES : 0) |
	                (nd->conf.poll_queues ? BLKRING_FEAT_POLL : 0) |
	                (nbd_can_multi_conn(h) == 1 ? BLKRING_FEAT_MULTI_CONN : 0);
}

/* ---- setup and teardown ---- */

static int connect_all(struct blkring_dev *dev, struct nbdev *nd)
{
	int ret = conn_connect(nd, &nd->conns[0]) ?: check_multi_conn(nd, nd->conns[0].h) ?:
	          set_limits(dev, nd, nd->conns[0].h);

	for (unsigned i = 1; !ret && i < nd->nr_conns; i++)
		ret = conn_connect(nd, &nd->conns[i]);
	if (!ret)
		set_features(dev, nd, nd->conns[0].h);
	return ret;
}

static int conns_alloc(struct nbdev *nd)
{
	nd->conns = aligned_alloc(CACHELINE, sizeof(*nd->conns) * nd->nr_conns);
	if (!nd->conns)
		return -ENOMEM;
	memset(nd->conns, 0, sizeof(*nd->conns) * nd->nr_conns);
	for (unsigned i = 0; i < nd->nr_conns; i++) {
		nd->conns[i].nd = nd;
		nd->conns[i].fd = -1;
		llist_init(&nd->conns[i].done);
		llist_init(&nd->conns[i].deferred);
		pthread_mutex_init(&nd->conns[i].watch_lock, NULL);
	}
	return 0;
}

/* The interrupt's epoll set: its eventfd, and every submit queue's socket
 * for replies (a send waiting at connect time is looked for at its first
 * wake). */
static int watch_start(struct nbdev *nd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

	nd->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (nd->epfd < 0 || epoll_ctl(nd->epfd, EPOLL_CTL_ADD, nd->wake_fd, &ev))
		return blkring__error(-errno, "nbd: '%s': epoll: %s", nd->uri, strerror(errno));
	for (unsigned i = 0; i < nd->conf.connections; i++) {
		struct nbdev_conn *c = &nd->conns[i];

		ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = c};
		if (epoll_ctl(nd->epfd, EPOLL_CTL_ADD, c->fd, &ev))
			return blkring__error(-errno, "nbd: '%s': epoll: %s", nd->uri,
			                      strerror(errno));
		c->watch_events = EPOLLIN;
	}
	return 0;
}

static int start_interrupt(struct blkring_dev *dev, struct nbdev *nd)
{
	int ret = blkring__hctxs_init(dev, (unsigned)nd->conf.connections,
	                              (unsigned)nd->conf.poll_queues, NBD_DEPTH);

	if (ret)
		return ret;
	for (unsigned i = 0; i < nd->nr_conns; i++)
		nd->conns[i].hctx = &dev->hctxs[i];
	ret = watch_start(nd);
	if (ret)
		return ret;
	ret = blkring__thread_start(&nd->thread, NULL, interrupt_thread, nd, "blkring-nbd");
	if (ret)
		return ret;
	nd->has_thread = true;
	return 0;
}

/* Only with nothing in flight (the block layer's close says so): a
 * connection still up is told we leave, without waiting for the server. */
static void conn_close(struct nbdev_conn *c)
{
	if (c->h) {
		if (nbd_aio_is_ready(c->h))
			nbd_aio_disconnect(c->h, 0);
		nbd_close(c->h);
	}
	if (c->fd >= 0)
		close(c->fd);
}

static void nbdev_destroy(struct blkring_dev *dev)
{
	struct nbdev *nd = dev->private;

	if (!nd)
		return;
	if (nd->has_thread) {
		atomic_store_explicit(&nd->stop, true, memory_order_release);
		interrupt_wake(nd);
		pthread_join(nd->thread, NULL);
	}
	for (unsigned i = 0; nd->conns && i < nd->nr_conns; i++) {
		conn_close(&nd->conns[i]);
		pthread_mutex_destroy(&nd->conns[i].watch_lock);
	}
	if (nd->epfd >= 0)
		close(nd->epfd);
	if (nd->wake_fd >= 0)
		close(nd->wake_fd);
	free(nd->conns);
	free(nd->uri);
	free(nd);
	dev->private = NULL;
}

static const struct blkring_dev_ops nbdev_ops = {
    .name = "nbd",
    .submit_bio = nbdev_submit_bio,
    .poll_queue = nbdev_poll_queue,
    .start_tagged = nbdev_start_tagged,
    .destroy = nbdev_destroy,
};

/* ---- the spec ---- */

static bool is_nbd_uri(const char *text)
{
	for (unsigned i = 0; i < ARRAY_SIZE(nbd_uri_schemes); i++)
		if (!strncmp(text, nbd_uri_schemes[i], strlen(nbd_uri_schemes[i])))
			return true;
	return false;
}

static int parse_keys(struct blkring_spec *spec, struct nbdev_conf *c)
{
	return blkring__spec_u64(spec, "connections", &c->connections) ?:
	       blkring__spec_u64(spec, "poll_queues", &c->poll_queues) ?:
	       blkring__spec_u64(spec, "connect_timeout_ms", &c->connect_timeout_ms) ?:
	       blkring__spec_u64(spec, "io_timeout_ms", &c->io_timeout_ms) ?:
	       blkring__spec_bool(spec, "ro", &c->ro) ?:
	       blkring__spec_check_unused(spec, nbdev_keys);
}

static int check_conf(const struct nbdev_conf *c)
{
	if (!is_nbd_uri(c->uri))
		return blkring__error(
		    -EINVAL,
		    "nbd: '%s': expected an NBD URI: nbd://HOST[:PORT][/EXPORT], "
		    "nbd+unix:///[EXPORT]?socket=PATH, or nbds:// and nbds+unix:// "
		    "for TLS",
		    c->uri);
	if (!c->connections || c->connections > NBD_MAX_CONNS)
		return conf_error("connections", c->connections, "1 to 64");
	if (c->poll_queues > NBD_MAX_CONNS - c->connections)
		return conf_error("poll_queues", c->poll_queues, "0 to 64 - connections");
	if (c->connect_timeout_ms > NBD_MAX_TIMEOUT_MS)
		return conf_error("connect_timeout_ms", c->connect_timeout_ms,
		                  "0 (no limit) to 86400000 (a day)");
	if (c->io_timeout_ms < NBD_MIN_IO_TIMEOUT_MS || c->io_timeout_ms > NBD_MAX_TIMEOUT_MS)
		return conf_error("io_timeout_ms", c->io_timeout_ms, "10 to 86400000 (a day)");
	return 0;
}

static int nbdev_open(struct blkring_spec *spec, struct blkring_dev **devp)
{
	struct nbdev_conf c = {
	    .uri = spec->arg,
	    .connections = 1,
	    .connect_timeout_ms = 10000,
	    .io_timeout_ms = 30000,
	};
	struct blkring_dev *dev;
	struct nbdev *nd;
	int ret = parse_keys(spec, &c) ?: check_conf(&c);

	if (ret)
		return ret;
	dev = blkring__dev_alloc(&nbdev_ops);
	nd = calloc(1, sizeof(*nd));
	if (!dev || !nd) {
		free(dev);
		free(nd);
		return -ENOMEM;
	}
	*devp = dev;
	dev->private = nd;
	nd->conf = c;
	nd->nr_conns = (unsigned)(c.connections + c.poll_queues);
	nd->epoch_ns = c.io_timeout_ms * 1000000ULL / NBD_EPOCHS_PER_TIMEOUT;
	nd->uri = strdup(c.uri);
	nd->epfd = -1;
	nd->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!nd->uri || nd->wake_fd < 0)
		return -ENOMEM;
	return conns_alloc(nd) ?: connect_all(dev, nd) ?: start_interrupt(dev, nd);
	/* on failure the registry calls nbdev_destroy() */
}

/* What the registry looks up in the module (registry.c, which also claims
 * the URI alone as a spec: `nbd+unix:///?socket=S,connections=2`). */
BLKRING__MODULE_API const struct blkring_driver blkring__nbd_driver = {
    .type = "nbd",
    .arg = SPEC_ARG_OPAQUE,
    .arg_name = "URI",
    .open = nbdev_open,
};
