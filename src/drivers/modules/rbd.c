// SPDX-License-Identifier: MIT
/*
 * rbd devices: an image in a Ceph cluster, through librbd's asynchronous
 * calls.  `rbd:POOL/IMAGE[@SNAP][,key=value...]`; a snapshot opens
 * read-only.  Built as a module (blkring-rbd.so) that the registry loads
 * on the first rbd: open, so programs that never open one do not depend on
 * librbd and librados.
 *
 *   conf=PATH             ceph.conf (default: librados' lookup, $CEPH_CONF)
 *   id=CLIENT             the cephx user (default admin)
 *   cluster=NAME          the cluster's name (default ceph)
 *   mon_host=ADDRS        monitors, overriding the conf's
 *   keyring=PATH          the user's keyring, overriding the conf's
 *   osd_op_timeout=SEC    how long an I/O or the connect may take (default
 *                         30; librados' own default of 0 waits forever)
 *   poll_queues=N         poll queues (default 0)
 *   completion=callback|eventfd
 *                         how completions come back (default callback)
 *   cache=writethrough|writeback|none
 *                         librbd's cache (default writethrough: a write
 *                         completes once the OSDs have it; writeback
 *                         completes it in the cache, and only a flush
 *                         says whether it reached them)
 *   ro=0|1                read-only
 *
 * One image handle serves every queue (handles of one image in one
 * process fight over its exclusive lock on every write).  With
 * completion=callback, librbd's threads run a callback per I/O: it ends
 * the bio (the ring it came from takes it as task work), or, for a poll
 * queue, leaves it on the queue's done list for its poller.  With
 * completion=eventfd, I/Os carry no callback: librbd signals the image's
 * eventfd, and whoever reaps the image's completion list -- the device's
 * thread (the "interrupt") or a poller -- routes each to its queue.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <rados/librados.h>
#include <rbd/librbd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "block/blkdev.h"
#include "lib/error.h"
#include "lib/thread.h"

#define RBD_DEPTH 256
#define RBD_MAX_POLL_QUEUES 16
#define RBD_MAX_IO (4U << 20)
#define RBD_MAX_RANGE_SECTORS (1U << 22) /* 2 GiB per discard or zeroes */
#define RBD_MAX_TIMEOUT 86400
#define RBD_REAP_BATCH 32

static const char rbdev_keys[] =
    "conf, id, cluster, mon_host, keyring, osd_op_timeout, poll_queues, completion, cache, ro";
static const char *const completion_modes[] = {"callback", "eventfd", NULL};
static const char *const cache_modes[] = {"writethrough", "writeback", "none", NULL};

enum { COMPLETE_CALLBACK, COMPLETE_EVENTFD };
enum { CACHE_WRITETHROUGH, CACHE_WRITEBACK, CACHE_NONE };

struct rbdev_conf {
	const char *name; /* POOL/IMAGE[@SNAP], for messages */
	const char *conf, *id, *cluster, *mon_host, *keyring;
	uint64_t osd_op_timeout, poll_queues;
	unsigned completion, cache;
	bool ro;
};

/* A hardware queue: polled ones keep what ended until their poller reaps it. */
struct rbdev_queue {
	struct llist_head done;
} __cacheline_aligned;

struct rbdev {
	struct rbdev_conf conf;
	char *pool, *image, *snap;
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t img;
	struct rbdev_queue *queues;
	/* completion=eventfd: the image's eventfd, whose completion list one
	 * reaper at a time takes from, and the thread that reaps it. */
	int event_fd, stop_fd;
	pthread_mutex_t reap_lock;
	/* Orders a bio's issue before its reap in our own code: librbd does,
	 * but where the thread sanitizer cannot see it. */
	_Atomic uint64_t issued;
	pthread_t interrupt;
	bool interrupt_started;
};

/* A vectored bio's window, copied (it may start inside its first segment
 * and end inside its last). */
struct rbdev_io {
	int nr;
	struct iovec iov[];
};

static int rbdev_issue(struct blkring_dev *dev, struct blkring_bio *bio);

static inline struct rbdev_io *bio_io(const struct blkring_bio *bio)
{
	return bio->driver_data;
}

/* ---- ending ---- */

/* Ends bio; the tag it frees goes to a bio that waited for one, which is
 * issued here (and ended here too when that fails). */
static void rbdev_end(struct blkring_dev *dev, struct blkring_bio *bio, int status)
{
	while (bio) {
		struct blkring_bio *next = blkring__hctx_put_tag(bio->hctx);

		free(bio->driver_data);
		bio->driver_data = NULL;
		blkring__bio_endio(bio, status);
		bio = next;
		if (bio) {
			status = rbdev_issue(dev, bio);
			if (!status)
				bio = NULL;
		}
	}
}

static int issue_flush(struct rbdev *rd, struct blkring_bio *bio);

/* librbd's answer for bio: a FUA write's flush still to come (BIO_FUA is
 * cleared once it is sent), or its end. */
static void rbdev_answer(struct blkring_dev *dev, struct blkring_bio *bio, ssize_t ret)
{
	int status = ret < 0 ? (int)ret : 0;

	if (!status && bio->op == REQ_OP_WRITE && (bio->flags & BIO_FUA)) {
		bio->flags &= ~BIO_FUA;
		status = issue_flush(dev->private, bio);
		if (!status)
			return;
	}
	rbdev_end(dev, bio, status);
}

/* A completion reaped for bio: polled bios wait for their poller. */
static void rbdev_route(struct blkring_dev *dev, struct blkring_bio *bio, ssize_t ret,
                        const struct blkring_hctx *poller)
{
	struct rbdev *rd = dev->private;

	if (!bio->hctx->poll || bio->hctx == poller) {
		rbdev_answer(dev, bio, ret);
		return;
	}
	bio->deadline_ns = (uint64_t)ret; /* the answer, kept for the poller */
	llist_add(&bio->node, &rd->queues[bio->hctx->index].done);
}

static void rbdev_callback(rbd_completion_t c, void *arg)
{
	struct blkring_bio *bio = arg;
	ssize_t ret = rbd_aio_get_return_value(c);

	rbd_aio_release(c);
	rbdev_route(bio->dev, bio, ret, NULL);
}

/* ---- issue ---- */

static int64_t bio_offset(const struct blkring_bio *bio)
{
	return (int64_t)(bio->sector << SECTOR_SHIFT);
}

static int issue_flush(struct rbdev *rd, struct blkring_bio *bio)
{
	rbd_callback_t cb = rd->conf.completion == COMPLETE_CALLBACK ? rbdev_callback : NULL;
	rbd_completion_t c;
	int ret = rbd_aio_create_completion(bio, cb, &c);

	if (ret)
		return ret;
	ret = rbd_aio_flush(rd->img, c);
	if (ret)
		rbd_aio_release(c);
	return ret;
}

static int window_copy(struct blkring_bio *bio)
{
	unsigned n = 0;
	uint64_t left = bio->size, skip = bio->vec_skip;
	struct rbdev_io *io = malloc(sizeof(*io) + sizeof(struct iovec) * bio->nr_vecs);

	if (!io)
		return -ENOMEM;
	for (unsigned i = 0; left && i < bio->nr_vecs; i++) {
		uint64_t len = bio->vec[i].iov_len - skip;

		len = len < left ? len : left;
		io->iov[n].iov_base = (char *)bio->vec[i].iov_base + skip;
		io->iov[n++].iov_len = len;
		left -= len;
		skip = 0;
	}
	io->nr = (int)n;
	bio->driver_data = io;
	return 0;
}

static bool one_segment(const struct blkring_bio *bio)
{
	return bio->vec[0].iov_len - bio->vec_skip >= bio->size;
}

static int issue_rw(struct rbdev *rd, struct blkring_bio *bio, rbd_completion_t c)
{
	bool write = bio->op == REQ_OP_WRITE;
	int ret;

	if (one_segment(bio)) {
		char *buf = (char *)bio->vec[0].iov_base + bio->vec_skip;

		return write ? rbd_aio_write(rd->img, (uint64_t)bio_offset(bio), bio->size, buf, c)
		             : rbd_aio_read(rd->img, (uint64_t)bio_offset(bio), bio->size, buf, c);
	}
	ret = window_copy(bio);
	if (ret)
		return ret;
	return write
	           ? rbd_aio_writev(rd->img, bio_io(bio)->iov, bio_io(bio)->nr, bio_offset(bio), c)
	           : rbd_aio_readv(rd->img, bio_io(bio)->iov, bio_io(bio)->nr, bio_offset(bio), c);
}

static int issue(struct rbdev *rd, struct blkring_bio *bio, rbd_completion_t c)
{
	uint64_t off = (uint64_t)bio_offset(bio);

	switch (bio->op) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		return issue_rw(rd, bio, c);
	case REQ_OP_FLUSH:
		return rbd_aio_flush(rd->img, c);
	case REQ_OP_DISCARD:
		return rbd_aio_discard(rd->img, off, bio->size, c);
	case REQ_OP_WRITE_ZEROES:
		return rbd_aio_write_zeroes(
		    rd->img, off, bio->size, c,
		    bio->flags & BIO_NOUNMAP ? RBD_WRITE_ZEROES_FLAG_THICK_PROVISION : 0, 0);
	}
	return -EOPNOTSUPP;
}

static int rbdev_issue(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct rbdev *rd = dev->private;
	rbd_callback_t cb = rd->conf.completion == COMPLETE_CALLBACK ? rbdev_callback : NULL;
	rbd_completion_t c;
	int ret;

	bio->driver_data = NULL;
	ret = rbd_aio_create_completion(bio, cb, &c);
	if (ret)
		return ret;
	if (!cb)
		atomic_fetch_add_explicit(&rd->issued, 1, memory_order_release);
	ret = issue(rd, bio, c);
	if (ret)
		rbd_aio_release(c);
	return ret;
}

static void rbdev_start(struct blkring_dev *dev, struct blkring_bio *bio)
{
	int ret = rbdev_issue(dev, bio);

	if (ret)
		rbdev_end(dev, bio, ret);
}

static void rbdev_start_tagged(struct blkring_dev *dev, struct blkring_bio *bio)
{
	rbdev_start(dev, bio);
}

static int rbdev_submit_bio(struct blkring_dev *dev, struct blkring_bio *bio)
{
	struct blkring_hctx *hctx = blkring__map_queue(dev, bio);
	int ret;

	bio->hctx = hctx;
	ret = blkring__hctx_get_tag_plugged(hctx, bio);
	if (ret <= 0)
		return ret; /* waiting for a tag (0), or NOWAIT without one */
	rbdev_start(dev, bio);
	return 0;
}

/* ---- reaping: the eventfd's completion list, and poll queues ---- */

/* Takes what the image's completion list holds; one reaper at a time, so
 * the eventfd's count and the list agree. */
static int reap_events(struct blkring_dev *dev, const struct blkring_hctx *poller)
{
	struct rbdev *rd = dev->private;
	rbd_completion_t comps[RBD_REAP_BATCH];
	uint64_t v;
	int n, total = 0;

	if (pthread_mutex_trylock(&rd->reap_lock))
		return 0;
	if (read(rd->event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		v = 0;
	while ((n = rbd_poll_io_events(rd->img, comps, RBD_REAP_BATCH)) > 0) {
		atomic_load_explicit(&rd->issued, memory_order_acquire);
		for (int i = 0; i < n; i++) {
			struct blkring_bio *bio = rbd_aio_get_arg(comps[i]);
			ssize_t ret = rbd_aio_get_return_value(comps[i]);

			rbd_aio_release(comps[i]);
			rbdev_route(dev, bio, ret, poller);
		}
		total += n;
	}
	pthread_mutex_unlock(&rd->reap_lock);
	return total;
}

/* Ends what reached a poll queue's done list; its busy flag held. */
static int drain_done(struct blkring_dev *dev, struct rbdev_queue *q)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&q->done));
	int ended = 0;

	while (n) {
		struct blkring_bio *bio = container_of(n, struct blkring_bio, node);

		n = n->next;
		rbdev_answer(dev, bio, (ssize_t)bio->deadline_ns);
		ended++;
	}
	return ended;
}

static int rbdev_poll_queue(struct blkring_dev *dev, struct blkring_hctx *hctx)
{
	struct rbdev *rd = dev->private;
	int n = 0;

	if (!blkring__hctx_trylock_poll(hctx))
		return 0;
	if (rd->conf.completion == COMPLETE_EVENTFD)
		n = reap_events(dev, hctx);
	n += drain_done(dev, &rd->queues[hctx->index]);
	blkring__hctx_unlock_poll(hctx);
	return n;
}

/* completion=eventfd: reaps for the submit queues whenever the image's
 * eventfd fires, until stop_fd does. */
static void *interrupt_thread(void *arg)
{
	struct blkring_dev *dev = arg;
	struct rbdev *rd = dev->private;
	struct pollfd p[2] = {{.fd = rd->event_fd, .events = POLLIN},
	                      {.fd = rd->stop_fd, .events = POLLIN}};

	while (!(p[1].revents & POLLIN)) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			reap_events(dev, NULL);
	}
	return NULL;
}

/* ---- setup and teardown ---- */

static int rados_cause(struct rbdev *rd, const char *what, int err)
{
	return blkring__error(err < 0 ? err : -EIO, "rbd: '%s': %s: %s", rd->conf.name, what,
	                      strerror(err < 0 ? -err : EIO));
}

static int conf_set(struct rbdev *rd, const char *key, const char *val)
{
	int ret = val ? rados_conf_set(rd->cluster, key, val) : 0;

	return ret ? blkring__error(ret, "rbd: '%s': bad value '%s' for the cluster setting %s",
	                            rd->conf.name, val, key)
	           : 0;
}

/* librbd's own default, writethrough until the first flush and writeback
 * after it, would change what a write's completion means mid-run. */
static int set_cache(struct rbdev *rd)
{
	switch (rd->conf.cache) {
	case CACHE_WRITEBACK:
		return conf_set(rd, "rbd_cache", "true")
		           ?: conf_set(rd, "rbd_cache_writethrough_until_flush", "false");
	case CACHE_NONE:
		return conf_set(rd, "rbd_cache", "false");
	}
	return conf_set(rd, "rbd_cache", "true") ?: conf_set(rd, "rbd_cache_max_dirty", "0");
}

static int connect_cluster(struct rbdev *rd)
{
	char timeout[24], name[128];
	int ret;

	snprintf(name, sizeof(name), "client.%s", rd->conf.id);
	snprintf(timeout, sizeof(timeout), "%" PRIu64, rd->conf.osd_op_timeout);
	ret = rados_create2(&rd->cluster, rd->conf.cluster, name, 0);
	if (ret)
		return rados_cause(rd, "cannot set up a cluster handle", ret);
	ret = rados_conf_read_file(rd->cluster, rd->conf.conf);
	if (ret && (rd->conf.conf || ret != -ENOENT))
		return blkring__error(ret, "rbd: '%s': cannot read the Ceph configuration %s: %s",
		                      rd->conf.name, rd->conf.conf ? rd->conf.conf : "(default)",
		                      strerror(-ret));
	ret = conf_set(rd, "mon_host", rd->conf.mon_host) ?:
	      conf_set(rd, "keyring", rd->conf.keyring) ?:
	      conf_set(rd, "rados_osd_op_timeout", timeout) ?:
	      conf_set(rd, "rados_mon_op_timeout", timeout) ?:
	      conf_set(rd, "client_mount_timeout", timeout) ?: set_cache(rd);
	if (ret)
		return ret;
	ret = rados_connect(rd->cluster);
	if (ret)
		return rados_cause(rd, "cannot connect to the cluster", ret);
	ret = rados_ioctx_create(rd->cluster, rd->pool, &rd->ioctx);
	if (ret)
		return blkring__error(ret, "rbd: '%s': cannot open pool '%s': %s", rd->conf.name,
		                      rd->pool, strerror(-ret));
	return 0;
}

static int open_image(struct rbdev *rd)
{
	int ret = rd->conf.ro || rd->snap
	              ? rbd_open_read_only(rd->ioctx, rd->image, &rd->img, rd->snap)
	              : rbd_open(rd->ioctx, rd->image, &rd->img, NULL);

	if (ret) {
		rd->img = NULL;
		return blkring__error(ret, "rbd: '%s': cannot open image '%s'%s%s in pool '%s': %s",
		                      rd->conf.name, rd->image, rd->snap ? " at snapshot " : "",
		                      rd->snap ? rd->snap : "", rd->pool, strerror(-ret));
	}
	return 0;
}

static int set_limits(struct blkring_dev *dev, struct rbdev *rd)
{
	struct blkring_limits *lim = &dev->limits;
	rbd_image_info_t info;
	int ret = rbd_stat(rd->img, &info, sizeof(info));

	if (ret)
		return rados_cause(rd, "cannot read the image's size", ret);
	dev->size = info.size & ~(uint64_t)(SECTOR_SIZE - 1);
	lim->logical_block_size = SECTOR_SIZE;
	lim->physical_block_size = SECTOR_SIZE;
	lim->max_sectors = RBD_MAX_IO >> SECTOR_SHIFT;
	lim->discard_granularity = SECTOR_SIZE;
	lim->max_discard_sectors = RBD_MAX_RANGE_SECTORS;
	lim->max_write_zeroes_sectors = RBD_MAX_RANGE_SECTORS;
	/* An I/O within one object goes to one OSD in one request. */
	lim->io_opt = info.obj_size <= UINT32_MAX ? (uint32_t)info.obj_size : 0;
	dev->read_only = rd->conf.ro || rd->snap;
	/* Discard is advisory in librbd (partial objects are skipped): it is
	 * offered, but never as a way to zero. */
	dev->features = BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD |
	                BLKRING_FEAT_WRITE_ZEROES | (rd->conf.poll_queues ? BLKRING_FEAT_POLL : 0) |
	                BLKRING_FEAT_MULTI_CONN;
	return 0;
}

static int start_events(struct blkring_dev *dev, struct rbdev *rd)
{
	int ret;

	if (rd->conf.completion != COMPLETE_EVENTFD)
		return 0;
	rd->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rd->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rd->event_fd < 0 || rd->stop_fd < 0)
		return -errno;
	ret = rbd_set_image_notification(rd->img, rd->event_fd, EVENT_TYPE_EVENTFD);
	if (ret)
		return rados_cause(rd, "cannot set the image's eventfd", ret);
	ret = blkring__thread_start(&rd->interrupt, NULL, interrupt_thread, dev, "blkring-rbd");
	rd->interrupt_started = !ret;
	return ret;
}

static void rbdev_destroy(struct blkring_dev *dev)
{
	struct rbdev *rd = dev->private;

	if (!rd)
		return;
	if (rd->interrupt_started) {
		uint64_t one = 1;

		if (write(rd->stop_fd, &one, sizeof(one)) < 0)
			abort(); /* an eventfd write cannot fail here */
		pthread_join(rd->interrupt, NULL);
	}
	if (rd->img)
		rbd_close(rd->img);
	if (rd->ioctx)
		rados_ioctx_destroy(rd->ioctx);
	if (rd->cluster)
		rados_shutdown(rd->cluster);
	if (rd->event_fd >= 0)
		close(rd->event_fd);
	if (rd->stop_fd >= 0)
		close(rd->stop_fd);
	pthread_mutex_destroy(&rd->reap_lock);
	free(rd->queues);
	free(rd->pool);
	free(rd);
	dev->private = NULL;
}

static const struct blkring_dev_ops rbdev_ops = {
    .name = "rbd",
    .submit_bio = rbdev_submit_bio,
    .poll_queue = rbdev_poll_queue,
    .start_tagged = rbdev_start_tagged,
    .destroy = rbdev_destroy,
};

/* ---- the spec ---- */

static int parse_keys(struct blkring_spec *spec, struct rbdev_conf *c)
{
	c->conf = blkring__spec_str(spec, "conf");
	c->id = blkring__spec_str(spec, "id") ?: "admin";
	c->cluster = blkring__spec_str(spec, "cluster") ?: "ceph";
	c->mon_host = blkring__spec_str(spec, "mon_host");
	c->keyring = blkring__spec_str(spec, "keyring");
	return blkring__spec_u64(spec, "osd_op_timeout", &c->osd_op_timeout) ?:
	       blkring__spec_u64(spec, "poll_queues", &c->poll_queues) ?:
	       blkring__spec_choice(spec, "completion", completion_modes, &c->completion) ?:
	       blkring__spec_choice(spec, "cache", cache_modes, &c->cache) ?:
	       blkring__spec_bool(spec, "ro", &c->ro) ?:
	       blkring__spec_check_unused(spec, rbdev_keys);
}

static int conf_error(const char *key, uint64_t val, const char *expected)
{
	return blkring__error(-EINVAL, "rbd: bad value %" PRIu64 " for key '%s': expected %s", val,
	                      key, expected);
}

/* POOL/IMAGE[@SNAP], each part non-empty. */
static int split_name(struct rbdev *rd, const char *name)
{
	char *slash, *at;

	rd->pool = strdup(name ? name : "");
	if (!rd->pool)
		return -ENOMEM;
	slash = strchr(rd->pool, '/');
	if (!slash || slash == rd->pool || !slash[1] || slash[1] == '@')
		return blkring__error(-EINVAL, "rbd: '%s': expected POOL/IMAGE or POOL/IMAGE@SNAP",
		                      name ? name : "");
	*slash = '\0';
	rd->image = slash + 1;
	at = strchr(rd->image, '@');
	if (at) {
		*at = '\0';
		rd->snap = at + 1;
		if (!*rd->snap)
			return blkring__error(-EINVAL, "rbd: '%s': no snapshot name after '@'",
			                      name);
	}
	return 0;
}

static int check_conf(const struct rbdev_conf *c)
{
	if (!c->osd_op_timeout || c->osd_op_timeout > RBD_MAX_TIMEOUT)
		return conf_error("osd_op_timeout", c->osd_op_timeout, "1 to 86400 seconds");
	if (c->poll_queues > RBD_MAX_POLL_QUEUES)
		return conf_error("poll_queues", c->poll_queues, "0 to 16");
	return 0;
}

static int rbdev_setup(struct blkring_dev *dev, struct rbdev *rd)
{
	rd->queues = aligned_alloc(CACHELINE, sizeof(*rd->queues) * (1 + rd->conf.poll_queues));
	if (!rd->queues)
		return -ENOMEM;
	for (unsigned i = 0; i <= rd->conf.poll_queues; i++)
		llist_init(&rd->queues[i].done);
	return connect_cluster(rd) ?: open_image(rd) ?: set_limits(dev, rd) ?:
	       blkring__hctxs_init(dev, 1, (unsigned)rd->conf.poll_queues, RBD_DEPTH) ?:
	       start_events(dev, rd);
}

static int rbdev_open(struct blkring_spec *spec, struct blkring_dev **devp)
{
	struct rbdev_conf c = {.name = spec->arg, .osd_op_timeout = 30};
	struct blkring_dev *dev;
	struct rbdev *rd;
	int ret = parse_keys(spec, &c) ?: check_conf(&c);

	if (ret)
		return ret;
	dev = blkring__dev_alloc(&rbdev_ops);
	rd = calloc(1, sizeof(*rd));
	if (!dev || !rd) {
		free(dev);
		free(rd);
		return -ENOMEM;
	}
	*devp = dev;
	dev->private = rd;
	rd->conf = c;
	rd->event_fd = rd->stop_fd = -1;
	pthread_mutex_init(&rd->reap_lock, NULL);
	return split_name(rd, c.name) ?: rbdev_setup(dev, rd);
	/* on failure the registry calls rbdev_destroy() */
}

/* What the registry looks up in the module (registry.c). */
BLKRING__MODULE_API const struct blkring_driver blkring__rbd_driver = {
    .type = "rbd",
    .arg = SPEC_ARG_OPAQUE,
    .arg_name = "POOL/IMAGE",
    .open = rbdev_open,
};
