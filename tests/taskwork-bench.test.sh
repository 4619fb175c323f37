#!/usr/bin/env bash
# The bench's task-work options on null devices: --sqthread_poll=1 (the
# reaper watches the CQ ring, as fio's engine does, and must still get every
# CQE, also at the end of a run), with --tw_prio and --tw_issue, and
# --taskrun=defer; the combinations Linux refuses; the ring limits checked
# before a run (iodepth, sqthread_poll_cpu).
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
expect_err sqpoll_defer_refused 2 "taskrun=defer cannot be combined with sqthread_poll=1" \
	--filename=$DEV --sqthread_poll=1 --taskrun=defer "${SHORT[@]}"

# Ring limits are checked before anything runs (exit 2, no report), naming
# the option: the ring's most entries, and an SQ thread CPU that cannot be used.
expect_err iodepth_above_ring 2 "job 'a': option 'iodepth': 32769 is out of range for ioengine=blkring (1 to 32768" \
	--filename=$DEV --iodepth=32769 "${SHORT[@]}"
check iodepth_above_ring_no_report '[[ ! -s $T/out ]]' "stdout: $(head -c 200 "$T/out")"
# The last CPU number a set holds, which no machine here has; and the first
# CPU this process may use.
expect_err sqpoll_cpu_unusable 2 "job 'a': sqthread_poll_cpu=1023: no CPU this process may use" \
	--filename=$DEV --sqthread_poll=1 --sqthread_poll_cpu=1023 "${SHORT[@]}"
check sqpoll_cpu_unusable_no_report '[[ ! -s $T/out ]]' "stdout: $(head -c 200 "$T/out")"
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
expect_json sqpoll_cpu "$DONE" --filename=$DEV --sqthread_poll=1 --sqthread_poll_cpu="$cpu" "${SHORT[@]}"
# Without an SQ thread the CPU is ignored, as other ignored options are: with a note.
expect_err sqpoll_cpu_alone_note 0 "note: job 'a': sqthread_poll_cpu=0 has no effect without sqthread_poll=1" \
	--filename=$DEV --sqthread_poll_cpu=0 "${SHORT[@]}"
# A sync job has no ring: each ring option gets a note.
expect_err ring_option_sync_note 0 "note: job 'a': tw_prio sets up a ring; ioengine=sync has none" \
	--filename=$DEV --ioengine=sync --tw_prio=1 "${SHORT[@]}"
