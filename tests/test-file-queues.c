// SPDX-License-Identifier: MIT
/*
 * file devices: the per-ring kernel io_urings, driven through the
 * struct blkring_ioc contract by a stand-in for a ring's owner thread
 * (flush at the end of a batch, reap, sleep in poll(), exit).
 * Batching, sleeping on kernel completions, two owners on one device with
 * nothing shared, polled I/O (kernel IOPOLL and CQ polling), registered
 * buffers, and bios that wait for a tag.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "drivers/file.h"
#include "test-file-util.h"

/* ---- a stand-in for a ring's owner ---- */

struct owner {
	struct blkring_ioc ioc;
	unsigned ended;
	int sleeps;
};

struct obio {
	struct blkring_bio bio;
	struct owner *o;
	_Atomic int done;
	_Atomic int status;
	bool off_owner; /* ended on a thread other than the owner's */
	pthread_t self;
};

/* The owner is no ring: it never has task work. */
static bool owner_no_work(struct blkring_ioc *ioc)
{
	(void)ioc;
	return false;
}

static void owner_init(struct owner *o)
{
	memset(o, 0, sizeof(*o));
	o->ioc.work_pending = owner_no_work;
	o->ioc.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(o->ioc.wake_fd >= 0);
}

static void obio_end(struct blkring_bio *bio)
{
	struct obio *ob = container_of(bio, struct obio, bio);

	ob->off_owner = !pthread_equal(ob->self, pthread_self());
	atomic_store(&ob->status, bio->status);
	atomic_store(&ob->done, 1);
}

static void owner_flush(struct owner *o)
{
	if (!o->ioc.flush_pending)
		return;
	o->ioc.flush_pending = false;
	for (struct blkring_ioc_queue *q = o->ioc.queues; q; q = q->next)
		q->ops->flush(q);
}

static unsigned owner_reap(struct owner *o)
{
	unsigned n = 0;

	for (struct blkring_ioc_queue *q = o->ioc.queues; q; q = q->next)
		n += q->ops->reap(q);
	owner_flush(o);
	return n;
}

/* The ring's sleep (ioc.c): inside the one queue that covers it, or in
 * poll() on every queue's descriptor, unless one has completions already.
 * (A ring also polls the eventfd of its task work unless a queue watches
 * it.) */
static void owner_sleep(struct owner *o)
{
	struct blkring_ioc_queue *cover = NULL;
	struct pollfd pfds[4];
	nfds_t n = 0;

	for (struct blkring_ioc_queue *q = o->ioc.queues; q; q = q->next) {
		bool wakes = false;
		int fd = q->ops->prepare_sleep(q, &wakes);

		if (fd == -EAGAIN)
			return;
		if (fd >= 0 && n < 4)
			pfds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
		if (fd >= 0 && wakes)
			cover = q;
	}
	o->sleeps++;
	if (n == 1 && cover && cover->ops->sleep) {
		CHECK_EQ(cover->ops->sleep(cover, &(struct timespec){.tv_sec = 10}), 1);
		return;
	}
	CHECK(poll(pfds, n, 10000) > 0);
}

static void owner_wait(struct owner *o, struct obio *ob)
{
	while (!atomic_load(&ob->done)) {
		if (!owner_reap(o) && !atomic_load(&ob->done))
			owner_sleep(o);
	}
}

static void owner_exit(struct owner *o)
{
	struct blkring_ioc_queue *q = o->ioc.queues, *next;

	for (; q; q = next) {
		next = q->next;
		q->ops->exit(q);
	}
	close(o->ioc.wake_fd);
}

static void obio_prep(struct owner *o, struct obio *ob, struct blkring_dev *dev, unsigned op,
                      void *buf, uint64_t off, uint32_t len)
{
	memset(ob, 0, sizeof(*ob));
	blkring__bio_init(&ob->bio, dev, op, off, len);
	if (buf)
		blkring__bio_set_buf(&ob->bio, buf, len);
	ob->bio.end_io = obio_end;
	ob->bio.ioc = &o->ioc;
	ob->o = o;
	ob->self = pthread_self();
}

static int obio_run(struct owner *o, struct blkring_dev *dev, unsigned op, void *buf, uint64_t off,
                    uint32_t len)
{
	struct obio ob;

	obio_prep(o, &ob, dev, op, buf, off, len);
	CHECK_EQ(blkring__submit_bio(&ob.bio), 0);
	owner_flush(o);
	owner_wait(o, &ob);
	return atomic_load(&ob.status);
}

static struct file_ring_queue *ring_queue_of(struct owner *o, struct blkring_dev *dev)
{
	struct blkring_ioc_queue *link = blkring__ioc_find(&o->ioc, dev);

	CHECK(link);
	return container_of(link, struct file_ring_queue, link);
}

/* ---- cases ---- */

#define BATCH 32

/* A batch of bios waits in the ring's kernel SQ until the flush, and every
 * one completes on the owner's thread. */
static void batch_roundtrip(struct blkring_dev *dev, uint64_t seed)
{
	struct owner o;
	struct obio *ob = calloc(BATCH, sizeof(*ob));
	char *buf = tf_alloc(BATCH * 4096), *out = tf_alloc(BATCH * 4096);
	struct file_ring_queue *rq;

	owner_init(&o);
	tf_fill(buf, BATCH * 4096, 0, seed);
	for (int i = 0; i < BATCH; i++) {
		obio_prep(&o, &ob[i], dev, REQ_OP_WRITE, buf + i * 4096, (uint64_t)i * 4096, 4096);
		CHECK_EQ(blkring__submit_bio(&ob[i].bio), 0);
	}
	rq = ring_queue_of(&o, dev);
	CHECK(o.ioc.flush_pending);
	CHECK_EQ(io_uring_sq_ready(&rq->q.ring), BATCH);
	for (int i = 0; i < BATCH; i++)
		CHECK(!atomic_load(&ob[i].done));
	owner_flush(&o);
	for (int i = 0; i < BATCH; i++) {
		owner_wait(&o, &ob[i]);
		CHECK_EQ(atomic_load(&ob[i].status), 0);
		CHECK(!ob[i].off_owner);
	}
	CHECK_EQ(obio_run(&o, dev, REQ_OP_FLUSH, NULL, 0, 0), 0);
	CHECK_EQ(obio_run(&o, dev, REQ_OP_READ, out, 0, BATCH * 4096), 0);
	CHECK(tf_check_pattern(out, BATCH * 4096, 0, seed));
	CHECK(blkring__ioc_find(&o.ioc, dev) == &rq->link); /* one queue per (ring, device) */
	owner_exit(&o);
	free(ob);
	free(buf);
	free(out);
}

static void test_tmpfs_batch(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "batch.img"));

	batch_roundtrip(dev, 11);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Loop devices complete later, from interrupts: the owner sleeps in poll()
 * on the kernel ring, which wakes it. */
static void test_loop_sleeps(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct owner o;
	char *buf = tf_alloc(1 << 20);

	batch_roundtrip(dev, 12);
	owner_init(&o);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(obio_run(&o, dev, REQ_OP_READ, buf, (uint64_t)i << 20, 1 << 20), 0);
	CHECK(o.sleeps > 0);
	owner_exit(&o);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* Discards and zeroes, with their fallbacks, from a ring's queue. */
static void test_loop_commands(void)
{
	struct blkring_dev *dev = tf_open("%s", tf_loop(0));
	struct owner o;
	char *buf = tf_alloc(65536);

	owner_init(&o);
	tf_fill(buf, 65536, 0, 5);
	CHECK_EQ(obio_run(&o, dev, REQ_OP_WRITE, buf, 0, 65536), 0);
	CHECK_EQ(obio_run(&o, dev, REQ_OP_DISCARD, NULL, 0, 8192), 0);
	CHECK_EQ(obio_run(&o, dev, REQ_OP_WRITE_ZEROES, NULL, 16384, 8192), 0);
	CHECK_EQ(obio_run(&o, dev, REQ_OP_READ, buf, 0, 65536), 0);
	CHECK(tf_is_zero(buf, 8192));
	CHECK(tf_check_pattern(buf + 8192, 8192, 8192, 5));
	CHECK(tf_is_zero(buf + 16384, 8192));
	CHECK(tf_check_pattern(buf + 24576, 65536 - 24576, 24576, 5));
	owner_exit(&o);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

struct two {
	struct blkring_dev *dev;
	int id;
};

static void *owner_thread(void *arg)
{
	struct two *t = arg;
	struct owner o;
	char *buf = tf_alloc(65536);

	owner_init(&o);
	for (int i = 0; i < 64; i++) {
		uint64_t off = ((uint64_t)t->id * 64 + i) * 65536;

		tf_fill(buf, 65536, off, 8);
		CHECK_EQ(obio_run(&o, t->dev, REQ_OP_WRITE, buf, off, 65536), 0);
		CHECK_EQ(obio_run(&o, t->dev, REQ_OP_READ, buf, off, 65536), 0);
		CHECK(tf_check_pattern(buf, 65536, off, 8));
	}
	owner_exit(&o);
	free(buf);
	return NULL;
}

/* Two rings on one device: each its own kernel ring, nothing shared. */
static void test_two_owners(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=8M", tf_path(tf.shm_dir, "two.img"));
	struct two t[2] = {{dev, 0}, {dev, 1}};
	pthread_t tid[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&tid[i], NULL, owner_thread, &t[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	CHECK_EQ(blkring__dev_inflight(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Polled bios complete only when polled, through the device's poll op,
 * with `expect` (what the kernel answers). */
static void polled_reads(struct blkring_dev *dev, bool kernel_poll, int expect)
{
	struct owner o;
	struct obio ob[4];
	char *buf = tf_alloc(4 * 4096);
	struct file_ring_queue *rq;

	owner_init(&o);
	tf_fill(buf, 4 * 4096, 0, 9);
	CHECK_EQ(obio_run(&o, dev, REQ_OP_WRITE, buf, 0, 4 * 4096), 0);
	memset(buf, 0, 4 * 4096);
	for (int i = 0; i < 4; i++) {
		obio_prep(&o, &ob[i], dev, REQ_OP_READ, buf + i * 4096, (uint64_t)i * 4096, 4096);
		ob[i].bio.flags = BIO_POLLED;
		CHECK_EQ(blkring__submit_bio(&ob[i].bio), 0);
		CHECK(ob[i].bio.hctx->poll);
	}
	rq = ring_queue_of(&o, dev);
	CHECK(rq->poll.has_ring);
	CHECK_EQ(rq->poll.iopoll, kernel_poll);
	owner_flush(&o);
	owner_reap(&o); /* the interrupt side never ends a polled bio */
	for (int i = 0; i < 4; i++) {
		while (!atomic_load(&ob[i].done))
			CHECK(blkring__poll_bio(&ob[i].bio) >= 0);
		CHECK_EQ(atomic_load(&ob[i].status), expect);
		CHECK(!ob[i].off_owner);
	}
	if (!expect)
		CHECK(tf_check_pattern(buf, 4 * 4096, 0, 9));
	owner_exit(&o);
	free(buf);
}

static void test_poll_cq(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "poll.img"));
	struct blkring_dev_info info;
	struct owner o;
	struct obio ob;
	char *buf = tf_alloc(4096);

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK(info.features & BLKRING_FEAT_POLL);
	CHECK(!(info.features & BLKRING_FEAT_KERNEL_POLL)); /* tmpfs: the CQ is polled */
	CHECK_EQ(info.nr_poll_queues, 1);
	polled_reads(dev, false, 0);

	/* Only polling ends it: the CQE waits in the poll ring for a poller. */
	owner_init(&o);
	obio_prep(&o, &ob, dev, REQ_OP_READ, buf, 0, 4096);
	ob.bio.flags = BIO_POLLED;
	CHECK_EQ(blkring__submit_bio(&ob.bio), 0);
	owner_flush(&o);
	CHECK_EQ(owner_reap(&o), 0);
	CHECK(!atomic_load(&ob.done));
	while (!blkring__poll_bio(&ob.bio))
		CHECK(!atomic_load(&ob.done));
	CHECK(atomic_load(&ob.done));
	owner_exit(&o);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/*
 * IORING_SETUP_IOPOLL, forced on a loop device: it has no poll queues, so
 * the kernel answers every polled read with -EOPNOTSUPP, which passes
 * through (a device that polls is found by itself: see kernel_polls()).
 */
static void test_poll_kernel(void)
{
	struct blkring_dev *dev = tf_open("file:%s,iopoll=1", tf_loop(0));
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK(info.features & BLKRING_FEAT_KERNEL_POLL);
	polled_reads(dev, true, -EOPNOTSUPP);
	CHECK_EQ(blkring_dev_close(dev), 0);
	dev = tf_open("%s", tf_loop(0));
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK(!(info.features & BLKRING_FEAT_KERNEL_POLL));
	polled_reads(dev, false, 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Discards and flushes are never polled (as in Linux): they complete on
 * the interrupt side even when marked. */
static void test_poll_only_rw(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "pollrw.img"));
	struct owner o;
	struct obio ob;

	owner_init(&o);
	obio_prep(&o, &ob, dev, REQ_OP_DISCARD, NULL, 0, 4096);
	ob.bio.flags = BIO_POLLED;
	CHECK_EQ(blkring__submit_bio(&ob.bio), 0);
	owner_flush(&o);
	owner_wait(&o, &ob);
	CHECK_EQ(atomic_load(&ob.status), 0);
	owner_exit(&o);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Registered buffers become the kernel ring's fixed buffers; a new
 * registration is registered anew. */
static void test_fixed_buffers(void)
{
	struct blkring_dev *dev = tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "fixed.img"));
	char *a = tf_alloc(65536), *b = tf_alloc(65536);
	struct iovec iov[2] = {{a, 65536}, {b, 65536}};
	struct file_ring_queue *rq;
	struct owner o;
	struct obio ob;

	owner_init(&o);
	o.ioc.bufs = iov;
	o.ioc.nr_bufs = 2;
	o.ioc.bufs_gen = 1;
	tf_fill(a + 4096, 8192, 4096, 3);
	obio_prep(&o, &ob, dev, REQ_OP_WRITE, a + 4096, 4096, 8192);
	ob.bio.flags = BIO_FIXED_BUF;
	ob.bio.buf_index = 0;
	CHECK_EQ(blkring__submit_bio(&ob.bio), 0);
	rq = ring_queue_of(&o, dev);
	CHECK(rq->q.fixed_bufs);
	CHECK_EQ(rq->q.bufs_gen, 1);
	owner_flush(&o);
	owner_wait(&o, &ob);
	CHECK_EQ(atomic_load(&ob.status), 0);

	obio_prep(&o, &ob, dev, REQ_OP_READ, b, 4096, 8192);
	ob.bio.flags = BIO_FIXED_BUF;
	ob.bio.buf_index = 1;
	CHECK_EQ(blkring__submit_bio(&ob.bio), 0);
	owner_flush(&o);
	owner_wait(&o, &ob);
	CHECK_EQ(atomic_load(&ob.status), 0);
	CHECK(tf_check_pattern(b, 8192, 4096, 3));

	/* A new registration (one buffer now): registered on the next fixed bio. */
	o.ioc.nr_bufs = 1;
	o.ioc.bufs_gen = 2;
	memset(a, 0, 8192);
	obio_prep(&o, &ob, dev, REQ_OP_READ, a, 4096, 8192);
	ob.bio.flags = BIO_FIXED_BUF;
	CHECK_EQ(blkring__submit_bio(&ob.bio), 0);
	CHECK_EQ(rq->q.bufs_gen, 2);
	CHECK(rq->q.fixed_bufs);
	owner_flush(&o);
	owner_wait(&o, &ob);
	CHECK(tf_check_pattern(a, 8192, 4096, 3));
	owner_exit(&o);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(a);
	free(b);
}

#define WAITERS 16

/* Beyond the tags, bios wait; whoever frees a tag starts the next on the
 * shared queue, which may end it on its own thread. */
static void test_tag_waiters(void)
{
	struct blkring_dev *dev =
	    tf_open("file:%s,size=1M,hw_queue_depth=2", tf_path(tf.shm_dir, "waiters.img"));
	struct obio *ob = calloc(WAITERS, sizeof(*ob));
	char *buf = tf_alloc(WAITERS * 4096);
	struct owner o;

	owner_init(&o);
	tf_fill(buf, WAITERS * 4096, 0, 4);
	for (int i = 0; i < WAITERS; i++) {
		obio_prep(&o, &ob[i], dev, REQ_OP_WRITE, buf + i * 4096, (uint64_t)i * 4096, 4096);
		CHECK_EQ(blkring__submit_bio(&ob[i].bio), 0);
	}
	owner_flush(&o);
	for (int i = 0; i < WAITERS; i++) {
		while (!atomic_load(&ob[i].done))
			if (!owner_reap(&o))
				usleep(100);
		CHECK_EQ(atomic_load(&ob[i].status), 0);
	}
	memset(buf, 0, WAITERS * 4096);
	CHECK_EQ(blkring_dev_pread(dev, buf, WAITERS * 4096, 0), WAITERS * 4096);
	CHECK(tf_check_pattern(buf, WAITERS * 4096, 0, 4));
	owner_exit(&o);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(ob);
	free(buf);
}

static const struct test_case cases[] = {
    {"tmpfs_batch", test_tmpfs_batch, 0},
    {"loop_sleeps", test_loop_sleeps, 0},
    {"loop_commands", test_loop_commands, 0},
    {"two_owners", test_two_owners, 0},
    {"poll_cq", test_poll_cq, 0},
    {"poll_kernel", test_poll_kernel, 0},
    {"poll_only_rw", test_poll_only_rw, 0},
    {"fixed_buffers", test_fixed_buffers, 0},
    {"tag_waiters", test_tag_waiters, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	tf_setup();
	tf_add_loop(32 << 20, 512);
	return tf_main(cases, argc, argv);
}
