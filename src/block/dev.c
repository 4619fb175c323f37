// SPDX-License-Identifier: MIT
/*
 * Devices: the process-wide registry that gives every open of one spec the
 * same reference-counted device, the public open/close/info calls, and the
 * per-thread counters behind blkring_dev_info().
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blkdev.h"
#include "lib/error.h"

/* Recursive: a volume's open opens its legs through blkring_dev_open(). */
static pthread_mutex_t registry_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* Buckets of open devices by canonical spec: a volume's load looks up each
 * of its legs, and one list made a table of 10,000 legs a quadratic
 * walk. */
#define REGISTRY_BUCKETS 1024
static struct blkring_dev *registry[REGISTRY_BUCKETS];

/* The default limits a device starts with, as Linux's defaults. */
#define BLK_SAFE_MAX_SECTORS 255

struct blkring_dev *blkring__dev_alloc(const struct blkring_dev_ops *ops)
{
	struct blkring_dev *dev = aligned_alloc(CACHELINE, sizeof(*dev));

	if (!dev)
		return NULL;
	memset(dev, 0, sizeof(*dev));
	dev->ops = ops;
	dev->limits.logical_block_size = SECTOR_SIZE;
	dev->limits.physical_block_size = SECTOR_SIZE;
	dev->limits.max_sectors = BLK_SAFE_MAX_SECTORS;
	dev->limits.discard_granularity = SECTOR_SIZE;
	atomic_init(&dev->refs, 1);
	atomic_init(&dev->pins, 1); /* the opens' */
	return dev;
}

void blkring__dev_free(struct blkring_dev *dev)
{
	blkring__hctxs_exit(dev);
	free(dev->spec);
	free(dev);
}

static void dev_destroy(struct blkring_dev *dev)
{
	dev->ops->destroy(dev);
	blkring__dev_free(dev);
}

void blkring__dev_get(struct blkring_dev *dev)
{
	atomic_fetch_add_explicit(&dev->refs, 1, memory_order_relaxed);
}

unsigned blkring__dev_inflight(struct blkring_dev *dev)
{
	unsigned n = 0;

	for (unsigned i = 0; dev->hctxs && i < dev->nr_hw_queues + dev->nr_poll_queues; i++)
		n += atomic_load(&dev->hctxs[i].inflight) + atomic_load(&dev->hctxs[i].nr_waiting);
	return n;
}

/* ---- canonical specs: the registry key ---- */

static int cmp_kv(const void *a, const void *b)
{
	return strcmp(((const struct blkring__spec_kv *)a)->key,
	              ((const struct blkring__spec_kv *)b)->key);
}

/*
 * Relative paths become absolute, resolved through links.  A path that does
 * not exist yet (a file size= will create) resolves its directory, so the
 * name it gets is the one realpath() gives once the file exists.
 */
static char *absolute_path(const char *path)
{
	char *abs = realpath(path, NULL), *copy, *dir;
	const char *base;

	if (abs)
		return abs;
	base = strrchr(path, '/');
	copy = strndup(path, base ? (size_t)(base - path) : 0);
	if (!copy)
		return NULL;
	dir = realpath(base ? (*copy ? copy : "/") : ".", NULL);
	free(copy);
	if (!dir)
		return strdup(path); /* opening it fails and says why */
	if (asprintf(&abs, "%s/%s", strcmp(dir, "/") ? dir : "", base ? base + 1 : path) < 0)
		abs = NULL;
	free(dir);
	return abs;
}

/* TYPE:[ARG,]k=v,... with keys sorted, so equal specs compare equal. */
static char *canonical_spec(const struct blkring_spec *spec)
{
	struct blkring_spec sorted = *spec; /* the driver's messages keep the user's order */
	int len;
	char *key;

	qsort(sorted.kv, sorted.nr, sizeof(sorted.kv[0]), cmp_kv);
	len = blkring_spec_format(&sorted, NULL, 0);
	key = len < 0 ? NULL : malloc((size_t)len + 1);
	if (key)
		blkring_spec_format(&sorted, key, (size_t)len + 1);
	return key;
}

/* ---- the registry ---- */

/* FNV-1a over the canonical spec. */
static struct blkring_dev **registry_bucket(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return &registry[h % REGISTRY_BUCKETS];
}

static struct blkring_dev *registry_find(const char *key)
{
	for (struct blkring_dev *dev = *registry_bucket(key); dev; dev = dev->registry_next)
		if (!strcmp(dev->spec, key))
			return dev;
	return NULL;
}

static void registry_add(struct blkring_dev *dev)
{
	struct blkring_dev **bucket = registry_bucket(dev->spec);

	dev->registry_next = *bucket;
	*bucket = dev;
}

static void registry_del(struct blkring_dev *dev)
{
	for (struct blkring_dev **p = registry_bucket(dev->spec); *p; p = &(*p)->registry_next) {
		if (*p == dev) {
			*p = dev->registry_next;
			return;
		}
	}
}

/* Linux's limit checks: whole logical blocks, and room for one block. */
static int check_limits(struct blkring_dev *dev)
{
	struct blkring_limits *lim = &dev->limits;
	uint32_t lbs_sectors = lim->logical_block_size >> SECTOR_SHIFT;

	lim->max_sectors -= lim->max_sectors % lbs_sectors;
	lim->max_discard_sectors -= lim->max_discard_sectors % lbs_sectors;
	lim->max_write_zeroes_sectors -= lim->max_write_zeroes_sectors % lbs_sectors;
	blkring__io_hints_validate(lim);
	if (!lim->max_sectors ||
	    (!lim->max_discard_sectors && (dev->features & BLKRING_FEAT_DISCARD)) ||
	    (!lim->max_write_zeroes_sectors && (dev->features & BLKRING_FEAT_WRITE_ZEROES)))
		return blkring__error(-EINVAL, "%s: a per-I/O limit is below one block (%u bytes)",
		                      dev->ops->name, lim->logical_block_size);
	return 0;
}

static int open_new(const struct blkring_driver *drv, struct blkring_spec *spec, char *key,
                    struct blkring_dev **devp)
{
	struct blkring_dev *dev = NULL;
	int ret = drv->open(spec, &dev);

	if (!ret)
		ret = check_limits(dev);
	if (ret) {
		if (dev)
			dev_destroy(dev);
		free(key);
		return ret;
	}
	dev->spec = key;
	registry_add(dev);
	*devp = dev;
	return 0;
}

/* Checks the first item; a path becomes absolute in *abs, which the spec
 * then points at (the caller frees it). */
static int check_arg(struct blkring_spec *spec, char **abs)
{
	const struct blkring_driver *drv = spec->drv;

	if (drv->arg == SPEC_ARG_NONE)
		return 0;
	if (!spec->arg || !*spec->arg)
		return blkring__error(-EINVAL, "%s: expected %s:%s[,key=value...]", spec->type,
		                      spec->type, drv->arg_name);
	if (drv->arg == SPEC_ARG_OPAQUE)
		return 0;
	*abs = absolute_path(spec->arg);
	if (!*abs)
		return -ENOMEM;
	spec->arg = *abs;
	return 0;
}

static int lookup_or_open(const struct blkring_driver *drv, struct blkring_spec *spec,
                          struct blkring_dev **devp)
{
	char *key = canonical_spec(spec);
	struct blkring_dev *dev;
	int ret = 0;

	if (!key)
		return -ENOMEM;
	pthread_mutex_lock(&registry_lock);
	dev = registry_find(key);
	if (dev) {
		blkring__dev_get(dev);
		*devp = dev;
		free(key);
	} else {
		ret = open_new(drv, spec, key, devp);
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

int blkring_dev_open(const char *text, struct blkring_dev **devp)
{
	struct blkring_spec spec;
	char *abs = NULL;
	int ret;

	if (!devp)
		return -EINVAL;
	blkring__clear_error();
	ret = blkring__spec_parse(text, &spec) ?: check_arg(&spec, &abs) ?:
	      lookup_or_open(spec.drv, &spec, devp);
	free(abs);
	blkring__spec_free(&spec);
	return ret;
}

/* The spec's own text, read again: an open marks keys used and makes the
 * path absolute, and the application's spec stays as it was. */
int blkring_dev_open_spec(const struct blkring_spec *spec, struct blkring_dev **devp)
{
	int len = blkring_spec_format(spec, NULL, 0);
	char *text;
	int ret;

	if (len < 0 || !devp)
		return -EINVAL;
	text = malloc((size_t)len + 1);
	if (!text)
		return -ENOMEM;
	blkring_spec_format(spec, text, (size_t)len + 1);
	ret = blkring_dev_open(text, devp);
	free(text);
	return ret;
}

void blkring__dev_pin(struct blkring_dev *dev)
{
	atomic_fetch_add_explicit(&dev->pins, 1, memory_order_relaxed);
}

/* No lock: a ring's batch drops a pin at its end.  Whoever drops the last
 * one (the last close drops the opens' pin) is the only one left. */
void blkring__dev_unpin(struct blkring_dev *dev)
{
	if (atomic_fetch_sub_explicit(&dev->pins, 1, memory_order_acq_rel) == 1)
		dev_destroy(dev);
}

/* Drops an open; true when it was the last (the registry lock held). */
static bool put_locked(struct blkring_dev *dev)
{
	/* One atomic step: blkring__dev_get() adds without the lock (a
	 * holder's reference), and a lost add would free a device in use. */
	if (atomic_fetch_sub(&dev->refs, 1) != 1)
		return false;
	registry_del(dev);
	return true;
}

int blkring_dev_close(struct blkring_dev *dev)
{
	bool last;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&registry_lock);
	if (atomic_load(&dev->refs) == 1 &&
	    (atomic_load(&dev->ring_refs) > 0 || blkring__dev_inflight(dev))) {
		pthread_mutex_unlock(&registry_lock);
		return -EBUSY;
	}
	last = put_locked(dev);
	pthread_mutex_unlock(&registry_lock);
	if (last)
		blkring__dev_unpin(dev);
	return 0;
}

void blkring__dev_put(struct blkring_dev *dev)
{
	bool last;

	pthread_mutex_lock(&registry_lock);
	last = put_locked(dev);
	pthread_mutex_unlock(&registry_lock);
	if (last)
		blkring__dev_unpin(dev);
}

/* ---- counters ---- */

/*
 * Each thread that ends I/O owns one of BLKRING_STATS_SHARDS shards for as
 * long as it lives, so its counters are updated with a plain load and
 * store (no lock prefix).  Threads beyond the shard count share the last
 * shard with atomic adds.
 */
_Thread_local unsigned blkring__stats_shard __attribute__((tls_model("initial-exec"))) = UINT_MAX;

_Thread_local volatile unsigned blkring__irqs __attribute__((tls_model("initial-exec")));

static _Atomic uint32_t shards_taken;
static pthread_key_t shard_key;
static pthread_once_t shard_once = PTHREAD_ONCE_INIT;

/* As dm-inflight.c's slots: the thread forgets its shard first, so an I/O
 * it still ends from a later destructor counts with atomic adds on the
 * shared shard, not with plain adds on one another thread may own. */
static void shard_release(void *arg)
{
	uint32_t bit = 1U << ((uintptr_t)arg - 1);

	blkring__stats_shard = BLKRING_STATS_SHARED;
	atomic_fetch_and_explicit(&shards_taken, ~bit, memory_order_release);
}

static void shard_key_init(void)
{
	pthread_key_create(&shard_key, shard_release);
}

static unsigned shard_claim(void)
{
	uint32_t taken = atomic_load_explicit(&shards_taken, memory_order_relaxed);

	pthread_once(&shard_once, shard_key_init);
	for (unsigned i = 0; i < BLKRING_STATS_SHARED; i++) {
		if (taken & (1U << i))
			continue;
		if (atomic_compare_exchange_strong_explicit(&shards_taken, &taken, taken | 1U << i,
		                                            memory_order_acquire,
		                                            memory_order_relaxed)) {
			pthread_setspecific(shard_key, (void *)(uintptr_t)(i + 1));
			return i;
		}
		i = UINT_MAX; /* the mask changed: look again from 0 */
	}
	return BLKRING_STATS_SHARED;
}

static inline void stat_add(_Atomic uint64_t *c, uint64_t v, bool owned)
{
	if (owned)
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
		                      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

void blkring__dev_account(struct blkring_dev *dev, unsigned op, uint64_t bytes, int status)
{
	struct blkring_dev_stats *st;
	bool owned;

	if (unlikely(blkring__stats_shard > BLKRING_STATS_SHARED))
		blkring__stats_shard = shard_claim();
	owned = blkring__stats_shard != BLKRING_STATS_SHARED;
	st = &dev->stats[blkring__stats_shard];
	if (unlikely(status)) {
		stat_add(&st->errors[op], 1, owned);
		return;
	}
	stat_add(&st->done[op].ios, 1, owned);
	stat_add(&st->done[op].bytes, bytes, owned);
}

/* The counters are kept by REQ_OP_*; blkring_dev_info() reports them by
 * BLKRING_DIR_*. */
static const uint8_t op_dir[REQ_OP_NR] = {
    [REQ_OP_READ] = BLKRING_DIR_READ,
    [REQ_OP_WRITE] = BLKRING_DIR_WRITE,
    [REQ_OP_FLUSH] = BLKRING_DIR_FLUSH,
    [REQ_OP_DISCARD] = BLKRING_DIR_DISCARD,
    [REQ_OP_WRITE_ZEROES] = BLKRING_DIR_WRITE_ZEROES,
};

/* Linux's blk_validate_limits: io_min at least a physical block, io_opt
 * rounded down to whole ones (a DMA limit may have set it). */
void blkring__io_hints_validate(struct blkring_limits *lim)
{
	if (lim->io_min < lim->physical_block_size)
		lim->io_min = lim->physical_block_size;
	lim->io_opt -= lim->io_opt % lim->physical_block_size;
}

int blkring_dev_io_hints(struct blkring_dev *dev, uint32_t *io_min, uint32_t *io_opt)
{
	if (!dev || !io_min || !io_opt)
		return -EINVAL;
	*io_min = READ_ONCE(dev->limits.io_min);
	*io_opt = READ_ONCE(dev->limits.io_opt);
	return 0;
}

int blkring_dev_info(struct blkring_dev *dev, struct blkring_dev_info *info)
{
	if (!dev || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->type = dev->ops->name;
	info->spec = dev->spec;
	info->size = READ_ONCE(dev->size);
	info->logical_block_size = READ_ONCE(dev->limits.logical_block_size);
	info->physical_block_size = READ_ONCE(dev->limits.physical_block_size);
	info->max_sectors = READ_ONCE(dev->limits.max_sectors);
	info->max_discard_sectors = READ_ONCE(dev->limits.max_discard_sectors);
	info->discard_granularity = READ_ONCE(dev->limits.discard_granularity);
	info->max_write_zeroes_sectors = READ_ONCE(dev->limits.max_write_zeroes_sectors);
	info->features = READ_ONCE(dev->features);
	info->nr_hw_queues = dev->nr_hw_queues;
	info->nr_poll_queues = dev->nr_poll_queues;
	info->queue_depth = dev->hctxs ? dev->hctxs[0].depth : 0;
	info->read_only = READ_ONCE(dev->read_only);
	for (unsigned s = 0; s < BLKRING_STATS_SHARDS; s++) {
		const struct blkring_dev_stats *st = &dev->stats[s];

		for (unsigned op = 0; op < REQ_OP_NR; op++) {
			unsigned d = op_dir[op];

			info->ios[d] +=
			    atomic_load_explicit(&st->done[op].ios, memory_order_relaxed);
			info->bytes[d] +=
			    atomic_load_explicit(&st->done[op].bytes, memory_order_relaxed);
			info->errors[d] +=
			    atomic_load_explicit(&st->errors[op], memory_order_relaxed);
		}
	}
	return 0;
}
