// SPDX-License-Identifier: MIT
/*
 * Ring exit with I/O in flight, for every ring kind times every device
 * kind, with single SQEs and with linked chains.  Each round sets up a
 * ring, submits reads, writes and flushes, reaps some CQEs, and exits with
 * the rest in flight.  Checked: every CQE reaped before exit is one the
 * ring was given, once, with the right result and data; exit returns (a
 * hang fails the case after STRESS_EXIT_SECONDS); nothing writes to the
 * buffers after exit returns; the device saw no errors, closes with 0 and
 * leaves no thread behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"
#include "test-file-util.h"

#define DEV_SIZE (2U << 20)
#define WRITE_AREA (1U << 20) /* writes below, reads of the pattern above */
#define BS 4096U
#define RING_ENTRIES 32U
#define SHORT_MS 70U

enum dev_type { DEV_NULL, DEV_TMPFS, DEV_LOOP };

struct dev_kind {
	const char *name;
	enum dev_type type;
	const char *fmt; /* the spec; %s is the scratch file or the loop device */
};

/* Delays and few tags on null; few tags on the file devices too, so some
 * I/O waits for one (and goes to the device's shared kernel ring). */
static const struct dev_kind dev_kinds[] = {
    {"null-timer", DEV_NULL,
     "null:irqmode=timer,completion_nsec=300000,hw_queue_depth=2,submit_queues=2,"
     "memory_backed=1,size=2M,name=stress-exit-timer"},
    {"null-softirq", DEV_NULL,
     "null:irqmode=softirq,hw_queue_depth=1,mbps=400,memory_backed=1,size=2M,"
     "name=stress-exit-softirq"},
    {"tmpfs-direct", DEV_TMPFS, "file:%s,size=2M,hw_queue_depth=4"},
    {"tmpfs-buffered", DEV_TMPFS, "file:%s,size=2M,direct=0"},
    {"loop", DEV_LOOP, "file:%s,hw_queue_depth=4"},
};

#define NR_DEV_KINDS (sizeof(dev_kinds) / sizeof(dev_kinds[0]))

struct exit_case {
	const struct stress_ring_kind *ring;
	const struct dev_kind *dev;
	bool link;
};

/* One SQE of a round: what it does and what its CQE must say. */
struct io {
	uint8_t op;
	uint64_t off;
	char *buf;
};

struct round {
	const struct exit_case *c;
	struct blkring ring;
	struct stress_ledger ledger;
	struct io ios[RING_ENTRIES];
	uint64_t rnd;
	uint64_t submitted, ok_rw;
};

static char *bufs; /* RING_ENTRIES blocks, aligned for O_DIRECT */

static struct blkring_dev *open_dev(const struct dev_kind *k)
{
	if (k->type == DEV_NULL)
		return tf_open("%s", k->fmt);
	if (k->type == DEV_LOOP)
		return tf_open(k->fmt, tf_loop(0));
	return tf_open(k->fmt, tf_path(tf.shm_dir, k->name));
}

static void prefill(struct blkring_dev *dev)
{
	char *buf = tf_alloc(DEV_SIZE - WRITE_AREA);

	stress_fill(buf, DEV_SIZE - WRITE_AREA, WRITE_AREA);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, DEV_SIZE - WRITE_AREA, WRITE_AREA),
	         DEV_SIZE - WRITE_AREA);
	free(buf);
}

/* A read of the pattern, a write of it, or (rarely) a flush. */
static void prep_one(struct round *r, unsigned i, unsigned flags)
{
	struct blkring_sqe *sqe = blkring_get_sqe(&r->ring);
	struct io *io = &r->ios[i];
	unsigned pick = (unsigned)(stress_rand(&r->rnd) % 10);
	uint64_t block = stress_rand(&r->rnd) % (WRITE_AREA / BS);

	CHECK(sqe);
	io->buf = bufs + (size_t)i * BS;
	if (pick < 6) {
		io->op = BLKRING_OP_READ;
		io->off = WRITE_AREA + block * BS;
		memset(io->buf, 0, BS);
		blkring_prep_read(sqe, 0, io->buf, BS, io->off);
	} else if (pick < 9) {
		io->op = BLKRING_OP_WRITE;
		io->off = block * BS;
		stress_fill(io->buf, BS, io->off);
		blkring_prep_write(sqe, 0, io->buf, BS, io->off);
	} else {
		io->op = BLKRING_OP_FSYNC;
		blkring_prep_fsync(sqe, 0, 0);
	}
	sqe->flags = (uint8_t)flags;
	sqe->user_data = stress_ledger_add(&r->ledger);
	r->submitted++;
}

/* SQEs first..first+n, in chains of 2 to 4 when linking (the last SQE
 * always ends its chain, so none spans two submits). */
static void prep_batch(struct round *r, unsigned first, unsigned n)
{
	unsigned left = 0;

	for (unsigned i = first; i < first + n; i++) {
		bool last = i + 1 == first + n;

		if (r->c->link && !left)
			left = 1 + (unsigned)(stress_rand(&r->rnd) % 4);
		if (left)
			left--;
		prep_one(r, i, r->c->link && left && !last ? BLKRING_SQE_IO_LINK : 0);
		if (last)
			left = 0;
	}
}

static void check_cqe(struct round *r, const struct blkring_cqe *cqe)
{
	const struct io *io;
	int want;
	long bad;

	stress_ledger_reap(&r->ledger, cqe->user_data);
	io = &r->ios[cqe->user_data];
	want = io->op == BLKRING_OP_FSYNC ? 0 : (int)BS;
	if (cqe->res != want)
		TEST_FAIL("op %u at %llu: res %d, expected %d", io->op, (unsigned long long)io->off,
		          cqe->res, want);
	if (io->op == BLKRING_OP_READ && (bad = stress_check(io->buf, BS, io->off)) >= 0)
		TEST_FAIL("read at %llu: wrong data at byte %ld", (unsigned long long)io->off, bad);
	r->ok_rw += io->op != BLKRING_OP_FSYNC;
}

/* Reaps a few CQEs, by waiting or by only looking. */
static void reap_some(struct round *r, unsigned nr)
{
	struct __kernel_timespec ts = {STRESS_EXIT_SECONDS, 0};
	struct blkring_cqe *cqe;
	int ret;

	for (unsigned i = 0; i < nr; i++) {
		if (stress_rand(&r->rnd) % 2)
			ret = blkring_peek_cqe(&r->ring, &cqe);
		else
			ret = blkring_wait_cqes(&r->ring, &cqe, 1, &ts, NULL);
		if (ret == -EAGAIN)
			continue;
		if (ret)
			TEST_FAIL("reaping CQE %u of %u with %llu in flight: %s", i, nr,
			          (unsigned long long)stress_ledger_inflight(&r->ledger),
			          strerror(-ret));
		check_cqe(r, cqe);
		blkring_cqe_seen(&r->ring, cqe);
	}
}

/* After exit nothing may touch the buffers: poison them, look again later. */
static void check_quiet(unsigned nr)
{
	memset(bufs, 0xa5, (size_t)nr * BS);
	stress_sleep_us(1000);
	for (size_t i = 0; i < (size_t)nr * BS; i++)
		if ((unsigned char)bufs[i] != 0xa5)
			TEST_FAIL("buffer %zu written after exit returned", i / BS);
}

static void one_round(struct round *r, struct blkring_dev *dev)
{
	unsigned nr = 4 + (unsigned)(stress_rand(&r->rnd) % (RING_ENTRIES - 3));
	unsigned first = (unsigned)(stress_rand(&r->rnd) % nr);
	char what[128];
	int ret;

	stress_ledger_init(&r->ledger);
	stress_ring_init(&r->ring, RING_ENTRIES, 0, r->c->ring);
	CHECK_EQ(blkring_register_devices(&r->ring, &dev, 1), 0);
	/* One or two submits. */
	prep_batch(r, 0, first);
	if (first && (ret = blkring_submit(&r->ring)) != (int)first)
		TEST_FAIL("submit %u: %d", first, ret);
	prep_batch(r, first, nr - first);
	if ((ret = blkring_submit(&r->ring)) != (int)(nr - first))
		TEST_FAIL("submit %u: %d", nr - first, ret);
	reap_some(r, (unsigned)(stress_rand(&r->rnd) % (nr / 2 + 1)));
	snprintf(what, sizeof(what), "%s, %s, %llu of %u CQEs reaped", r->c->dev->name,
	         r->c->link ? "linked chains" : "single SQEs", (unsigned long long)r->ledger.reaped,
	         nr);
	stress_ring_exit(&r->ring, r->c->ring, what);
	check_quiet(nr);
	stress_ledger_free(&r->ledger);
}

/* Every I/O the device counted succeeded; it counted each read and write
 * reaped, and no more I/O than was submitted (a flush on null may not
 * count). */
static void check_counters(struct blkring_dev *dev, const struct round *r)
{
	struct blkring_dev_info info;
	uint64_t ios = 0, rw;

	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	for (unsigned d = 0; d < BLKRING_DIR_NR; d++) {
		if (info.errors[d])
			TEST_FAIL("%llu errors in direction %u", (unsigned long long)info.errors[d],
			          d);
		ios += info.ios[d];
	}
	ios -= 1; /* the prefill */
	rw = info.ios[BLKRING_DIR_READ] + info.ios[BLKRING_DIR_WRITE] - 1;
	if (rw < r->ok_rw || ios > r->submitted)
		TEST_FAIL("device counted %llu I/Os, %llu reads and writes: %llu submitted, "
		          "%llu reads and writes reaped",
		          (unsigned long long)ios, (unsigned long long)rw,
		          (unsigned long long)r->submitted, (unsigned long long)r->ok_rw);
}

static unsigned nr_cases;

static void run_exit_case(const void *arg)
{
	const struct exit_case *c = arg;
	uint64_t end = stress_now_ns() + stress_case_ns(SHORT_MS, nr_cases);
	struct blkring_dev *dev = open_dev(c->dev);
	struct round r = {.c = c, .rnd = stress_seed()};

	bufs = tf_alloc((size_t)RING_ENTRIES * BS);
	prefill(dev);
	do {
		one_round(&r, dev);
	} while (stress_now_ns() < end);
	check_counters(dev, &r);
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(stress_lib_threads(), 0);
	free(bufs);
}

int main(int argc, char **argv)
{
	static struct exit_case cases[STRESS_NR_RING_KINDS * NR_DEV_KINDS * 2];
	unsigned n = 0;

	tf_setup();
	tf_add_loop(8U << 20, 512);
	for (unsigned k = 0; k < STRESS_NR_RING_KINDS; k++)
		for (unsigned d = 0; d < NR_DEV_KINDS; d++)
			for (unsigned l = 0; l < 2; l++)
				cases[n++] =
				    (struct exit_case){&stress_ring_kinds[k], &dev_kinds[d], l};
	nr_cases = n;
	for (unsigned i = 0; i < n; i++) {
		char name[128];

		snprintf(name, sizeof(name), "stress-exit-%s-%s-%s", cases[i].ring->name,
		         cases[i].dev->name, cases[i].link ? "link" : "single");
		stress_run_case(name, run_exit_case, &cases[i],
		                stress_case_timeout(SHORT_MS, nr_cases), argc, argv);
	}
	tf_cleanup();
	return 0;
}
