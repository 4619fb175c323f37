#!/usr/bin/env bash
# The main job behind `make run`: a short bench on a built-in null device
# (4k random reads through a ring, the block layer and the null driver,
# iodepth 128, latency tracking on), printed as fio prints it.  (The report
# issue grows this into the seed suite.)
set -euo pipefail
O=${1:-build}
exec "$O/blkring" bench --name=null-randread --filename=null:irqmode=none --rw=randread \
	--bs=4k --iodepth=128 --iodepth_batch_submit=32 --runtime=2 --time_based
