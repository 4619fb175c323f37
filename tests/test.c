// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
