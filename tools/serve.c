// SPDX-License-Identifier: MIT
/*
 * `blkring serve SPEC (--socket=PATH | --bind=ADDR --port=N) ...`: runs
 * nbdkit in the foreground with the blkring plugin, prints the URI once the
 * device is open and nbdkit accepts connections, and stops it on SIGINT or
 * SIGTERM (the plugin flushes and closes the device when nbdkit stops).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "blkring.h"

#define PLUGIN_NAME "nbdkit-blkring-plugin.so"
#define READY_TIMEOUT_MS 30000
#define STOP_TIMEOUT_MS 30000
/* libblkring's initial-exec thread-locals outgrow glibc's default reserve
 * for libraries that are dlopen()ed, as nbdkit opens the plugin. */

struct serve_args {
	const char *spec;
	const char *socket;
	const char *bind;
	const char *port;
	const char *threads;
	bool readonly;
	bool reloadable; /* a table: SIGHUP reloads it */
	int nr_extra;    /* after `--`: nbdkit's own options */
	char **extra;
};

struct server {
	pid_t pid;
	char dir[64]; /* holds nbdkit's pid file */
	char pidfile[96];
	char plugin[PATH_MAX];
	char nbdkit[PATH_MAX];
	char sock[PATH_MAX]; /* the unix socket, absolute, or "" */
};

static void serve_usage(FILE *f)
{
	fprintf(f,
	        "usage: blkring serve SPEC (--socket=PATH | --bind=ADDR --port=N)\n"
	        "                     [--readonly] [--threads=N] [-- NBDKIT_ARGS...]\n\n"
	        "Serves the device or volume SPEC over NBD with nbdkit and the blkring\n"
	        "plugin, in the foreground; prints the URI once clients can connect.\n"
	        "SIGINT or SIGTERM stop it (every device flushed); SIGHUP reloads a served\n"
	        "table (and stops the server otherwise).\n\n"
	        "  --socket=PATH   listen on a unix socket\n"
	        "  --bind=ADDR     listen on this address (required for TCP: never all\n"
	        "  --port=N        interfaces by default), and this port\n"
	        "  --readonly      serve the device read-only\n"
	        "  --threads=N     nbdkit threads per connection (its default: 16)\n"
	        "  -- ARGS         passed to nbdkit (e.g. --tls=require --tls-certificates=DIR)\n");
}

static int arg_error(const char *fmt, const char *what)
{
	fprintf(stderr, "blkring: serve: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	return -EINVAL;
}

static int parse_option(struct serve_args *a, const char *s)
{
	if (!strncmp(s, "--socket=", 9) && s[9])
		a->socket = s + 9;
	else if (!strncmp(s, "--bind=", 7) && s[7])
		a->bind = s + 7;
	else if (!strncmp(s, "--port=", 7) && s[7])
		a->port = s + 7;
	else if (!strncmp(s, "--threads=", 10) && s[10])
		a->threads = s + 10;
	else if (!strcmp(s, "--readonly"))
		a->readonly = true;
	else
		return arg_error("unknown option '%s'", s);
	return 0;
}

static bool in_range(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && !*end && v >= lo && v <= hi;
}

static int check_args(const struct serve_args *a)
{
	if (!a->spec)
		return arg_error("%sa SPEC is required", "");
	if (a->socket && (a->bind || a->port))
		return arg_error("%s--socket or --bind/--port, not both", "");
	if (!a->socket && (!a->bind || !a->port))
		return arg_error("%s--socket=PATH, or --bind=ADDR with --port=N, is required", "");
	if (a->port && !in_range(a->port, 1, 65535))
		return arg_error("--port=%s: expected 1..65535", a->port);
	if (a->threads && !in_range(a->threads, 1, 1024))
		return arg_error("--threads=%s: expected 1..1024", a->threads);
	return 0;
}

static int parse_args(struct serve_args *a, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "--")) {
			a->nr_extra = argc - i - 1;
			a->extra = argv + i + 1;
			break;
		}
		if (s[0] == '-' && s[1]) {
			if (parse_option(a, s) < 0)
				return -EINVAL;
		} else if (a->spec) {
			return arg_error("one SPEC only ('%s' is a second)", s);
		} else {
			a->spec = s;
		}
	}
	return check_args(a);
}

/* The library's grammar, before nbdkit starts: its message, not nbdkit's. */
static int check_spec(struct serve_args *a)
{
	struct blkring_spec *spec;
	int ret = blkring_spec_parse(a->spec, &spec);

	if (ret < 0) {
		const char *msg = blkring_last_error();

		fprintf(stderr, "blkring: serve: %s: %s\n", a->spec, *msg ? msg : strerror(-ret));
		return ret;
	}
	a->reloadable = !strcmp(blkring_spec_type(spec), "table");
	blkring_spec_free(spec);
	return 0;
}

static int find_nbdkit(struct server *s)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");

	for (char *dir = copy ? strtok(copy, ":") : NULL; dir; dir = strtok(NULL, ":")) {
		snprintf(s->nbdkit, sizeof(s->nbdkit), "%s/nbdkit", dir);
		if (!access(s->nbdkit, X_OK)) {
			free(copy);
			return 0;
		}
	}
	free(copy);
	fprintf(stderr, "blkring: serve: nbdkit is not installed (on Debian: apt-get install "
	                "nbdkit); blkring serves devices through it\n");
	return -ENOENT;
}

/* Next to the blkring binary first (the build tree), then where `make
 * install` puts it: nbdkit's plugin directory under the binary's prefix. */
static int find_plugin(struct server *s)
{
	char exe[PATH_MAX], pattern[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	glob_t g;
	char *slash;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	if ((size_t)snprintf(s->plugin, sizeof(s->plugin), "%s/" PLUGIN_NAME, exe) <
	        sizeof(s->plugin) &&
	    !access(s->plugin, R_OK))
		return 0;
	snprintf(pattern, sizeof(pattern), "%s/../lib{/*,}/nbdkit/plugins/" PLUGIN_NAME, exe);
	if (!glob(pattern, GLOB_BRACE, NULL, &g) && g.gl_pathc &&
	    realpath(g.gl_pathv[0], s->plugin)) {
		globfree(&g);
		return 0;
	}
	globfree(&g);
	fprintf(stderr,
	        "blkring: serve: no %s beside %s/blkring nor in %s/../lib/*/nbdkit/plugins"
	        " (make install, or make build/" PLUGIN_NAME ")\n",
	        PLUGIN_NAME, exe, exe);
	return -ENOENT;
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	int fd = -ECONNREFUSED;

	if (getaddrinfo(host, port, &hints, &res))
		return -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -ECONNREFUSED;
	}
	freeaddrinfo(res);
	return fd;
}

static int absolute_path(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX];

	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	if ((size_t)snprintf(out, size, "%s%s%s", path[0] == '/' ? "" : cwd,
	                     path[0] == '/' ? "" : "/", path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* nbdkit leaves its socket behind when it stops: a stale one is removed,
 * one a live server answers on is not taken over. */
static int prepare_socket(struct server *s, const char *path)
{
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
	    absolute_path(path, s->sock, sizeof(s->sock)) < 0)
		return arg_error("--socket=%s: path too long for a unix socket", path);
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return arg_error("--socket=%s: exists and is not a socket", path);
	fd = unix_connect(path);
	if (fd >= 0) {
		close(fd);
		return arg_error("--socket=%s: a server is listening on it", path);
	}
	unlink(path);
	return 0;
}

static bool tls_required(const struct serve_args *a)
{
	for (int i = 0; i < a->nr_extra; i++)
		if (!strcmp(a->extra[i], "--tls=require") ||
		    (!strcmp(a->extra[i], "--tls") && i + 1 < a->nr_extra &&
		     !strcmp(a->extra[i + 1], "require")))
			return true;
	return false;
}

/* RFC 3986: a unix socket's path goes into the query percent-encoded. */
static void print_uri(const struct serve_args *a, const struct server *s)
{
	const char *scheme = tls_required(a) ? "nbds" : "nbd";

	if (!a->socket) {
		bool v6 = strchr(a->bind, ':') != NULL;

		printf("%s://%s%s%s:%s/\n", scheme, v6 ? "[" : "", a->bind, v6 ? "]" : "", a->port);
	} else {
		printf("%s+unix:///?socket=", scheme);
		for (const unsigned char *p = (const unsigned char *)s->sock; *p; p++)
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("/-._~", *p))
				putchar(*p);
			else
				printf("%%%02X", *p);
		putchar('\n');
	}
	fflush(stdout);
}

static void add(char **argv, int *n, const char *s)
{
	argv[(*n)++] = (char *)s;
}

static char **nbdkit_argv(const struct serve_args *a, const struct server *s, char *spec_arg)
{
	char **argv = calloc(16 + a->nr_extra, sizeof(*argv));
	int n = 0;

	if (!argv)
		return NULL;
	add(argv, &n, s->nbdkit);
	add(argv, &n, "-f");
	add(argv, &n, "--exit-with-parent");
	add(argv, &n, "-P");
	add(argv, &n, s->pidfile);
	if (a->socket) {
		add(argv, &n, "-U");
		add(argv, &n, a->socket);
	} else {
		add(argv, &n, "-i");
		add(argv, &n, a->bind);
		add(argv, &n, "-p");
		add(argv, &n, a->port);
	}
	if (a->threads) {
		add(argv, &n, "-t");
		add(argv, &n, a->threads);
	}
	for (int i = 0; i < a->nr_extra; i++)
		add(argv, &n, a->extra[i]);
	add(argv, &n, s->plugin);
	add(argv, &n, spec_arg);
	if (a->readonly)
		add(argv, &n, "readonly=1");
	return argv;
}

static int start_nbdkit(const struct serve_args *a, struct server *s, const sigset_t *oldmask)
{
	char *spec_arg, **argv;

	if (asprintf(&spec_arg, "spec=%s", a->spec) < 0)
		return -ENOMEM;
	argv = nbdkit_argv(a, s, spec_arg);
	if (!argv) {
		free(spec_arg);
		return -ENOMEM;
	}
	s->pid = fork();
	if (s->pid == 0) {
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		execv(s->nbdkit, argv);
		fprintf(stderr, "blkring: serve: %s: %s\n", s->nbdkit, strerror(errno));
		_exit(127);
	}
	free(argv);
	free(spec_arg);
	return s->pid < 0 ? -errno : 0;
}

/* The NBD newstyle handshake from the client's side: its flags (fixed
 * newstyle, no zeroes), then NBD_OPT_ABORT with no data. */
static const char nbd_client_abort[20] = "\0\0\0\3IHAVEOPT\0\0\0\2\0\0\0\0";

static bool recv_timed(int fd, char *buf, size_t len)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 200) == 1 && recv(fd, buf, len, MSG_WAITALL) == (ssize_t)len;
}

/* nbdkit greets a client only once the plugin opened the device (after_fork);
 * the probe then ends the handshake as a client may, so nbdkit logs nothing. */
static bool greets(const struct serve_args *a)
{
	int fd = a->socket ? unix_connect(a->socket) : tcp_connect(a->bind, a->port);
	char hello[18], reply[20];
	bool ok;

	if (fd < 0)
		return false;
	ok = recv_timed(fd, hello, sizeof(hello)) && !memcmp(hello, "NBDMAGICIHAVEOPT", 16);
	if (ok && send(fd, nbd_client_abort, sizeof(nbd_client_abort), MSG_NOSIGNAL) > 0)
		recv_timed(fd, reply, sizeof(reply));
	close(fd);
	return ok;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static int wait_child(struct server *s, long timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	int status;

	while (now_ms() < deadline) {
		pid_t r = waitpid(s->pid, &status, WNOHANG);

		if (r > 0 || (r < 0 && errno == ECHILD)) {
			s->pid = 0;
			return r > 0 ? exit_status(status) : 1;
		}
		usleep(2000);
	}
	return -ETIMEDOUT;
}

/* nbdkit finishes the requests in flight, then the plugin flushes. */
static int stop_nbdkit(struct server *s)
{
	int ret;

	kill(s->pid, SIGTERM);
	ret = wait_child(s, STOP_TIMEOUT_MS);
	if (ret == -ETIMEDOUT) {
		fprintf(stderr, "blkring: serve: nbdkit did not stop in %d s: killed\n",
		        STOP_TIMEOUT_MS / 1000);
		kill(s->pid, SIGKILL);
		wait_child(s, STOP_TIMEOUT_MS);
		return 1;
	}
	return ret;
}

static bool is_stop(int sig)
{
	return sig == SIGINT || sig == SIGTERM;
}

/* 0 once nbdkit serves; else what blkring serve exits with (nbdkit said why). */
static int wait_ready(const struct serve_args *a, struct server *s, const sigset_t *set,
                      bool *stopped)
{
	const struct timespec tick = {.tv_nsec = 5000000};
	long deadline = now_ms() + READY_TIMEOUT_MS;
	int status;

	while (now_ms() < deadline) {
		if (is_stop(sigtimedwait(set, NULL, &tick))) {
			*stopped = true;
			return stop_nbdkit(s) ? 1 : 0;
		}
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			fprintf(stderr,
			        "blkring: serve: nbdkit exited before serving (status %d)\n",
			        exit_status(status));
			return 1;
		}
		if (!access(s->pidfile, F_OK) && greets(a))
			return 0;
	}
	fprintf(stderr, "blkring: serve: nbdkit did not start serving in %d s\n",
	        READY_TIMEOUT_MS / 1000);
	return 1;
}

/* Signals are blocked: they come here, one at a time, and never interrupt a start. */
static int serve_loop(const struct serve_args *a, struct server *s, const sigset_t *set)
{
	int sig, status;

	for (;;) {
		if (sigwait(set, &sig))
			continue;
		if (sig == SIGHUP && a->reloadable) {
			kill(s->pid, SIGHUP);
		} else if (sig == SIGCHLD) {
			if (waitpid(s->pid, &status, WNOHANG) != s->pid)
				continue;
			s->pid = 0;
			fprintf(stderr, "blkring: serve: nbdkit exited (status %d)\n",
			        exit_status(status));
			return exit_status(status) ? exit_status(status) : 1;
		} else if (is_stop(sig) || sig == SIGHUP) {
			return stop_nbdkit(s) ? 1 : 0;
		}
	}
}

static void cleanup(struct server *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	unlink(s->pidfile);
	rmdir(s->dir);
	if (*s->sock)
		unlink(s->sock);
}

static int serve(struct serve_args *a)
{
	struct server s = {0};
	bool stopped = false;
	sigset_t set, old;
	int ret;

	if (check_spec(a) < 0 || find_nbdkit(&s) < 0 || find_plugin(&s) < 0)
		return 1;
	if (a->socket && prepare_socket(&s, a->socket) < 0)
		return EXIT_USAGE;
	snprintf(s.dir, sizeof(s.dir), "/tmp/blkring-serve.XXXXXX");
	if (!mkdtemp(s.dir)) {
		fprintf(stderr, "blkring: serve: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(s.pidfile, sizeof(s.pidfile), "%s/nbdkit.pid", s.dir);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	ret = start_nbdkit(a, &s, &old);
	if (!ret && !(ret = wait_ready(a, &s, &set, &stopped)) && !stopped) {
		print_uri(a, &s);
		ret = serve_loop(a, &s, &set);
	} else if (ret < 0) {
		fprintf(stderr, "blkring: serve: starting nbdkit: %s\n", strerror(-ret));
		ret = 1;
	}
	cleanup(&s);
	return ret;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a = {0};

	for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			serve_usage(stdout);
			return EXIT_CLEAN;
		}
	if (parse_args(&a, argc, argv) < 0) {
		serve_usage(stderr);
		return EXIT_USAGE;
	}
	return serve(&a);
}
