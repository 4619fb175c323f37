// SPDX-License-Identifier: MIT
/*
 * Block device commands on rings (Linux's block/ioctl.c blkdev_uring_cmd):
 * decodes a BLKRING_OP_URING_CMD and calls the blk-lib.c primitive it
 * names, which checks it in Linux's order with nothing issued when a check
 * fails.
 *
 * The first issue is non-blocking: a range that needs more than one bio
 * answers -EAGAIN before anything is submitted, and the ring re-issues the
 * command from its worker pool, where children are allocated and chained
 * to the request's own bio (one completion, the first error wins).
 */
#include <errno.h>

#include "blkdev.h"

#define ZERO_FLAGS (BLKRING_ZERO_NOUNMAP | BLKRING_ZERO_NOFALLBACK)

int blkring__blkdev_uring_cmd(const struct blkring_sqe *sqe, struct blkring_bio *bio,
                              unsigned issue_flags)
{
	uint32_t cmd_op = sqe->cmd_op;
	uint32_t flags_ok = cmd_op == BLKRING_CMD_WRITE_ZEROES ? ZERO_FLAGS : 0;
	bool nowait = issue_flags & BLKRING_ISSUE_NONBLOCK;

	if (sqe->ioprio || sqe->__pad1 || sqe->len || (sqe->cmd_flags & ~flags_ok) ||
	    sqe->file_index || sqe->buf_index || sqe->personality || sqe->__pad2[0])
		return -EINVAL;
	switch (cmd_op) {
	case BLKRING_CMD_DISCARD:
		return blkring__blkdev_issue_discard(bio, sqe->addr, sqe->addr3, nowait);
	case BLKRING_CMD_WRITE_ZEROES:
		return blkring__blkdev_issue_zeroout(bio, sqe->addr, sqe->addr3, sqe->cmd_flags,
		                                     nowait);
	}
	return -EINVAL;
}
