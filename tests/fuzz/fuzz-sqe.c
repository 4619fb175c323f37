// SPDX-License-Identifier: MIT
/*
 * A stream of SQEs on one ring per input, over devices opened once: a
 * memory-backed null device, one with a completion thread and two tags,
 * a read-only one with timer completions, an empty slot, a volume with
 * linear, striped, error, flakey and zero targets (reloaded by the
 * stream), and a volume that polls.
 *
 * Input: 4 header bytes (ring kind, sizes), then 16-byte records, each an
 * SQE (opcode; flags incl. links, hard links, drain, async; device index;
 * offset and length modes incl. misaligned, huge and past the end;
 * buffers) or an action (submit, reap, wait, suspend/load/resume the
 * volume, unregister).  CQE_SKIP_SUCCESS is never set: it takes CQEs
 * away, which the exactly-once count below does not model yet.
 * Buffers are the harness's: a heap arena (ASan sees past its end) and a
 * 4 GiB reserved mapping, so any 32-bit length from it is memory.
 *
 * Checked: every consumed SQE yields exactly one CQE with its user_data
 * and flags 0; a success answers what the SQE asked for (bytes or 0) and
 * never comes from an SQE the documented checks refuse; in a chain nothing
 * succeeds after a failure a soft link passes on, and CQEs come in chain
 * order; a drained unit
 * completes after everything before it and before everything after it;
 * blkring_queue_exit returns (the libFuzzer timeout).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "blkring.h"
#include "util.h"

#define MAX_RECS 1024
#define HDR_BYTES 4
#define REC_BYTES 16
#define ARENA_SIZE (4U << 20)
#define BIG_SPAN (16U << 20) /* where big-region buffers start */
#define BIG_SIZE ((4ULL << 30) + 2 * BIG_SPAN)
#define NR_FIXED 4
#define UD_MAGIC 0x5a5e000000000000ULL
#define UD_MASK 0xffffffffULL
#define MAX_RW ((uint64_t)INT32_MAX & ~4095ULL) /* MAX_RW_COUNT */
#define STRICT_MS 2000                          /* a wait this long for fast devices is a stall */

/* ---- devices ---- */

enum { D_MAIN, D_VOL, D_SOFT, D_EMPTY, D_POLLVOL, D_RO, NR_SLOTS };

#define LEG_L0 "null:size=4M,memory_backed=1,irqmode=none,discard=1,name=fz-l0"
#define LEG_S0 "null:size=2M,memory_backed=1,irqmode=softirq,hw_queue_depth=4,name=fz-s0"
#define LEG_S1 \
	"null:size=2M,memory_backed=1,irqmode=softirq,hw_queue_depth=4,max_sectors=8,name=fz-s1"
#define LEG_F0 "null:size=2M,memory_backed=1,irqmode=none,name=fz-f0"

/* The volume's tables: the one it starts and ends each input with, then reloads. */
static const char *const vol_tables[] = {
    "0 2048 linear " LEG_L0 " 0\n"
    "2048 4096 striped 2 16 " LEG_S0 " 0 " LEG_S1 " 0\n"
    "6144 512 error\n"
    "6656 1024 flakey " LEG_F0 " 0 0 1\n"
    "7680 1024 flakey " LEG_F0 " 1024 0 1 1 drop_writes\n"
    "8704 512 zero\n",
    "0 4096 striped 2 8 " LEG_L0 " 0 " LEG_F0 " 0\n"
    "4096 2048 linear " LEG_S0 " 2048\n"
    "6144 1024 flakey " LEG_S1 " 0 1 0\n",
    "0 8192 linear " LEG_L0 " 0\n",
};
#define NR_TABLES (sizeof(vol_tables) / sizeof(vol_tables[0]))

static const char *const dev_specs[NR_SLOTS] = {
    [D_MAIN] = "null:size=8M,memory_backed=1,irqmode=none,discard=1,write_zeroes=1,"
               "max_sectors=64,name=fz-main",
    [D_SOFT] = "null:size=1M,bs=4096,memory_backed=1,irqmode=softirq,hw_queue_depth=2,"
               "submit_queues=2,discard=1,write_zeroes=1,max_sectors=16,"
               "max_discard_sectors=64,name=fz-soft",
    [D_RO] = "null:size=1M,ro=1,memory_backed=1,irqmode=timer,completion_nsec=2000,name=fz-ro",
};

static const char pollvol_table[] = "0 2048 linear " LEG_L0 " 4096\n"
                                    "2048 2048 striped 2 8 " LEG_S0 " 0 " LEG_S1 " 2048\n";

static struct blkring_dev *devs[NR_SLOTS];
static struct blkring_dev_info infos[NR_SLOTS];
static uint8_t *arena, *big;
static struct iovec fixed[NR_FIXED];
static struct blkring_dev *open_dev(const char *spec)
{
	struct blkring_dev *dev;
	int ret = blkring_dev_open(spec, &dev);

	FUZZ_CHECK(!ret, "open %s: %d %s", spec, ret, blkring_last_error());
	return dev;
}

static struct blkring_dev *make_vol(const char *table)
{
	struct blkring_dev *dev;
	int ret = blkring_vol_create(table, NULL, &dev);

	FUZZ_CHECK(!ret, "volume: %d %s", ret, blkring_last_error());
	return dev;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (unsigned i = 0; i < NR_SLOTS; i++)
		if (dev_specs[i])
			devs[i] = open_dev(dev_specs[i]);
	devs[D_VOL] = make_vol(vol_tables[0]);
	devs[D_POLLVOL] = make_vol(pollvol_table);
	for (unsigned i = 0; i < NR_SLOTS; i++)
		if (devs[i])
			blkring_dev_info(devs[i], &infos[i]);
	arena = aligned_alloc(4096, ARENA_SIZE);
	big = mmap(NULL, BIG_SIZE, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	FUZZ_CHECK(arena && big != MAP_FAILED, "buffers");
	for (unsigned i = 0; i < NR_FIXED; i++)
		fixed[i] =
		    (struct iovec){arena + i * (ARENA_SIZE / NR_FIXED), ARENA_SIZE / NR_FIXED};
	return 0;
}

/* ---- one input's state ---- */

struct rec {
	uint8_t kind, flags, dev, mode;
	uint32_t off, len, aux;
};

struct sqe_meta {
	struct blkring_sqe sqe;
	int64_t expect; /* what a success must answer; -1: no success allowed */
	bool chain_end; /* the model's chain ends after it */
	/* The chain ends here only if the SQ thread took what was published
	 * before the next publication: it may also have taken both at once. */
	bool cut;
	bool skip; /* CQE_SKIP_SUCCESS: a success posts no CQE */
	bool seen;
	int32_t res;
	uint32_t pos; /* its CQE's place in the CQ order */
};

struct state {
	struct blkring ring;
	unsigned setup;
	bool sqpoll, iopoll, registered, bufs, suspended, vol_changed;
	bool skip_added;   /* an SQE with CQE_SKIP_SUCCESS: IO_DRAIN fails from then on */
	uint32_t nr;       /* SQEs filled */
	uint32_t nr_cqes;  /* CQEs reaped */
	uint32_t max_seen; /* the newest SQE with a CQE, plus one */
	uint32_t marked;   /* SQEs whose chain boundary is known */
	struct sqe_meta meta[MAX_RECS];
	uint64_t seen[MAX_RECS / 64];
	struct iovec *iovs[MAX_RECS];
	uint8_t ts_store[MAX_RECS][32]; /* timeouts' timespecs */
	uint64_t rng;
};

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 17;
}

static void dump(const struct state *st)
{
	fprintf(stderr, "ring setup 0x%x, %u SQEs, %u CQEs\n", st->setup, st->nr, st->nr_cqes);
	for (uint32_t i = 0; i < st->nr; i++) {
		const struct sqe_meta *m = &st->meta[i];
		const struct blkring_sqe *s = &m->sqe;

		fprintf(stderr,
		        "  %3u op %2u flags 0x%02x fd %d off %llu len %u addr3 %llu rw 0x%x "
		        "expect %lld%s: %s res %d pos %u\n",
		        i, s->opcode, s->flags, s->fd, (unsigned long long)s->off, s->len,
		        (unsigned long long)s->addr3, s->rw_flags, (long long)m->expect,
		        m->chain_end ? " |" : "", m->seen ? "seen" : "MISSING", m->res, m->pos);
	}
}

#define STATE_BUG(st, ...)             \
	do {                           \
		dump(st);              \
		FUZZ_BUG(__VA_ARGS__); \
	} while (0)

/* ---- what the documented checks allow ---- */

static bool slot_ok(int32_t fd)
{
	return fd >= 0 && fd < NR_SLOTS && devs[fd];
}

/* The block layer's checks for a range; false when it must refuse it. */
static bool range_ok(const struct state *st, int32_t fd, uint64_t off, uint64_t len, bool write)
{
	const struct blkring_dev_info *in = &infos[fd];
	uint64_t end;

	if (((off | len) & (in->logical_block_size - 1)) || !len)
		return false;
	if (write && in->read_only)
		return false;
	/* A reload changes the volume's size under I/O in flight. */
	if (fd == D_VOL && st->vol_changed)
		return true;
	return !__builtin_add_overflow(off, len, &end) && end <= in->size;
}

static int64_t expect_rw(const struct state *st, const struct blkring_sqe *s, uint64_t len,
                         bool write)
{
	uint32_t ok = BLKRING_RWF_DSYNC | BLKRING_RWF_SYNC | BLKRING_RWF_NOWAIT |
	              (st->iopoll ? BLKRING_RWF_HIPRI : 0);

	if (!s->addr && len)
		return -1;
	/* Unknown bits, and HIPRI on a ring that does not poll. */
	if (s->rw_flags & ~ok)
		return -1;
	if (len > MAX_RW || !range_ok(st, s->fd, s->off, len, write))
		return -1;
	return (int64_t)len;
}

/* The exact sum, not the 64-bit one: a wrapped total must not succeed. */
static int64_t expect_rwv(const struct state *st, const struct blkring_sqe *s,
                          const struct iovec *iov)
{
	unsigned __int128 total = 0;

	if (!s->addr && s->len)
		return -1;
	if (s->len > 1024)
		return -1;
	for (uint32_t i = 0; i < s->len; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return -1;
		total += iov[i].iov_len;
	}
	if (total > MAX_RW)
		return -1;
	return expect_rw(st, s, (uint64_t)total, s->opcode == BLKRING_OP_WRITEV);
}

static int64_t expect_fixed(const struct state *st, const struct blkring_sqe *s)
{
	const struct iovec *b = &fixed[s->buf_index % NR_FIXED];
	uint64_t base = (uintptr_t)b->iov_base;

	if (!st->bufs || s->buf_index >= NR_FIXED || s->addr < base ||
	    s->addr + s->len > base + b->iov_len)
		return -1;
	return expect_rw(st, s, s->len, s->opcode == BLKRING_OP_WRITE_FIXED);
}

static int64_t expect_cmd(const struct state *st, const struct blkring_sqe *s)
{
	bool zero = s->cmd_op == BLKRING_CMD_WRITE_ZEROES;
	unsigned ok_flags = zero ? BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK : 0;

	if (s->ioprio || s->__pad1 || s->len || s->file_index || s->buf_index || s->personality ||
	    s->__pad2[0] || (s->cmd_flags & ~ok_flags))
		return -1;
	if (s->cmd_op != BLKRING_CMD_DISCARD && !zero)
		return -1;
	return range_ok(st, s->fd, s->addr, s->addr3, true) ? 0 : -1;
}

static bool timeout_flags_ok(uint32_t f)
{
	const uint32_t clocks = BLKRING_TIMEOUT_BOOTTIME | BLKRING_TIMEOUT_REALTIME;

	return !(f & ~(BLKRING_TIMEOUT_ABS | clocks)) && (f & clocks) != clocks;
}

static int64_t expect_of(const struct state *st, const struct blkring_sqe *s,
                         const struct iovec *iov)
{
	if (s->flags &
	    ~(BLKRING_SQE_FIXED_FILE | BLKRING_SQE_IO_DRAIN | BLKRING_SQE_IO_LINK |
	      BLKRING_SQE_IO_HARDLINK | BLKRING_SQE_ASYNC | BLKRING_SQE_CQE_SKIP_SUCCESS))
		return -1;
	/* As io_uring's drain_disabled: set when a SKIP_SUCCESS SQE is taken. */
	if ((s->flags & BLKRING_SQE_IO_DRAIN) && st->skip_added)
		return -1;
	if (s->opcode == BLKRING_OP_NOP)
		return 0;
	if (s->opcode == BLKRING_OP_TIMEOUT)
		return timeout_flags_ok(s->timeout_flags) ? 0 : -1; /* its count came first */
	if (!st->registered || !slot_ok(s->fd))
		return -1;
	switch (s->opcode) {
	case BLKRING_OP_READ:
	case BLKRING_OP_WRITE:
		return expect_rw(st, s, s->len, s->opcode == BLKRING_OP_WRITE);
	case BLKRING_OP_READV:
	case BLKRING_OP_WRITEV:
		return expect_rwv(st, s, iov);
	case BLKRING_OP_READ_FIXED:
	case BLKRING_OP_WRITE_FIXED:
		return expect_fixed(st, s);
	case BLKRING_OP_FSYNC:
		return (s->fsync_flags & ~BLKRING_FSYNC_DATASYNC) || s->addr ? -1 : 0;
	case BLKRING_OP_URING_CMD:
		return expect_cmd(st, s);
	}
	return -1;
}

/* ---- building SQEs from records ---- */

static uint64_t dev_size(int32_t fd)
{
	return slot_ok(fd) ? infos[fd].size : 1U << 20;
}

/* Offsets: in range and aligned, near the end, raw (misaligned), huge. */
static uint64_t pick_off(const struct rec *r, int32_t fd)
{
	uint64_t size = dev_size(fd);

	switch (r->mode & 3) {
	case 0:
		return (r->off % (size >> 9)) << 9;
	case 1:
		return size - ((uint64_t)(r->off % 16) << 9);
	case 2:
		return r->off;
	}
	return r->off & 1 ? UINT64_MAX - (r->off >> 1) : (uint64_t)r->off << 32;
}

/* Lengths: a few blocks, up to 8 MiB (past every end), raw, 0 or the device. */
static uint32_t pick_len(const struct rec *r, int32_t fd)
{
	switch ((r->mode >> 2) & 3) {
	case 0:
		return ((r->len % 64) + 1) << 9;
	case 1:
		return ((r->len % 2048) + 1) << 12;
	case 2:
		return r->len;
	}
	return r->len & 1 ? (uint32_t)dev_size(fd) : 0;
}

/* A buffer of len bytes: in the heap arena when it fits, else the big region. */
static uint64_t pick_buf(uint32_t seed, uint64_t len, bool misalign)
{
	uint64_t off;

	if (len <= ARENA_SIZE) {
		off = seed % (ARENA_SIZE - len + 1);
		if (!misalign)
			off &= ~511ULL;
		return (uintptr_t)arena + off;
	}
	off = seed % BIG_SPAN;
	return (uintptr_t)big + (misalign ? off : off & ~511ULL);
}

static int32_t pick_fd(const struct rec *r)
{
	switch (r->dev % 8) {
	case 6:
		return -1;
	case 7:
		return (int32_t)(r->aux | 0x100);
	}
	return r->dev % 8;
}

static uint8_t pick_flags(uint8_t f)
{
	uint8_t out = 0;

	/* Raw: unknown bits too (skipped CQEs come from 0x40 alone). */
	if (f & 0x80)
		return f & 0x7f & ~BLKRING_SQE_CQE_SKIP_SUCCESS;
	if (f & 0x40)
		out |= BLKRING_SQE_CQE_SKIP_SUCCESS;
	if (f & 1)
		out |= BLKRING_SQE_IO_LINK;
	if (f & 2)
		out |= BLKRING_SQE_IO_DRAIN;
	if (f & 4)
		out |= BLKRING_SQE_ASYNC;
	if (f & 8)
		out |= BLKRING_SQE_IO_HARDLINK;
	return out;
}

static uint32_t pick_rw_flags(const struct rec *r)
{
	static const uint32_t flags[] = {0, BLKRING_RWF_DSYNC, BLKRING_RWF_NOWAIT};
	unsigned sel = r->mode >> 6;

	return sel < 3 ? flags[sel] : r->aux >> 20;
}

/* One iovec's length: whole blocks, raw bytes, or huge: minus whole
 * blocks, so that a sum that wraps lands on a valid length. */
static uint64_t iov_len(const struct rec *r, uint64_t *rng)
{
	uint64_t v = next_rand(rng);

	if (((r->mode >> 2) & 3) == 2 && !(v % 4))
		return -(((v >> 2) % 16 + 1) << 9);
	if (r->mode & 0x10)
		return v % 6000;
	return ((v % 16) + 1) << 9;
}

/* An iovec array in harness memory: 0..8 entries, up to 64, or about 1024. */
static uint32_t build_iovs(struct state *st, const struct rec *r, struct iovec **out)
{
	unsigned sel = r->len & 0xff;
	uint32_t nr = sel < 200 ? sel % 9 : sel < 250 ? 9 + sel % 56 : 1024 + (sel - 250);
	uint64_t rng = r->aux;
	struct iovec *iov = calloc(nr ? nr : 1, sizeof(*iov));

	FUZZ_CHECK(iov, "iovecs");
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t len = iov_len(r, &rng);
		uint64_t base =
		    pick_buf((uint32_t)next_rand(&rng), len > ARENA_SIZE ? 1 : len, r->mode & 0x10);

		iov[i] = (struct iovec){(void *)(uintptr_t)base, len};
	}
	st->iovs[st->nr] = iov;
	*out = iov;
	return nr;
}

static void fill_rw(struct state *st, struct blkring_sqe *s, const struct rec *r, uint8_t op)
{
	struct iovec *iov;

	s->off = pick_off(r, s->fd);
	s->rw_flags = pick_rw_flags(r);
	if (op == BLKRING_OP_READV || op == BLKRING_OP_WRITEV) {
		s->len = build_iovs(st, r, &iov);
		s->addr = (uintptr_t)iov;
	} else if (op == BLKRING_OP_READ_FIXED || op == BLKRING_OP_WRITE_FIXED) {
		s->len = pick_len(r, s->fd);
		s->buf_index = (uint16_t)((r->aux >> 24) % (NR_FIXED + 2));
		s->addr =
		    (uintptr_t)fixed[s->buf_index % NR_FIXED].iov_base +
		    (s->len <= fixed[0].iov_len ? r->aux % (fixed[0].iov_len - s->len + 1) : 0);
	} else {
		s->len = pick_len(r, s->fd);
		s->addr = pick_buf(r->aux, s->len, r->mode & 0x10);
	}
	if (r->mode & 0x20)
		s->addr = 0;
}

/* Discard and write zeroes; with mode bit 5 a field that must be zero is not. */
static void fill_cmd(struct blkring_sqe *s, const struct rec *r, uint32_t cmd_op)
{
	s->cmd_op = cmd_op;
	s->addr = pick_off(r, s->fd);
	s->addr3 =
	    ((r->mode >> 2) & 3) == 2 ? (uint64_t)r->len << (r->aux & 31) : pick_len(r, s->fd);
	s->cmd_flags = (r->aux >> 8) & (r->mode & 0x40 ? 0xff : 3);
	if (!(r->mode & 0x20))
		return;
	switch (r->aux % 5) {
	case 0:
		s->ioprio = 1;
		break;
	case 1:
		s->len = 1;
		break;
	case 2:
		s->buf_index = 1;
		break;
	case 3:
		s->__pad1 = 1;
		break;
	default:
		s->__pad2[0] = 1;
	}
}

/* The opcode a record's kind names: 0-13 as below, 14 raw, the rest of
 * the SQE kinds (see apply()) reads and writes. */
static uint8_t kind_opcode(const struct rec *r)
{
	static const uint8_t ops[] = {
	    BLKRING_OP_READ,  BLKRING_OP_READ,      BLKRING_OP_WRITE,      BLKRING_OP_WRITE,
	    BLKRING_OP_READV, BLKRING_OP_WRITEV,    BLKRING_OP_READ_FIXED, BLKRING_OP_WRITE_FIXED,
	    BLKRING_OP_FSYNC, BLKRING_OP_URING_CMD, BLKRING_OP_URING_CMD,  BLKRING_OP_URING_CMD,
	    BLKRING_OP_NOP,   BLKRING_OP_TIMEOUT,
	};
	unsigned k = r->kind % 32;
	uint8_t raw = (uint8_t)r->aux;

	if (k < sizeof(ops))
		return ops[k];
	if (k != 14)
		return k & 1 ? BLKRING_OP_WRITE : BLKRING_OP_READ;
	/* Not modelled yet: they cancel or bound other requests, which the
	 * result and order checks would have to know about. */
	if (raw == BLKRING_OP_TIMEOUT_REMOVE || raw == BLKRING_OP_ASYNC_CANCEL ||
	    raw == BLKRING_OP_LINK_TIMEOUT)
		return BLKRING_OP_NOP;
	return raw;
}

/*
 * A timeout of at most 1 ms (a longer one would look like a stall) and a
 * small count, its timespec in the SQE's own slot, on any byte boundary
 * with mode bit 4 (the library reads it as io_uring copies it in).
 */
static void fill_timeout(struct state *st, struct blkring_sqe *s, const struct rec *r)
{
	struct __kernel_timespec ts = {0, r->len % 1000000};
	uint8_t *slot = st->ts_store[st->nr] + (r->mode & 0x10 ? r->aux & 7 : 0);

	memcpy(slot, &ts, sizeof(ts));
	s->addr = (uintptr_t)slot;
	s->off = r->off % 4;
	s->len = 1;
	s->timeout_flags = r->mode & 0x20 ? r->aux >> 24 : 0;
}

static void fill_sqe(struct state *st, struct blkring_sqe *s, const struct rec *r)
{
	uint8_t op = kind_opcode(r);
	unsigned k = r->kind % 32;

	memset(s, 0, sizeof(*s));
	s->opcode = op;
	s->flags = pick_flags(r->flags);
	s->fd = pick_fd(r);
	s->user_data = UD_MAGIC | st->nr;
	if (op == BLKRING_OP_URING_CMD)
		fill_cmd(s, r,
		         k == 9    ? BLKRING_CMD_DISCARD
		         : k == 10 ? BLKRING_CMD_WRITE_ZEROES
		                   : r->aux);
	else if (op == BLKRING_OP_FSYNC)
		s->fsync_flags = r->mode & 0x20 ? r->aux : 0;
	else if (op == BLKRING_OP_TIMEOUT)
		fill_timeout(st, s, r);
	else if (op != BLKRING_OP_NOP)
		fill_rw(st, s, r, op);
}

/* ---- the ring ---- */

static void mark_consumed(struct state *st, uint32_t upto, bool sure)
{
	if (upto > st->marked && upto <= st->nr) {
		struct sqe_meta *m = &st->meta[upto - 1];

		m->cut = !sure && !m->chain_end;
		m->chain_end = true;
		st->marked = upto;
	}
}

/* A chain ends where a submit stopped consuming; with SQPOLL, maybe where
 * one published (the SQ thread takes what it finds published, which may
 * span publications). */
static int do_submit(struct state *st)
{
	int ret = blkring_submit(&st->ring);

	FUZZ_CHECK(ret >= 0 || ret == -EBUSY, "submit %d", ret);
	if (st->sqpoll)
		mark_consumed(st, st->nr, false);
	else
		mark_consumed(st, atomic_load(st->ring.sq.khead), true);
	return ret;
}

static void take_cqe(struct state *st, const struct blkring_cqe *cqe)
{
	uint64_t ud = cqe->user_data;
	uint32_t seq = (uint32_t)(ud & UD_MASK);
	struct sqe_meta *m;

	if ((ud & ~UD_MASK) != UD_MAGIC || seq >= st->nr)
		STATE_BUG(st, "CQE with user_data 0x%llx res %d: no such SQE",
		          (unsigned long long)ud, cqe->res);
	if (st->seen[seq / 64] & (1ULL << (seq % 64)))
		STATE_BUG(st, "second CQE for SQE %u (res %d, first %d)", seq, cqe->res,
		          st->meta[seq].res);
	if (cqe->flags)
		STATE_BUG(st, "CQE for SQE %u has flags 0x%x", seq, cqe->flags);
	st->seen[seq / 64] |= 1ULL << (seq % 64);
	m = &st->meta[seq];
	m->seen = true;
	m->res = cqe->res;
	m->pos = st->nr_cqes++;
	if (seq >= st->max_seen)
		st->max_seen = seq + 1;
}

static unsigned reap(struct state *st, unsigned max)
{
	struct blkring_cqe *cqes[32];
	unsigned total = 0, n;

	do {
		n = blkring_peek_batch_cqe(&st->ring, cqes, max < 32 ? max : 32);
		for (unsigned i = 0; i < n; i++)
			take_cqe(st, cqes[i]);
		blkring_cq_advance(&st->ring, n);
		total += n;
		max -= n;
	} while (n && max);
	return total;
}

/* An SQE that must post a CQE: any but a SKIP_SUCCESS one that may succeed. */
static bool must_post(const struct sqe_meta *m)
{
	return !m->skip || m->expect < 0;
}

/* SQEs in [0, upto) that must post a CQE and have none yet. */
static uint32_t unposted(const struct state *st, uint32_t upto)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < upto; i++)
		n += !st->meta[i].seen && must_post(&st->meta[i]);
	return n;
}

/*
 * SQEs the ring took that must post a CQE and have none yet.  The SQ head
 * may be published after the CQEs of what it consumed (an SQ thread
 * stores it at the end of a pass, as Linux does), so what was taken is at
 * least the newest SQE with a CQE.
 */
static uint32_t outstanding(const struct state *st)
{
	uint32_t head = atomic_load(st->ring.sq.khead);

	return unposted(st, head > st->max_seen ? head : st->max_seen);
}

/*
 * Waits up to ms for nr CQEs (fewer when fewer are outstanding or the CQ
 * holds fewer), then reaps.  Every device here completes within
 * microseconds, so a strict wait that times out while nothing is held by
 * a suspended volume is a stall: a CQE that needs the application to do
 * something the API does not ask of it.
 */
static void wait_some(struct state *st, unsigned nr, long ms, bool strict)
{
	struct __kernel_timespec ts;
	struct blkring_cqe *cqe;
	uint32_t out;
	int ret;

	/* Held I/O would only run the clock down. */
	if (st->suspended) {
		ms = ms < 2 ? ms : 2;
		strict = false;
	}
	ts = (struct __kernel_timespec){ms / 1000, (ms % 1000) * 1000000};
	reap(st, UINT32_MAX);
	out = outstanding(st);
	nr = nr < out ? nr : out;
	nr = nr < st->ring.cq.ring_entries ? nr : st->ring.cq.ring_entries;
	if (!nr)
		return;
	ret = blkring_wait_cqes(&st->ring, &cqe, nr, &ts, NULL);
	FUZZ_CHECK(!ret || ret == -ETIME || ret == -EINTR, "wait_cqes %d", ret);
	if (ret == -ETIME && strict && !st->suspended)
		STATE_BUG(st,
		          "waiting for %u of %u outstanding CQEs timed out after %ld ms, %u ready",
		          nr, out, ms, blkring_cq_ready(&st->ring));
	reap(st, UINT32_MAX);
}

/* An SQE slot, making room when the SQ is full. */
static struct blkring_sqe *next_sqe(struct state *st)
{
	for (unsigned tries = 0; tries < 2000; tries++) {
		struct blkring_sqe *sqe = blkring_get_sqe(&st->ring);

		if (sqe)
			return sqe;
		do_submit(st);
		reap(st, UINT32_MAX);
		if (tries > 4)
			wait_some(st, 1, 1, false);
	}
	return NULL;
}

static void add_sqe(struct state *st, const struct rec *r)
{
	struct blkring_sqe *sqe;
	struct sqe_meta *m;

	if (st->nr == MAX_RECS || !(sqe = next_sqe(st)))
		return;
	m = &st->meta[st->nr];
	fill_sqe(st, &m->sqe, r);
	m->skip = m->sqe.flags & BLKRING_SQE_CQE_SKIP_SUCCESS;
	st->skip_added |= m->skip;
	m->expect = expect_of(st, &m->sqe, st->iovs[st->nr]);
	m->chain_end = !(m->sqe.flags & (BLKRING_SQE_IO_LINK | BLKRING_SQE_IO_HARDLINK));
	*sqe = m->sqe;
	st->nr++;
}

/* ---- actions on the volume and the device table ---- */

/*
 * The ring checks an SQE against the device table and the volume when it
 * consumes it: what the harness expects of the SQEs filled so far holds
 * only if they are consumed before either changes.
 */
static void consume_all(struct state *st)
{
	const struct timespec ms = {0, 1000000};

	for (unsigned i = 0; atomic_load(st->ring.sq.khead) != st->nr; i++) {
		if (i > STRICT_MS)
			STATE_BUG(st, "%u SQEs left unconsumed for %u ms",
			          st->nr - atomic_load(st->ring.sq.khead), STRICT_MS);
		do_submit(st);
		reap(st, UINT32_MAX);
		if (atomic_load(st->ring.sq.khead) != st->nr)
			nanosleep(&ms, NULL);
	}
}

static bool vol_actions_ok(const struct state *st)
{
	/* A suspend waits for polled clones only their poller can end. */
	return !st->iopoll;
}

static void vol_suspend(struct state *st)
{
	int ret = blkring_vol_suspend(devs[D_VOL]);

	FUZZ_CHECK(ret == (st->suspended ? -EINVAL : 0), "suspend %d (suspended %d)", ret,
	           st->suspended);
	st->suspended = true;
}

static void vol_resume(struct state *st)
{
	int ret = blkring_vol_resume(devs[D_VOL]);

	FUZZ_CHECK(!ret, "resume %d", ret);
	st->suspended = false;
	blkring_dev_info(devs[D_VOL], &infos[D_VOL]);
}

static void vol_load(struct state *st, unsigned table)
{
	int ret = blkring_vol_load(devs[D_VOL], vol_tables[table], NULL);

	FUZZ_CHECK(!ret, "load table %u: %d %s", table, ret, blkring_last_error());
	st->vol_changed = true;
}

static void toggle_devices(struct state *st)
{
	int ret;

	if (!st->registered) {
		ret = blkring_register_devices(&st->ring, devs, NR_SLOTS);
		FUZZ_CHECK(!ret, "register %d", ret);
		st->registered = true;
		return;
	}
	ret = blkring_unregister_devices(&st->ring);
	FUZZ_CHECK(!ret || ret == -EBUSY, "unregister %d", ret);
	st->registered = ret != 0;
}

/* Kinds 0-19 and 28-31 are SQEs, 20-27 actions.  The waits are for
 * what the ring took, so a held volume makes them time out. */
static void apply(struct state *st, const struct rec *r)
{
	switch (r->kind % 32) {
	case 20:
		do_submit(st);
		break;
	case 21:
		/* Waits without a timeout: only when nothing is held. */
		if (do_submit(st) >= 0)
			wait_some(st, r->len % 4, STRICT_MS, true);
		break;
	case 22:
		reap(st, (r->len % 32) + 1);
		break;
	case 23:
		wait_some(st, (r->len % 4) + 1, 20, false);
		break;
	case 24:
		if (vol_actions_ok(st))
			vol_suspend(st);
		break;
	case 25:
		if (vol_actions_ok(st)) {
			consume_all(st);
			vol_resume(st);
		}
		break;
	case 26:
		if (vol_actions_ok(st)) {
			consume_all(st);
			vol_load(st, r->aux % NR_TABLES);
			if (r->len & 1)
				vol_resume(st);
		}
		break;
	case 27:
		consume_all(st);
		toggle_devices(st);
		break;
	default:
		add_sqe(st, r);
	}
}

/* ---- the end of an input ---- */

/* Submits and reaps until every SQE that must post has its CQE; then
 * takes what SKIP_SUCCESS SQEs that failed late still post. */
static void reap_all(struct state *st)
{
	const struct timespec ms = {0, 1000000};
	unsigned idle = 0, got;

	while (unposted(st, st->nr)) {
		do_submit(st);
		reap(st, UINT32_MAX);
		if (outstanding(st)) {
			wait_some(st, unposted(st, st->nr), STRICT_MS, true);
			idle = 0;
			continue;
		}
		/* The SQ thread has yet to take them. */
		if (++idle > STRICT_MS)
			STATE_BUG(st, "%u SQEs left unconsumed for %u ms",
			          st->nr - atomic_load(st->ring.sq.khead), STRICT_MS);
		nanosleep(&ms, NULL);
	}
	if (!st->skip_added)
		return;
	do {
		nanosleep(&ms, NULL);
		got = reap(st, UINT32_MAX);
	} while (got);
}

/* In a chain nothing succeeds after a failure that a soft link passes on
 * (a hard link goes on), and CQEs come in chain order. */
static void check_chain(const struct state *st, uint32_t first, uint32_t last)
{
	const struct sqe_meta *prev = NULL;
	bool failed = false;

	for (uint32_t i = first; i <= last; i++) {
		const struct sqe_meta *m = &st->meta[i];

		if (!m->seen)
			continue; /* a SKIP_SUCCESS success */
		if (failed && m->res >= 0)
			STATE_BUG(st, "SQE %u succeeded after a failure in its chain (%u..%u)", i,
			          first, last);
		if (prev && m->pos < prev->pos)
			STATE_BUG(st, "SQE %u completed before its chain's SQE %u", i,
			          (uint32_t)(prev - st->meta));
		failed |= m->res < 0 && !(m->sqe.flags & BLKRING_SQE_IO_HARDLINK);
		prev = m;
	}
}

/* A drained unit completes after everything before it and before everything after. */
static void check_drain(const struct state *st, uint32_t first, uint32_t last)
{
	uint32_t lo = UINT32_MAX, hi = 0;

	for (uint32_t i = first; i <= last; i++) {
		if (!st->meta[i].seen)
			continue;
		lo = st->meta[i].pos < lo ? st->meta[i].pos : lo;
		hi = st->meta[i].pos > hi ? st->meta[i].pos : hi;
	}
	for (uint32_t j = 0; j < st->nr; j++) {
		if (!st->meta[j].seen)
			continue;
		if (j < first && st->meta[j].pos > lo)
			STATE_BUG(st, "drained SQEs %u..%u completed before SQE %u", first, last,
			          j);
		if (j > last && st->meta[j].pos < hi)
			STATE_BUG(st, "SQE %u completed before the drained SQEs %u..%u", j, first,
			          last);
	}
}

static void check_results(const struct state *st)
{
	uint32_t first = 0;
	bool drain = false, passes = true, after_cut = false;

	for (uint32_t i = 0; i < st->nr; i++) {
		const struct sqe_meta *m = &st->meta[i];

		if (!m->seen && must_post(m))
			STATE_BUG(st, "SQE %u has no CQE", i);
		if (m->seen && m->skip && m->res >= 0 && m->res == m->expect)
			STATE_BUG(st, "SQE %u has SKIP_SUCCESS and posted its success", i);
		if (m->seen && m->res >= 0 && m->res != m->expect)
			STATE_BUG(st, "SQE %u answered %d, expected %lld or an error", i, m->res,
			          (long long)m->expect);
		if (m->res < 0 && m->res <= -4096)
			STATE_BUG(st, "SQE %u answered %d", i, m->res);
		/* A chain with a member that fails its checks at submission
		 * never starts, so it drains nothing (io_uring's rule); expect
		 * >= 0 means the member passes them. */
		drain |= m->sqe.flags & BLKRING_SQE_IO_DRAIN;
		passes &= m->expect >= 0;
		if (!m->chain_end)
			continue;
		/* A chain the SQ thread may have joined to its neighbour has no
		 * known bounds: only its own CQEs are checked. */
		if (!after_cut && !m->cut) {
			check_chain(st, first, i);
			if (drain && passes)
				check_drain(st, first, i);
		}
		after_cut = m->cut;
		first = i + 1;
		drain = false;
		passes = true;
	}
}

/* The volume goes back to its first table for the next input. */
static void vol_restore(struct state *st)
{
	if (!st->vol_changed)
		return;
	vol_load(st, 0);
	vol_resume(st);
}

/* ---- setup ---- */

static unsigned ring_flags(uint8_t h)
{
	static const unsigned modes[] = {0, BLKRING_SETUP_DEFER_TASKRUN, BLKRING_SETUP_SQPOLL, 0};
	unsigned f = modes[h & 3];

	if (h & 4)
		f |= BLKRING_SETUP_IOPOLL;
	if (h & 8)
		f |= BLKRING_SETUP_TW_PRIO;
	if (h & 16)
		f |= BLKRING_SETUP_TW_ISSUE;
	if (h & 32)
		f |= BLKRING_SETUP_CQSIZE;
	return f;
}

static void ring_setup(struct state *st, const uint8_t *h)
{
	struct blkring_params p;
	unsigned entries = 1U << (h[1] & 7);
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = ring_flags(h[0]);
	p.cq_entries = entries; /* with CQSIZE: the smallest CQ, to overflow */
	p.wq_max_workers = (h[1] >> 3) & 3;
	p.sq_thread_idle = 1;
	if ((p.flags & BLKRING_SETUP_SQPOLL) && (h[1] & 0x20)) {
		p.flags |= BLKRING_SETUP_SQ_AFF;
		p.sq_thread_cpu = 0;
	}
	ret = blkring_queue_init_params(entries, &st->ring, &p);
	FUZZ_CHECK(!ret, "queue_init 0x%x: %d", p.flags, ret);
	st->setup = p.flags;
	st->sqpoll = p.flags & BLKRING_SETUP_SQPOLL;
	st->iopoll = p.flags & BLKRING_SETUP_IOPOLL;
	ret = blkring_register_devices(&st->ring, devs, NR_SLOTS);
	FUZZ_CHECK(!ret, "register %d", ret);
	st->registered = true;
	/* An SQPOLL ring may refuse them (a known defect): fixed I/O then
	 * must fail, as with no buffers. */
	if (h[0] & 64)
		st->bufs = !blkring_register_buffers(&st->ring, fixed, NR_FIXED);
}

static struct state st;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t nr_recs = size < HDR_BYTES ? 0 : (size - HDR_BYTES) / REC_BYTES;
	bool exit_early;

	if (size < HDR_BYTES || nr_recs > MAX_RECS)
		return 0;
	exit_early = data[0] & 128;
	memset(&st, 0, sizeof(st));
	ring_setup(&st, data);
	for (size_t i = 0; i < nr_recs; i++) {
		const uint8_t *p = data + HDR_BYTES + i * REC_BYTES;
		struct rec r;

		r.kind = p[0];
		r.flags = p[1];
		r.dev = p[2];
		r.mode = p[3];
		memcpy(&r.off, p + 4, 4);
		memcpy(&r.len, p + 8, 4);
		memcpy(&r.aux, p + 12, 4);
		apply(&st, &r);
	}
	if (st.suspended)
		vol_resume(&st);
	do_submit(&st);
	if (!exit_early) {
		reap_all(&st);
		check_results(&st);
	}
	blkring_queue_exit(&st.ring);
	vol_restore(&st);
	for (uint32_t i = 0; i < st.nr; i++)
		free(st.iovs[i]);
	return 0;
}
