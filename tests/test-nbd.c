// SPDX-License-Identifier: MIT
/*
 * nbd devices against real servers: nbdkit's memory plugin over a unix
 * socket and over TCP on 127.0.0.1, nbdkit with filters that announce block
 * sizes, no FUA and no fast zero and log every request (splitting and the
 * driver's own flush after a FUA write are read from that log), and
 * qemu-nbd over a file.  Every operation, capabilities and limits, data,
 * polling from IOPOLL rings and through poll=all and poll=cookie volumes,
 * multi-conn and its refusal, connect errors, and a server killed or
 * stopped with I/O in flight.
 *
 * The parent process starts each server once, before the cases (each a
 * forked child) run, and stops them after, also when a case fails or the
 * program is interrupted; the servers die with the parent
 * (PR_SET_PDEATHSIG) if it dies first.  Servers are known by their pids,
 * never by name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "test.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define STOP_TIMEOUT_MS 300 /* io_timeout_ms of the stopped server's device */

enum { S_MEM, S_LIM, S_TCP, S_QEMU, S_KILL, S_STOP, NR_SERVERS };

struct nt_server {
	const char *name;
	pid_t pid;
	char uri[320];
	char log[200];
	char why[512]; /* why there is none */
};

static struct {
	pid_t parent;
	char dir[64];
	struct nt_server srv[NR_SERVERS];
	int listen_fd; /* a unix socket that is never accepted on */
	char listen_uri[200];
	char refused_uri[64]; /* a TCP port nobody listens on */
	char qemu_img[200];
} nt = {.listen_fd = -1};

/* ---- the servers ---- */

static const char *nt_path(const char *name)
{
	static char paths[8][160];
	static unsigned next;
	char *p = paths[next++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/%s", nt.dir, name);
	return p;
}

static void nt_cleanup(void)
{
	char cmd[128];

	if (getpid() != nt.parent)
		return;
	for (unsigned i = 0; i < NR_SERVERS; i++) {
		pid_t pid = nt.srv[i].pid;

		if (pid <= 0)
			continue;
		kill(pid, SIGCONT); /* a stopped server takes no SIGTERM */
		kill(pid, SIGTERM);
		for (int t = 0; t < 200 && waitpid(pid, NULL, WNOHANG) == 0; t++)
			usleep(5000);
		if (kill(pid, 0) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		nt.srv[i].pid = 0;
	}
	if (nt.listen_fd >= 0)
		close(nt.listen_fd);
	if (nt.dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", nt.dir);
		if (system(cmd))
			fprintf(stderr, "cleanup: %s failed\n", cmd);
	}
}

static void nt_on_signal(int sig)
{
	nt_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The child's side: dies with the test program, logs to the scratch dir. */
static void nt_exec(char *const argv[], const char *log)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != nt.parent)
		_exit(126);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execvp(argv[0], argv);
	_exit(127);
}

/* Starts a server and waits for its pid file: it listens from then on. */
static void nt_start(struct nt_server *s, char *const argv[], const char *pidfile)
{
	const char *log = nt_path(s->name);
	char logname[200];
	int status;
	pid_t pid;

	snprintf(logname, sizeof(logname), "%s.out", log);
	pid = fork();
	if (pid < 0) {
		snprintf(s->why, sizeof(s->why), "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		nt_exec(argv, logname);
	for (int t = 0; t < 1000; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				snprintf(s->why, sizeof(s->why),
				         "%s not installed (scripts/setup.sh installs it)",
				         argv[0]);
			else
				snprintf(s->why, sizeof(s->why), "%s exited at start: see %s",
				         argv[0], logname);
			return;
		}
		if (access(pidfile, R_OK) == 0) {
			s->pid = pid;
			return;
		}
		usleep(2000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(s->why, sizeof(s->why), "%s did not start within 2 s", argv[0]);
}

/* nbdkit's memory plugin (sparse) behind the filters given. */
static void nt_nbdkit(unsigned which, const char *name, const char *const *extra, unsigned n)
{
	struct nt_server *s = &nt.srv[which];
	char pidfile[200], sock[200];
	const char *argv[32];
	unsigned a = 0;

	s->name = name;
	snprintf(pidfile, sizeof(pidfile), "%s.pid", nt_path(name));
	snprintf(sock, sizeof(sock), "%s.sock", nt_path(name));
	argv[a++] = "nbdkit";
	argv[a++] = "-f";
	argv[a++] = "-P";
	argv[a++] = pidfile;
	for (unsigned i = 0; i < n; i++)
		argv[a++] = extra[i];
	argv[a] = NULL;
	nt_start(s, (char *const *)argv, pidfile);
	if (!s->uri[0])
		snprintf(s->uri, sizeof(s->uri), "nbd+unix:///?socket=%s", sock);
}

/* A TCP port nobody listens on now: the kernel's pick for a bind to 0. */
static int nt_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void nt_start_nbdkits(void)
{
	char sock[200], log[220], port[16];

	snprintf(sock, sizeof(sock), "%s.sock", nt_path("mem"));
	nt_nbdkit(S_MEM, "mem", (const char *[]){"-U", sock, "memory", "8G"}, 4);

	/* Block sizes, no FUA (the driver flushes), zero without fast zero;
	 * the log filter first, so it logs what the driver sent. */
	snprintf(sock, sizeof(sock), "%s.sock", nt_path("lim"));
	snprintf(log, sizeof(log), "logfile=%s.log", nt_path("lim"));
	snprintf(nt.srv[S_LIM].log, sizeof(nt.srv[S_LIM].log), "%s.log", nt_path("lim"));
	nt_nbdkit(S_LIM, "lim",
	          (const char *[]){"-U", sock, "--filter=log", "--filter=blocksize-policy",
	                           "--filter=fua", "--filter=nozero", "memory", "8G",
	                           "blocksize-minimum=4096", "blocksize-preferred=16384",
	                           "blocksize-maximum=65536", "blocksize-error-policy=error",
	                           "zeromode=plugin", "fastzeromode=none", log},
	          15);

	snprintf(port, sizeof(port), "%d", nt_free_port());
	snprintf(nt.srv[S_TCP].uri, sizeof(nt.srv[S_TCP].uri), "nbd://127.0.0.1:%s/", port);
	nt_nbdkit(S_TCP, "tcp", (const char *[]){"-i", "127.0.0.1", "-p", port, "memory", "256M"},
	          6);

	/* Requests held 2 s: in flight when the case kills the server. */
	snprintf(sock, sizeof(sock), "%s.sock", nt_path("kill"));
	nt_nbdkit(S_KILL, "kill",
	          (const char *[]){"-U", sock, "--filter=delay", "memory", "64M", "delay-read=2",
	                           "delay-write=2"},
	          7);
	snprintf(sock, sizeof(sock), "%s.sock", nt_path("stop"));
	nt_nbdkit(S_STOP, "stop", (const char *[]){"-U", sock, "memory", "64M"}, 4);
}

/* qemu-nbd over a file, one client at a time (no --shared): no multi-conn. */
static void nt_start_qemu(void)
{
	struct nt_server *s = &nt.srv[S_QEMU];
	char pidfile[200], sock[200];
	int fd;

	s->name = "qemu";
	snprintf(nt.qemu_img, sizeof(nt.qemu_img), "%s", nt_path("qemu.img"));
	fd = open(nt.qemu_img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(64 * MiB))) {
		snprintf(s->why, sizeof(s->why), "cannot create %s", nt.qemu_img);
		return;
	}
	close(fd);
	snprintf(pidfile, sizeof(pidfile), "%s.pid", nt_path("qemu"));
	snprintf(sock, sizeof(sock), "%s.sock", nt_path("qemu"));
	nt_start(s,
	         (char *const[]){"qemu-nbd", "--persistent", "--pid-file", pidfile, "-k", sock,
	                         "-x", "exp", "-f", "raw", "--discard=unmap", nt.qemu_img, NULL},
	         pidfile);
	snprintf(s->uri, sizeof(s->uri), "nbd+unix:///exp?socket=%s", sock);
}

/* A socket that takes connections into its backlog and never answers. */
static void nt_listen(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", nt_path("silent.sock"));
	nt.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (nt.listen_fd < 0 || bind(nt.listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(nt.listen_fd, 16)) {
		perror("silent socket");
		exit(1);
	}
	snprintf(nt.listen_uri, sizeof(nt.listen_uri), "nbd+unix:///?socket=%s", a.sun_path);
}

static void nt_setup(void)
{
	nt.parent = getpid();
	strcpy(nt.dir, "/tmp/blkring-nbd.XXXXXX");
	if (!mkdtemp(nt.dir)) {
		perror("mkdtemp");
		exit(1);
	}
	signal(SIGINT, nt_on_signal);
	signal(SIGTERM, nt_on_signal);
	signal(SIGHUP, nt_on_signal);
	nt_listen();
	snprintf(nt.refused_uri, sizeof(nt.refused_uri), "nbd://127.0.0.1:%d/", nt_free_port());
	nt_start_nbdkits();
	nt_start_qemu();
}

/* The server's URI, or SKIP with the reason it has none. */
static const char *nt_uri(unsigned which)
{
	struct nt_server *s = &nt.srv[which];

	if (!s->pid)
		SKIP("%s", s->why[0] ? s->why : "server not started");
	return s->uri;
}

/* ---- helpers ---- */

/* Writes [off, off+len) with the blocking calls and reads it back. */
static void nt_roundtrip(struct blkring_dev *dev, uint64_t off, size_t len, uint64_t seed)
{
	char *buf = test_alloc(len), *out = test_alloc(len);

	test_fill(buf, len, off, seed);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, len, off), (ssize_t)len);
	memset(out, 0xa5, len);
	CHECK_EQ(blkring_dev_pread(dev, out, len, off), (ssize_t)len);
	CHECK(test_pattern_ok(out, len, off, seed));
	free(buf);
	free(out);
}

static void nt_info(struct blkring_dev *dev, struct blkring_dev_info *info)
{
	CHECK_EQ(blkring_dev_info(dev, info), 0);
}

/* No CQE arrives within ms: nothing completed twice. */
static void nt_no_more_cqes(struct blkring *ring, unsigned ms)
{
	struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000LL};
	struct blkring_cqe *cqe;

	CHECK_EQ(blkring_wait_cqe_timeout(ring, &cqe, &ts), -ETIME);
}

/* Requests the log filter saw since offset `from` of its log: lines with
 * " NAME id=" (the request; its return line reads "...NAME"), and with
 * `also` in them when given. */
static unsigned nt_log_count(long from, const char *name, const char *also)
{
	FILE *f = fopen(nt.srv[S_LIM].log, "r");
	char line[512], want[64];
	unsigned n = 0;

	CHECK(f);
	snprintf(want, sizeof(want), " %s id=", name);
	fseek(f, from, SEEK_SET);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && (!also || strstr(line, also)))
			n++;
	fclose(f);
	return n;
}

static long nt_log_end(void)
{
	struct stat st;

	CHECK_EQ(stat(nt.srv[S_LIM].log, &st), 0);
	return (long)st.st_size;
}

/* ---- capabilities, specs, data ---- */

static void test_info_caps(void)
{
	const char *uri = nt_uri(S_MEM);
	struct blkring_dev *dev = test_open(uri);
	struct blkring_dev_info in;
	char want[400];

	nt_info(dev, &in);
	CHECK(!strcmp(in.type, "nbd"));
	snprintf(want, sizeof(want), "nbd:%s", uri);
	CHECK(!strcmp(in.spec, want));
	CHECK_EQ(in.size, 8 * GiB);
	CHECK_EQ(in.logical_block_size, 512);
	CHECK_EQ(in.max_sectors, (32 * MiB) >> 9); /* nothing announced: 32 MiB */
	CHECK_EQ(in.max_discard_sectors, UINT32_MAX >> 9);
	CHECK_EQ(in.max_write_zeroes_sectors, UINT32_MAX >> 9);
	CHECK_EQ(in.features, BLKRING_FEAT_FLUSH | BLKRING_FEAT_FUA | BLKRING_FEAT_DISCARD |
	                          BLKRING_FEAT_WRITE_ZEROES | BLKRING_FEAT_MULTI_CONN);
	CHECK_EQ(in.nr_hw_queues, 1);
	CHECK_EQ(in.nr_poll_queues, 0);
	CHECK(in.queue_depth > 0);
	CHECK_EQ(in.read_only, 0);
	/* The URI alone and nbd:URI are one device. */
	{
		struct blkring_dev *again = test_openf("nbd:%s", uri);

		CHECK(again == dev);
		CHECK_EQ(blkring_dev_close(again), 0);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Reads and writes of many sizes, some larger than one request (split). */
static void test_rw_unix(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	static const size_t sizes[] = {512, 4096, 65536, MiB, 40 * MiB};
	uint64_t off = 0;

	for (unsigned i = 0; i < ARRAY_LEN(sizes); i++) {
		nt_roundtrip(dev, off, sizes[i], 0x100 + i);
		off += sizes[i] + 512;
	}
	nt_roundtrip(dev, 8 * GiB - 4096, 4096, 7); /* the last block */
	{
		char buf[4096];

		CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 8 * GiB), -EINVAL);
		CHECK_EQ(blkring_dev_pread(dev, buf, 100, 0), -EINVAL);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_rw_tcp(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_TCP));
	struct blkring_dev_info in;

	nt_info(dev, &in);
	CHECK_EQ(in.size, 256 * MiB);
	nt_roundtrip(dev, 0, MiB, 0x77);
	nt_roundtrip(dev, 100 * MiB, 4096, 0x78);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Every operation on a ring: FUA writes, flush, discard, write zeroes with
 * each flag, vectored I/O whose window spans segments; the counters. */
static void test_ring_ops(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	char *buf = test_alloc(65536), *out = test_alloc(65536);
	struct blkring_dev_info in;
	struct blkring_sqe *sqe;
	struct blkring ring;
	struct iovec iov[3];
	uint64_t base = GiB;

	test_ring(&ring, 0, dev);
	test_fill(buf, 65536, base, 1);
	CHECK_EQ(test_ring_rw(&ring, true, buf, 65536, base, BLKRING_RWF_DSYNC), 65536);
	CHECK_EQ(test_ring_rw(&ring, false, out, 65536, base, 0), 65536);
	CHECK(test_pattern_ok(out, 65536, base, 1));

	sqe = ring_sqe(&ring);
	blkring_prep_fsync(sqe, 0, 0);
	CHECK_EQ(test_ring_one(&ring), 0);

	/* Segments of 1000, 3096 and 61440 bytes: no one segment holds it. */
	iov[0] = (struct iovec){out, 1000};
	iov[1] = (struct iovec){out + 1000, 3096};
	iov[2] = (struct iovec){out + 4096, 61440};
	test_fill(out, 65536, base + 65536, 2);
	sqe = ring_sqe(&ring);
	blkring_prep_writev(sqe, 0, iov, 3, base + 65536);
	CHECK_EQ(test_ring_one(&ring), 65536);
	memset(out, 0, 65536);
	sqe = ring_sqe(&ring);
	blkring_prep_readv(sqe, 0, iov, 3, base + 65536);
	CHECK_EQ(test_ring_one(&ring), 65536);
	CHECK(test_pattern_ok(out, 65536, base + 65536, 2));

	/* Discard and zeroes read back as zeroes on nbdkit's memory. */
	sqe = ring_sqe(&ring);
	blkring_prep_cmd_discard(sqe, 0, base, 16384);
	CHECK_EQ(test_ring_one(&ring), 0);
	static const unsigned zflags[] = {0, BLKRING_ZERO_NOUNMAP, BLKRING_ZERO_NOFALLBACK,
	                                  BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK};
	for (unsigned i = 0; i < ARRAY_LEN(zflags); i++) {
		sqe = ring_sqe(&ring);
		blkring_prep_cmd_write_zeroes(sqe, 0, base + 16384 + i * 8192, 8192, zflags[i]);
		CHECK_EQ(test_ring_one(&ring), 0);
	}
	CHECK_EQ(test_ring_rw(&ring, false, out, 65536, base, 0), 65536);
	CHECK(test_zero(out, 16384 + 4 * 8192));
	CHECK(test_pattern_ok(out + 49152, 16384, base + 49152, 1));

	nt_info(dev, &in);
	CHECK_EQ(in.ios[BLKRING_DIR_READ], 3);
	CHECK_EQ(in.ios[BLKRING_DIR_WRITE], 2);
	CHECK_EQ(in.ios[BLKRING_DIR_FLUSH], 1);
	CHECK_EQ(in.ios[BLKRING_DIR_DISCARD], 1);
	CHECK_EQ(in.ios[BLKRING_DIR_WRITE_ZEROES], 4);
	for (unsigned d = 0; d < BLKRING_DIR_NR; d++)
		CHECK_EQ(in.errors[d], 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
	free(out);
}

/* ro=1: reads work, everything that writes is -EBADF before it is sent. */
static void test_read_only(void)
{
	struct blkring_dev *dev = test_openf("%s,ro=1", nt_uri(S_MEM));
	struct blkring_dev_info in;
	char buf[4096] = {0};

	nt_info(dev, &in);
	CHECK_EQ(in.read_only, 1);
	CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 0), 4096);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_discard(dev, 0, 4096), -EBADF);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 4096, 0), -EBADF);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* qemu-nbd over a file: what the driver wrote and flushed is in the file. */
static void test_qemu_file(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_QEMU));
	char *buf = test_alloc(MiB), *out = test_alloc(MiB);
	struct blkring_dev_info in;
	int fd;

	nt_info(dev, &in);
	CHECK_EQ(in.size, 64 * MiB);
	CHECK(in.features & BLKRING_FEAT_FLUSH);
	CHECK(!(in.features & BLKRING_FEAT_MULTI_CONN));
	nt_roundtrip(dev, 3 * MiB, MiB, 0x99);
	CHECK_EQ(blkring_dev_write_zeroes(dev, 3 * MiB, 65536, 0), 0);
	CHECK_EQ(blkring_dev_discard(dev, 3 * MiB + 65536, 65536), 0);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_pread(dev, out, 65536, 3 * MiB), 65536);
	CHECK(test_zero(out, 65536));
	fd = open(nt.qemu_img, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, out, MiB, (off_t)(3 * MiB)), (ssize_t)MiB);
	close(fd);
	CHECK(test_zero(out, 2 * 65536)); /* zeroed, then the hole a discard leaves */
	test_fill(buf, MiB, 3 * MiB, 0x99);
	CHECK(!memcmp(out + 2 * 65536, buf + 2 * 65536, MiB - 2 * 65536));
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
	free(out);
}

/* ---- limits and splitting, read from the server's log ---- */

static void test_limits(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_LIM));
	struct blkring_dev_info in;

	nt_info(dev, &in);
	CHECK_EQ(in.logical_block_size, 4096);
	CHECK_EQ(in.physical_block_size, 16384);
	CHECK_EQ(in.max_sectors, 65536 >> 9);
	CHECK_EQ(in.max_discard_sectors, (4 * GiB - 4096) >> 9);
	CHECK_EQ(in.max_write_zeroes_sectors, (4 * GiB - 4096) >> 9);
	CHECK_EQ(in.discard_granularity, 4096);
	/* No FUA from the server: the driver's flush after the write. */
	CHECK(in.features & BLKRING_FEAT_FUA);
	CHECK(in.features & BLKRING_FEAT_WRITE_ZEROES);
	{
		char buf[4096];

		CHECK_EQ(blkring_dev_pread(dev, buf, 512, 0), -EINVAL);
		CHECK_EQ(blkring_dev_pread(dev, buf, 4096, 512), -EINVAL);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_split_rw(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_LIM));
	long from = nt_log_end();

	nt_roundtrip(dev, 0, MiB, 0x42);
	CHECK_EQ(nt_log_count(from, "Write", "count=0x10000"), 16);
	CHECK_EQ(nt_log_count(from, "Write", NULL), 16);
	CHECK_EQ(nt_log_count(from, "Read", "count=0x10000"), 16);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* Trims and zeroes of 5 GiB: two requests each, under 4 GiB. */
static void test_split_ranges(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_LIM));
	long from = nt_log_end();

	CHECK_EQ(blkring_dev_discard(dev, 0, 5 * GiB), 0);
	CHECK_EQ(nt_log_count(from, "Trim", NULL), 2);
	CHECK_EQ(nt_log_count(from, "Trim", "count=0xfffff000"), 1);
	from = nt_log_end();
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 5 * GiB, BLKRING_ZERO_NOUNMAP), 0);
	CHECK_EQ(nt_log_count(from, "Zero", "trim=0"), 2);
	from = nt_log_end();
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 8192, 0), 0);
	CHECK_EQ(nt_log_count(from, "Zero", "trim=1 fua=0 fast=0"), 1);
	/* No fast zero on this server: NOFALLBACK is refused before sending. */
	from = nt_log_end();
	CHECK_EQ(blkring_dev_write_zeroes(dev, 0, 8192, BLKRING_ZERO_NOFALLBACK), -EOPNOTSUPP);
	CHECK_EQ(nt_log_count(from, "Zero", NULL), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* A FUA write without the server's FUA: the write, then a flush, and the
 * CQE only after both. */
static void test_fua_emulated(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_LIM));
	char *buf = test_alloc(8192);
	struct blkring ring;
	long from;

	test_ring(&ring, 0, dev);
	test_fill(buf, 8192, 0, 3);
	from = nt_log_end();
	CHECK_EQ(test_ring_rw(&ring, true, buf, 8192, 0, BLKRING_RWF_DSYNC), 8192);
	CHECK_EQ(nt_log_count(from, "Write", "fua=0"), 1);
	CHECK_EQ(nt_log_count(from, "Flush", NULL), 1);
	from = nt_log_end();
	CHECK_EQ(test_ring_rw(&ring, true, buf, 8192, 0, 0), 8192);
	CHECK_EQ(nt_log_count(from, "Flush", NULL), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* A window over segments on a 4096-byte-block server: one request. */
static void test_vectored_bounce(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_LIM));
	char *a = test_alloc(8192), *b = test_alloc(8192);
	struct iovec iov[2] = {{a, 2048}, {b, 6144}};
	struct blkring_sqe *sqe;
	struct blkring ring;
	long from;
	char *flat = test_alloc(8192);

	test_ring(&ring, 0, dev);
	test_fill(flat, 8192, 65536, 4);
	memcpy(a, flat, 2048);
	memcpy(b, flat + 2048, 6144);
	from = nt_log_end();
	sqe = ring_sqe(&ring);
	blkring_prep_writev(sqe, 0, iov, 2, 65536);
	CHECK_EQ(test_ring_one(&ring), 8192);
	CHECK_EQ(nt_log_count(from, "Write", "count=0x2000"), 1);
	memset(a, 0, 8192);
	memset(b, 0, 8192);
	sqe = ring_sqe(&ring);
	blkring_prep_readv(sqe, 0, iov, 2, 65536);
	CHECK_EQ(test_ring_one(&ring), 8192);
	CHECK(!memcmp(a, flat, 2048) && !memcmp(b, flat + 2048, 6144));
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(a);
	free(b);
	free(flat);
}

/* ---- polling ---- */

/* Writes then reads n blocks of bs on one ring, all in flight at once. */
static void nt_ring_batch(struct blkring *ring, uint64_t base, unsigned n, unsigned bs,
                          uint64_t seed)
{
	char *buf = test_alloc((size_t)n * bs);
	uint64_t seen = 0, data;

	test_fill(buf, (size_t)n * bs, base, seed);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			memset(buf, 0, (size_t)n * bs);
		for (unsigned i = 0; i < n; i++) {
			struct blkring_sqe *sqe = ring_sqe(ring);

			CHECK(sqe);
			if (pass)
				blkring_prep_read(sqe, 0, buf + (size_t)i * bs, bs, base + i * bs);
			else
				blkring_prep_write(sqe, 0, buf + (size_t)i * bs, bs, base + i * bs);
			sqe->user_data = i;
		}
		CHECK_EQ(blkring_submit(ring), n);
		seen = 0;
		for (unsigned i = 0; i < n; i++) {
			CHECK_EQ(test_wait(ring, &data, 10000), bs);
			CHECK(data < n && !(seen & (1ULL << data)));
			seen |= 1ULL << data;
		}
	}
	CHECK(test_pattern_ok(buf, (size_t)n * bs, base, seed));
	free(buf);
}

static void test_poll_ring(void)
{
	const char *uri = nt_uri(S_MEM);
	struct blkring_dev *dev = test_openf("%s,poll_queues=1", uri);
	struct blkring_dev *plain = test_open(uri);
	struct blkring_dev_info in;
	struct blkring ring;
	char buf[4096];

	nt_info(dev, &in);
	CHECK_EQ(in.nr_hw_queues, 1);
	CHECK_EQ(in.nr_poll_queues, 1);
	CHECK(in.features & BLKRING_FEAT_POLL);
	test_ring(&ring, BLKRING_SETUP_IOPOLL, dev);
	nt_ring_batch(&ring, 2 * GiB, 48, 4096, 5);
	nt_ring_batch(&ring, 2 * GiB + MiB, 8, 65536, 6);
	blkring_queue_exit(&ring);
	/* Polled I/O where the device has no poll queue. */
	test_ring(&ring, BLKRING_SETUP_IOPOLL, plain);
	CHECK_EQ(test_ring_rw(&ring, false, buf, 4096, 0, 0), -EOPNOTSUPP);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(plain), 0);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

struct nt_thread_arg {
	struct blkring_dev *dev;
	unsigned flags;
	uint64_t base;
};

static void *nt_poll_thread(void *p)
{
	struct nt_thread_arg *a = p;
	struct blkring ring;

	test_ring(&ring, a->flags, a->dev);
	for (unsigned i = 0; i < 20; i++)
		nt_ring_batch(&ring, a->base + i * 256 * 1024, 32, 8192, a->base + i);
	blkring_queue_exit(&ring);
	return NULL;
}

/* Polling rings in three threads share the one poll queue (busy flag), and
 * an unpolled ring beside them: each gets its own completions once. */
static void test_poll_threads(void)
{
	struct blkring_dev *dev = test_openf("%s,poll_queues=1", nt_uri(S_MEM));
	struct nt_thread_arg args[4];
	struct blkring_dev_info in;
	pthread_t t[4];

	for (unsigned i = 0; i < 4; i++) {
		args[i] = (struct nt_thread_arg){.dev = dev,
		                                 .flags = i ? BLKRING_SETUP_IOPOLL : 0,
		                                 .base = 3 * GiB + i * 64 * MiB};
		CHECK_EQ(pthread_create(&t[i], NULL, nt_poll_thread, &args[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	nt_info(dev, &in);
	CHECK_EQ(in.ios[BLKRING_DIR_READ], 4 * 20 * 32);
	CHECK_EQ(in.ios[BLKRING_DIR_WRITE], 4 * 20 * 32);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* ---- a ring's owner asleep on its queue ---- */

/* An owner that sleeps for its reads reads the replies itself: they are
 * not handed to it as task work, the interrupt's way.  Only a reply that
 * came before the owner slept goes to the interrupt. */
static void test_owner_reads(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	char *buf = test_alloc(4096);
	struct blkring_ring_stats st;
	struct blkring ring;

	test_ring(&ring, 0, dev);
	for (unsigned i = 0; i < 200; i++)
		CHECK_EQ(test_ring_rw(&ring, false, buf, 4096, i * 4096ULL, 0), 4096);
	CHECK_EQ(blkring_ring_stats(&ring, &st), 0);
	if (st.tw_run >= 100)
		TEST_FAIL("%llu of 200 reads came as task work", (unsigned long long)st.tw_run);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* An owner that never sleeps (it only peeks) still gets its completions:
 * the interrupt reads what nobody sleeps on. */
static void test_owner_peeks(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	char *buf = test_alloc(32 * 4096);
	struct blkring_cqe *cqe;
	struct blkring ring;
	uint64_t t0 = test_now_ms();
	unsigned got = 0;

	test_ring(&ring, 0, dev);
	for (unsigned i = 0; i < 32; i++)
		blkring_prep_read(ring_sqe(&ring), 0, buf + i * 4096, 4096, i * 4096ULL);
	CHECK_EQ(blkring_submit(&ring), 32);
	while (got < 32 && test_now_ms() - t0 < 10000) {
		if (blkring_peek_cqe(&ring, &cqe))
			continue;
		CHECK_EQ(cqe->res, 4096);
		blkring_cqe_seen(&ring, cqe);
		got++;
	}
	CHECK_EQ(got, 32);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* A ring's owner that slept on the socket keeps its watch, then stays
 * away: the interrupt takes the watch back, so I/O nobody sleeps on (the
 * synchronous calls) completes in milliseconds, not at io_timeout_ms. */
static void test_holder_away(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	char *buf = test_alloc(4096), *out = test_alloc(4096);
	struct blkring ring;
	uint64_t t0;

	test_ring(&ring, 0, dev);
	CHECK_EQ(test_ring_rw(&ring, false, buf, 4096, 0, 0), 4096);
	blkring_prep_read(ring_sqe(&ring), 0, buf, 4096, 8192);
	CHECK_EQ(blkring_submit(&ring), 1);
	t0 = test_now_ms();
	for (unsigned i = 0; i < 20; i++)
		CHECK_EQ(blkring_dev_pread(dev, out, 4096, i * 4096ULL), 4096);
	if (test_now_ms() - t0 > 2000)
		TEST_FAIL("20 synchronous reads took %llu ms",
		          (unsigned long long)(test_now_ms() - t0));
	CHECK_EQ(test_wait(&ring, NULL, 10000), 4096);
	nt_no_more_cqes(&ring, 20);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
	free(out);
}

/* Each kind of ring reads its own socket's replies the same way: an SQ
 * thread (the ring's owner, which sleeps when idle), a deferring ring, and
 * a ring that exits with I/O in flight (exit waits for it); the device
 * serves synchronous calls after each. */
static void test_owner_ring_kinds(void)
{
	static const unsigned kinds[] = {
	    BLKRING_SETUP_SQPOLL, BLKRING_SETUP_DEFER_TASKRUN | BLKRING_SETUP_SINGLE_ISSUER, 0};
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	char *buf = test_alloc(16 * 4096);

	for (unsigned k = 0; k < ARRAY_LEN(kinds); k++) {
		struct blkring ring;

		test_ring(&ring, kinds[k], dev);
		nt_ring_batch(&ring, 6 * GiB + k * MiB, 32, 4096, 20 + k);
		for (unsigned i = 0; i < 16; i++)
			blkring_prep_read(ring_sqe(&ring), 0, buf + i * 4096, 4096, i * 4096ULL);
		CHECK_EQ(blkring_submit(&ring), 16);
		blkring_queue_exit(&ring);
		nt_roundtrip(dev, 6 * GiB + 8 * MiB + k * 65536, 65536, 30 + k);
	}
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

struct nt_share {
	struct blkring_dev *dev;
	uint64_t base;
	_Atomic bool done;
};

static void *nt_share_thread(void *p)
{
	struct nt_share *a = p;
	struct blkring ring;

	test_ring(&ring, 0, a->dev);
	for (unsigned i = 0; i < 10; i++)
		nt_ring_batch(&ring, a->base + i * 256 * 1024, 32, 4096, a->base + i);
	blkring_queue_exit(&ring);
	atomic_store(&a->done, true);
	return NULL;
}

/* Rings of three threads share one connection, and a fourth ring that
 * slept on it stays out of the library meanwhile, its read in flight: at
 * most one owner watches the socket, the watch goes back when it wakes,
 * and every completion reaches its own ring once. */
static void test_owners_share(void)
{
	struct blkring_dev *dev = test_open(nt_uri(S_MEM));
	char *buf = test_alloc(4096);
	struct nt_share args[3];
	struct blkring ring;
	pthread_t t[3];

	test_ring(&ring, 0, dev);
	CHECK_EQ(test_ring_rw(&ring, false, buf, 4096, 0, 0), 4096);
	blkring_prep_read(ring_sqe(&ring), 0, buf, 4096, 4096);
	CHECK_EQ(blkring_submit(&ring), 1);
	for (unsigned i = 0; i < 3; i++) {
		args[i] = (struct nt_share){.dev = dev, .base = 5 * GiB + i * 64 * MiB};
		CHECK_EQ(pthread_create(&t[i], NULL, nt_share_thread, &args[i]), 0);
	}
	for (unsigned i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(test_wait(&ring, NULL, 10000), 4096);
	nt_no_more_cqes(&ring, 50);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

/* A striped volume over a unix and a TCP server, polled with each
 * strategy and unpolled; chunks land on the legs the table says. */
static void nt_volume(const char *strategy)
{
	const char *leg0 = nt_uri(S_MEM), *leg1 = nt_uri(S_TCP);
	const char *table = nt_path("striped.table");
	char text[1024], spec[256];
	struct blkring_dev *vol, *l0, *l1;
	char *buf = test_alloc(8192);
	struct blkring ring;
	FILE *f = fopen(table, "w");

	CHECK(f);
	/* 128 MiB, 8-sector (4 KiB) chunks; leg 0 from 4 GiB on. */
	snprintf(text, sizeof(text),
	         "0 262144 striped 2 8 %s,poll_queues=1 8388608 %s,poll_queues=1 0\n", leg0, leg1);
	fputs(text, f);
	fclose(f);
	snprintf(spec, sizeof(spec), "table:%s,poll=%s", table, strategy);
	vol = test_open(spec);
	test_ring(&ring, BLKRING_SETUP_IOPOLL, vol);
	nt_ring_batch(&ring, 0, 64, 4096, 9);
	nt_ring_batch(&ring, MiB, 16, 16384, 10);
	blkring_queue_exit(&ring);
	test_ring(&ring, 0, vol);
	nt_ring_batch(&ring, 2 * MiB, 32, 4096, 11);
	blkring_queue_exit(&ring);
	/* Volume block 1 is leg 1's block 0; block 2 leg 0's block 1. */
	l0 = test_openf("%s,poll_queues=1", leg0);
	l1 = test_openf("%s,poll_queues=1", leg1);
	CHECK_EQ(blkring_dev_pread(l1, buf, 4096, 0), 4096);
	CHECK(test_pattern_ok(buf, 4096, 4096, 9));
	CHECK_EQ(blkring_dev_pread(l0, buf, 4096, 4 * GiB + 4096), 4096);
	CHECK(test_pattern_ok(buf, 4096, 8192, 9));
	CHECK_EQ(blkring_dev_close(vol), 0);
	CHECK_EQ(blkring_dev_close(l0), 0);
	CHECK_EQ(blkring_dev_close(l1), 0);
	free(buf);
}

static void test_volume_poll_all(void)
{
	nt_volume("all");
}

static void test_volume_poll_cookie(void)
{
	nt_volume("cookie");
}

/* A reload under load swaps a local leg for a remote one, whose limits
 * and features differ: no I/O fails, and what the volume writes after
 * lands on the server. */
static void test_volume_reload_remote(void)
{
	const char *uri = nt_uri(S_MEM);
	struct test_load a = {0};
	char table[512];
	struct blkring_dev *leg;
	pthread_t t;
	unsigned long before;

	a.vol = test_vol("0 131072 linear null:memory_backed=1,size=64M,name=nbd-reload 0\n", NULL);
	CHECK_EQ(pthread_create(&t, NULL, test_load_thread, &a), 0);
	while (atomic_load(&a.done) < 20)
		usleep(1000);
	snprintf(table, sizeof(table), "0 131072 linear %s 12582912\n", uri); /* at 6 GiB */
	CHECK_EQ(blkring_vol_load(a.vol, table, NULL), 0);
	CHECK_EQ(blkring_vol_resume(a.vol), 0);
	before = atomic_load(&a.done);
	while (atomic_load(&a.done) < before + 20)
		usleep(1000);
	atomic_store(&a.stop, true);
	pthread_join(t, NULL);
	nt_roundtrip(a.vol, MiB, 65536, 0x51);
	leg = test_open(uri);
	{
		char *buf = test_alloc(65536);

		CHECK_EQ(blkring_dev_pread(leg, buf, 65536, 6 * GiB + MiB), 65536);
		CHECK(test_pattern_ok(buf, 65536, MiB, 0x51));
		free(buf);
	}
	CHECK_EQ(blkring_dev_close(a.vol), 0);
	CHECK_EQ(blkring_dev_close(leg), 0);
}

/* ---- multi-conn ---- */

/* Three rings take three queues (one connection each): what one writes,
 * another reads. */
static void test_multi_conn(void)
{
	struct blkring_dev *dev = test_openf("%s,connections=3,poll_queues=1", nt_uri(S_MEM));
	char *buf = test_alloc(65536);
	struct blkring_dev_info in;
	struct blkring rings[3];

	nt_info(dev, &in);
	CHECK_EQ(in.nr_hw_queues, 3);
	CHECK_EQ(in.nr_poll_queues, 1);
	CHECK(in.features & BLKRING_FEAT_MULTI_CONN);
	for (unsigned i = 0; i < 3; i++)
		test_ring(&rings[i], 0, dev);
	for (unsigned i = 0; i < 3; i++) {
		test_fill(buf, 65536, 5 * GiB + i * MiB, 20 + i);
		CHECK_EQ(test_ring_rw(&rings[i], true, buf, 65536, 5 * GiB + i * MiB, 0), 65536);
	}
	for (unsigned i = 0; i < 3; i++) {
		memset(buf, 0, 65536);
		CHECK_EQ(test_ring_rw(&rings[(i + 1) % 3], false, buf, 65536, 5 * GiB + i * MiB, 0),
		         65536);
		CHECK(test_pattern_ok(buf, 65536, 5 * GiB + i * MiB, 20 + i));
	}
	for (unsigned i = 0; i < 3; i++)
		blkring_queue_exit(&rings[i]);
	CHECK_EQ(blkring_dev_close(dev), 0);
	free(buf);
}

static void test_multi_conn_refused(void)
{
	const char *uri = nt_uri(S_QEMU);
	char spec[400];

	snprintf(spec, sizeof(spec), "%s,connections=2", uri);
	test_open_fails(spec, -EINVAL, "does not offer multi-conn", "connections=2");
	snprintf(spec, sizeof(spec), "%s,poll_queues=1", uri);
	test_open_fails(spec, -EINVAL, "does not offer multi-conn", "poll_queues=1");
	/* One connection is fine, and the refused ones left none behind. */
	{
		struct blkring_dev *dev = test_open(uri);

		CHECK_EQ(blkring_dev_close(dev), 0);
	}
}

/* ---- connect errors and bad specs ---- */

static void test_connect_errors(void)
{
	char spec[400];
	uint64_t t0;

	(void)nt_uri(S_MEM); /* nbdkit present: libnbd is what is tested */
	test_open_fails(nt.refused_uri, -ECONNREFUSED, nt.refused_uri, "refused");
	snprintf(spec, sizeof(spec), "nbd+unix:///?socket=%s", nt_path("none.sock"));
	test_open_fails(spec, -ENOENT, spec, "No such file");
	if (nt.srv[S_QEMU].pid) {
		snprintf(spec, sizeof(spec), "nbd+unix:///nope?socket=%s.sock", nt_path("qemu"));
		test_open_fails(spec, -ENOENT, spec, "no export named 'nope'");
	}
	snprintf(spec, sizeof(spec), "%s,connect_timeout_ms=200", nt.listen_uri);
	t0 = test_now_ms();
	test_open_fails(spec, -ETIMEDOUT, nt.listen_uri, "connect_timeout_ms=200");
	CHECK(test_now_ms() - t0 >= 190 && test_now_ms() - t0 < 1500);
}

static void test_bad_specs(void)
{
	const char *uri = nt_uri(S_MEM);
	char spec[400];

	test_open_fails("nbd:foo", -EINVAL, "'foo': expected an NBD URI", NULL);
	test_open_fails("nbd:", -EINVAL, "nbd:URI", NULL);
	test_open_fails("nbd://[bad", -EINVAL, "nbd://[bad", "parse");
	test_open_fails("nbd+unix:///", -EINVAL, "socket", NULL);
	test_open_fails("nbd://127.0.0.1:notaport/", -EINVAL, "parse", NULL);
	snprintf(spec, sizeof(spec), "%s,conections=2", uri);
	test_open_fails(spec, -EINVAL, "conections", "connections");
	snprintf(spec, sizeof(spec), "%s,connections=0", uri);
	test_open_fails(spec, -EINVAL, "'connections'", "1 to 64");
	snprintf(spec, sizeof(spec), "%s,connections=60,poll_queues=5", uri);
	test_open_fails(spec, -EINVAL, "'poll_queues'", NULL);
	snprintf(spec, sizeof(spec), "%s,io_timeout_ms=5", uri);
	test_open_fails(spec, -EINVAL, "'io_timeout_ms'", NULL);
	snprintf(spec, sizeof(spec), "%s,ro=2", uri);
	test_open_fails(spec, -EINVAL, "'ro'", NULL);
}

/* ---- faults ---- */

/* Submits n reads and writes (and a flush) at once on the ring. */
static void nt_submit_mixed(struct blkring *ring, char *buf, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(ring);

		if (i == n - 1)
			blkring_prep_fsync(sqe, 0, 0);
		else if (i % 2)
			blkring_prep_write(sqe, 0, buf + i * 4096, 4096, i * 8192);
		else
			blkring_prep_read(sqe, 0, buf + i * 4096, 4096, i * 8192);
		sqe->user_data = i;
	}
	CHECK_EQ(blkring_submit(ring), n);
}

/* Every one of n ends once, each with -EIO; returns when the last did. */
static void nt_all_fail(struct blkring *ring, unsigned n, unsigned ms)
{
	uint64_t seen = 0, data;

	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(test_wait(ring, &data, ms), -EIO);
		CHECK(data < n && !(seen & (1ULL << data)));
		seen |= 1ULL << data;
	}
}

/* Polled reads on an IOPOLL ring, in flight beside the other ring's. */
static void nt_submit_polled(struct blkring *pring, char *buf, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct blkring_sqe *sqe = ring_sqe(pring);

		blkring_prep_read(sqe, 0, buf + i * 4096, 4096, MiB + i * 4096);
		sqe->user_data = i;
	}
	CHECK_EQ(blkring_submit(pring), n);
}

/* After the device died: I/O fails at once, polled or not, nothing ends
 * twice, and closing works. */
static void nt_dead_after(struct blkring *ring, struct blkring *pring, struct blkring_dev *dev,
                          char *buf)
{
	uint64_t t0 = test_now_ms();
	struct blkring_dev_info in;

	CHECK_EQ(test_ring_rw(ring, false, buf, 4096, 0, 0), -EIO);
	CHECK_EQ(test_ring_rw(pring, false, buf, 4096, 0, 0), -EIO);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, 4096, 0), -EIO);
	CHECK_EQ(blkring_dev_flush(dev), -EIO);
	CHECK(test_now_ms() - t0 < 200);
	nt_no_more_cqes(ring, 100);
	nt_no_more_cqes(pring, 100);
	nt_info(dev, &in);
	CHECK_EQ(in.errors[BLKRING_DIR_READ], 16 + 8 + 2);
	CHECK_EQ(in.errors[BLKRING_DIR_WRITE], 15 + 1);
	blkring_queue_exit(ring);
	blkring_queue_exit(pring);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

/* The server is killed with 32 requests in flight (it holds them 2 s):
 * they fail when the connection drops, long before io_timeout_ms. */
/* The process's CPU time over ms milliseconds of sleep, in milliseconds. */
static unsigned nt_idle_cpu_ms(unsigned ms)
{
	struct rusage a, b;

	CHECK_EQ(getrusage(RUSAGE_SELF, &a), 0);
	usleep(ms * 1000);
	CHECK_EQ(getrusage(RUSAGE_SELF, &b), 0);
	return (unsigned)((b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec -
	                   a.ru_stime.tv_sec) *
	                      1000 +
	                  (b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec -
	                   a.ru_stime.tv_usec) /
	                      1000);
}

static void test_server_killed(void)
{
	struct blkring_dev *dev =
	    test_openf("%s,io_timeout_ms=20000,poll_queues=1", nt_uri(S_KILL));
	char *buf = test_alloc(40 * 4096);
	struct blkring ring, pring;
	uint64_t t0;

	test_ring(&ring, 0, dev);
	test_ring(&pring, BLKRING_SETUP_IOPOLL, dev);
	nt_submit_mixed(&ring, buf, 32);
	nt_submit_polled(&pring, buf + 32 * 4096, 8);
	usleep(50000); /* all sent: the server holds them */
	t0 = test_now_ms();
	CHECK_EQ(kill(nt.srv[S_KILL].pid, SIGKILL), 0);
	nt_all_fail(&ring, 32, 5000);
	nt_all_fail(&pring, 8, 5000);
	CHECK(test_now_ms() - t0 < 1000);
	/* The dead sockets hang up for good: nothing polls them again. */
	CHECK(nt_idle_cpu_ms(500) < 200);
	nt_dead_after(&ring, &pring, dev, buf);
	free(buf);
}

/* SIGSTOP takes effect a little after kill() returns: wait until every
 * thread of the server is stopped, so nothing sent after is answered. */
static void nt_wait_stopped(pid_t pid)
{
	char path[64];

	for (int t = 0; t < 1000; t++) {
		DIR *d;
		struct dirent *e;
		bool all = true;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		d = opendir(path);
		CHECK(d);
		while ((e = readdir(d)) && all) {
			char stat[400], buf[256], *p;
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(stat, sizeof(stat), "%s/%s/stat", path, e->d_name);
			f = fopen(stat, "r");
			if (!f)
				continue;
			p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			all = p && (p[2] == 'T' || p[2] == 't');
			fclose(f);
		}
		closedir(d);
		if (all)
			return;
		usleep(1000);
	}
	TEST_FAIL("server %d did not stop", (int)pid);
}

/* The server stops answering (SIGSTOP): what is in flight fails after
 * io_timeout_ms, not before, and not much later. */
static void test_server_stopped(void)
{
	struct blkring_dev *dev =
	    test_openf("%s,io_timeout_ms=%d,poll_queues=1", nt_uri(S_STOP), STOP_TIMEOUT_MS);
	pid_t pid = nt.srv[S_STOP].pid;
	char *buf = test_alloc(40 * 4096);
	struct blkring ring, pring;
	uint64_t t0, took;

	test_ring(&ring, 0, dev);
	test_ring(&pring, BLKRING_SETUP_IOPOLL, dev);
	CHECK_EQ(test_ring_rw(&ring, true, buf, 4096, 0, 0), 4096);
	CHECK_EQ(kill(pid, SIGSTOP), 0);
	nt_wait_stopped(pid);
	t0 = test_now_ms();
	nt_submit_mixed(&ring, buf, 32);
	nt_submit_polled(&pring, buf + 32 * 4096, 8);
	nt_all_fail(&ring, 32, 5000);
	took = test_now_ms() - t0;
	nt_all_fail(&pring, 8, 5000);
	kill(pid, SIGCONT);
	if (took < STOP_TIMEOUT_MS - 10 || took > STOP_TIMEOUT_MS * 3 / 2 + 200)
		TEST_FAIL("in-flight I/O failed after %llu ms, io_timeout_ms=%d",
		          (unsigned long long)took, STOP_TIMEOUT_MS);
	nt_dead_after(&ring, &pring, dev, buf);
	free(buf);
}

static const struct test_case cases[] = {
    {"info_caps", test_info_caps, 30},
    {"rw_unix", test_rw_unix, 60},
    {"rw_tcp", test_rw_tcp, 30},
    {"ring_ops", test_ring_ops, 30},
    {"read_only", test_read_only, 30},
    {"qemu_file", test_qemu_file, 30},
    {"limits", test_limits, 30},
    {"split_rw", test_split_rw, 30},
    {"split_ranges", test_split_ranges, 30},
    {"fua_emulated", test_fua_emulated, 30},
    {"vectored_bounce", test_vectored_bounce, 30},
    {"poll_ring", test_poll_ring, 30},
    {"poll_threads", test_poll_threads, 60},
    {"owner_reads", test_owner_reads, 30},
    {"owner_peeks", test_owner_peeks, 30},
    {"owners_share", test_owners_share, 60},
    {"holder_away", test_holder_away, 30},
    {"owner_ring_kinds", test_owner_ring_kinds, 30},
    {"volume_poll_all", test_volume_poll_all, 30},
    {"volume_poll_cookie", test_volume_poll_cookie, 30},
    {"volume_reload_remote", test_volume_reload_remote, 30},
    {"multi_conn", test_multi_conn, 30},
    {"multi_conn_refused", test_multi_conn_refused, 30},
    {"connect_errors", test_connect_errors, 30},
    {"bad_specs", test_bad_specs, 30},
    {"server_killed", test_server_killed, 30},
    {"server_stopped", test_server_stopped, 30},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	int ret;

	nt_setup();
	ret = test_main(cases, argc, argv);
	nt_cleanup();
	return ret;
}
