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

# name, then the bench arguments: exit 0, reads done, none left in flight
# (the run ended, so the reaper got every CQE).
expect_runs() {
	local name=$1 rc
	shift
	timeout 60 "$B" bench --output-format=json "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [[ $rc == 0 ]] && python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
assert j['error'] == 0 and j['read']['total_ios'] > 0
" "$T/out"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -c 300 "$T/err")"
	fi
}

for depth in 1 64 2048; do
	expect_runs "sqpoll_d$depth" --filename=$DEV --iodepth=$depth --sqthread_poll=1 "${SHORT[@]}"
	expect_runs "sqpoll_prio_issue_d$depth" --filename=$DEV --iodepth=$depth --sqthread_poll=1 \
		--tw_prio=1 --tw_issue=1 "${SHORT[@]}"
	expect_runs "defer_d$depth" --filename=$DEV --iodepth=$depth --taskrun=defer "${SHORT[@]}"
done
"$B" bench --filename=$DEV --sqthread_poll=1 --taskrun=defer "${SHORT[@]}" >"$T/out" 2>"$T/err"
rc=$?
check sqpoll_defer_refused '[[ $rc != 0 ]] && grep -q "DEFER_TASKRUN" "$T/err"' \
	"exit $rc, stderr: $(head -c 300 "$T/err")"
