// SPDX-License-Identifier: MIT
/*
 * CQ overflow with a CQ of 8, for every ring kind and completion source
 * (null completing inline, from its queue thread, after a timer; a file on
 * tmpfs).  Each round puts 12 to 40 reads and writes in flight, so more
 * than the CQ holds, waits a little before reaping, then reaps them all,
 * resubmitting what the full CQ held back (-EBUSY).  Checked: every SQE
 * gets exactly one CQE, none lost (a wait times out), none duplicated,
 * none made up; each with its full length and the data; the CQ did
 * overflow; exit with a full CQ and I/O in flight returns; the device
 * closes with 0 and leaves no thread behind.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"
#include "test-file-util.h"

#define DEV_SIZE (1U << 20)
#define BS 4096U
#define SQ_ENTRIES 8U
#define CQ_ENTRIES 8U
#define MAX_INFLIGHT 40U
#define SHORT_MS 150U

struct source {
	const char *name;
	const char *spec; /* NULL: a file on tmpfs */
};

static const struct source sources[] = {
    {"null-none", "null:irqmode=none,memory_backed=1,size=1M,name=stress-ovf-none"},
    {"null-softirq", "null:irqmode=softirq,memory_backed=1,size=1M,name=stress-ovf-softirq"},
    {"null-timer",
     "null:irqmode=timer,completion_nsec=50000,memory_backed=1,size=1M,name=stress-ovf-timer"},
    {"file", NULL},
};

#define NR_SOURCES (sizeof(sources) / sizeof(sources[0]))

struct ovf_case {
	const struct stress_ring_kind *ring;
	const struct source *src;
};

/* One SQE: user_data indexes the ledger, and (mod MAX_INFLIGHT * 2) its slot. */
struct io {
	uint8_t op;
	uint64_t off;
	char *buf;
};

#define NR_SLOTS (2 * MAX_INFLIGHT)

struct ovf {
	const struct ovf_case *c;
	struct blkring ring;
	struct stress_ledger ledger;
	struct io ios[NR_SLOTS];
	uint64_t rnd;
	uint64_t rounds;
};

static struct blkring_dev *open_source(const struct source *s)
{
	if (s->spec)
		return test_open(s->spec);
	return tf_open("file:%s,size=1M", tf_path(tf.shm_dir, "overflow.img"));
}

static void prefill(struct blkring_dev *dev)
{
	char *buf = tf_alloc(DEV_SIZE);

	stress_fill(buf, DEV_SIZE, 0);
	CHECK_EQ(blkring_dev_pwrite(dev, buf, DEV_SIZE, 0), DEV_SIZE);
	free(buf);
}

/* An SQE, submitting what is queued when the SQ is full; NULL once the
 * full CQ holds submission back (-EBUSY, or an SQ thread that stopped). */
static struct blkring_sqe *get_sqe(struct ovf *o)
{
	for (unsigned tries = 0; tries < 10000; tries++) {
		struct blkring_sqe *sqe = blkring_get_sqe(&o->ring);
		int ret;

		if (sqe)
			return sqe;
		ret = blkring_submit(&o->ring);
		if (ret == -EBUSY || (*o->ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW))
			return NULL;
		if (ret < 0)
			TEST_FAIL("submit: %s", strerror(-ret));
		sched_yield(); /* the SQ thread consumes them */
	}
	return NULL;
}

static void prep(struct ovf *o, struct blkring_sqe *sqe)
{
	uint64_t ud = stress_ledger_add(&o->ledger);
	struct io *io = &o->ios[ud % NR_SLOTS];
	uint64_t r = stress_rand(&o->rnd);

	io->off = (r >> 8) % (DEV_SIZE / BS) * BS;
	if (r % 3 == 0) {
		io->op = BLKRING_OP_WRITE;
		stress_fill(io->buf, BS, io->off);
		blkring_prep_write(sqe, 0, io->buf, BS, io->off);
	} else {
		io->op = BLKRING_OP_READ;
		memset(io->buf, 0, BS);
		blkring_prep_read(sqe, 0, io->buf, BS, io->off);
	}
	sqe->user_data = ud;
}

static void fill(struct ovf *o, unsigned target)
{
	struct blkring_sqe *sqe;
	int ret;

	while (stress_ledger_inflight(&o->ledger) < target && (sqe = get_sqe(o))) {
		prep(o, sqe);
		if (stress_rand(&o->rnd) % 4)
			continue;
		ret = blkring_submit(&o->ring);
		if (ret == -EBUSY)
			return;
		if (ret < 0)
			TEST_FAIL("submit: %s", strerror(-ret));
	}
	ret = blkring_submit(&o->ring);
	if (ret < 0 && ret != -EBUSY)
		TEST_FAIL("submit: %s", strerror(-ret));
}

static void check_cqe(struct ovf *o, const struct blkring_cqe *cqe)
{
	const struct io *io;
	long bad;

	stress_ledger_reap(&o->ledger, cqe->user_data);
	io = &o->ios[cqe->user_data % NR_SLOTS];
	if (cqe->res != (int)BS)
		TEST_FAIL("%s at %llu: res %d", io->op == BLKRING_OP_READ ? "read" : "write",
		          (unsigned long long)io->off, cqe->res);
	if (io->op == BLKRING_OP_READ && (bad = stress_check(io->buf, BS, io->off)) >= 0)
		TEST_FAIL("read at %llu: wrong data at byte %ld", (unsigned long long)io->off, bad);
}

static unsigned reap_wait(struct ovf *o)
{
	struct __kernel_timespec ts = {STRESS_EXIT_SECONDS, 0};
	struct blkring_cqe *cqe;
	int ret = blkring_wait_cqes(&o->ring, &cqe, 1, &ts, NULL);

	if (ret)
		TEST_FAIL("CQE lost: waiting with %llu in flight (%u overflowed so far): %s",
		          (unsigned long long)stress_ledger_inflight(&o->ledger),
		          *o->ring.cq.koverflow, strerror(-ret));
	check_cqe(o, cqe);
	blkring_cqe_seen(&o->ring, cqe);
	return 1;
}

static unsigned reap_batch(struct ovf *o)
{
	struct blkring_cqe *cqes[CQ_ENTRIES];
	unsigned n = blkring_peek_batch_cqe(&o->ring, cqes, CQ_ENTRIES);

	for (unsigned i = 0; i < n; i++)
		check_cqe(o, cqes[i]);
	blkring_cq_advance(&o->ring, n);
	return n;
}

static unsigned reap_each(struct ovf *o)
{
	struct blkring_cqe *cqe;
	unsigned n = 0;
	uint32_t head;

	blkring_for_each_cqe (&o->ring, head, cqe) {
		check_cqe(o, cqe);
		n++;
	}
	blkring_cq_advance(&o->ring, n);
	return n;
}

/* Reaps everything, three ways; what -EBUSY held back goes in between. */
static void drain(struct ovf *o)
{
	while (stress_ledger_inflight(&o->ledger)) {
		unsigned how = (unsigned)(stress_rand(&o->rnd) % 3);
		int ret = blkring_submit(&o->ring);

		if (ret < 0 && ret != -EBUSY)
			TEST_FAIL("submit: %s", strerror(-ret));
		if (how == 1 && reap_batch(o))
			continue;
		if (how == 2 && reap_each(o))
			continue;
		reap_wait(o);
	}
}

static void one_round(struct ovf *o)
{
	unsigned target = 12 + (unsigned)(stress_rand(&o->rnd) % (MAX_INFLIGHT - 11));

	fill(o, target);
	stress_sleep_us((unsigned)(stress_rand(&o->rnd) % 2000));
	drain(o);
	o->rounds++;
}

static unsigned nr_cases;

static void run_overflow_case(const void *arg)
{
	const struct ovf_case *c = arg;
	uint64_t end = stress_now_ns() + stress_case_ns(SHORT_MS, nr_cases);
	struct blkring_dev *dev = open_source(c->src);
	struct ovf *o = calloc(1, sizeof(*o));
	struct blkring_ring_stats st;

	CHECK(o);
	o->c = c;
	o->rnd = stress_seed();
	for (unsigned i = 0; i < NR_SLOTS; i++)
		o->ios[i].buf = tf_alloc(BS);
	prefill(dev);
	stress_ledger_init(&o->ledger);
	stress_ring_init(&o->ring, SQ_ENTRIES, CQ_ENTRIES, c->ring);
	CHECK_EQ(o->ring.cq.ring_entries, CQ_ENTRIES);
	CHECK_EQ(blkring_register_devices(&o->ring, &dev, 1), 0);
	do
		one_round(o);
	while (stress_now_ns() < end);
	CHECK_EQ(blkring_ring_stats(&o->ring, &st), 0);
	stress_note("%s/%s: %llu rounds, %llu CQEs, %llu overflowed", c->ring->name, c->src->name,
	            (unsigned long long)o->rounds, (unsigned long long)o->ledger.nr,
	            (unsigned long long)st.overflowed);
	if (!st.overflowed)
		TEST_FAIL("the CQ never overflowed in %llu rounds", (unsigned long long)o->rounds);
	CHECK_EQ(*o->ring.cq.koverflow, st.overflowed);
	CHECK_EQ(*o->ring.sq.kflags & BLKRING_SQ_CQ_OVERFLOW, 0);
	/* Last, exit with CQEs on the overflow list and I/O in flight. */
	fill(o, MAX_INFLIGHT);
	stress_sleep_us(500);
	stress_ring_exit(&o->ring, c->ring, "overflow case, CQ full, I/O in flight");
	CHECK_EQ(blkring_dev_close(dev), 0);
	CHECK_EQ(stress_lib_threads(), 0);
	stress_ledger_free(&o->ledger);
	for (unsigned i = 0; i < NR_SLOTS; i++)
		free(o->ios[i].buf);
	free(o);
}

int main(int argc, char **argv)
{
	static struct ovf_case cases[STRESS_NR_RING_KINDS * NR_SOURCES];
	unsigned n = 0;

	tf_setup();
	for (unsigned k = 0; k < STRESS_NR_RING_KINDS; k++)
		for (unsigned s = 0; s < NR_SOURCES; s++)
			cases[n++] = (struct ovf_case){&stress_ring_kinds[k], &sources[s]};
	nr_cases = n;
	for (unsigned i = 0; i < n; i++) {
		char name[96];

		snprintf(name, sizeof(name), "stress-overflow-%s-%s", cases[i].ring->name,
		         cases[i].src->name);
		stress_run_case(name, run_overflow_case, &cases[i],
		                stress_case_timeout(SHORT_MS, nr_cases), argc, argv);
	}
	tf_cleanup();
	return 0;
}
