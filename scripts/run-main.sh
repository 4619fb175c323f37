#!/usr/bin/env bash
# The main job behind `make run`: the seed suite (bench/seeds/run-all.sh) on
# built-in null devices, and on a loop device for seed 000 when run as root:
# prints the three seed tables, the seeds' figures beside ours, and writes
# O/report/seeds.md, seeds.json and the plots seed-000.png, seed-001.png,
# seed-002.png.  `make run QUICK=1` runs fewer depths and shorter runs.
set -euo pipefail
O=${1:-build}
t0=$(date +%s)
status=0
bench/seeds/run-all.sh "$O" || status=$?
files=$(cd "$O/report" && ls seeds.md seeds.json seed-00?.png 2>/dev/null | tr '\n' ' ' || true)
echo "seeds: $(($(date +%s) - t0)) s in all$([[ ${QUICK:-0} == 1 ]] && echo ' (QUICK)');" \
	"in $O/report/: ${files}and each script's output in seed-NNN.log" >&2
exit "$status"
