// SPDX-License-Identifier: MIT
/*
 * The registered device table: sqe->fd indexes it, like io_uring's fixed
 * files.  Each registration counts in the device's ring_refs, which the
 * block layer checks before a device's last close.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/error.h"
#include "ring.h"

static void slot_set(struct blkring__ctx *ctx, unsigned i, struct blkring_dev *dev)
{
	if (ctx->devs[i])
		atomic_fetch_sub(&ctx->devs[i]->ring_refs, 1);
	ctx->devs[i] = dev;
	if (dev)
		atomic_fetch_add(&dev->ring_refs, 1);
}

/* devs NULL: a table of n empty slots (liburing's register_files_sparse). */
static int devices_register(struct blkring__ctx *ctx, struct blkring_dev *const *devs, unsigned n)
{
	if (ctx->devs)
		return blkring__error(-EBUSY, "register devices: the ring already has a table");
	if (!n || n > BLKRING_MAX_DEVICES)
		return blkring__error(-EINVAL, "register devices: %u devices: expected 1 to %u", n,
		                      BLKRING_MAX_DEVICES);
	ctx->devs = calloc(n, sizeof(*ctx->devs));
	if (!ctx->devs)
		return -ENOMEM;
	ctx->nr_devs = n;
	for (unsigned i = 0; devs && i < n; i++)
		slot_set(ctx, i, devs[i]);
	return 0;
}

/* Requests already issued keep the device they named; new SQEs see the
 * new slot.  Returns how many slots changed. */
static int devices_update(struct blkring__ctx *ctx, unsigned off, struct blkring_dev *const *devs,
                          unsigned n)
{
	if (!ctx->devs)
		return -ENXIO;
	if (!devs || off > ctx->nr_devs || n > ctx->nr_devs - off)
		return blkring__error(-EINVAL, "update devices: slots %u to %u: the table has %u",
		                      off, off + n, ctx->nr_devs);
	for (unsigned i = 0; i < n; i++)
		slot_set(ctx, off + i, devs[i]);
	return (int)n;
}

/* The drivers' per-ring queues refer to the devices: they go first. */
void blkring__devices_drop(struct blkring__ctx *ctx)
{
	blkring__ioc_drop_queues(&ctx->ioc);
	for (unsigned i = 0; i < ctx->nr_devs; i++)
		if (ctx->devs[i])
			atomic_fetch_sub(&ctx->devs[i]->ring_refs, 1);
	free(ctx->devs);
	ctx->devs = NULL;
	ctx->nr_devs = 0;
}

static int devices_unregister(struct blkring__ctx *ctx)
{
	if (!ctx->devs)
		return -ENXIO;
	blkring__enter(ctx);
	if (ctx->nr_seq != ctx->nr_done)
		return blkring__error(-EBUSY, "unregister devices: %u requests in flight",
		                      ctx->nr_seq - ctx->nr_done);
	blkring__devices_drop(ctx);
	return 0;
}

/* Only the owner changes what is registered; on an SQPOLL ring the
 * application's thread, with the SQ thread (which reads it) parked. */
int blkring__register_begin(struct blkring__ctx *ctx)
{
	if (ctx->sq)
		return blkring__sq_park(ctx);
	return blkring__is_owner(ctx) ? 0 : -EEXIST;
}

void blkring__register_end(struct blkring__ctx *ctx)
{
	if (ctx->sq)
		blkring__sq_unpark(ctx);
}

int blkring_register_devices(struct blkring *ring, struct blkring_dev *const *devs, unsigned n)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = devs ? devices_register(ctx, devs, n)
	           : blkring__error(-EINVAL, "register devices: no devices given");
	blkring__register_end(ctx);
	return ret;
}

int blkring_register_devices_sparse(struct blkring *ring, unsigned n)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = devices_register(ctx, NULL, n);
	blkring__register_end(ctx);
	return ret;
}

int blkring_register_devices_update(struct blkring *ring, unsigned off,
                                    struct blkring_dev *const *devs, unsigned n)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = devices_update(ctx, off, devs, n);
	blkring__register_end(ctx);
	return ret;
}

int blkring_unregister_devices(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret = blkring__register_begin(ctx);

	if (ret)
		return ret;
	ret = devices_unregister(ctx);
	blkring__register_end(ctx);
	return ret;
}

/* ---- the probe ---- */

struct blkring_probe *blkring_get_probe(void)
{
	struct blkring_probe *p =
	    calloc(1, sizeof(*p) + BLKRING_OP_LAST * sizeof(struct blkring_probe_op));

	if (!p)
		return NULL;
	p->last_op = BLKRING_OP_LAST - 1;
	p->ops_len = BLKRING_OP_LAST;
	for (unsigned op = 0; op < BLKRING_OP_LAST; op++) {
		p->ops[op].op = (uint8_t)op;
		if (blkring__ops[op].prep)
			p->ops[op].flags = BLKRING_OP_SUPPORTED;
	}
	return p;
}

/* Every ring takes every opcode the library has. */
struct blkring_probe *blkring_get_probe_ring(struct blkring *ring)
{
	return ring && ring->ctx ? blkring_get_probe() : NULL;
}

void blkring_free_probe(struct blkring_probe *probe)
{
	free(probe);
}
