// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

struct blkring_dev *test_open(const char *spec)
{
	struct blkring_dev *dev = NULL;
	int ret = blkring_dev_open(spec, &dev);

	if (ret < 0)
		TEST_FAIL("open %s: %s (%s)", spec, strerror(-ret), blkring_last_error());
	return dev;
}

struct blkring_dev *test_vol(const char *table, const char *base_dir)
{
	struct blkring_dev *dev = NULL;
	int ret = blkring_vol_create(table, base_dir, &dev);

	if (ret)
		TEST_FAIL("volume: %s (%s)", strerror(-ret), blkring_last_error());
	return dev;
}

int test_threads_with(const char *file, const char *line)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		TEST_FAIL("/proc/self/task: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], text[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/%s", e->d_name, file);
		if (e->d_name[0] == '.' || !(f = fopen(path, "r")))
			continue;
		while (fgets(text, sizeof(text), f))
			if (!strncmp(text, line, strlen(line))) {
				n++;
				break;
			}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The last lines a failing case wrote to stderr go into its FAIL line. */
static void run_case(const struct test_case *tc)
{
	int pipefd[2];
	char why[512] = "";
	ssize_t n, len = 0;
	int status;
	pid_t pid;

	if (pipe(pipefd) < 0) {
		printf("FAIL %s: pipe: %s\n", tc->name, strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], 2);
		alarm(tc->timeout_s ? tc->timeout_s : 60);
		tc->fn();
		exit(0);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], why + len, sizeof(why) - 1 - len)) > 0) {
		len += n;
		if (len == (ssize_t)sizeof(why) - 1) {
			/* keep the tail: the reason is usually last */
			memmove(why, why + len / 2, len - len / 2);
			len -= len / 2;
		}
	}
	why[len] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	for (char *p = why; *p; p++)
		if (*p == '\n' && p[1])
			*p = ' ';
	if (len && why[len - 1] == '\n')
		why[len - 1] = '\0';

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		printf("PASS %s\n", tc->name);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_EXIT)
		printf("SKIP %s: %s\n", tc->name, why);
	else if (WIFSIGNALED(status))
		printf("FAIL %s: killed by signal %d%s %s\n", tc->name, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "", why);
	else
		printf("FAIL %s: %s\n", tc->name, why);
	fflush(stdout);
}

/* Test programs (TREE/tests/NAME) load their tree's driver modules
 * (TREE/blkring-modules), unless the caller named a directory. */
__attribute__((constructor)) static void test_module_dir(void)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (getenv("BLKRING_MODULE_DIR") || n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(dir, sizeof(dir), "%s/../blkring-modules", exe);
	setenv("BLKRING_MODULE_DIR", dir, 1);
}

int test_main(const struct test_case *cases, int argc, char **argv)
{
	for (const struct test_case *tc = cases; tc->name; tc++) {
		if (argc > 1 && strcmp(argv[1], tc->name) != 0)
			continue;
		run_case(tc);
	}
	return 0;
}

/* ---- helpers of the device tests ---- */

struct blkring_dev *test_openf(const char *fmt, ...)
{
	char spec[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(spec, sizeof(spec), fmt, ap);
	va_end(ap);
	return test_open(spec);
}

void test_open_fails(const char *spec, int err, const char *text1, const char *text2)
{
	struct blkring_dev *dev = NULL;
	int ret = blkring_dev_open(spec, &dev);
	const char *msg = blkring_last_error();

	if (ret != err)
		TEST_FAIL("open %s: %d, expected %d (%s)", spec, ret, err, msg);
	if ((text1 && !strstr(msg, text1)) || (text2 && !strstr(msg, text2)))
		TEST_FAIL("open %s: message '%s' lacks '%s' / '%s'", spec, msg, text1,
		          text2 ? text2 : "");
}

uint64_t test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void *test_alloc(size_t size)
{
	void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);

	CHECK(p);
	return p;
}

void test_fill(void *buf, size_t len, uint64_t off, uint64_t seed)
{
	uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		p[i] = (off + i * 8) * 0x9e3779b97f4a7c15ULL ^ seed;
}

bool test_pattern_ok(const void *buf, size_t len, uint64_t off, uint64_t seed)
{
	const uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		if (p[i] != ((off + i * 8) * 0x9e3779b97f4a7c15ULL ^ seed))
			return false;
	return true;
}

bool test_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

void test_ring(struct blkring *ring, unsigned flags, struct blkring_dev *dev)
{
	CHECK_EQ(blkring_queue_init(64, ring, flags), 0);
	CHECK_EQ(blkring_register_devices(ring, &dev, 1), 0);
}

int test_wait(struct blkring *ring, uint64_t *data, unsigned ms)
{
	struct __kernel_timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000LL};
	struct blkring_cqe *cqe;
	int ret = blkring_wait_cqe_timeout(ring, &cqe, &ts), res;

	if (ret)
		TEST_FAIL("no completion within %u ms: %d", ms, ret);
	res = cqe->res;
	if (data)
		*data = cqe->user_data;
	blkring_cqe_seen(ring, cqe);
	return res;
}

int test_ring_one(struct blkring *ring)
{
	CHECK_EQ(blkring_submit(ring), 1);
	return test_wait(ring, NULL, 30000);
}

int test_ring_rw(struct blkring *ring, bool write, void *buf, unsigned len, uint64_t off,
                 unsigned rw_flags)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	if (write)
		blkring_prep_write(sqe, 0, buf, len, off);
	else
		blkring_prep_read(sqe, 0, buf, len, off);
	sqe->rw_flags = rw_flags;
	return test_ring_one(ring);
}

void *test_load_thread(void *arg)
{
	struct test_load *a = arg;
	char *buf = test_alloc(16 * 4096);
	struct blkring ring;
	unsigned long n = 0;

	test_ring(&ring, 0, a->vol);
	memset(buf, 0x3c, 16 * 4096);
	while (!atomic_load(&a->stop)) {
		for (unsigned i = 0; i < 16; i++)
			blkring_prep_write(ring_sqe(&ring), 0, buf + i * 4096, 4096,
			                   ((n * 16 + i) * 4096) % (16ULL << 20));
		CHECK_EQ(blkring_submit(&ring), 16);
		for (unsigned i = 0; i < 16; i++)
			CHECK_EQ(test_wait(&ring, NULL, 20000), 4096);
		atomic_store(&a->done, ++n);
	}
	blkring_queue_exit(&ring);
	free(buf);
	return NULL;
}
