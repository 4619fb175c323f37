// SPDX-License-Identifier: MIT
/*
 * The volume control calls (Linux's dm-ioctl.c role): create, load an
 * inactive table, suspend, resume (swap in what was loaded and replay the
 * held I/O), describe.  One control call at a time per volume; dm.c does
 * the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dm.h"
#include "lib/error.h"

static int dm_volume_of(struct blkring_dev *dev, struct dm_volume **vp)
{
	if (!dev || !blkring__dm_is_volume(dev))
		return blkring__error(-EINVAL, "not a volume (a table: device)");
	*vp = dev->private;
	return 0;
}

int blkring_vol_create(const char *table_text, const char *base_dir, struct blkring_dev **devp)
{
	static _Atomic unsigned nr_inline;
	char *name;
	int ret;

	if (!table_text || !devp)
		return -EINVAL;
	blkring__clear_error();
	/* Not in the registry: no spec opens it, so it only needs a name. */
	if (asprintf(&name, "table:<inline %u>", atomic_fetch_add(&nr_inline, 1)) < 0)
		return -ENOMEM;
	ret = blkring__dm_create(table_text, NULL, base_dir, false, DM_POLL_COOKIE, devp);
	if (ret) {
		free(name);
		return ret;
	}
	(*devp)->spec = name;
	return 0;
}

int blkring_vol_load(struct blkring_dev *dev, const char *table_text, const char *base_dir)
{
	struct dm_table *t, *old;
	struct dm_volume *v = NULL;
	int ret = dm_volume_of(dev, &v);

	if (ret || !table_text)
		return ret ?: -EINVAL;
	blkring__clear_error();
	pthread_mutex_lock(&v->ctl);
	ret = blkring__dm_table_create(table_text, NULL, base_dir, dev, &t);
	if (!ret) {
		blkring__dm_lock();
		old = v->inactive;
		v->inactive = t;
		blkring__dm_unlock();
		if (old)
			blkring__dm_table_destroy(old);
	}
	pthread_mutex_unlock(&v->ctl);
	return ret;
}

int blkring_vol_suspend(struct blkring_dev *dev)
{
	struct dm_volume *v = NULL;
	int ret = dm_volume_of(dev, &v);

	if (ret)
		return ret;
	pthread_mutex_lock(&v->ctl);
	if (atomic_load(&v->inflight.blocked))
		ret = blkring__error(-EINVAL, "%s: already suspended", dev->spec);
	else
		blkring__dm_suspend(v);
	pthread_mutex_unlock(&v->ctl);
	return ret;
}

int blkring_vol_resume(struct blkring_dev *dev)
{
	struct dm_volume *v = NULL;
	int ret = dm_volume_of(dev, &v);

	if (ret)
		return ret;
	pthread_mutex_lock(&v->ctl);
	if (v->inactive) {
		if (!atomic_load(&v->inflight.blocked))
			blkring__dm_suspend(v);
		blkring__dm_swap(v);
	}
	if (atomic_load(&v->inflight.blocked))
		blkring__dm_replay(v);
	pthread_mutex_unlock(&v->ctl);
	return 0;
}

int blkring_vol_describe(struct blkring_dev *dev, blkring_vol_target_fn fn, void *arg)
{
	struct dm_volume *v = NULL;
	int ret = dm_volume_of(dev, &v);

	if (ret || !fn)
		return ret ?: -EINVAL;
	blkring__dm_lock();
	ret = blkring__dm_table_describe(atomic_load(&v->live), fn, arg);
	blkring__dm_unlock();
	return ret;
}
