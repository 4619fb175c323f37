#!/usr/bin/env bash
# The seed suite behind `make run`: each seed's script (bench/seeds/discard,
# poll, taskwork), one after the other, each writing its rows as JSON, then
# report.py, which writes the report and prints the three tables.
#
#   bench/seeds/run-all.sh [BUILD_DIR]        report in BUILD_DIR/report/
#
# env: QUICK=1        fewer depths and shorter runs (the seed scripts' QUICK)
#      SEEDS_RUNTIME  every run this long, without ramp: the shortest suite
#                     that still fills every table (tests; implies QUICK=1)
#      BLKRING        the blkring binary (default BUILD_DIR/blkring)
#      REPORT_DIR     where the report goes (default BUILD_DIR/report)
#
# What each script printed, with its timing, is in REPORT_DIR/seed-NNN.log.
# Exits non-zero when a seed's table is missing or incomplete.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
O=${1:-$here/../../build}
O=$(cd "$O" && pwd)
BLKRING=${BLKRING:-$O/blkring}
[[ $BLKRING == /* ]] || BLKRING=$PWD/$BLKRING
out=${REPORT_DIR:-$O/report}
[[ -n ${SEEDS_RUNTIME:-} ]] && QUICK=1
QUICK=${QUICK:-0}

[[ -x $BLKRING ]] || { echo "seeds: $BLKRING is missing: run make first" >&2; exit 2; }
mkdir -p "$out/raw"
rm -f "$out"/raw/* "$out"/seed-*.log "$out"/seed-*.png "$out"/seed-*.dat "$out"/seeds.md \
	"$out"/seeds.json

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# One seed: NUMBER DIRECTORY.  A script that fails is recorded, not fatal:
# the other tables still get made, and report.py says which is missing.
run_seed() {
	local n=$1 dir=$2 script=$here/$2/run.sh rc=0 t0 ms
	local log=$out/seed-$n.log rows=$out/raw/seed-$n.json
	if [[ ! -f $script ]]; then
		echo "seeds: seed $n: $script is missing" >&2
		record "$n" "$dir" '"missing"' 0
		return
	fi
	echo "seeds: seed $n ($dir)$( ((QUICK)) && echo ', QUICK')..." >&2
	t0=$(now_ms)
	# SEED001_RUNTIME is the poll script's own name for SEEDS_RUNTIME.
	BLKRING=$BLKRING O=$(dirname "$BLKRING") QUICK=$QUICK SEEDS_RUNTIME=${SEEDS_RUNTIME:-} \
		SEED001_RUNTIME=${SEEDS_RUNTIME:-} bash "$script" "$rows" >"$log" 2>&1 || rc=$?
	ms=$(($(now_ms) - t0))
	record "$n" "$dir" "$rc" "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	echo "seeds: seed $n ($dir): exit $rc after $((ms / 1000)) s" >&2
}

record() { # NUMBER DIRECTORY RC SECONDS
	printf '{"seed": "%s", "script": "bench/seeds/%s/run.sh", "rc": %s, "seconds": %s, "log": "%s", "quick": %s}\n' \
		"$1" "$2" "$3" "$4" "seed-$1.log" "$( ((QUICK)) && echo true || echo false)" \
		>>"$out/raw/runs.jsonl"
}

run_seed 000 discard
run_seed 001 poll
run_seed 002 taskwork
python3 "$here/report.py" "$out"
