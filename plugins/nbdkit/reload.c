// SPDX-License-Identifier: MIT
/*
 * SIGHUP reloads a served table: load the file into the volume's inactive
 * slot, suspend (new I/O is held, what is in flight drains), resume (the
 * new table goes live and the held I/O is replayed).  Clients stay
 * connected throughout.  nbdkit's own SIGHUP handler quits, so the plugin
 * takes the signal over, only when it serves a table.
 */
#define NBDKIT_API_VERSION 2
#include <errno.h>
#include <libgen.h>
#include <nbdkit-plugin.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define MAX_TABLE_BYTES (1U << 20) /* as the library's own table files */

static sem_t reload_sem;
static pthread_t reload_thread;
static bool reload_running;
static atomic_bool reload_stopping;
static struct sigaction old_sighup;

/* The handler only posts: the reload itself runs on its own thread. */
static void on_sighup(int sig)
{
	(void)sig;
	sem_post(&reload_sem);
}

static char *read_table(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text;
	size_t len;

	if (!f) {
		nbdkit_error("reload: %s: %m", path);
		return NULL;
	}
	text = malloc(MAX_TABLE_BYTES + 1);
	len = text ? fread(text, 1, MAX_TABLE_BYTES + 1, f) : 0;
	if (text && (ferror(f) || len > MAX_TABLE_BYTES)) {
		nbdkit_error("reload: %s: %s", path, ferror(f) ? "read error" : "over 1 MiB");
		free(text);
		text = NULL;
	}
	fclose(f);
	if (text)
		text[len] = '\0';
	return text;
}

static int table_swap(const char *text, const char *dir)
{
	const char *msg;
	int ret = blkring_vol_load(plug.dev, text, dir);

	if (!ret)
		ret = blkring_vol_suspend(plug.dev);
	if (!ret)
		ret = blkring_vol_resume(plug.dev);
	if (ret < 0) {
		msg = blkring_last_error();
		nbdkit_error("reload: %s: %s", plug.table, msg && *msg ? msg : strerror(-ret));
	}
	return ret;
}

/* A failed reload leaves the live table serving. */
int plug_reload(void)
{
	char *text = read_table(plug.table), *dir = strdup(plug.table);
	int ret = -ENOMEM;

	if (text && dir)
		ret = table_swap(text, dirname(dir));
	else if (!text)
		ret = -EIO;
	if (!ret) {
		plug_probe_alignment();
		nbdkit_debug("reloaded %s", plug.table);
	}
	free(text);
	free(dir);
	return ret;
}

static void *reload_main(void *arg)
{
	sigset_t hup;

	(void)arg;
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_UNBLOCK, &hup, NULL);
	for (;;) {
		while (sem_wait(&reload_sem) && errno == EINTR)
			;
		if (atomic_load(&reload_stopping))
			return NULL;
		plug_reload();
	}
}

/*
 * From after_fork, on nbdkit's main thread: SIGHUP is blocked there, so
 * the threads nbdkit starts from now on inherit the block and the
 * handler runs on the reload thread, not inside a worker's ring wait.
 * The handler is in place before any thread may take the signal.
 */
int plug_reload_start(void)
{
	struct sigaction sa = {.sa_handler = on_sighup, .sa_flags = SA_RESTART};
	sigset_t hup;
	int ret;

	if (!plug.table)
		return 0;
	sem_init(&reload_sem, 0, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, &old_sighup);
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);
	ret = pthread_create(&reload_thread, NULL, reload_main, NULL);
	if (ret) {
		sigaction(SIGHUP, &old_sighup, NULL);
		nbdkit_error("reload thread: %s", strerror(ret));
		return -1;
	}
	reload_running = true;
	return 0;
}

void plug_reload_stop(void)
{
	if (!reload_running)
		return;
	sigaction(SIGHUP, &old_sighup, NULL);
	atomic_store(&reload_stopping, true);
	sem_post(&reload_sem);
	pthread_join(reload_thread, NULL);
	sem_destroy(&reload_sem);
	reload_running = false;
}
