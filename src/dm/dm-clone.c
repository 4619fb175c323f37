// SPDX-License-Identifier: MIT
/*
 * Clones come from a per-thread cache (Linux takes them from a per-device
 * bio_set mempool; a lock-free per-thread cache is the userspace way to
 * keep malloc and locks off the fast path).  The submitting thread pops
 * and pushes its own list with plain loads and stores; a clone that ends
 * on another thread (a completion thread) goes back through a lock-free
 * list the owner takes in one exchange when its own list runs dry.  The
 * cache grows by a slab at a time and never shrinks while its thread lives.
 *
 * A thread may exit with its clones still in flight: the cache then
 * lives on until the last of them is freed.  `refs` is biased: while the
 * owner lives it holds BIAS minus the remote frees not yet taken back;
 * at exit the owner adds the clones not on its free list (in flight, or
 * freed remotely and not taken back), minus BIAS, leaving exactly the
 * number still in flight; whoever takes it to zero frees the cache.
 */
#include <pthread.h>
#include <stdlib.h>

#include "dm.h"

#define SLAB_CLONES 64
#define BIAS (1L << 40)

struct dm_slab {
	struct dm_slab *next;
	struct dm_clone clones[SLAB_CLONES];
};

struct dm_clone_cache {
	struct dm_slab *slabs; /* owner only while it lives */
	long nr_clones;        /* owner only: what the slabs hold */
	struct llist_head remote __cacheline_aligned;
	_Atomic long refs;
};

_Thread_local struct dm_clone_local blkring__dm_clones;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_free(struct dm_clone_cache *cache)
{
	while (cache->slabs) {
		struct dm_slab *next = cache->slabs->next;

		free(cache->slabs);
		cache->slabs = next;
	}
	free(cache);
}

static void cache_release(struct dm_clone_cache *cache, long delta)
{
	if (atomic_fetch_add_explicit(&cache->refs, delta, memory_order_acq_rel) + delta == 0)
		cache_free(cache);
}

static void cache_exit(void *arg)
{
	struct dm_clone_cache *cache = arg;
	long out = cache->nr_clones;

	for (struct llist_node *n = blkring__dm_clones.free; n; n = n->next)
		out--;
	blkring__dm_clones = (struct dm_clone_local){0};
	cache_release(cache, out - BIAS);
}

static void cache_key_init(void)
{
	pthread_key_create(&cache_key, cache_exit);
}

static struct dm_clone_cache *cache_get(void)
{
	struct dm_clone_cache *cache;

	if (likely(blkring__dm_clones.cache))
		return blkring__dm_clones.cache;
	cache = calloc(1, sizeof(*cache));
	if (!cache)
		return NULL;
	llist_init(&cache->remote);
	atomic_init(&cache->refs, BIAS);
	pthread_once(&cache_once, cache_key_init);
	pthread_setspecific(cache_key, cache);
	return blkring__dm_clones.cache = cache;
}

/* Takes back the clones other threads freed, or else adds a slab. */
static bool cache_grow(struct dm_clone_cache *cache)
{
	struct llist_node *remote = llist_del_all(&cache->remote);
	long taken = 0;
	struct dm_slab *slab;

	if (remote) {
		for (struct llist_node *n = remote; n; n = n->next)
			taken++;
		blkring__dm_clones.free = remote;
		atomic_fetch_add_explicit(&cache->refs, taken, memory_order_relaxed);
		return true;
	}
	slab = malloc(sizeof(*slab));
	if (!slab)
		return false;
	slab->next = cache->slabs;
	cache->slabs = slab;
	cache->nr_clones += SLAB_CLONES;
	for (unsigned i = 0; i < SLAB_CLONES; i++) {
		slab->clones[i].cache = cache;
		slab->clones[i].bio.node.next = blkring__dm_clones.free;
		blkring__dm_clones.free = &slab->clones[i].bio.node;
	}
	return true;
}

struct dm_clone *blkring__dm_clone_alloc_slow(void)
{
	struct dm_clone_cache *cache = cache_get();

	if (!cache || !cache_grow(cache))
		return NULL;
	return blkring__dm_clone_alloc();
}

void blkring__dm_clone_free_remote(struct dm_clone *c)
{
	struct dm_clone_cache *cache = c->cache;

	llist_add(&c->bio.node, &cache->remote);
	cache_release(cache, -1);
}
