#!/usr/bin/env bash
# fio's logs and reporting options (issue 22), against fio itself (3.33
# when this was written): write_bw_log, write_iops_log and write_hist_log
# with log_avg_msec and log_hist_msec, the latency logs averaged,
# log_max_value, per_job_logs=0, stats=0, unified_rw_reporting,
# clat/slat_percentiles, kb_base and unit_base, and every new option's bad
# values.  Both run the same job on a file in /dev/shm (a plain file for
# both) with a rate, so that their bandwidths are alike; cases that need
# fio are skipped without it.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d /dev/shm/blkring-logs.XXXXXX)
trap '[[ -n $KEEP ]] || rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/lib.sh"
HAVE_FIO=1
command -v fio >/dev/null || HAVE_FIO=0
F=$T/data
truncate -s 64M "$F"

# run WHO DIR ARGS...: WHO (fio or blkring) runs job a in $T/DIR (made
# empty), its logs named there with the prefix "x"; stdout to DIR/out.
# fio's is a reference run (fio_ref), done once for every tree.
run() {
	local who=$1 name=$2 dir=$T/$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	if [[ $who == fio ]]; then
		(cd "$dir" && fio_ref "$name" "$name/x_*" -- --name=a --filename="$F" --ioengine=psync \
			"$@" >out 2>err)
	else
		(cd "$dir" && "$B" bench --name=a --filename="$F" --ioengine=psync "$@" >out 2>err)
	fi
}
# both NAME ARGS...: fio in $T/NAME.fio, blkring in $T/NAME.b, side by
# side: the jobs compared on their speed are held to a rate (a few per
# cent of a core), the others on what they report.
both() {
	local name=$1
	shift
	fio_beside "$name.fio" "$@"
	run blkring "$name.b" "$@"
	beside_wait
}
# fio_beside DIR ARGS...: `run fio DIR ARGS` beside blkring's next run,
# when fio is installed; beside_wait waits for it.
fio_beside() {
	if ((HAVE_FIO)); then beside run fio "$@"; fi
}
# py NAME CHECK: PASS when the Python CHECK passes; log(dir, file) reads a
# log as lists of ints, D is $T.
py() {
	local name=$1 code=$2 why
	if why=$(python3 - "$T" 2>&1 <<PY
import collections, json, os, re, sys
D = sys.argv[1]
def log(d, f):
    return [[int(x) for x in l.split(', ')] for l in open(os.path.join(D, d, f))]
def js(d):
    t = open(os.path.join(D, d, "out")).read()
    return json.loads(t[t.index("{"):])
$code
PY
	); then
		pass "$name"
	else
		fail "$name" "$(tail -n 2 <<<"$why")"
	fi
}
needs_fio() {
	((HAVE_FIO)) && return 0
	skip "$1" "fio is not installed"
	return 1
}

# Interval logs, compared line by line: the same fields, units and
# intervals (times within 60 ms), as many lines (+-1), values within 25%
# (rate_iops=500 of 4k blocks: 500 I/Os and 2000 KiB/s a second).
SAME_LINES='
def same(kind, tol):
    a, b = log(N + ".fio", "x_%s.1.log" % kind), log(N + ".b", "x_%s.1.log" % kind)
    assert abs(len(a) - len(b)) <= 1 and len(a) >= 4, (kind, len(a), len(b))
    for x, y in zip(a, b):
        assert len(x) == len(y) == 5, (x, y)
        assert abs(x[0] - y[0]) <= 60 and x[2:] == y[2:], (kind, x, y)
        if tol:
            assert abs(x[1] - y[1]) <= tol * x[1], (kind, x, y)
        else:
            assert 0 < y[1] < 10**9, (kind, y)
'
if needs_fio bw_iops_log_avg; then
	both avg --rw=read --rate_iops=500 --time_based --runtime=2 --log_avg_msec=200 \
		--write_bw_log=x --write_iops_log=x --write_lat_log=x
	py log_file_names 'assert sorted(os.listdir(D + "/avg.fio")) == sorted(os.listdir(D + "/avg.b")), (os.listdir(D + "/avg.b"))'
	py bw_log_avg "N = 'avg'$SAME_LINES
same('bw', 0.25)"
	py iops_log_avg "N = 'avg'$SAME_LINES
same('iops', 0.25)"
	# The latency logs' windows: the sync engine has no slat (its log is
	# empty in both), clat and lat a mean per window, and a last line
	# at the end of the run.
	py lat_log_avg "N = 'avg'$SAME_LINES
same('clat', 0)
same('lat', 0)
assert log('avg.fio', 'x_slat.1.log') == log('avg.b', 'x_slat.1.log') == []"
	# log_avg_msec sets the results' samples too (fio's bw_avg_time): 10
	# of 200 ms in 2 s, the one that ends the run left out.
	py avg_sets_samples '
t = {d: open(D + "/" + d + "/out").read() for d in ("avg.fio", "avg.b")}
n = {d: [int(x) for x in re.findall(r"samples=(\d+)", v)] for d, v in t.items()}
assert len(n["avg.b"]) == 2 and all(abs(x - y) <= 1 for x, y in zip(n["avg.fio"], n["avg.b"])), n'
fi

# Per-I/O bw and iops logs (log_avg_msec=0, fio's default): a line per
# I/O, its block size and offset, bw = bytes * 10^6 / clat ns (the clat
# log's line beside it), iops 1; each I/O is a sample of the results too.
PER_IO='
clat, bw, iops = (log(N, "x_%s.1.log" % k) for k in ("clat", "bw", "iops"))
assert len(clat) == len(bw) == len(iops) == 400, (len(clat), len(bw), len(iops))
for c, b, i in zip(clat, bw, iops):
    assert b[1] == 4096 * 1000000 // c[1] and b[2:] == c[2:] == [0, 4096, c[4], 0], (c, b)
    assert i[1] == 1 and i[2:] == c[2:] and abs(i[0] - c[0]) <= 1, (c, i)
r = js(N)["jobs"][0]["read"]
assert r["bw_samples"] == r["iops_samples"] == 400 and r["iops_min"] == r["iops_max"] == 1, r
'
PER_IO_ARGS=(--rw=randread --number_ios=400 --write_bw_log=x --write_iops_log=x --write_lat_log=x
	--log_offset=1 --output-format=json)
run blkring perio.b "${PER_IO_ARGS[@]}"
py bw_iops_log_per_io "N = 'perio.b'$PER_IO"
if needs_fio bw_iops_log_per_io_fio; then
	run fio perio.fio "${PER_IO_ARGS[@]}"
	py bw_iops_log_per_io_fio "N = 'perio.fio'$PER_IO"
fi

# write_hist_log: a line every log_hist_msec of the window's completions
# in fio's 1856 clat buckets (fio's plat_val_to_idx of each clat), after
# time, direction and block size.  Compared with fio: as many lines
# (+-1) at the same times, the same counts within 25%.  Against blkring's
# own clat log: every bucket counts at most the clats in it, and every
# completion before the last line is counted.
HIST='
def idx(v):
    msb = v.bit_length() - 1
    if msb <= 6:
        return v
    return min(((msb - 5) << 6) + ((v >> (msb - 6)) & 63), 1855)
h = log(N, "x_clat_hist.1.log")
assert len(h) >= 3 and all(len(l) == 3 + 1856 and l[1:3] == [0, 4096] for l in h), len(h)
total = [sum(l[3 + i] for l in h) for i in range(1856)]
clats = log(N, "x_clat.1.log")
want = collections.Counter(idx(c[1]) for c in clats)
assert all(total[i] <= want[i] for i in range(1856)), [(i, total[i], want[i]) for i in range(1856) if total[i] > want[i]][:3]
assert sum(total) >= sum(1 for c in clats if c[0] < h[-1][0]), (sum(total), h[-1][0])
'
HIST_ARGS=(--rw=read --rate_iops=500 --time_based --runtime=1200ms --write_hist_log=x
	--log_hist_msec=250 --write_lat_log=x)
fio_beside hist.fio "${HIST_ARGS[@]}"
run blkring hist.b "${HIST_ARGS[@]}"
beside_wait
py hist_log_buckets "N = 'hist.b'$HIST"
if needs_fio hist_log_fio; then
	py hist_log_fio_buckets "N = 'hist.fio'$HIST"
	py hist_log_fio '
a, b = log("hist.fio", "x_clat_hist.1.log"), log("hist.b", "x_clat_hist.1.log")
assert abs(len(a) - len(b)) <= 1, (len(a), len(b))
for x, y in zip(a, b):
    assert abs(x[0] - y[0]) <= 60 and x[1:3] == y[1:3], (x[:3], y[:3])
    assert abs(sum(x[3:]) - sum(y[3:])) <= 0.25 * sum(x[3:]), (x[0], sum(x[3:]), sum(y[3:]))
'
fi

# log_max_value: each window's largest clat, so the largest line is the
# run's clat max; without it the windows' means lie within min and max.
MAXV='
for d, top in (("max" + W, True), ("mean" + W, False)):
    r = js(d)["jobs"][0]["read"]["clat_ns"]
    v = [l[1] for l in log(d, "x_clat.1.log")]
    assert len(v) >= 5, (d, len(v))
    if top:
        assert max(v) == r["max"] and min(v) >= r["min"], (d, max(v), r["max"])
    else:
        assert r["min"] <= min(v) and max(v) <= r["max"] and max(v) < r["max"] * 0.99, (d, v, r["max"])
'
MAX_ARGS=(--rw=read --rate_iops=1000 --time_based --runtime=1 --log_avg_msec=100 --write_lat_log=x
	--output-format=json)
fio_beside max.fio "${MAX_ARGS[@]}" --log_max_value=1
run blkring max.b "${MAX_ARGS[@]}" --log_max_value=1
beside_wait
fio_beside mean.fio "${MAX_ARGS[@]}"
run blkring mean.b "${MAX_ARGS[@]}"
beside_wait
py log_max_value "W = '.b'$MAXV"
if needs_fio log_max_value_fio; then
	py log_max_value_fio "W = '.fio'$MAXV"
fi

# per_job_logs=0: one NAME_bw.log for both jobs, as fio's, with about
# 2 x 9 lines; a second run appends to it, as fio's does.
PJ=(--rw=read --rate_iops=500 --time_based --runtime=1 --numjobs=2 --log_avg_msec=100
	--write_bw_log=x --per_job_logs=0)
if needs_fio per_job_logs_0; then
	both pj "${PJ[@]}"
	py per_job_logs_0 '
names = sorted(os.listdir(D + "/pj.b"))
assert sorted(os.listdir(D + "/pj.fio")) == names and "x_bw.log" in names, names
a, b = log("pj.fio", "x_bw.log"), log("pj.b", "x_bw.log")
# Each job has its lines in turn, times from 100 ms; the helper thread of
# fio misses intervals when the machine is busy, so its count is a floor.
for x in (a, b):
    assert sum(1 for p, q in zip(x, x[1:]) if q[0] < p[0]) == 1, [l[0] for l in x]
    assert all(90 <= l[0] <= 1010 and l[2:] == [0, 0, 0] for l in x), x
assert 10 <= len(a) <= len(b) + 1 and 16 <= len(b) <= 19, (len(a), len(b))
'
fi
run blkring pja "${PJ[@]}"
n1=$(wc -l <"$T/pja/x_bw.log")
(cd "$T/pja" && "$B" bench --name=a --filename="$F" "${PJ[@]}" >out 2>err)
n2=$(wc -l <"$T/pja/x_bw.log")
check per_job_logs_0_appends '((n1 >= 16 && n2 >= 2 * n1 - 2))' "lines: $n1, then $n2"

# A bare write_bw_log names its log after the job, as fio's.
(mkdir -p "$T/bare" && cd "$T/bare" && printf '[j]\nfilename=%s\nrw=read\nnumber_ios=10\nwrite_bw_log\nwrite_iops_log\n' \
	"$F" >bare.fio && "$B" bench bare.fio >out 2>err)
check log_bare_job_name '[[ -s $T/bare/j_bw.1.log && -s $T/bare/j_iops.1.log ]]' \
	"$(ls "$T/bare") $(head -c 200 "$T/bare/err")"

# ---- reporting ----

# stats=0: the job is not reported, and its bytes are not in the group's.
if needs_fio stats_0; then
	both st --rw=read --size=4M --stats=0 --name=b --filename="$F" --size=8M --rw=write \
		--output-format=json
	py stats_0 '
for d in ("st.fio", "st.b"):
    jobs = [j for j in js(d)["jobs"] if "jobname" in j]
    assert [j["jobname"] for j in jobs] == ["b"] and jobs[0]["write"]["io_bytes"] == 8 << 20, (d, jobs)
'
	both stn --rw=read --size=4M --stats=0 --name=b --filename="$F" --size=8M --rw=write
	check stats_0_normal '! grep -q "^a: (groupid" "$T/stn.b/out" && grep -q "^b: (groupid" "$T/stn.b/out" &&
		! grep -q "READ:" "$T/stn.b/out" && ! grep -q "READ:" "$T/stn.fio/out"' "$(cat "$T/stn.b/out")"
fi

# unified_rw_reporting: mixed has "mixed" alone where the directions and
# sync were, fio's keys in fio's order; both has them, then mixed.
KEYS='
for mode, d in (("mixed", "mix"), ("both", "bth")):
    f, b = js(d + ".fio")["jobs"][0], js(d + ".b")["jobs"][0]
    assert list(f) == list(b), (mode, list(f), list(b))
    assert [k for k in f["mixed"]] == [k for k in b["mixed"] if k != "tw_wait_ns"], (list(f["mixed"]), list(b["mixed"]))
    assert b["mixed"]["total_ios"] == 2000, b["mixed"]["total_ios"]
r = js("bth.b")["jobs"][0]
assert r["read"]["total_ios"] + r["write"]["total_ios"] == 2000 and r["mixed"]["io_bytes"] == 2000 * 4096, r["mixed"]
'
if needs_fio unified_rw_reporting; then
	U=(--rw=randrw --number_ios=2000 --output-format=json)
	both mix "${U[@]}" --unified_rw_reporting=mixed
	both bth "${U[@]}" --unified_rw_reporting=both
	py unified_rw_reporting_json "$KEYS"
	both mixn --rw=randrw --number_ios=2000 --unified_rw_reporting=1
	shape() { grep -oE '^ *(read|write|mixed|READ|WRITE|MIXED):|issued rwts: total=[0-9]+,0,0,0' "$1"; }
	check unified_rw_reporting_normal 'diff <(shape "$T/mixn.fio/out") <(shape "$T/mixn.b/out") >/dev/null &&
		[[ $(shape "$T/mixn.b/out" | wc -l) == 3 ]]' "fio: $(shape "$T/mixn.fio/out" | tr '\n' ' ') blkring: $(shape "$T/mixn.b/out" | tr '\n' ' ')"
fi

# clat_percentiles=0 drops clat's percentiles, slat_percentiles=1 adds
# slat's (the ring engine has a slat), in JSON and in the normal output.
PCT='
for d in ("pct.fio", "pct.b"):
    r = js(d)["jobs"][0]["read"]
    assert "percentile" not in r["clat_ns"] and len(r["slat_ns"]["percentile"]) == 17, (d, r["clat_ns"].keys(), r["slat_ns"].keys())
'
if needs_fio percentiles_options; then
	run fio pct.fio --ioengine=io_uring --iodepth=4 --rw=randread --number_ios=2000 \
		--clat_percentiles=0 --slat_percentiles=1 --output-format=json
	run blkring pct.b --ioengine=io_uring --iodepth=4 --rw=randread --number_ios=2000 \
		--clat_percentiles=0 --slat_percentiles=1 --output-format=json
	py percentiles_options "$PCT"
fi
run blkring pctn.b --ioengine=io_uring --iodepth=4 --rw=randread --number_ios=2000 \
	--clat_percentiles=0 --slat_percentiles=1
check percentiles_normal 'grep -q "slat percentiles (" "$T/pctn.b/out" && ! grep -q "clat percentiles" "$T/pctn.b/out"' \
	"$(head -c 300 "$T/pctn.b/out")"

# kb_base and unit_base: the normal output's units as fio's (the rate
# keeps the numbers, and so the prefixes, alike).  The four pairs run at
# once: 2000 IOPS each, a few per cent of a core.
units() { grep -oE '(BW=|bw=|io=|bw \( *)[0-9.]*[A-Za-z]*(/s)?|\([0-9.]+[A-Za-z]*(/s)?\)' "$1" | sed 's/[0-9.]//g'; }
UNITS=("kb_base=1000" "unit_base=1" "kb_base=1000 unit_base=1" "unit_base=8")
pids=()
for u in "${UNITS[@]}"; do
	((HAVE_FIO)) || break
	name=units_${u// /_}
	args=()
	for w in $u; do args+=("--$w"); done
	both "$name" --rw=read --rate_iops=2000 --time_based --runtime=1 "${args[@]}" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for u in "${UNITS[@]}"; do
	name=units_${u// /_}
	needs_fio "$name" || continue
	check "$name" 'diff <(units "$T/$name.fio/out") <(units "$T/$name.b/out") >/dev/null &&
		[[ $(units "$T/$name.b/out" | wc -l) -ge 6 ]]' \
		"fio: $(units "$T/$name.fio/out" | tr '\n' ' ') blkring: $(units "$T/$name.b/out" | tr '\n' ' ')"
done

# kb_base in the sizes read after it (a job file's [global] here): 64k is
# 64000 bytes with kb_base=1000, and fio's default takes 64KiB as that too.
printf '[global]\nkb_base=1000\nioengine=psync\n[a]\nfilename=%s\nbs=64k\nsize=8m\nrw=read\n' \
	"$F" >"$T/kb.fio"
KB='
for d in ("kbf.fio", "kbf.b", "kbi.fio", "kbi.b"):
    r = js(d)["jobs"][0]["read"]
    assert (r["total_ios"], r["io_bytes"]) == (125, 8000000), (d, r["total_ios"], r["io_bytes"])
'
if needs_fio kb_base_sizes; then
	mkdir -p "$T/kbf.fio" "$T/kbf.b"
	fio_ref kb_base -- --output-format=json "$T/kb.fio" >"$T/kbf.fio/out" 2>&1
	"$B" bench --output-format=json "$T/kb.fio" >"$T/kbf.b/out" 2>&1
	both kbi --rw=read --bs=64KiB --size=8MiB --output-format=json
	py kb_base_sizes "$KB"
fi

# disable_bw_measurement: no per-I/O bandwidth, so the bw log is empty
# and there are no bandwidth samples; the iops log stays.
run blkring nobw.b --rw=read --number_ios=300 --write_bw_log=x --write_iops_log=x \
	--disable_bw_measurement=1 --output-format=json
py disable_bw_measurement '
r = js("nobw.b")["jobs"][0]["read"]
assert log("nobw.b", "x_bw.1.log") == [] and len(log("nobw.b", "x_iops.1.log")) == 300, r
assert r["bw_samples"] == 0 and r["iops_samples"] == 300, (r["bw_samples"], r["iops_samples"])
'

# ---- bad values ----

bad() {
	local name=$1 opt=$2 text=$3
	expect_err "bad_$name" 2 "option '${opt%%=*}': $text" --name=a --filename="$F" "--$opt"
}
bad log_avg_msec log_avg_msec=soon "'soon' is not a whole number"
bad log_hist_msec log_hist_msec=-5 "'-5' is not a whole number"
bad log_avg_msec_range log_avg_msec=3000000000 "'3000000000' is out of range (0 to 2147483647)"
bad per_job_logs per_job_logs=2 "'2' is not 0 or 1"
bad log_max_value log_max_value=yes "'yes' is not 0 or 1"
bad stats stats=off "'off' is not 0 or 1"
bad unified_rw_reporting unified_rw_reporting=split "'split' is not one of none, mixed, both, 0, 1, 2"
bad clat_percentiles clat_percentiles=3 "'3' is not 0 or 1"
bad slat_percentiles slat_percentiles=x "'x' is not 0 or 1"
bad disable_bw_measurement disable_bw_measurement=2 "'2' is not 0 or 1"
bad kb_base kb_base=512 "'512' is not one of 1024, 1000"
bad unit_base unit_base=16 "'16' is not one of 0, 8, 1"
long=$(printf 'x%.0s' $(seq 1100))
bad write_bw_log "write_bw_log=$long" "the value is longer than 991 characters"
bad write_iops_log "write_iops_log=$long" "the value is longer than 991 characters"
bad write_hist_log "write_hist_log=$long" "the value is longer than 991 characters"
expect_err log_unwritable 2 "job 'a': write_hist_log: cannot create $T/no/dir/x_clat_hist.1.log" \
	--name=a --filename="$F" --number_ios=1 --write_hist_log="$T/no/dir/x" --log_hist_msec=10
