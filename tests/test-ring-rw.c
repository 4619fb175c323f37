// SPDX-License-Identifier: MIT
/* Reads, writes, vectored I/O and flushes: the bios the ring builds and the
 * results it posts. */
#include <errno.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <string.h>

#include "ring-fake.h"
#include "test.h"

static char buf[64][512];

static struct blkring_cqe submit_one(struct blkring *ring)
{
	CHECK_EQ(blkring_submit(ring), 1);
	return ring_reap(ring);
}

static void rw_bio_fields(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring r1, r2;
	struct blkring_sqe *sqe;
	struct fake_bio_record rec;

	ring_fake_ring(&r1, 8, fake);
	ring_fake_ring(&r2, 8, fake);
	blkring_prep_read(ring_sqe(&r1), 0, buf, 4096, 8192);
	CHECK_EQ(submit_one(&r1).res, 4096);
	rec = ring_fake_record(fake, 0);
	CHECK_EQ(rec.op, REQ_OP_READ);
	CHECK_EQ(rec.sector, 16);
	CHECK_EQ(rec.size, 4096);
	CHECK_EQ(rec.flags & (BIO_FUA | BIO_NOWAIT), 0);
	CHECK_EQ(rec.nr_vecs, 1);
	CHECK(rec.vec->iov_base == (void *)buf);
	CHECK(rec.on_owner);

	sqe = ring_sqe(&r1);
	blkring_prep_write(sqe, 0, buf, 1024, 512);
	sqe->rw_flags = BLKRING_RWF_DSYNC;
	CHECK_EQ(submit_one(&r1).res, 1024);
	rec = ring_fake_record(fake, 1);
	CHECK_EQ(rec.op, REQ_OP_WRITE);
	CHECK_EQ(rec.sector, 1);
	CHECK_EQ(rec.flags & (BIO_FUA | BIO_NOWAIT), BIO_FUA);
	/* Every bio of a ring carries the ring's queue hint; rings differ. */
	CHECK_EQ(rec.queue_hint, ring_fake_record(fake, 0).queue_hint);

	/* FUA means nothing to a read. */
	sqe = ring_sqe(&r2);
	blkring_prep_read(sqe, 0, buf, 512, 0);
	sqe->rw_flags = BLKRING_RWF_DSYNC;
	CHECK_EQ(submit_one(&r2).res, 512);
	rec = ring_fake_record(fake, 2);
	CHECK_EQ(rec.flags & (BIO_FUA | BIO_NOWAIT), 0);
	CHECK(rec.queue_hint != ring_fake_record(fake, 0).queue_hint);
	blkring_queue_exit(&r1);
	blkring_queue_exit(&r2);
	ring_fake_destroy(fake);
}

static void rw_errors(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct blkring_sqe *sqe;

	ring_fake_ring(&ring, 8, fake);
	sqe = ring_sqe(&ring);
	blkring_prep_read(sqe, 0, buf, 512, 0);
	sqe->rw_flags = 1U << 7;
	CHECK_EQ(submit_one(&ring).res, -EOPNOTSUPP);
	blkring_prep_read(ring_sqe(&ring), 0, buf, 1U << 31, 0);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	/* The block layer's checks come back in the CQE. */
	blkring_prep_read(ring_sqe(&ring), 0, buf, 512, 100);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	blkring_prep_write(ring_sqe(&ring), 0, buf, 512, 1ULL << 30);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	blkring_prep_read(ring_sqe(&ring), 0, buf, 0, 0);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	/* A NULL buffer is the copy's fault, as the kernel's. */
	blkring_prep_read(ring_sqe(&ring), 0, NULL, 512, 0);
	CHECK_EQ(submit_one(&ring).res, -EFAULT);
	blkring_prep_write(ring_sqe(&ring), 0, NULL, 512, 0);
	CHECK_EQ(submit_one(&ring).res, -EFAULT);
	CHECK_EQ(ring_fake_submitted(fake), 0);
	/* A device error ends the bio with it. */
	fake->status = -EIO;
	blkring_prep_read(ring_sqe(&ring), 0, buf, 512, 0);
	CHECK_EQ(submit_one(&ring).res, -EIO);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* The iovec array is copied at submit: the caller may reuse it at once. */
static void rw_vectored(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct blkring ring;
	struct iovec iov[3], big[20];
	struct fake_bio_record rec;
	struct blkring_cqe cqe;

	ring_fake_ring(&ring, 8, fake);
	for (unsigned i = 0; i < 3; i++)
		iov[i] = (struct iovec){buf[i], 512 * (i + 1)};
	for (unsigned i = 0; i < 20; i++)
		big[i] = (struct iovec){buf[20 + i], 512};
	blkring_prep_readv(ring_sqe(&ring), 0, iov, 3, 4096);
	blkring_prep_writev(ring_sqe(&ring), 0, big, 20, 0);
	CHECK_EQ(blkring_submit(&ring), 2);
	memset(iov, 0, sizeof(iov));
	memset(big, 0, sizeof(big));

	rec = ring_fake_record(fake, 0);
	CHECK_EQ(rec.op, REQ_OP_READ);
	CHECK_EQ(rec.sector, 8);
	CHECK_EQ(rec.size, 512 * 6);
	CHECK_EQ(rec.nr_vecs, 3);
	for (unsigned i = 0; i < 3; i++) {
		CHECK(rec.vec[i].iov_base == buf[i]);
		CHECK_EQ(rec.vec[i].iov_len, 512 * (i + 1));
	}
	rec = ring_fake_record(fake, 1);
	CHECK_EQ(rec.op, REQ_OP_WRITE);
	CHECK_EQ(rec.size, 512 * 20);
	CHECK_EQ(rec.nr_vecs, 20);
	for (unsigned i = 0; i < 20; i++)
		CHECK(rec.vec[i].iov_base == buf[20 + i]);
	ring_fake_end(fake, 2, 0);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.res, 512 * 6);
	cqe = ring_reap(&ring);
	CHECK_EQ(cqe.res, 512 * 20);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void rw_vectored_errors(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	static struct iovec many[1025];
	struct iovec huge[2] = {{buf, 1U << 30}, {buf, 1U << 30}};
	struct blkring ring;
	unsigned submitted;

	ring_fake_ring(&ring, 8, fake);
	for (unsigned i = 0; i < 1025; i++)
		many[i] = (struct iovec){buf[0], 512};
	blkring_prep_readv(ring_sqe(&ring), 0, many, 1025, 0);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	blkring_prep_readv(ring_sqe(&ring), 0, many, 1024, 0);
	CHECK_EQ(submit_one(&ring).res, 1024 * 512);
	/* 2 GiB does not fit a CQE's res, nor does a sum that wraps. */
	blkring_prep_writev(ring_sqe(&ring), 0, huge, 2, 0);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	huge[0].iov_len = UINT64_MAX - 3071;
	huge[1].iov_len = 8192;
	blkring_prep_readv(ring_sqe(&ring), 0, huge, 2, 0);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	blkring_prep_readv(ring_sqe(&ring), 0, many, 0, 0);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	/* A NULL iovec array, or a NULL segment with a length: -EFAULT. */
	submitted = ring_fake_submitted(fake);
	blkring_prep_readv(ring_sqe(&ring), 0, NULL, 1, 0);
	CHECK_EQ(submit_one(&ring).res, -EFAULT);
	many[1].iov_base = NULL;
	blkring_prep_writev(ring_sqe(&ring), 0, many, 2, 0);
	CHECK_EQ(submit_one(&ring).res, -EFAULT);
	CHECK_EQ(ring_fake_submitted(fake), submitted);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void rw_fsync(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring ring;
	struct blkring_sqe *sqe;

	ring_fake_ring(&ring, 8, fake);
	blkring_prep_fsync(ring_sqe(&ring), 0, 0);
	CHECK_EQ(submit_one(&ring).res, 0);
	CHECK_EQ(ring_fake_record(fake, 0).op, REQ_OP_FLUSH);
	CHECK_EQ(ring_fake_record(fake, 0).size, 0);
	blkring_prep_fsync(ring_sqe(&ring), 0, 1U << 1); /* not a flag */
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	sqe = ring_sqe(&ring);
	blkring_prep_fsync(sqe, 0, 0);
	sqe->addr = 4096;
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	CHECK_EQ(ring_fake_submitted(fake), 1);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/* Linux's values, so code from liburing means what it says. */
_Static_assert(BLKRING_RWF_HIPRI == RWF_HIPRI && BLKRING_RWF_DSYNC == RWF_DSYNC &&
                   BLKRING_RWF_SYNC == RWF_SYNC && BLKRING_RWF_NOWAIT == RWF_NOWAIT,
               "RWF_* values");
_Static_assert(BLKRING_SQE_FIXED_FILE == IOSQE_FIXED_FILE &&
                   BLKRING_SQE_IO_DRAIN == IOSQE_IO_DRAIN && BLKRING_SQE_IO_LINK == IOSQE_IO_LINK &&
                   BLKRING_SQE_ASYNC == IOSQE_ASYNC &&
                   BLKRING_FSYNC_DATASYNC == IORING_FSYNC_DATASYNC,
               "IOSQE_* and IORING_FSYNC_* values");
_Static_assert(BLKRING_SETUP_IOPOLL == IORING_SETUP_IOPOLL &&
                   BLKRING_SETUP_SQPOLL == IORING_SETUP_SQPOLL &&
                   BLKRING_SETUP_SQ_AFF == IORING_SETUP_SQ_AFF &&
                   BLKRING_SETUP_CQSIZE == IORING_SETUP_CQSIZE &&
                   BLKRING_SETUP_SINGLE_ISSUER == IORING_SETUP_SINGLE_ISSUER &&
                   BLKRING_SETUP_DEFER_TASKRUN == IORING_SETUP_DEFER_TASKRUN &&
                   BLKRING_SQ_NEED_WAKEUP == IORING_SQ_NEED_WAKEUP &&
                   BLKRING_SQ_CQ_OVERFLOW == IORING_SQ_CQ_OVERFLOW,
               "IORING_SETUP_* and IORING_SQ_* values");

static struct fake_bio_record one_write(struct blkring *ring, struct fake_dev *fake,
                                        unsigned sqe_flags, uint32_t rw_flags, int res)
{
	struct blkring_sqe *sqe = ring_sqe(ring);
	unsigned before = ring_fake_submitted(fake);

	blkring_prep_write(sqe, 0, buf, 512, 0);
	sqe->flags = (uint8_t)sqe_flags;
	sqe->rw_flags = rw_flags;
	CHECK_EQ(submit_one(ring).res, res);
	/* The fake answers a NOWAIT bio -EAGAIN, once it has seen it. */
	CHECK_EQ(ring_fake_submitted(fake), before + (res >= 0 || res == -EAGAIN));
	return ring_fake_submitted(fake) > before ? ring_fake_record(fake, before)
	                                          : (struct fake_bio_record){0};
}

/* DSYNC and SYNC are a FUA write; HIPRI needs a polling ring; FIXED_FILE
 * and FSYNC_DATASYNC are accepted. */
static void rw_linux_flags(void)
{
	struct fake_dev *fake = ring_fake_create(FAKE_INLINE);
	struct blkring_sqe *sqe;
	struct blkring ring;

	ring_fake_ring(&ring, 8, fake);
	CHECK(one_write(&ring, fake, 0, BLKRING_RWF_DSYNC, 512).flags & BIO_FUA);
	CHECK(one_write(&ring, fake, 0, BLKRING_RWF_SYNC, 512).flags & BIO_FUA);
	CHECK(!(one_write(&ring, fake, 0, 0, 512).flags & BIO_FUA));
	CHECK(one_write(&ring, fake, 0, BLKRING_RWF_NOWAIT, -EAGAIN).flags & BIO_NOWAIT);
	one_write(&ring, fake, 0, BLKRING_RWF_HIPRI, -EINVAL);
	one_write(&ring, fake, 0, 1U << 4, -EOPNOTSUPP);
	CHECK(!(one_write(&ring, fake, BLKRING_SQE_FIXED_FILE, 0, 512).flags & BIO_FUA));
	sqe = ring_sqe(&ring);
	blkring_prep_fsync(sqe, 0, BLKRING_FSYNC_DATASYNC);
	CHECK_EQ(submit_one(&ring).res, 0);
	sqe = ring_sqe(&ring);
	blkring_prep_fsync(sqe, 0, 2);
	CHECK_EQ(submit_one(&ring).res, -EINVAL);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

/*
 * io_uring's rule: what an SQE points at is read when the SQE is consumed.
 * Without SQPOLL that is inside submit; with it, when the SQ thread gets
 * there.  Once consumed, the iovec array may be reused: the bio has a copy.
 */
static void iovec_read_at_consume(unsigned flags)
{
	struct blkring_params p = {.flags = flags, .sq_thread_idle = 100};
	struct fake_dev *fake = ring_fake_create(FAKE_HOLD);
	struct iovec iov[2] = {{buf[0], 512}, {buf[1], 1024}};
	struct fake_bio_record rec;
	struct blkring ring;

	CHECK_EQ(blkring_queue_init_params(8, &ring, &p), 0);
	CHECK_EQ(blkring_register_devices(&ring, &fake->dev, 1), 0);
	blkring_prep_readv(ring_sqe(&ring), 0, iov, 2, 0);
	CHECK_EQ(blkring_submit(&ring), 1);
	while (blkring_sq_ready(&ring))
		; /* the SQ thread has not consumed it yet */
	ring_fake_wait_submitted(fake, 1);
	memset(iov, 0, sizeof(iov));
	rec = ring_fake_record(fake, 0);
	CHECK(rec.vec != iov);
	CHECK_EQ(rec.nr_vecs, 2);
	CHECK(rec.vec[0].iov_base == (void *)buf[0] && rec.vec[0].iov_len == 512);
	CHECK(rec.vec[1].iov_base == (void *)buf[1] && rec.vec[1].iov_len == 1024);
	ring_fake_end_from_thread(fake, 1, 0);
	CHECK_EQ(ring_reap(&ring).res, 1536);
	blkring_queue_exit(&ring);
	ring_fake_destroy(fake);
}

static void rw_iovec_consumed(void)
{
	iovec_read_at_consume(0);
}

static void rw_iovec_consumed_sqpoll(void)
{
	iovec_read_at_consume(BLKRING_SETUP_SQPOLL);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
	    {"ring-rw-bio-fields", rw_bio_fields, 0},
	    {"ring-rw-linux-flags", rw_linux_flags, 0},
	    {"ring-rw-errors", rw_errors, 0},
	    {"ring-rw-vectored", rw_vectored, 0},
	    {"ring-rw-vectored-errors", rw_vectored_errors, 0},
	    {"ring-rw-fsync", rw_fsync, 0},
	    {"ring-rw-iovec-consumed", rw_iovec_consumed, 0},
	    {"ring-rw-iovec-consumed-sqpoll", rw_iovec_consumed_sqpoll, 0},
	    {NULL, NULL, 0},
	};

	return test_main(cases, argc, argv);
}
