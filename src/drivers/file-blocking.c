// SPDX-License-Identifier: MIT
/*
 * The file driver's blocking fallbacks: ioctl(BLKDISCARD) where the kernel
 * has no asynchronous discard for the device, ioctl(BLKZEROOUT) where
 * fallocate cannot zero it.  They block for the whole operation, so they
 * run on one thread of the device's own, started on first use, and no
 * submitter, ring owner or reaper ever waits on them.
 *
 * One thread is enough: BLKDISCARD holds the mapping's invalidate lock for
 * the whole call, so more threads only queue on it (64 threads of it run
 * slower than one).  The blocking discard call (BIO_SYNC) runs the ioctl
 * in its own thread instead, as a program calling BLKDISCARD would.
 */
#include <errno.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include "drivers/file.h"
#include "lib/futex.h"
#include "lib/thread.h"

static int run_ioctl(struct file_dev *fd, struct blkring_bio *bio)
{
	uint64_t range[2] = {bio->sector << SECTOR_SHIFT, bio->size};
	unsigned long req = bio->op == REQ_OP_DISCARD ? BLKDISCARD : BLKZEROOUT;

	if (ioctl(fd->fd, req, range) < 0)
		return -errno;
	return 0;
}

void file_blocking_run(struct file_dev *fd, struct blkring_bio *bio)
{
	file_end(fd, bio, run_ioctl(fd, bio));
}

static void run_list(struct llist_node *n)
{
	n = llist_reverse_order(n);
	while (n) {
		struct blkring_bio *bio = container_of(n, struct blkring_bio, node);

		n = n->next;
		file_blocking_run(bio->dev->private, bio);
	}
}

static void blocking_sleep(struct file_blocking *b)
{
	sleeper_prepare(&b->state);
	if (llist_empty(&b->bios) && !atomic_load_explicit(&b->stop, memory_order_acquire))
		sleeper_wait(&b->state, NULL);
	sleeper_done(&b->state);
}

static void *blocking_thread(void *arg)
{
	struct file_blocking *b = arg;

	for (;;) {
		struct llist_node *n = llist_del_all(&b->bios);

		if (n) {
			run_list(n);
			continue;
		}
		if (atomic_load_explicit(&b->stop, memory_order_acquire))
			return NULL;
		blocking_sleep(b);
	}
}

static int blocking_start(struct file_blocking *b)
{
	int ret = 0;

	pthread_mutex_lock(&b->start_lock);
	if (!b->started) {
		ret = blkring__thread_start(&b->thread, NULL, blocking_thread, b, "blkring-ioctl");
		b->started = !ret;
	}
	pthread_mutex_unlock(&b->start_lock);
	return ret;
}

void file_blocking_queue(struct file_dev *fd, struct blkring_bio *bio)
{
	struct file_blocking *b = &fd->blocking;
	int ret = blocking_start(b);

	if (ret) {
		file_end(fd, bio, ret);
		return;
	}
	if (llist_add(&bio->node, &b->bios))
		sleeper_wake(&b->state);
}

void file_blocking_init(struct file_blocking *b)
{
	llist_init(&b->bios);
	atomic_init(&b->state, SLEEPER_RUNNING);
	atomic_init(&b->stop, false);
	pthread_mutex_init(&b->start_lock, NULL);
	b->started = false;
}

/* The device has nothing in flight: the thread finds its list empty. */
void file_blocking_exit(struct file_blocking *b)
{
	if (b->started) {
		atomic_store_explicit(&b->stop, true, memory_order_release);
		sleeper_wake(&b->state);
		pthread_join(b->thread, NULL);
	}
	pthread_mutex_destroy(&b->start_lock);
}
