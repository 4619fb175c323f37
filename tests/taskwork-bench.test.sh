#!/usr/bin/env bash
# The bench's task-work options on null devices: --sqthread_poll=1 (the
# reaper watches the CQ ring, as fio's engine does, and must still get every
# CQE, also at the end of a run), with --tw_prio and --tw_issue, and
# --taskrun=defer; the combinations Linux refuses.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

SHORT=(--name=a --rw=randread --bs=4k --runtime=100ms --time_based)
DEV=null:size=16M,irqmode=softirq,hw_queue_depth=4096
# Reads done, and the run ended: the reaper got every CQE.
DONE="j = d['jobs'][0]
assert j['error'] == 0 and j['read']['total_ios'] > 0"

for depth in 1 64 2048; do
	expect_json "sqpoll_d$depth" "$DONE" --filename=$DEV --iodepth=$depth --sqthread_poll=1 "${SHORT[@]}"
	expect_json "sqpoll_prio_issue_d$depth" "$DONE" --filename=$DEV --iodepth=$depth --sqthread_poll=1 \
		--tw_prio=1 --tw_issue=1 "${SHORT[@]}"
	expect_json "defer_d$depth" "$DONE" --filename=$DEV --iodepth=$depth --taskrun=defer "${SHORT[@]}"
done
expect_err sqpoll_defer_refused 1 "DEFER_TASKRUN cannot be combined with SQPOLL" \
	--filename=$DEV --sqthread_poll=1 --taskrun=defer "${SHORT[@]}"
