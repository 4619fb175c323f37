#!/usr/bin/env bash
# SIGINT and SIGTERM stop the jobs, wait for in-flight I/O and print the
# results so far; later groups do not start; the run exits 128, as fio's.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

# Starts a 30 s bench, waits until its threads run (the signals are
# blocked by then), lets it measure a little, then sends the signal.
interrupt() {
	local sig=$1 pid i
	shift
	"$B" bench "$@" >"$T/out" 2>"$T/err" &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		[[ $(ls /proc/$pid/task 2>/dev/null | wc -l) -ge 2 ]] && break
		sleep 0.02
	done
	sleep 0.2
	kill -"$sig" $pid
	wait $pid
}

interrupt INT --output-format=json --name=a --filename=null: --rw=randread --iodepth=8 \
	--runtime=30 --time_based --name=later --stonewall --filename=null: --runtime=30 \
	--time_based
rc=$?
if [[ $rc == 128 ]] && grep -q "terminating on signal 2" "$T/err" && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert [j['jobname'] for j in d['jobs']] == ['a'], 'a later group ran'
r = d['jobs'][0]['read']
assert 0 < r['runtime'] < 30000 and r['total_ios'] > 0, r
assert d['jobs'][0]['error'] == 0
" "$T/out"; then
	pass sigint_partial_results
else
	fail sigint_partial_results "exit $rc: $(head -c 300 "$T/err")"
fi

interrupt TERM --name=t --filename=null:irqmode=softirq --rw=randwrite --iodepth=32 \
	--runtime=30 --time_based --ioengine=blkring
rc=$?
if [[ $rc == 128 ]] && grep -q "terminating on signal 15" "$T/err" &&
	grep -q "^  write: IOPS=" "$T/out" && grep -q "^Run status group 0" "$T/out"; then
	pass sigterm_partial_results
else
	fail sigterm_partial_results "exit $rc: $(head -c 300 "$T/err")"
fi

interrupt INT --name=s --filename=null: --ioengine=sync --runtime=30 --time_based
rc=$?
if [[ $rc == 128 ]] && grep -q "^  read: IOPS=" "$T/out"; then
	pass sigint_sync_engine
else
	fail sigint_sync_engine "exit $rc: $(head -c 300 "$T/err")"
fi

# An I/O error as well: 129 (fio adds its failed jobs to the 128).
interrupt INT --name=e --filename=null:size=1M,badblocks=8-15 --rw=randread --runtime=30 --time_based \
	--continue_on_error=all
rc=$?
check sigint_with_io_error '[[ $rc == 129 ]]' "exit $rc: $(head -c 300 "$T/err")"
