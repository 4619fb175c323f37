// SPDX-License-Identifier: MIT
/*
 * The nbdkit plugin's own logic without nbdkit: its sources are built into
 * this program (so under ASan+UBSan and TSan with the rest), nbdkit's few
 * helper calls are stubbed, and the cases drive the plugin's callback
 * table as nbdkit would: parameters, the open after fork, every NBD
 * operation and its errno, worker threads with rings of their own, the
 * bounce for O_DIRECT files, SIGHUP reload and the flush at cleanup.
 */
#if __has_include(<nbdkit-plugin.h>)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plugins/nbdkit/blkring-plugin.c"
#include "../plugins/nbdkit/device.c"
#include "../plugins/nbdkit/reload.c"
#include "../plugins/nbdkit/ring.c"
#include "test.h"

/* ---- nbdkit's side: what the plugin calls back ---- */

/* The reload thread reports too: the stubs take a lock. */
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_msg[1024];
static int nr_errors;
static atomic_int nr_reloads;
static int last_errno;

void nbdkit_error(const char *fs, ...)
{
	va_list ap;

	pthread_mutex_lock(&msg_lock);
	va_start(ap, fs);
	vsnprintf(last_msg, sizeof(last_msg), fs, ap);
	va_end(ap);
	nr_errors++;
	pthread_mutex_unlock(&msg_lock);
}

/* The plugin's one debug message says a reload is done. */
void nbdkit_debug(const char *fs, ...)
{
	if (!strncmp(fs, "reloaded", 8))
		atomic_fetch_add(&nr_reloads, 1);
}

/* Waits for the reload thread's error, and takes its message. */
static bool reload_error(const char *text)
{
	bool found = false;

	for (int i = 0; i < 500 && !found; i++) {
		pthread_mutex_lock(&msg_lock);
		found = nr_errors && strstr(last_msg, text);
		if (found)
			nr_errors = 0;
		pthread_mutex_unlock(&msg_lock);
		if (!found)
			usleep(10000);
	}
	return found;
}

void nbdkit_set_error(int err)
{
	last_errno = err;
}

int nbdkit_parse_bool(const char *s)
{
	if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "true"))
		return 1;
	if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "false"))
		return 0;
	nbdkit_error("could not decipher boolean (%s)", s);
	return -1;
}

int nbdkit_parse_unsigned(const char *what, const char *s, unsigned *r)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > UINT_MAX) {
		nbdkit_error("%s: could not parse number: \"%s\"", what, s);
		return -1;
	}
	*r = (unsigned)v;
	return 0;
}

char *nbdkit_absolute_path(const char *path)
{
	char cwd[4096], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* ---- driving the plugin ---- */

static void config(const char *key, const char *value)
{
	if (plugin.config(key, value) < 0)
		TEST_FAIL("%s=%s: %s", key, value, last_msg);
}

/* config, config_complete and after_fork, from key=value words. */
static void start(const char *const *params)
{
	for (; *params; params++) {
		char key[64];
		const char *eq = strchr(*params, '=');

		snprintf(key, sizeof(key), "%.*s", (int)(eq - *params), *params);
		config(key, eq + 1);
	}
	if (plugin.config_complete() < 0 || plugin.after_fork() < 0)
		TEST_FAIL("start: %s", last_msg);
	CHECK(plugin.open(0));
}

static void stop(void)
{
	plugin.cleanup();
	plugin.unload();
	if (nr_errors)
		TEST_FAIL("%d errors, the last: %s", nr_errors, last_msg);
}

/* The callback's errno (0: it succeeded), with the error count put back. */
static int nbd_err(int ret)
{
	int err = ret < 0 ? last_errno : 0;

	if (ret < 0)
		nr_errors = 0;
	last_errno = 0;
	return err;
}

static int rd(void *buf, uint32_t count, uint64_t off)
{
	return nbd_err(plugin.pread(NULL, buf, count, off, 0));
}

static int wr(const void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	return nbd_err(plugin.pwrite(NULL, buf, count, off, flags));
}

static void fill(char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(seed * 131 + i * 7 + (i >> 9));
}

static bool all_zero(const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i])
			return false;
	return true;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

/* ---- cases ---- */

static void plugin_params(void)
{
	CHECK(plugin.config("spec", "nul:x") < 0);
	CHECK(strstr(last_msg, "unknown device type 'nul'"));
	CHECK(plugin.config("sise", "1") < 0 && strstr(last_msg, "unknown parameter 'sise'"));
	CHECK(plugin.config("depth", "0") < 0 && plugin.config("depth", "70000") < 0);
	CHECK(plugin.config("depth", "x") < 0 && plugin.config("readonly", "maybe") < 0);
	CHECK(plugin.config_complete() < 0 && strstr(last_msg, "spec=SPEC or table=FILE"));
	config("spec", "null:size=1M");
	CHECK(plugin.config("table", "x.table") < 0 && strstr(last_msg, "one spec= or table="));
	config("depth", "8");
	config("readonly", "1");
	CHECK_EQ(plug.depth, 8);
	CHECK_EQ(plugin.config_complete(), 0);
	CHECK(!strcmp(blkring_spec_get(plug.spec, "ro"), "1"));
	nr_errors = 0;
	plugin.unload();
}

/* A spec the grammar takes and the driver refuses: the open in after_fork
 * fails with the library's message. */
static void plugin_bad_spec(void)
{
	config("spec", "null:sise=1");
	CHECK_EQ(plugin.config_complete(), 0);
	CHECK(plugin.after_fork() < 0);
	CHECK(strstr(last_msg, "unknown key 'sise'"));
	nr_errors = 0;
	stop();
}

static void plugin_caps(void)
{
	uint32_t min, pref, max;

	start((const char *[]){"spec=null:size=16M,bs=4096,memory_backed=1,discard=1", NULL});
	CHECK_EQ(plugin.get_size(NULL), 16 << 20);
	CHECK_EQ(plugin.block_size(NULL, &min, &pref, &max), 0);
	CHECK_EQ(min, 4096);
	CHECK_EQ(pref, 4096);
	CHECK_EQ(max, 0xffffffff);
	CHECK_EQ(plugin.can_write(NULL), 1);
	CHECK_EQ(plugin.can_flush(NULL), 0); /* null has no volatile cache */
	CHECK_EQ(plugin.can_fua(NULL), NBDKIT_FUA_NATIVE);
	CHECK_EQ(plugin.can_trim(NULL), 1);
	CHECK_EQ(plugin.can_zero(NULL), 1);
	CHECK_EQ(plugin.can_fast_zero(NULL), 1);
	CHECK_EQ(plugin.can_multi_conn(NULL), 1);
	stop();
	start((const char *[]){"spec=null:size=1M", "readonly=1", NULL});
	CHECK_EQ(plugin.can_write(NULL), 0);
	CHECK_EQ(plugin.can_trim(NULL), 0);
	stop();
}

static void plugin_io(void)
{
	static char out[65536], in[65536];
	const char *spec = "spec=null:size=16M,memory_backed=1,discard=1,write_zeroes=1";

	start((const char *[]){spec, NULL});
	fill(out, sizeof(out), 1);
	CHECK_EQ(wr(out, sizeof(out), 1 << 20, 0), 0);
	CHECK_EQ(wr(out, 4096, 8192, NBDKIT_FLAG_FUA), 0);
	CHECK_EQ(rd(in, sizeof(in), 1 << 20), 0);
	CHECK(!memcmp(in, out, sizeof(in)));
	CHECK_EQ(nbd_err(plugin.flush(NULL, 0)), 0);
	CHECK_EQ(nbd_err(plugin.trim(NULL, 8192, 1 << 20, 0)), 0);
	CHECK_EQ(nbd_err(plugin.zero(NULL, 8192, (1 << 20) + 16384, NBDKIT_FLAG_MAY_TRIM)), 0);
	CHECK_EQ(nbd_err(plugin.zero(NULL, 8192, (1 << 20) + 32768, NBDKIT_FLAG_FAST_ZERO)), 0);
	CHECK_EQ(rd(in, sizeof(in), 1 << 20), 0);
	CHECK(all_zero(in, 8192) && all_zero(in + 16384, 8192) && all_zero(in + 32768, 8192));
	CHECK(!memcmp(in + 8192, out + 8192, 8192) && !memcmp(in + 49152, out + 49152, 16384));
	CHECK_EQ(nbd_err(plugin.trim(NULL, 4096, 0, NBDKIT_FLAG_FUA)), 0);
	stop();
}

/* The table: -EBADF EPERM, -EINVAL EINVAL, -ENOSPC ENOSPC,
 * -EOPNOTSUPP ENOTSUP, anything else EIO. */
static void plugin_errors(void)
{
	static char buf[8192];

	CHECK_EQ(plug_nbd_errno(-EBADF), EPERM);
	CHECK_EQ(plug_nbd_errno(-ENOSPC), ENOSPC);
	CHECK_EQ(plug_nbd_errno(-ETIMEDOUT), EIO);
	start((const char *[]){"spec=null:size=1M,memory_backed=1,badblocks=64-71", NULL});
	CHECK_EQ(rd(buf, 4096, 1 << 20), EINVAL);
	CHECK_EQ(rd(buf, 100, 0), EINVAL);
	CHECK_EQ(rd(buf, 4096, 32768), EIO);
	CHECK_EQ(nbd_err(plugin.trim(NULL, 4096, 0, 0)), ENOTSUP);
	/* A fast zero where only zero pages would do: refused, and not logged. */
	CHECK_EQ(plugin.zero(NULL, 4096, 0, NBDKIT_FLAG_FAST_ZERO), -1);
	CHECK_EQ(last_errno, ENOTSUP);
	CHECK_EQ(nr_errors, 0);
	last_errno = 0;
	CHECK_EQ(nbd_err(plugin.zero(NULL, 4096, 0, 0)), 0);
	stop();
	start((const char *[]){"spec=null:size=1M", "readonly=1", NULL});
	CHECK_EQ(wr(buf, 4096, 0, 0), EPERM);
	CHECK_EQ(nbd_err(plugin.zero(NULL, 4096, 0, 0)), EPERM);
	stop();
}

struct worker {
	pthread_t thread;
	unsigned id;
	int failed;
};

/* As nbdkit's workers: each thread's requests on its own ring, in its own range. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char out[4096], in[4096];

	for (unsigned i = 0; i < 300 && !w->failed; i++) {
		uint64_t off = ((uint64_t)w->id << 20) + (i % 64) * 4096;

		fill(out, sizeof(out), w->id * 1000 + i);
		if (plugin.pwrite(NULL, out, sizeof(out), off, 0) < 0 ||
		    plugin.pread(NULL, in, sizeof(in), off, 0) < 0 || memcmp(in, out, sizeof(in)))
			w->failed = 1;
	}
	return NULL;
}

static void run_workers(unsigned n)
{
	struct worker w[16] = {{0}};

	for (unsigned i = 0; i < n; i++) {
		w[i].id = i;
		CHECK_EQ(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(pthread_join(w[i].thread, NULL), 0);
		CHECK_EQ(w[i].failed, 0);
	}
}

/* Threads exit before cleanup, as nbdkit's do: their rings go with them,
 * so the device closes (a ring left registered would be -EBUSY). */
static void plugin_threads(void)
{
	start((const char *[]){"spec=null:size=16M,memory_backed=1,submit_queues=2", "depth=4",
	                       NULL});
	run_workers(8);
	run_workers(4);
	stop();
}

static void plugin_sqpoll_poll(void)
{
	start((const char *[]){"spec=null:size=16M,memory_backed=1", "sqpoll=1", NULL});
	run_workers(2);
	stop();
	start((const char *[]){"spec=null:size=16M,memory_backed=1,poll_queues=2", "poll=1", NULL});
	run_workers(3);
	stop();
	config("spec", "null:size=1M,poll_queues=0");
	config("poll", "1");
	CHECK_EQ(plugin.config_complete(), 0);
	CHECK(plugin.after_fork() < 0 && strstr(last_msg, "no poll queues"));
	nr_errors = 0;
	stop();
}

static char scratch[64];

static void scratch_dir(void)
{
	snprintf(scratch, sizeof(scratch), "/var/tmp/blkring-plugin.XXXXXX");
	CHECK(mkdtemp(scratch));
}

static void scratch_rm(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
	CHECK(system(cmd) == 0);
}

/* nbdkit's buffers are malloc's; an O_DIRECT file wants them aligned. */
static void plugin_file_bounce(void)
{
	char path[128], spec[160], *buf = malloc(3 * 4096 + 1), *in = malloc(3 * 4096 + 1);
	int fd;

	scratch_dir();
	snprintf(path, sizeof(path), "%s/disk.img", scratch);
	snprintf(spec, sizeof(spec), "spec=file:%s,size=1M", path);
	start((const char *[]){spec, NULL});
	if (!atomic_load(&plug.aligned_only)) {
		stop();
		scratch_rm();
		SKIP("no O_DIRECT on %s", scratch);
	}
	fill(buf + 1, 3 * 4096, 7);
	CHECK_EQ(wr(buf + 1, 3 * 4096, 8192, 0), 0);
	CHECK_EQ(rd(in + 1, 3 * 4096, 8192), 0);
	CHECK(!memcmp(in + 1, buf + 1, 3 * 4096));
	stop();
	/* cleanup flushed: the file holds what was written */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, in, 3 * 4096, 8192) == 3 * 4096);
	CHECK(!memcmp(in, buf + 1, 3 * 4096));
	close(fd);
	free(buf);
	free(in);
	scratch_rm();
}

static atomic_bool reload_io_stop;
static atomic_int reload_io_fail;

static void *reload_io(void *arg)
{
	char buf[4096];

	(void)arg;
	while (!atomic_load(&reload_io_stop))
		if (plugin.pread(NULL, buf, sizeof(buf), 0, 0) < 0)
			atomic_store(&reload_io_fail, 1);
	return NULL;
}

/* The size is checked once the reload is done. */
static void wait_reloads(int n)
{
	for (int i = 0; i < 500 && atomic_load(&nr_reloads) < n; i++)
		usleep(10000);
	CHECK_EQ(atomic_load(&nr_reloads), n);
}

static void reload_to(const char *table, const char *text, int n)
{
	write_text(table, text);
	CHECK_EQ(kill(getpid(), SIGHUP), 0);
	wait_reloads(n);
}

/*
 * SIGHUP with I/O going: the new table serves and no request fails; then a
 * resize, and a bad table, which leaves the live one serving.
 */
static void plugin_reload(void)
{
	char table[128], param[160], buf[4096], out[4096];
	pthread_t io;

	scratch_dir();
	snprintf(table, sizeof(table), "%s/vol.table", scratch);
	write_text(table, "0 2048 linear null:size=1M,memory_backed=1,name=a 0\n");
	snprintf(param, sizeof(param), "table=%s", table);
	start((const char *[]){param, NULL});
	fill(out, sizeof(out), 3);
	CHECK_EQ(wr(out, sizeof(out), 0, 0), 0);
	CHECK_EQ(pthread_create(&io, NULL, reload_io, NULL), 0);
	reload_to(table, "0 2048 linear null:size=1M,memory_backed=1,name=b 0\n", 1);
	CHECK_EQ(rd(buf, sizeof(buf), 0), 0);
	CHECK(all_zero(buf, sizeof(buf)));
	atomic_store(&reload_io_stop, true);
	CHECK_EQ(pthread_join(io, NULL), 0);
	CHECK_EQ(atomic_load(&reload_io_fail), 0);
	reload_to(table, "0 4096 linear null:size=2M,memory_backed=1,name=b 0\n", 2);
	CHECK_EQ(plugin.get_size(NULL), 2 << 20);
	write_text(table, "0 4096 linear null:size=2M,memory_backed=1,sise=1 0\n");
	CHECK_EQ(kill(getpid(), SIGHUP), 0);
	CHECK(reload_error("unknown key 'sise'"));
	CHECK_EQ(plugin.get_size(NULL), 2 << 20);
	CHECK_EQ(atomic_load(&nr_reloads), 2);
	stop();
	scratch_rm();
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"plugin-params", plugin_params, 0},
	    {"plugin-bad-spec", plugin_bad_spec, 0},
	    {"plugin-caps", plugin_caps, 0},
	    {"plugin-io", plugin_io, 0},
	    {"plugin-errors", plugin_errors, 0},
	    {"plugin-threads", plugin_threads, 0},
	    {"plugin-sqpoll-poll", plugin_sqpoll_poll, 0},
	    {"plugin-file-bounce", plugin_file_bounce, 0},
	    {"plugin-reload", plugin_reload, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
#else
#include <stdio.h>

int main(void)
{
	printf("SKIP plugin: nbdkit-plugin-dev is not installed (scripts/setup.sh)\n");
	return 0;
}
#endif
