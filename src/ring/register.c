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

static int devices_register(struct blkring__ctx *ctx, struct blkring_dev *const *devs, unsigned n)
{
	struct blkring_dev **table;

	if (ctx->devs)
		return blkring__error(-EBUSY, "register devices: the ring already has a table");
	if (!devs || !n || n > BLKRING_MAX_DEVICES)
		return blkring__error(-EINVAL, "register devices: %u devices: expected 1 to %u", n,
		                      BLKRING_MAX_DEVICES);
	table = calloc(n, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		table[i] = devs[i];
		if (devs[i])
			atomic_fetch_add(&devs[i]->ring_refs, 1);
	}
	ctx->devs = table;
	ctx->nr_devs = n;
	return 0;
}

void blkring__devices_drop(struct blkring__ctx *ctx)
{
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

/* An SQPOLL ring's SQ thread reads the table: it is parked while it changes. */
int blkring_register_devices(struct blkring *ring, struct blkring_dev *const *devs, unsigned n)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret;

	if (ctx->sq) {
		ret = blkring__sq_park(ctx);
		if (ret)
			return ret;
		ret = devices_register(ctx, devs, n);
		blkring__sq_unpark(ctx);
		return ret;
	}
	if (!blkring__is_owner(ctx))
		return -EEXIST;
	return devices_register(ctx, devs, n);
}

int blkring_unregister_devices(struct blkring *ring)
{
	struct blkring__ctx *ctx = ring->ctx;
	int ret;

	if (ctx->sq) {
		ret = blkring__sq_park(ctx);
		if (ret)
			return ret;
		ret = devices_unregister(ctx);
		blkring__sq_unpark(ctx);
		return ret;
	}
	if (!blkring__is_owner(ctx))
		return -EEXIST;
	return devices_unregister(ctx);
}
