#!/usr/bin/env bash
# The bench's additions for reports: --output-format=json+ (fio's histogram
# "bins" beside each percentile list, summing to the I/O count) and
# --write_lat_log (fio's per-I/O log files, one parsable line per I/O).
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"
check() { # NAME PYTHON-SCRIPT ARGS...: passes when the script prints nothing and exits 0
	local name=$1 why
	shift
	if why=$(python3 - "$@" 2>&1) && [[ -z $why ]]; then
		pass "$name"
	else
		fail "$name" "$(head -c 300 <<<"$why")"
	fi
}

# ---- json+ ----

"$B" bench --output-format=json+ --name=a --filename=null:irqmode=none,size=16M --rw=randrw \
	--iodepth=8 --fsync=16 --lat_percentiles=1 --name=b --filename=null:size=16M --rw=read \
	--bs=64k >"$T/plus.json" 2>"$T/err"
rc=$?
[[ $rc == 0 ]] || fail jsonplus_runs "exit $rc: $(head -c 200 "$T/err")"
check jsonplus_bins_sum_to_total_ios "$T/plus.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    for dd in ("read", "write"):
        s = j[dd]
        if not s["total_ios"]:
            continue
        for key in ("clat_ns", "lat_ns"):
            if key == "lat_ns" and "percentile" not in s[key]:
                assert "bins" not in s[key], (j["jobname"], dd, key, "bins without percentiles")
                continue
            bins = s[key]["bins"]
            total = sum(bins.values())
            if total != s["total_ios"]:
                print(j["jobname"], dd, key, "bins sum to", total, "not", s["total_ios"])
            # Keys are bucket values in ns: whole numbers within the min/max seen.
            vals = sorted(int(k) for k in bins)
            lo, hi = s[key]["min"], s[key]["max"]
            if vals[0] > hi or vals[-1] < lo or any(v <= 0 for v in bins.values()):
                print(j["jobname"], dd, key, "bins", vals[0], "..", vals[-1], "outside", lo, hi)
    sync = j["sync"]
    if sync["total_ios"] and sum(sync["lat_ns"]["bins"].values()) != sync["total_ios"]:
        print(j["jobname"], "sync bins do not sum to total_ios")
PY

# Plain json has no bins; json+ has them exactly where fio 3.33 puts them.
"$B" bench --output-format=json --name=a --filename=null:irqmode=none --rw=randread --size=1M \
	--iodepth=4 --lat_percentiles=1 >"$T/plain.json" 2>/dev/null
check json_has_no_bins "$T/plain.json" <<'PY'
import sys
if '"bins"' in open(sys.argv[1]).read():
    print("plain json carries bins")
PY
if ! command -v fio >/dev/null; then
	echo "SKIP jsonplus_bins_where_fio_has_them: fio is not installed"
elif ! fio --output-format=json+ --name=a --ioengine=null --rw=randrw --size=1M --iodepth=4 \
	--fsync=8 --lat_percentiles=1 >"$T/fio.json" 2>"$T/err"; then
	echo "SKIP jsonplus_bins_where_fio_has_them: fio --ioengine=null failed: $(head -c 200 "$T/err")"
else
	"$B" bench --output-format=json+ --name=a --filename=null:irqmode=none --rw=randrw --size=1M \
		--iodepth=4 --fsync=8 --lat_percentiles=1 >"$T/ours.json" 2>/dev/null
	check jsonplus_bins_where_fio_has_them "$T/fio.json" "$T/ours.json" <<'PY'
import json, sys
def where(o, path=""):
    if isinstance(o, dict):
        out = {path} if "bins" in o else set()
        for k, v in o.items():
            out |= where(v, path + "/" + k)
        return out
    if isinstance(o, list):
        return set().union(*(where(v, path + "[]") for v in o)) if o else set()
    return set()
fio, ours = (where(json.load(open(f))) for f in sys.argv[1:3])
if fio != ours:
    print("fio:", sorted(fio), "blkring:", sorted(ours))
PY
fi

# ---- latency logs ----

# Two jobs of a mixed workload, on the ring and the sync engine: each log of
# each job has one line per I/O the job's JSON counts.
"$B" bench --output-format=json --name=a --filename=null:irqmode=softirq,size=8M --rw=randrw \
	--iodepth=16 --iodepth_batch_submit=4 --numjobs=2 --write_lat_log="$T/mix" \
	--name=s --filename=null:size=8M --ioengine=sync --rw=write --bs=8k --size=1M \
	--write_lat_log="$T/sync" >"$T/log.json" 2>"$T/err"
rc=$?
[[ $rc == 0 ]] || fail latlog_runs "exit $rc: $(head -c 200 "$T/err")"
check latlog_lines_parse_and_count_ios "$T" <<'PY'
import json, os, sys
t = sys.argv[1]
jobs = json.load(open(os.path.join(t, "log.json")))["jobs"]
expect = {("mix", 1): jobs[0], ("mix", 2): jobs[1], ("sync", 3): jobs[2]}
for (name, n), job in expect.items():
    ios = {0: job["read"]["total_ios"], 1: job["write"]["total_ios"]}
    for kind in ("slat", "clat", "lat"):
        path = os.path.join(t, f"{name}_{kind}.{n}.log")
        count = {0: 0, 1: 0}
        last = 0
        for line in open(path):
            f = [int(x) for x in line.split(", ")]
            if len(f) != 5 or f[2] not in count or f[3] != (8192 if name == "sync" else 4096) \
                    or f[4] != 0 or f[0] < 0 or f[1] <= 0:
                print(path, "bad line:", line.strip())
                break
            count[f[2]] += 1
        # fio logs no submission latency for synchronous engines.
        want = {0: 0, 1: 0} if kind == "slat" and name == "sync" else ios
        if count != want:
            print(path, "has", count, "lines by direction, the job did", want)
PY

# log_offset: a sixth column, the I/O's offset within the job's region;
# ramp_time: only measured I/Os are logged.
"$B" bench --output-format=json --name=o --filename=null:irqmode=none --rw=randread --offset=1M \
	--size=1M --bs=4k --iodepth=8 --runtime=200ms --time_based --ramp_time=50ms --log_offset=1 \
	--write_lat_log="$T/off" >"$T/off.json" 2>"$T/err"
rc=$?
[[ $rc == 0 ]] || fail latlog_offset_runs "exit $rc: $(head -c 200 "$T/err")"
check latlog_offsets_and_ramp "$T" <<'PY'
import json, os, sys
t = sys.argv[1]
ios = json.load(open(os.path.join(t, "off.json")))["jobs"][0]["read"]["total_ios"]
for kind in ("clat", "lat"):
    lines = open(os.path.join(t, f"off_{kind}.1.log")).read().splitlines()
    if len(lines) != ios:
        print(kind, len(lines), "lines for", ios, "I/Os")
    for line in lines:
        f = [int(x) for x in line.split(", ")]
        if len(f) != 6 or not (1 << 20) <= f[4] < (2 << 20) or f[4] % 4096 or f[5] != 0:
            print(kind, "bad line:", line)
            break
    if lines and int(lines[-1].split(", ")[0]) > 1000:
        print(kind, "time column past the run:", lines[-1])
PY

"$B" bench --name=x --filename=null:size=1M --write_lat_log="$T/no/such/dir/x" >/dev/null \
	2>"$T/err"
rc=$?
# Refused before the run, as an unwritable --output is (exit 2, a usage error).
if [[ $rc == 2 ]] && grep -q "write_lat_log: cannot create $T/no/such/dir/x_slat.1.log" "$T/err" &&
	grep -q "No such file or directory" "$T/err"; then
	pass latlog_unwritable_names_file
else
	fail latlog_unwritable_names_file "exit $rc: $(head -c 200 "$T/err")"
fi
