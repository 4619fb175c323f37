#!/usr/bin/env bash
# Seed 000's table (Jens Axboe's null_blk figures for async discard, from
# ../../../../shared/reference/mechanisms.md section 1) next to blkring's own
# on a null device (irqmode=softirq, memory_backed=1, discard=1): queue depth
# 64, random trims of 4k and 1M; sync = 64 threads of blocking discards,
# async = one ring with 64 discard commands in flight.  Prints IOPS, average
# and maximum latency, and the async/sync IOPS ratio against the seed's
# (targets: >= 9.40 at 4k, >= 1.68 at 1M, with lower average and maximum
# latency on the async side).
#
#   bench/seeds/discard/run.sh [ROWS.json]
#
# Each configuration runs RUNS times (3; QUICK=1: once), alternating, for
# SECS seconds (4; QUICK=1: 2); the run with the median IOPS is reported.
# ROWS.json gets the table as JSON rows (one object per configuration and
# ratio).  BLKRING names the binary (default build/blkring).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${BLKRING:-$root/build/blkring}
ROWS=${1:-}
if [[ ${QUICK:-0} == 1 ]]; then
	RUNS=1 SECS=2
else
	RUNS=3 SECS=4
fi
[[ -x $B ]] || { echo "run.sh: $B is missing: run make first" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# One run: prints "IOPS LAT_AVG_US LAT_MAX_US CTX_PER_IO" of the trim
# direction; CTX_PER_IO is the job threads' context switches per trim.
run_one() { # jobfile
	"$B" bench --output-format=json --runtime="$SECS" "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
t = j["trim"]
print("%.0f %.1f %.1f %.3f" % (t["iops"], t["lat_ns"]["mean"] / 1e3, t["lat_ns"]["max"] / 1e3,
                               j["ctx"] / max(t["total_ios"], 1)))'
}

configs=(sync-4k async-4k sync-1m async-1m)
for ((r = 0; r < RUNS; r++)); do
	for c in "${configs[@]}"; do
		run_one "$here/$c.fio" >>"$T/$c"
	done
done

python3 - "$T" "$RUNS" "$SECS" "$ROWS" "$(nproc)" <<'PY'
import json, sys
tmp, runs, secs, rows_path, cpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
# The seed's null_blk figures: IOPS, lat avg us, lat max us.
seed = {"sync-4k": (144e3, 444, 20314), "async-4k": (1353e3, 47, 595),
        "sync-1m": (56e3, 1136, 21031), "async-1m": (94e3, 680, 760)}
targets = {"4k": 9.40, "1m": 1.68}
ours, all_iops = {}, {}
for c in seed:
    res = [tuple(map(float, l.split())) for l in open("%s/%s" % (tmp, c))]
    res.sort()
    ours[c] = res[len(res) // 2]
    all_iops[c] = [round(r[0]) for r in res]

def k(v):
    return "%.0fK" % (v / 1e3)

spec = "null:irqmode=softirq,memory_backed=1,discard=1,size=64G"
print("seed 000: async discard, qd 64, random trims, on %s" % spec)
print("runs: %d x %d s each, median by IOPS; %d CPUs" % (runs, secs, cpus))
print()
print("%-6s %-4s | %8s %10s %10s | %8s %10s %10s %7s" %
      ("type", "size", "seed", "avg us", "max us", "blkring", "avg us", "max us", "ctx/IO"))
rows, ok = [], True
for bs in ("4k", "1m"):
    for side in ("sync", "async"):
        c = "%s-%s" % (side, bs)
        s, o = seed[c], ours[c]
        print("%-6s %-4s | %8s %10.0f %10.0f | %8s %10.1f %10.1f %7.3f" %
              (side, bs.upper() if bs == "1m" else bs, k(s[0]), s[1], s[2], k(o[0]), o[1], o[2],
               o[3]))
        rows.append({"seed": "000", "device": "null", "spec": spec, "type": side, "bs": bs,
                     "iops": o[0], "lat_avg_us": o[1], "lat_max_us": o[2], "ctx_per_io": o[3],
                     "seed_iops": s[0], "seed_lat_avg_us": s[1], "seed_lat_max_us": s[2],
                     "runs_iops": all_iops[c], "runtime_s": secs})
    a, y = ours["async-" + bs], ours["sync-" + bs]
    ratio, seed_ratio = a[0] / y[0], seed["async-" + bs][0] / seed["sync-" + bs][0]
    met = ratio >= targets[bs] and a[1] < y[1] and a[2] < y[2]
    ok = ok and met
    print("%-11s | %8.2f %21s | %8.2f   target >= %.2f, lower avg and max: %s" %
          ("async/sync", seed_ratio, "", ratio, targets[bs], "met" if met else "NOT met"))
    rows.append({"seed": "000", "device": "null", "type": "ratio", "bs": bs, "ratio": ratio,
                 "seed_ratio": seed_ratio, "target": targets[bs],
                 "lower_lat_avg": a[1] < y[1], "lower_lat_max": a[2] < y[2], "met": met})
if rows_path:
    with open(rows_path, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
PY
