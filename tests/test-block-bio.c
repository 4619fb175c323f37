// SPDX-License-Identifier: MIT
/* bios: validation, data windows, splitting and chaining. */
#include <errno.h>
#include <stdlib.h>

#include "block/blkdev.h"
#include "test.h"

struct result {
	_Atomic int calls;
	int status;
};

static void record_end(struct blkring_bio *bio)
{
	struct result *r = bio->private;

	r->status = bio->status;
	atomic_fetch_add(&r->calls, 1);
}

static int submit(struct blkring_dev *dev, unsigned op, uint64_t off, uint64_t len, void *buf,
                  unsigned flags, struct result *r)
{
	struct blkring_bio *bio = calloc(1, sizeof(*bio));
	int ret;

	blkring__bio_init(bio, dev, op, off, len);
	if (buf)
		blkring__bio_set_buf(bio, buf, len);
	bio->flags = (uint8_t)flags;
	bio->end_io = record_end;
	bio->private = r;
	ret = blkring__submit_bio(bio);
	/* irqmode=none: ended before return, or never when rejected */
	free(bio);
	return ret;
}

static void test_validate_byte_range(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,bs=4096,irqmode=0");

	CHECK_EQ(blkring__validate_byte_range(dev, 0, 4096), 0);
	CHECK_EQ(blkring__validate_byte_range(dev, (1 << 20) - 4096, 4096), 0);
	CHECK_EQ(blkring__validate_byte_range(dev, 0, 1 << 20), 0);
	CHECK_EQ(blkring__validate_byte_range(dev, 512, 4096), -EINVAL);     /* offset */
	CHECK_EQ(blkring__validate_byte_range(dev, 0, 512), -EINVAL);        /* length */
	CHECK_EQ(blkring__validate_byte_range(dev, 0, 0), -EINVAL);          /* empty */
	CHECK_EQ(blkring__validate_byte_range(dev, 1 << 20, 4096), -EINVAL); /* past end */
	CHECK_EQ(blkring__validate_byte_range(dev, 4096, 1 << 20), -EINVAL);
	CHECK_EQ(blkring__validate_byte_range(dev, UINT64_MAX - 4095, 8192), -EINVAL); /* wraps */
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_submit_rejects(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=0,poll_queues=0");
	struct result r = {0};
	char buf[1024];

	CHECK_EQ(submit(dev, REQ_OP_READ, 100, 512, buf, 0, &r), -EINVAL); /* sub-sector offset */
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 100, buf, 0, &r), -EINVAL);
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 0, buf, 0, &r), -EINVAL);
	CHECK_EQ(submit(dev, REQ_OP_READ, 1 << 20, 512, buf, 0, &r), -EINVAL);
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 512, NULL, 0, &r), -EINVAL); /* no buffer */
	CHECK_EQ(submit(dev, REQ_OP_DISCARD, 0, 512, NULL, 0, &r), -EOPNOTSUPP);
	CHECK_EQ(submit(dev, REQ_OP_WRITE_ZEROES, 0, 512, NULL, 0, &r), -EOPNOTSUPP);
	CHECK_EQ(submit(dev, 99, 0, 512, buf, 0, &r), -EINVAL);
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 512, buf, BIO_POLLED, &r), -EOPNOTSUPP);
	CHECK_EQ(r.calls, 0); /* nothing rejected ever ends */
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 512, buf, 0, &r), 0);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_buffer_alignment(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=0,name=align");
	struct result r = {0};
	char *buf = aligned_alloc(4096, 8192);

	/* An O_DIRECT-like device: addresses on 512, lengths whole blocks. */
	dev->limits.dma_alignment = 511;
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 512, buf + 1, 0, &r), -EINVAL);
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 512, buf + 512, 0, &r), 0);
	{
		struct iovec v[2] = {{buf, 256}, {buf + 1024, 256}};
		struct blkring_bio bio;

		blkring__bio_init(&bio, dev, REQ_OP_READ, 0, 512);
		bio.vec = v;
		bio.nr_vecs = 2;
		bio.end_io = record_end;
		bio.private = &r;
		CHECK_EQ(blkring__submit_bio(&bio), -EINVAL); /* 256-byte segments */
	}
	dev->limits.dma_alignment = 0; /* a memory device takes anything */
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 512, buf + 1, 0, &r), 0);
	CHECK_EQ(r.calls, 2);
	free(buf);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_iovec_windows(void)
{
	char a[100], b[300], c[124], flat[512], back[512];
	struct iovec v[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	struct blkring_bio bio, child;
	struct blkring_bio_iter it;

	for (int i = 0; i < 512; i++)
		flat[i] = (char)i;
	blkring__bio_init(&bio, NULL, REQ_OP_READ, 0, 512);
	bio.vec = v;
	bio.nr_vecs = 3;
	blkring__bio_copy_to(&bio, flat);
	CHECK(!memcmp(a, flat, 100) && !memcmp(b, flat + 100, 300) && !memcmp(c, flat + 400, 112));
	blkring__bio_copy_from(&bio, back);
	CHECK(!memcmp(back, flat, 512));

	/* A window 150 bytes in: starts in b. */
	blkring__bio_clone_window(&child, &bio, 150);
	CHECK(child.vec == &v[1]);
	CHECK_EQ(child.nr_vecs, 2);
	CHECK_EQ(child.vec_skip, 50);
	child.size = 200;
	blkring__bio_copy_from(&child, back);
	CHECK(!memcmp(back, flat + 150, 200));

	blkring__bio_iter_init(&it, &child);
	blkring__bio_iter_zero(&it, 260);
	CHECK_EQ(b[49], (char)149);
	CHECK_EQ(b[50], 0);
	CHECK_EQ(b[299], 0);
	CHECK_EQ(c[9], 0);
	CHECK_EQ(c[10], (char)410);
}

static void test_chain_first_error_wins(void)
{
	struct result r = {0};
	struct blkring_bio parent, c[3];

	blkring__bio_init(&parent, NULL, REQ_OP_READ, 0, 0);
	parent.end_io = record_end;
	parent.private = &r;
	for (int i = 0; i < 3; i++) {
		blkring__bio_init(&c[i], NULL, REQ_OP_READ, 0, 0);
		blkring__bio_chain(&c[i], &parent);
	}
	blkring__bio_endio(&c[1], -EIO);
	blkring__bio_endio(&c[0], 0);
	blkring__bio_endio(&parent, 0); /* the submitter's reference */
	CHECK_EQ(r.calls, 0);
	blkring__bio_endio(&c[2], -ENOSPC);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(r.status, -EIO);
}

static void test_split_round_trip(void)
{
	struct blkring_dev *dev = test_open("null:size=4M,memory_backed=1,max_sectors=8,irqmode=1");
	size_t len = 64 << 10;
	char *in = malloc(len), *out = calloc(1, len);
	struct blkring_dev_info info;

	for (size_t i = 0; i < len; i++)
		in[i] = (char)(i * 13 + (i >> 12));
	CHECK_EQ(blkring_dev_pwrite(dev, in, len, 8192), (ssize_t)len);
	CHECK_EQ(blkring_dev_pread(dev, out, len, 8192), (ssize_t)len);
	CHECK(!memcmp(in, out, len));
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	/* Counted once each, as the caller sees them. */
	CHECK_EQ(info.ios[BLKRING_DIR_READ], 1);
	CHECK_EQ(info.bytes[BLKRING_DIR_READ], len);
	free(in);
	free(out);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_split_iovecs(void)
{
	struct blkring_dev *dev = test_open("null:size=4M,memory_backed=1,max_sectors=3,irqmode=0");
	static char a[1000], b[2000], c[1096], out[4096];
	struct iovec v[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	struct result r = {0};
	struct blkring_bio bio;

	for (int i = 0; i < 1000; i++)
		a[i] = 1;
	for (int i = 0; i < 2000; i++)
		b[i] = 2;
	for (int i = 0; i < 1096; i++)
		c[i] = 3;
	blkring__bio_init(&bio, dev, REQ_OP_WRITE, 0, 4096);
	bio.vec = v;
	bio.nr_vecs = 3;
	bio.end_io = record_end;
	bio.private = &r;
	CHECK_EQ(blkring__submit_bio(&bio), 0);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(r.status, 0);
	CHECK_EQ(blkring_dev_pread(dev, out, 4096, 0), 4096);
	CHECK(out[0] == 1 && out[999] == 1 && out[1000] == 2 && out[2999] == 2 && out[3000] == 3 &&
	      out[4095] == 3);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_split_error_once(void)
{
	/* 8 children of 4 KiB; the 5th hits a bad block. */
	struct blkring_dev *dev =
	    test_open("null:size=4M,max_sectors=8,badblocks=40-40,irqmode=1,name=se");
	char *buf = calloc(1, 32768);

	CHECK_EQ(blkring_dev_pread(dev, buf, 32768, 4096), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 32768, 8192), -EIO);
	CHECK_EQ(blkring_dev_pread(dev, buf, 16384, 40960), 16384);
	free(buf);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_nowait_split_eagain(void)
{
	struct blkring_dev *dev = test_open("null:size=4M,max_sectors=8,irqmode=0");
	struct result r = {0};
	char buf[8192];

	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 8192, buf, BIO_NOWAIT, &r), -EAGAIN);
	CHECK_EQ(r.calls, 0);
	CHECK_EQ(submit(dev, REQ_OP_READ, 0, 4096, buf, BIO_NOWAIT, &r), 0);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static void test_flush(void)
{
	struct blkring_dev *dev = test_open("null:size=1M,irqmode=1");
	struct blkring_dev_info info;

	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_flush(dev), 0);
	CHECK_EQ(blkring_dev_info(dev, &info), 0);
	CHECK_EQ(info.ios[BLKRING_DIR_FLUSH], 2);
	CHECK_EQ(blkring_dev_flush(NULL), -EINVAL);
	CHECK_EQ(blkring_dev_pread(NULL, NULL, 0, 0), -EINVAL);
	CHECK_EQ(blkring_dev_close(dev), 0);
}

static const struct test_case cases[] = {
    {"validate_byte_range", test_validate_byte_range, 0},
    {"submit_rejects", test_submit_rejects, 0},
    {"buffer_alignment", test_buffer_alignment, 0},
    {"iovec_windows", test_iovec_windows, 0},
    {"chain_first_error_wins", test_chain_first_error_wins, 0},
    {"split_round_trip", test_split_round_trip, 0},
    {"split_iovecs", test_split_iovecs, 0},
    {"split_error_once", test_split_error_once, 0},
    {"nowait_split_eagain", test_nowait_split_eagain, 0},
    {"flush", test_flush, 0},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
	return test_main(cases, argc, argv);
}
