#!/usr/bin/env bash
# Seed 002's table (Hao Xu's priority task-work list, Linux 5.17): average
# latency of SQPOLL 4k random reads with every issue turned into task work,
# with and without the priority list (tw_prio), at depths 1 to 16384, the
# peak IOPS of both, and the same workload with deferred task running
# (taskrun=defer, no SQ thread).  The seed's figures are printed beside ours.
#
# At depths >= 256 the pair runs REPS times, alternating which goes first,
# and the table reports how far the difference stands above the run-to-run
# spread.  Every run is one JSON row in the output file, with the CPU time
# it used: on a shared machine IOPS follow the CPU a run gets, while I/Os
# per CPU second show what the ordering itself costs or saves.
#
#   bench/seeds/taskwork/run.sh [JSON_OUT]     (default: $O/seeds/taskwork.json)
#   env: O=build dir (build)  QUICK=1 (8 depths, short runs)
#        SEEDS_RUNTIME=T (runs of T without ramp)
#        REPS=pair repeats at depths >= 256 (9; QUICK 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
O=${O:-$root/build}
out=${1:-$O/seeds/taskwork.json}

if [[ ${QUICK:-0} == 1 ]]; then
	depths=(1 4 16 64 256 1024 4096 16384)
	runtime=250ms ramp=50ms reps=${REPS:-2}
else
	depths=(1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384)
	runtime=500ms ramp=150ms reps=${REPS:-9}
fi
# SEEDS_RUNTIME (bench/seeds/run-all.sh's knob for tests): every run that long, no ramp.
[[ -n ${SEEDS_RUNTIME:-} ]] && runtime=$SEEDS_RUNTIME ramp=0

[[ -x $O/blkring ]] || { echo "taskwork: $O/blkring is missing: run make first" >&2; exit 2; }
raw=$(mktemp)
jobs=$(mktemp -d)
trap 'rm -rf "$raw" "$jobs"' EXIT
# The job files put the application on CPU 0 and the SQ thread, which the
# device's completions interrupt, on CPU 1; where this process may not use both,
# copies without that.
pinned=0
taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null && pinned=1
((pinned)) || echo "taskwork: CPUs 0 and 1 are not both usable: threads left unplaced" >&2
for f in sqpoll.fio defer.fio; do
	if ((!pinned)); then
		sed -e '/^sqthread_poll_cpu=/d' -e '/^cpus_allowed=/d' \
			"$here/$f" >"$jobs/$f"
	else
		cp "$here/$f" "$jobs/$f"
	fi
done
mkdir -p "$(dirname "$out")"

# One run: CONFIG DEPTH REP JOBFILE [OPTIONS...]; appends its row to $raw.
run() {
	local config=$1 depth=$2 rep=$3 job=$4
	shift 4
	python3 "$here/run_one.py" "$config" "$depth" "$rep" "$O/blkring" bench \
		--output-format=json --iodepth="$depth" --runtime="$runtime" --ramp_time="$ramp" \
		"$@" "$jobs/$job" >>"$raw"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for depth in "${depths[@]}"; do
	n=1
	((depth >= 256)) && n=$reps
	for ((rep = 1; rep <= n; rep++)); do
		if ((rep % 2)); then
			run noprio "$depth" "$rep" sqpoll.fio --tw_prio=0
			run prio "$depth" "$rep" sqpoll.fio --tw_prio=1
		else
			run prio "$depth" "$rep" sqpoll.fio --tw_prio=1
			run noprio "$depth" "$rep" sqpoll.fio --tw_prio=0
		fi
	done
	run defer "$depth" 1 defer.fio
	echo "taskwork: depth $depth done" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 "$here/table.py" "$raw" "$out" "$(nproc)" "$load_before" "$load_after" \
	"${QUICK:-0}" "$runtime"
echo "rows: $out"
