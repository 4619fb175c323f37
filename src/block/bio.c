// SPDX-License-Identifier: MIT
/*
 * bios: initialisation, data windows over iovec arrays, chaining and the
 * single end of every bio (Linux's block/bio.c role).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blkdev.h"

/* Children end on any thread at once: the status is set with a CAS so the
 * first error stays. */
static void bio_set_status(struct blkring_bio *bio, int status)
{
	int16_t ok = 0;

	if (unlikely(status))
		__atomic_compare_exchange_n(&bio->status, &ok, (int16_t)status, false,
		                            __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/*
 * A bio nobody chained to holds remaining == 1 and is ended by its only
 * owner, so the common case skips the atomic decrement (Linux's
 * bio_remaining_done() does the same with BIO_CHAIN).
 */
static bool bio_remaining_done(struct blkring_bio *bio)
{
	if (atomic_load_explicit(&bio->remaining, memory_order_acquire) == 1)
		return true;
	return atomic_fetch_sub_explicit(&bio->remaining, 1, memory_order_acq_rel) == 1;
}

void blkring__bio_endio_slow(struct blkring_bio *bio, int status)
{
	while (bio) {
		struct blkring_bio *parent;
		int16_t st;

		bio_set_status(bio, status);
		if (!bio_remaining_done(bio))
			return;
		/* end_io may free or reuse the bio: read what we need first.  The
		 * parent learns of an error before end_io runs, as Linux's
		 * bio_chain_endio(), so whoever end_io wakes sees it. */
		parent = bio->parent;
		st = __atomic_load_n(&bio->status, __ATOMIC_RELAXED);
		if (parent)
			bio_set_status(parent, st);
		if (bio->account)
			blkring__dev_account(bio->dev, bio->op, bio->size, st);
		if (bio->end_io)
			bio->end_io(bio);
		bio = parent;
		status = st;
	}
}

void blkring__bio_chain(struct blkring_bio *child, struct blkring_bio *parent)
{
	child->parent = parent;
	atomic_fetch_add_explicit(&parent->remaining, 1, memory_order_relaxed);
}

void blkring__bio_iter_init(struct blkring_bio_iter *it, const struct blkring_bio *bio)
{
	it->vec = bio->vec;
	it->off = bio->vec_skip;
}

/* Moves to the next segment when the current one is used up. */
static size_t iter_chunk(struct blkring_bio_iter *it, size_t len)
{
	while (it->off >= it->vec->iov_len) {
		it->off -= it->vec->iov_len;
		it->vec++;
	}
	return len < it->vec->iov_len - it->off ? len : it->vec->iov_len - it->off;
}

void blkring__bio_iter_copy_to(struct blkring_bio_iter *it, const void *src, size_t len)
{
	const char *p = src;

	while (len) {
		size_t n = iter_chunk(it, len);

		memcpy((char *)it->vec->iov_base + it->off, p, n);
		p += n;
		it->off += n;
		len -= n;
	}
}

void blkring__bio_iter_copy_from(struct blkring_bio_iter *it, void *dst, size_t len)
{
	char *p = dst;

	while (len) {
		size_t n = iter_chunk(it, len);

		memcpy(p, (const char *)it->vec->iov_base + it->off, n);
		p += n;
		it->off += n;
		len -= n;
	}
}

void blkring__bio_iter_zero(struct blkring_bio_iter *it, size_t len)
{
	while (len) {
		size_t n = iter_chunk(it, len);

		memset((char *)it->vec->iov_base + it->off, 0, n);
		it->off += n;
		len -= n;
	}
}

void blkring__bio_copy_to(struct blkring_bio *bio, const void *src)
{
	struct blkring_bio_iter it;

	blkring__bio_iter_init(&it, bio);
	blkring__bio_iter_copy_to(&it, src, bio->size);
}

void blkring__bio_copy_from(struct blkring_bio *bio, void *dst)
{
	struct blkring_bio_iter it;

	blkring__bio_iter_init(&it, bio);
	blkring__bio_iter_copy_from(&it, dst, bio->size);
}

void blkring__bio_clone_window(struct blkring_bio *dst, const struct blkring_bio *src,
                               uint64_t skip)
{
	const struct iovec *vec = src->vec;
	uint32_t nr = src->nr_vecs;
	uint64_t off = src->vec_skip + skip;

	if (!vec) {
		dst->vec = NULL;
		dst->nr_vecs = 0;
		dst->vec_skip = 0;
		return;
	}
	while (nr > 1 && off >= vec->iov_len) {
		off -= vec->iov_len;
		vec++;
		nr--;
	}
	dst->vec = vec;
	dst->nr_vecs = nr;
	dst->vec_skip = (uint32_t)off;
}

static void child_end_io(struct blkring_bio *bio)
{
	free(bio);
}

struct blkring_bio *blkring__bio_alloc_child(struct blkring_bio *parent, unsigned op,
                                             uint64_t offset, uint64_t size)
{
	struct blkring_bio *child = malloc(sizeof(*child));

	if (!child)
		return NULL;
	blkring__bio_init(child, parent->dev, op, offset, size);
	child->flags = parent->flags & ~(BIO_NOWAIT | BIO_POLL_TRACKED);
	child->queue_hint = parent->queue_hint;
	child->end_io = child_end_io;
	blkring__bio_chain(child, parent);
	return child;
}
