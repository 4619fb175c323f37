#!/usr/bin/env bash
# Seed 001's table (Jeffle Xu, "dm: support IO polling for bio-based dm
# device", v2, Jan 2021): 4k random reads at iodepth 64 on a linear volume
# over 3 and over 6 devices with one poll queue each, IRQ (hipri=0) against
# polled (hipri=1), here on null devices (irqmode=softirq, poll_queues=1)
# and for both ways of polling a volume: poll=all (the seed's list of every
# poll queue) and poll=cookie (Linux 5.18's per-bio clones).  The seed's
# figures are printed beside ours with the poll/IRQ ratio of each.
#
#   bench/seeds/poll/run.sh [JSON_OUT]
#
# QUICK=1: 500 ms runs (about 10 s in all) instead of 5 s (about 80 s);
# SEED001_RUNTIME=T: runs of T (fio's time syntax) without ramp (tests).
# BLKRING: the blkring binary (default: build/blkring of this tree).
# JSON_OUT: also write the rows there, machine-readable.
#
# The IRQ run of a row serves both strategies (hipri=0 never polls); the
# three runs of a row follow each other, so each ratio comes from one run
# of each mode.  --poll_strategy overrides the table's poll= key: the bench
# opens the table spec with poll= replaced.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
BLKRING=${BLKRING:-$root/build/blkring}
json_out=${1:-}
# Paths given relative to the caller's directory, before the cd below.
[[ $BLKRING == */* && $BLKRING != /* ]] && BLKRING=$PWD/$BLKRING
[[ -n $json_out && $json_out != /* ]] && json_out=$PWD/$json_out
command -v "$BLKRING" >/dev/null || { echo "seed 001: $BLKRING is missing: run make first" >&2; exit 2; }
if [[ -n ${SEED001_RUNTIME:-} ]]; then
	runtime=$SEED001_RUNTIME ramp=0
elif [[ ${QUICK:-0} == 1 ]]; then
	runtime=500ms ramp=100ms
else
	runtime=5s ramp=1s
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here" # the job files name their tables relative to here

run() { # DEVICES JOBS MODE: one bench run, its JSON in $tmp
	local devs=$1 jobs=$2 mode=$3 opts
	if [[ $mode == irq ]]; then
		opts=(--hipri=0)
	else
		opts=(--hipri=1 "--poll_strategy=$mode")
	fi
	"$BLKRING" bench --output-format=json "--numjobs=$jobs" "--runtime=$runtime" \
		"--ramp_time=$ramp" "${opts[@]}" "linear-$devs.fio" >"$tmp/$devs-$jobs-$mode.json"
}

for row in "3 1" "3 3" "6 6" "3 6"; do
	read -r devs jobs <<<"$row"
	for mode in irq all cookie; do
		run "$devs" "$jobs" "$mode"
	done
done

python3 - "$tmp" "$json_out" "$(nproc)" "$runtime" <<'EOF'
import json, sys

tmp, json_out, cpus, runtime = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# The seed's rows: devices, jobs, IRQ and polled IOPS (fio, NVMe).
seed = [(3, 1, 198e3, 276e3), (3, 3, 608e3, 705e3), (6, 6, 1197e3, 1347e3),
        (3, 6, 1285e3, 1293e3)]


def iops(devs, jobs, mode):
    with open(f"{tmp}/{devs}-{jobs}-{mode}.json") as f:
        return json.load(f)["jobs"][0]["read"]["iops"]


def k(v):
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.0f}k"


rows = []
for devs, jobs, s_irq, s_poll in seed:
    irq, pall, pcookie = (iops(devs, jobs, m) for m in ("irq", "all", "cookie"))
    rows.append({
        "setup": f"{devs} dev, {jobs} job{'s' if jobs > 1 else ''}",
        "devices": devs, "jobs": jobs, "cpus": cpus, "oversubscribed": jobs > cpus,
        "seed_irq_iops": s_irq, "seed_poll_iops": s_poll,
        "seed_ratio": round(s_poll / s_irq, 3),
        "irq_iops": round(irq), "poll_all_iops": round(pall),
        "poll_all_ratio": round(pall / irq, 3),
        "poll_cookie_iops": round(pcookie), "poll_cookie_ratio": round(pcookie / irq, 3),
    })

print(f"Seed 001: polled I/O through a linear volume, 4k randread, iodepth 64 ({runtime} runs)")
print("seed: fio io_uring on NVMe (poll_queues=1); blkring: null legs "
      "(irqmode=softirq, poll_queues=1)")
print(f"{'':16} {'seed IRQ':>9} {'poll':>7} {'ratio':>6} | {'IRQ':>7} "
      f"{'poll all':>9} {'ratio':>6} {'cookie':>8} {'ratio':>6}")
for r in rows:
    note = f"  ({r['jobs']} jobs on {cpus} CPUs)" if r["oversubscribed"] else ""
    print(f"{r['setup']:16} {k(r['seed_irq_iops']):>9} {k(r['seed_poll_iops']):>7} "
          f"{r['seed_ratio']:>6.2f} | {k(r['irq_iops']):>7} {k(r['poll_all_iops']):>9} "
          f"{r['poll_all_ratio']:>6.2f} {k(r['poll_cookie_iops']):>8} "
          f"{r['poll_cookie_ratio']:>6.2f}{note}")
first = rows[0]
ok = first["poll_all_ratio"] >= 1.4 and first["poll_cookie_ratio"] >= 1.4
print(f"target: {first['setup']}, poll/IRQ >= 1.4 for both strategies: "
      f"all {first['poll_all_ratio']:.2f}, cookie {first['poll_cookie_ratio']:.2f}: "
      f"{'met' if ok else 'NOT met'}")
if json_out:
    with open(json_out, "w") as f:
        json.dump({"seed": "001", "runtime": runtime, "cpus": cpus, "rows": rows}, f, indent=1)
        f.write("\n")
EOF
