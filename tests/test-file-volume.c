// SPDX-License-Identifier: MIT
/*
 * file devices as the legs of volumes: a volume striped over two loop
 * devices keeps what a ring writes through it, each leg holds its chunks
 * where dm-stripe puts them, and discards reach the legs.  A ring's I/O
 * reaches file legs through the ring's own kernel rings, which keep a leg
 * that a reload dropped until the ring lets them go; I/O held while the
 * volume is suspended goes again from the resuming thread.
 */
#include <pthread.h>

#include "drivers/file.h"
#include "ring/ring.h"
#include "test-file-util.h"

#define CHUNK_SECTORS 16 /* 8 KiB */
#define CHUNK (CHUNK_SECTORS * 512)
#define VOL_SIZE (16U << 20)
#define IO 65536

static struct blkring_dev *striped_volume(void)
{
	struct blkring_dev *vol = NULL;
	char table[512];
	int ret;

	snprintf(table, sizeof(table), "0 %u striped 2 %u %s 0 %s 0\n", VOL_SIZE / 512,
	         CHUNK_SECTORS, tf_loop(0), tf_loop(1));
	ret = blkring_vol_create(table, NULL, &vol);
	if (ret)
		TEST_FAIL("volume: %s (%s)", strerror(-ret), blkring_last_error());
	return vol;
}

/* Waits for the next CQE, which must be a whole I/O of len bytes. */
static void ring_reap(struct blkring *ring, int len)
{
	struct blkring_cqe *cqe;

	CHECK_EQ(blkring_wait_cqe(ring, &cqe), 0);
	CHECK_EQ(cqe->res, len);
	blkring_cqe_seen(ring, cqe);
}

static void ring_submit_io(struct blkring *ring, bool write, char *buf, uint64_t off)
{
	struct blkring_sqe *sqe = ring_sqe(ring);

	CHECK(sqe);
	if (write)
		blkring_prep_write(sqe, 0, buf, IO, off);
	else
		blkring_prep_read(sqe, 0, buf, IO, off);
	CHECK_EQ(blkring_submit(ring), 1);
}

static void ring_io(struct blkring *ring, bool write, char *buf, uint64_t off)
{
	ring_submit_io(ring, write, buf, off);
	ring_reap(ring, IO);
}

/* Where dm-stripe puts volume byte `off`: the leg and its byte there. */
static void stripe_map(uint64_t off, unsigned *leg, uint64_t *leg_off)
{
	uint64_t chunk = off / CHUNK;

	*leg = (unsigned)(chunk % 2);
	*leg_off = (chunk / 2) * CHUNK + off % CHUNK;
}

static void test_striped_loops(void)
{
	struct blkring_dev *vol = striped_volume();
	struct blkring_dev *legs[2] = {tf_open("%s", tf_loop(0)), tf_open("%s", tf_loop(1))};
	char *buf = tf_alloc(IO), *leg = tf_alloc(CHUNK);
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &vol, 1), 0);
	for (uint64_t off = 0; off < VOL_SIZE; off += IO) {
		tf_fill(buf, IO, off, 50);
		ring_io(&ring, true, buf, off);
	}
	for (uint64_t off = 0; off < VOL_SIZE; off += IO) {
		memset(buf, 0, IO);
		ring_io(&ring, false, buf, off);
		CHECK(tf_check_pattern(buf, IO, off, 50));
	}
	/* Each leg holds its chunks where dm-stripe puts them. */
	for (uint64_t off = 0; off < VOL_SIZE; off += 7 * CHUNK) {
		unsigned l;
		uint64_t loff;

		stripe_map(off, &l, &loff);
		CHECK_EQ(blkring_dev_pread(legs[l], leg, CHUNK, loff), CHUNK);
		CHECK(tf_check_pattern(leg, CHUNK, off, 50));
	}
	/* A discard through the volume reaches both legs. */
	CHECK_EQ(blkring_dev_discard(vol, 0, 4 * CHUNK), 0);
	CHECK_EQ(blkring_dev_pread(vol, buf, 4 * CHUNK, 0), 4 * CHUNK);
	CHECK(tf_is_zero(buf, 4 * CHUNK));
	CHECK_EQ(blkring_dev_pread(legs[1], leg, CHUNK, 0), CHUNK);
	CHECK(tf_is_zero(leg, CHUNK));
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(vol), 0);
	CHECK_EQ(blkring_dev_close(legs[0]), 0);
	CHECK_EQ(blkring_dev_close(legs[1]), 0);
	free(buf);
	free(leg);
}

/* A linear volume over a regular file, named by a bare path. */
static void test_linear_file(void)
{
	const char *path = tf_path(tf.shm_dir, "leg.img");
	struct blkring_dev *vol = NULL;
	char table[400];
	char *buf = tf_alloc(IO);
	int fd;

	CHECK_EQ(tf_make_file(path, 4 << 20), 0);
	snprintf(table, sizeof(table), "0 4096 linear %s 2048\n", path);
	CHECK_EQ(blkring_vol_create(table, NULL, &vol), 0);
	tf_fill(buf, IO, 0, 51);
	CHECK_EQ(blkring_dev_pwrite(vol, buf, IO, 0), IO);
	CHECK_EQ(blkring_dev_close(vol), 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	memset(buf, 0, IO);
	CHECK_EQ(pread(fd, buf, IO, 1 << 20), IO); /* the leg's sector 2048 */
	CHECK(tf_check_pattern(buf, IO, 0, 51));
	close(fd);
	free(buf);
}

static bool ring_has_queue(struct blkring *ring, struct blkring_dev *dev)
{
	return blkring__ioc_find(&ring->ctx->ioc, dev) != NULL;
}

/* The clones of a ring's I/O reach each file leg through the ring's own
 * kernel ring for it (Linux's clones share their submitter's context), not
 * the leg's shared one and its reaper thread. */
static void test_legs_on_ring_queues(void)
{
	struct blkring_dev *vol = striped_volume();
	struct blkring_dev *legs[2] = {tf_open("%s", tf_loop(0)), tf_open("%s", tf_loop(1))};
	char *buf = tf_alloc(IO);
	struct blkring ring;

	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &vol, 1), 0);
	tf_fill(buf, IO, 0, 53);
	ring_io(&ring, true, buf, 0); /* eight chunks: both legs */
	CHECK(ring_has_queue(&ring, legs[0]) && ring_has_queue(&ring, legs[1]));
	CHECK_EQ(legs[0]->pins, 2); /* the opens' and the ring queue's */
	memset(buf, 0, IO);
	ring_io(&ring, false, buf, 0);
	CHECK(tf_check_pattern(buf, IO, 0, 53));
	blkring_queue_exit(&ring);
	CHECK_EQ(legs[0]->pins, 1);
	CHECK_EQ(blkring_dev_close(vol), 0);
	CHECK_EQ(blkring_dev_close(legs[0]), 0);
	CHECK_EQ(blkring_dev_close(legs[1]), 0);
	free(buf);
}

static struct blkring_dev *linear_over(const char *path)
{
	struct blkring_dev *vol = NULL;
	char table[400];

	snprintf(table, sizeof(table), "0 2048 linear %s 0\n", path);
	CHECK_EQ(blkring_vol_create(table, NULL, &vol), 0);
	return vol;
}

static void reload_onto(struct blkring_dev *vol, const char *path)
{
	char table[400];

	snprintf(table, sizeof(table), "0 2048 linear %s 0\n", path);
	CHECK_EQ(blkring_vol_suspend(vol), 0);
	CHECK_EQ(blkring_vol_load(vol, table, NULL), 0);
	CHECK_EQ(blkring_vol_resume(vol), 0);
}

static struct file_ring_queue *ring_queue_for(struct blkring *ring, struct blkring_dev *dev)
{
	struct blkring_ioc_queue *link = blkring__ioc_find(&ring->ctx->ioc, dev);

	CHECK(link);
	return container_of(link, struct file_ring_queue, link);
}

/* A reload drops the leg whose kernel ring the owner sleeps in: the ring's
 * queue keeps the device (closed, not freed) until the owner's next sleep
 * or flush finds it idle and lets it go; the other leg's kernel ring
 * becomes the one the owner sleeps in, and I/O goes on through it. */
static void test_reload_drops_leg(void)
{
	const char *a_path = tf_path(tf.shm_dir, "drop-a.img");
	const char *b_path = tf_path(tf.shm_dir, "drop-b.img");
	struct __kernel_timespec ts = {0, 1000000};
	struct blkring_dev *vol = NULL, *a, *b;
	char *buf = tf_alloc(IO), table[800];
	struct blkring_cqe *cqe;
	struct blkring ring;

	CHECK_EQ(tf_make_file(a_path, 1 << 20), 0);
	CHECK_EQ(tf_make_file(b_path, 1 << 20), 0);
	snprintf(table, sizeof(table), "0 1024 linear %s 0\n1024 1024 linear %s 0\n", a_path,
	         b_path);
	CHECK_EQ(blkring_vol_create(table, NULL, &vol), 0);
	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &vol, 1), 0);
	tf_fill(buf, IO, 0, 54);
	ring_io(&ring, true, buf, 0); /* leg A first: its kernel ring is the primary */
	tf_fill(buf, IO, 512 << 10, 54);
	ring_io(&ring, true, buf, 512 << 10); /* B's sector 0 */
	a = tf_open("%s", a_path);
	b = tf_open("%s", b_path);
	CHECK(ring_queue_for(&ring, a)->primary && !ring_queue_for(&ring, b)->primary);
	CHECK_EQ(blkring_dev_close(a), 0);
	reload_onto(vol, b_path);
	CHECK_EQ(atomic_load(&a->refs), 0);
	CHECK_EQ(a->pins, 1);
	CHECK_EQ(blkring_wait_cqes(&ring, &cqe, 1, &ts, NULL), -ETIME); /* a sleep, no I/O */
	CHECK(!ring_has_queue(&ring, a)); /* let go, and the device freed */
	CHECK(ring_queue_for(&ring, b)->primary);
	ring_io(&ring, false, buf, 0);
	CHECK(tf_check_pattern(buf, IO, 512 << 10, 54));
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(b), 0);
	CHECK_EQ(blkring_dev_close(vol), 0);
	a = tf_open("%s", a_path);
	CHECK_EQ(blkring_dev_pread(a, buf, IO, 0), IO);
	CHECK(tf_check_pattern(buf, IO, 0, 54));
	CHECK_EQ(blkring_dev_close(a), 0);
	free(buf);
}

static void *resume_vol(void *vol)
{
	CHECK_EQ(blkring_vol_resume(vol), 0);
	return NULL;
}

/* I/O a ring submits to a suspended volume is held and goes again from
 * the thread that resumes it: through the leg's shared queue, as only the
 * ring's owner may use the ring's kernel rings. */
static void test_held_ring_io(void)
{
	const char *path = tf_path(tf.shm_dir, "held.img");
	struct blkring_dev *vol, *leg;
	char *buf = tf_alloc(IO);
	struct blkring_cqe *cqe;
	struct blkring ring;
	pthread_t resumer;

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	vol = linear_over(path);
	leg = tf_open("%s", path);
	tf_fill(buf, IO, 0, 55);
	CHECK_EQ(blkring_dev_pwrite(vol, buf, IO, 0), IO);
	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &vol, 1), 0);
	CHECK_EQ(blkring_vol_suspend(vol), 0);
	memset(buf, 0, IO);
	ring_submit_io(&ring, false, buf, 0);
	CHECK_EQ(blkring_peek_cqe(&ring, &cqe), -EAGAIN); /* held */
	pthread_create(&resumer, NULL, resume_vol, vol);
	pthread_join(resumer, NULL);
	ring_reap(&ring, IO);
	CHECK(tf_check_pattern(buf, IO, 0, 55));
	CHECK(!ring_has_queue(&ring, leg));
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(vol), 0);
	CHECK_EQ(blkring_dev_close(leg), 0);
	free(buf);
}

static void *suspend_vol(void *vol)
{
	CHECK_EQ(blkring_vol_suspend(vol), 0);
	return NULL;
}

/* A ring's I/O on a file leg ends when its owner enters the ring: a
 * suspend from another thread drains it once the owner waits. */
static void test_suspend_waits_for_owner(void)
{
	const char *path = tf_path(tf.shm_dir, "owner.img");
	struct blkring_dev *vol;
	char *buf = tf_alloc(IO);
	struct blkring ring;
	pthread_t suspender;

	CHECK_EQ(tf_make_file(path, 1 << 20), 0);
	vol = linear_over(path);
	CHECK_EQ(blkring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &vol, 1), 0);
	ring_submit_io(&ring, false, buf, 0);
	pthread_create(&suspender, NULL, suspend_vol, vol);
	ring_reap(&ring, IO);
	pthread_join(suspender, NULL);
	CHECK_EQ(blkring_vol_resume(vol), 0);
	blkring_queue_exit(&ring);
	CHECK_EQ(blkring_dev_close(vol), 0);
	free(buf);
}

/* ---- reloads under rings' I/O ---- */

#define RELOAD_RINGS 2
#define RELOADS 200
#define RING_DEPTH 8

static _Atomic bool reload_stop;

/* A ring thread: batches of 4k reads at scattered offsets until told to
 * stop, every CQE a whole read.  Its waits reap its own kernel rings, so
 * the reloader's suspends drain. */
static void *reload_reader(void *arg)
{
	struct blkring_dev *vol = arg;
	char *buf = tf_alloc(RING_DEPTH * 4096);
	struct blkring ring;
	unsigned seed = 1, rounds = 0;

	CHECK_EQ(blkring_queue_init(RING_DEPTH, &ring, 0), 0);
	CHECK_EQ(blkring_register_devices(&ring, &vol, 1), 0);
	while (!atomic_load(&reload_stop) || rounds < 10) {
		for (int i = 0; i < RING_DEPTH; i++) {
			seed = seed * 1103515245 + 12345;
			blkring_prep_read(ring_sqe(&ring), 0, buf + i * 4096, 4096,
			                  (uint64_t)(seed % 256) * 4096);
		}
		CHECK_EQ(blkring_submit(&ring), RING_DEPTH);
		for (int i = 0; i < RING_DEPTH; i++)
			ring_reap(&ring, 4096);
		rounds++;
	}
	blkring_queue_exit(&ring);
	free(buf);
	return NULL;
}

/* Rings read through a volume while it is reloaded back and forth between
 * two file legs: each reload drops the leg the rings' kernel rings serve,
 * which they let go while the next one is opened anew. */
static void test_reload_under_ring_io(void)
{
	const char *paths[2] = {tf_path(tf.shm_dir, "swap-a.img"),
	                        tf_path(tf.shm_dir, "swap-b.img")};
	pthread_t readers[RELOAD_RINGS];
	struct blkring_dev *vol;

	CHECK_EQ(tf_make_file(paths[0], 1 << 20), 0);
	CHECK_EQ(tf_make_file(paths[1], 1 << 20), 0);
	vol = linear_over(paths[0]);
	atomic_store(&reload_stop, false);
	for (int i = 0; i < RELOAD_RINGS; i++)
		CHECK_EQ(pthread_create(&readers[i], NULL, reload_reader, vol), 0);
	for (int i = 1; i <= RELOADS; i++)
		reload_onto(vol, paths[i % 2]);
	atomic_store(&reload_stop, true);
	for (int i = 0; i < RELOAD_RINGS; i++)
		CHECK_EQ(pthread_join(readers[i], NULL), 0);
	CHECK_EQ(blkring_dev_close(vol), 0);
}

static const struct test_case cases[] = {
    {"striped_loops", test_striped_loops, 0},
    {"linear_file", test_linear_file, 0},
    {"legs_on_ring_queues", test_legs_on_ring_queues, 0},
    {"reload_drops_leg", test_reload_drops_leg, 0},
    {"held_ring_io", test_held_ring_io, 0},
    {"suspend_waits_for_owner", test_suspend_waits_for_owner, 0},
    {"reload_under_ring_io", test_reload_under_ring_io, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	tf_setup();
	tf_add_loop(8 << 20, 512);
	tf_add_loop(8 << 20, 512);
	return tf_main(cases, argc, argv);
}
