/* SPDX-License-Identifier: MIT */
/* Starting the library's own threads (SQ thread, workers, device threads). */
#ifndef BLKRING_LIB_THREAD_H
#define BLKRING_LIB_THREAD_H

#include <pthread.h>
#include <signal.h>

/*
 * The thread takes no signals, which belong to the application's threads,
 * and carries a name for ps and gdb.  attr may be NULL.  Returns 0 or
 * pthread_create()'s error as a negative errno.
 */
static inline int blkring__thread_start(pthread_t *thread, const pthread_attr_t *attr,
                                        void *(*fn)(void *), void *arg, const char *name)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(thread, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	pthread_setname_np(*thread, name);
	return 0;
}

#endif
