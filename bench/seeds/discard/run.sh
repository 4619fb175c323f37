#!/usr/bin/env bash
# Seed 000's table (Jens Axboe's null_blk figures for async discard, from
# ../../../../shared/reference/mechanisms.md section 1) next to blkring's own
# on a null device (irqmode=softirq, memory_backed=1, discard=1, spin_nsec=50000): queue depth
# 64, random trims of 4k and 1M; sync = 64 threads of blocking discards,
# async = one ring with 64 discard commands in flight.  Prints IOPS, average
# and maximum latency, and the async/sync IOPS ratio against the seed's
# (targets: >= 9.40 at 4k, >= 1.68 at 1M, with lower average and maximum
# latency on the async side).
#
# As root, the same four jobs on a loop device over a sparse 4 GiB file
# (made here, detached on any exit), beside the seed's NVMe figures.  The
# sync side's blocking discards are ioctl(BLKDISCARD) in each thread, as in
# the seed.  The file lives in LOOP_DIR (/dev/shm), so the loop device pays
# the block layer's costs rather than a disk filesystem's journal (punching
# a hole in ext4 on the root disk here cut the async side from about 250K
# to 170K IOPS; LOOP_DIR=/var/tmp measures that instead).  When it
# cannot (not root, no losetup, a build without block-device support), the
# rows say why it was skipped.
#
#   bench/seeds/discard/run.sh [ROWS.json]
#
# Each configuration runs RUNS times (3; QUICK=1: once; the loop device:
# once), alternating, for SECS seconds (4; QUICK=1: 1); the run with the
# median IOPS is reported.  SEEDS_RUNTIME=T (bench/seeds/run-all.sh's knob
# for tests): runs of T.  ROWS.json gets {"rows": [...], "skipped": {...}}:
# one row per device, configuration and ratio, and why a device was not run.
# BLKRING names the binary (default build/blkring).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=${BLKRING:-$root/build/blkring}
ROWS=${1:-}
if [[ ${QUICK:-0} == 1 ]]; then
	RUNS=1 SECS=1
else
	RUNS=3 SECS=4
fi
[[ -n ${SEEDS_RUNTIME:-} ]] && SECS=$SEEDS_RUNTIME
[[ -x $B ]] || { echo "run.sh: $B is missing: run make first" >&2; exit 2; }
T=$(mktemp -d)
IMG=
LOOP=
cleanup() {
	[[ -n $LOOP ]] && losetup -d "$LOOP"
	rm -rf "$T" ${IMG:+"$IMG"}
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One run: prints "IOPS LAT_AVG_US LAT_MAX_US CTX_PER_IO" of the trim
# direction; CTX_PER_IO is the job threads' context switches per trim.
run_one() { # jobfile [options]
	"$B" bench --output-format=json --runtime="$SECS" "$@" | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
t = j["trim"]
print("%.0f %.1f %.1f %.3f" % (t["iops"], t["lat_ns"]["mean"] / 1e3, t["lat_ns"]["max"] / 1e3,
                               j["ctx"] / max(t["total_ios"], 1)))'
}

configs=(sync-4k async-4k sync-1m async-1m)
run_device() { # NAME RUNS [options]: results in $T/NAME-CONFIG
	local name=$1 runs=$2
	shift 2
	for ((r = 0; r < runs; r++)); do
		for c in "${configs[@]}"; do
			run_one "$here/$c.fio" "$@" >>"$T/$name-$c"
		done
	done
}

# Sets up LOOP, or says in loop_skip why the loop device cannot be used.
loop_skip=
loop_setup() {
	if [[ $(id -u) != 0 ]]; then
		loop_skip="not run as root (a loop device needs losetup as root)"
	elif ! command -v losetup >/dev/null; then
		loop_skip="losetup is not installed (util-linux)"
	elif ! IMG=$(mktemp "${LOOP_DIR:-/dev/shm}/blkring-discard.XXXXXX" 2>"$T/err") ||
		! truncate -s 4G "$IMG" 2>"$T/err" ||
		! LOOP=$(losetup -f --show "$IMG" 2>"$T/err"); then
		LOOP=
		loop_skip="no loop device: $(head -n 1 "$T/err")"
	elif ! "$B" info "$LOOP" >/dev/null 2>"$T/err"; then
		loop_skip="blkring cannot open $LOOP: $(head -n 1 "$T/err" | sed 's/^blkring: //')"
	fi
}

run_device null "$RUNS"
loop_setup
if [[ -z $loop_skip ]]; then
	run_device loop 1 --filename="$LOOP"
else
	echo "loop device: skipped: $loop_skip"
fi

python3 - "$T" "$RUNS" "$SECS" "$ROWS" "$(nproc)" "$LOOP" "$loop_skip" "$IMG" <<'PY'
import json, os, sys
tmp, runs, secs, rows_path, cpus, loop, loop_skip, img = sys.argv[1:9]
# The seed's figures: IOPS, lat avg us, lat max us; null_blk for our null
# device, the seed's only real device (PM174X NVMe) for the loop device.
seeds = {
    "null": {"sync-4k": (144e3, 444, 20314), "async-4k": (1353e3, 47, 595),
             "sync-1m": (56e3, 1136, 21031), "async-1m": (94e3, 680, 760)},
    "loop": {"sync-4k": (21e3, 3000, 21000), "async-4k": (76e3, 845, 2200),
             "sync-1m": (14e3, 5000, 25000), "async-1m": (56e3, 1153, 3600)},
}
specs = {"null": "null:irqmode=softirq,memory_backed=1,discard=1,size=64G,spin_nsec=50000",
         "loop": "%s (loop device over a sparse 4 GiB file in %s; sync: BLKDISCARD)"
                 % (loop, os.path.dirname(img))}
targets = {"4k": 9.40, "1m": 1.68}


def k(v):
    return "%.0fK" % (v / 1e3)


def results(dev):
    ours, all_iops = {}, {}
    for c in seeds[dev]:
        res = sorted(tuple(map(float, l.split())) for l in open("%s/%s-%s" % (tmp, dev, c)))
        ours[c] = res[len(res) // 2]
        all_iops[c] = [round(r[0]) for r in res]
    return ours, all_iops


def table(dev, rows):
    seed = seeds[dev]
    ours, all_iops = results(dev)
    print("seed 000: async discard, qd 64, random trims, on %s" % specs[dev])
    print("runs: %d x %s each, median by IOPS; %s CPUs; seed: %s" %
          (len(all_iops["sync-4k"]), secs, cpus, "null_blk" if dev == "null" else "PM174X NVMe"))
    print()
    print("%-6s %-4s | %8s %10s %10s | %8s %10s %10s %7s" %
          ("type", "size", "seed", "avg us", "max us", "blkring", "avg us", "max us", "ctx/IO"))
    for bs in ("4k", "1m"):
        for side in ("sync", "async"):
            c = "%s-%s" % (side, bs)
            s, o = seed[c], ours[c]
            print("%-6s %-4s | %8s %10.0f %10.0f | %8s %10.1f %10.1f %7.3f" %
                  (side, bs.upper() if bs == "1m" else bs, k(s[0]), s[1], s[2], k(o[0]), o[1],
                   o[2], o[3]))
            rows.append({"seed": "000", "device": dev, "spec": specs[dev], "type": side, "bs": bs,
                         "iops": o[0], "lat_avg_us": o[1], "lat_max_us": o[2],
                         "ctx_per_io": o[3], "seed_iops": s[0], "seed_lat_avg_us": s[1],
                         "seed_lat_max_us": s[2], "runs_iops": all_iops[c], "runtime": secs})
        a, y = ours["async-" + bs], ours["sync-" + bs]
        ratio, seed_ratio = a[0] / y[0], seed["async-" + bs][0] / seed["sync-" + bs][0]
        met = ratio >= targets[bs] and a[1] < y[1] and a[2] < y[2]
        print("%-11s | %8.2f %21s | %8.2f" % ("async/sync", seed_ratio, "", ratio))
        rows.append({"seed": "000", "device": dev, "type": "ratio", "bs": bs, "ratio": ratio,
                     "seed_ratio": seed_ratio, "target": targets[bs],
                     "lower_lat_avg": a[1] < y[1], "lower_lat_max": a[2] < y[2], "met": met})
    print()


rows, skipped = [], {}
table("null", rows)
if loop_skip:
    skipped["loop"] = loop_skip
else:
    table("loop", rows)
# The issue's targets are null-device ratios.
for r in rows:
    if r["type"] == "ratio" and r["device"] == "null":
        print("target async/sync %s >= %.2f with lower avg and max latency: %.2f: %s" %
              (r["bs"], r["target"], r["ratio"], "met" if r["met"] else "NOT met"))
if rows_path:
    with open(rows_path, "w") as f:
        json.dump({"seed": "000", "rows": rows, "skipped": skipped}, f, indent=1)
        f.write("\n")
PY
