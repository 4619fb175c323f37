// SPDX-License-Identifier: MIT
/*
 * The worker pool (io-wq's role): threads that run work which may block,
 * so the ring's owner never does.  Bounded, started lazily (a thread is
 * created only when work arrives and no worker is idle), stopped at ring
 * exit.  Off the fast path, so a mutex and a condition variable suffice.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/thread.h"
#include "ring.h"

int blkring__io_wq_init(struct blkring__io_wq *wq, unsigned max_workers,
                        void (*run)(struct blkring__wq_work *work))
{
	wq->threads = calloc(max_workers, sizeof(*wq->threads));
	if (!wq->threads)
		return -ENOMEM;
	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->more_work, NULL);
	wq->head = wq->tail = NULL;
	wq->run = run;
	wq->nr_workers = wq->nr_idle = wq->nr_queued = 0;
	wq->max_workers = max_workers;
	wq->exiting = false;
	return 0;
}

static void *io_wq_worker(void *arg)
{
	struct blkring__io_wq *wq = arg;

	pthread_mutex_lock(&wq->lock);
	for (;;) {
		struct blkring__wq_work *work = wq->head;

		if (work) {
			wq->head = work->next;
			if (!wq->head)
				wq->tail = NULL;
			wq->nr_queued--;
			pthread_mutex_unlock(&wq->lock);
			wq->run(work);
			pthread_mutex_lock(&wq->lock);
			continue;
		}
		if (wq->exiting)
			break;
		wq->nr_idle++;
		pthread_cond_wait(&wq->more_work, &wq->lock);
		wq->nr_idle--;
	}
	pthread_mutex_unlock(&wq->lock);
	return NULL;
}

static int io_wq_start_worker(struct blkring__io_wq *wq)
{
	int ret = blkring__thread_start(&wq->threads[wq->nr_workers], NULL, io_wq_worker, wq,
	                                "blkring-wq");

	if (ret)
		return ret;
	wq->nr_workers++;
	return 0;
}

/*
 * A new worker starts when queued work outnumbers idle workers (an idle
 * worker that was signalled still counts as idle until it runs, so a burst
 * does not pile up behind it).  Fails only when no worker exists and none
 * can be started.
 */
int blkring__io_wq_enqueue(struct blkring__io_wq *wq, struct blkring__wq_work *work)
{
	int ret = 0;

	work->next = NULL;
	pthread_mutex_lock(&wq->lock);
	if (wq->nr_queued + 1 > wq->nr_idle && wq->nr_workers < wq->max_workers)
		ret = io_wq_start_worker(wq);
	if (ret < 0 && wq->nr_workers) /* the running workers will get to it */
		ret = 0;
	if (!ret) {
		if (wq->tail)
			wq->tail->next = work;
		else
			wq->head = work;
		wq->tail = work;
		wq->nr_queued++;
		if (wq->nr_idle)
			pthread_cond_signal(&wq->more_work);
	}
	pthread_mutex_unlock(&wq->lock);
	return ret;
}

/* Takes back the work no worker has started; returns it as a list. */
struct blkring__wq_work *blkring__io_wq_cancel_queued(struct blkring__io_wq *wq)
{
	struct blkring__wq_work *list;

	pthread_mutex_lock(&wq->lock);
	list = wq->head;
	wq->head = wq->tail = NULL;
	wq->nr_queued = 0;
	pthread_mutex_unlock(&wq->lock);
	return list;
}

bool blkring__io_wq_cancel_one(struct blkring__io_wq *wq, struct blkring__wq_work *work)
{
	struct blkring__wq_work **pos;
	bool found = false;

	pthread_mutex_lock(&wq->lock);
	for (pos = &wq->head; *pos; pos = &(*pos)->next) {
		if (*pos != work)
			continue;
		*pos = work->next;
		if (wq->tail == work)
			wq->tail = NULL;
		for (struct blkring__wq_work *w = wq->head; w; w = w->next)
			wq->tail = w;
		wq->nr_queued--;
		found = true;
		break;
	}
	pthread_mutex_unlock(&wq->lock);
	return found;
}

unsigned blkring__io_wq_workers(struct blkring__io_wq *wq)
{
	unsigned nr;

	pthread_mutex_lock(&wq->lock);
	nr = wq->nr_workers;
	pthread_mutex_unlock(&wq->lock);
	return nr;
}

/* Workers finish the work they hold and what is queued, then end. */
void blkring__io_wq_exit(struct blkring__io_wq *wq)
{
	pthread_mutex_lock(&wq->lock);
	wq->exiting = true;
	pthread_cond_broadcast(&wq->more_work);
	pthread_mutex_unlock(&wq->lock);
	for (unsigned i = 0; i < wq->nr_workers; i++)
		pthread_join(wq->threads[i], NULL);
	pthread_cond_destroy(&wq->more_work);
	pthread_mutex_destroy(&wq->lock);
	free(wq->threads);
}
