#!/usr/bin/env bash
# Against fio itself (3.33 when this was written), run here on files in
# /dev/shm: values fio accepts, and what the two print for the same job.
# Every case is skipped without fio.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d /dev/shm/blkring-fio.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/lib.sh"

if ! command -v fio >/dev/null; then
	skip fio "fio is not installed"
	exit 0
fi

# The job header lines, but for the engine's name: bs per direction as fio
# reads bs=R,W,T lists (an empty entry keeps its default, the last one
# given fills the rest), sizes as fio's num2str prints them.
header() { sed -n '/^[a-c]: (g=0)/s/ioengine=[a-z_]*, //p' "$1"; }
HDR=(--rw=randrw --size=64k --rwmixread=70% --name=a --bs=8k,,16k --name=b --bs=,8k --name=c
	--bs=16k,)
fio_ref header -- --ioengine=null "${HDR[@]}" >"$T/fio.out" 2>&1
"$B" bench --filename=null:size=64k "${HDR[@]}" >"$T/b.out" 2>&1
check header_bs '[[ $(header "$T/fio.out" | wc -l) == 3 && $(header "$T/fio.out") == "$(header "$T/b.out")" ]]' \
	"fio: $(header "$T/fio.out"); blkring: $(header "$T/b.out")"

# SIGTERM (a background job's SIGINT is ignored under a script): both
# print the results so far and exit 128.
term_rc() {
	local pid cgt blk
	"$@" >"$T/sig.out" 2>"$T/sig.err" &
	pid=$!
	# The signal goes once the program handles SIGTERM, so a slow start on
	# a loaded machine does not make it the default action: bit 14 of
	# SigCgt (fio's handler) or of SigBlk (blkring blocks it before any
	# thread exists and reads it from a signalfd; a signal blocked from
	# the start waits there even before the signalfd is made).
	for _ in $(seq 100); do
		cgt=$(sed -n 's/^SigCgt:\t//p' /proc/$pid/status 2>/dev/null)
		blk=$(sed -n 's/^SigBlk:\t//p' /proc/$pid/status 2>/dev/null)
		[[ -n $cgt && -n $blk ]] && ((((16#$cgt | 16#$blk) >> 14) & 1)) && break
		sleep 0.05
	done
	sleep 0.3
	kill -TERM $pid
	wait $pid
}
term_rc command fio --name=a --ioengine=null --size=1G --runtime=30 --time_based --output-format=json
fio_rc=$?
term_rc "$B" bench --name=a --filename=null: --runtime=30 --time_based --output-format=json
b_rc=$?
check signal_exit_status '[[ $fio_rc == 128 && $b_rc == 128 ]] && python3 -c "
import json, sys; assert json.load(open(sys.argv[1]))[\"jobs\"][0][\"error\"] == 0" "$T/sig.out"' \
	"fio exit $fio_rc, blkring exit $b_rc"

# group_reporting: fio sums its jobs' bandwidth and IOPS samples (mean,
# minimum, maximum, count), so the group's mean is its bandwidth; without
# it each job's share of the group's is about half.  The same checks hold
# for both documents.
cat >"$T/group.py" <<'PY'
import json, sys
for f in sys.argv[1:]:
    g = json.load(open(f + '.g'))['jobs']
    s = json.load(open(f + '.s'))['jobs']
    assert len(g) == 1 and len(s) == 2, f
    r = g[0]['read']
    assert 70 <= r['bw_agg'] <= 100, (f, r['bw_agg'])
    assert 0.7 < r['bw_mean'] / r['bw'] < 1.5, (f, r['bw_mean'], r['bw'])
    assert 0.7 < r['iops_mean'] / r['iops'] < 1.5, (f, r['iops_mean'], r['iops'])
    assert r['bw_samples'] >= 1 and r['bw_samples'] == r['iops_samples'], (f, r['bw_samples'])
    assert r['bw_min'] <= r['bw_mean'] <= r['bw_max'], f
    for j in s:
        # a job the machine kept from running long enough has no sample
        assert not j['read']['bw_samples'] or 15 < j['read']['bw_agg'] < 85, (f, j['read'])
PY
G=(--numjobs=2 --runtime=1100ms --time_based --output-format=json)
# fio's and blkring's runs side by side (each document is checked against itself).
fio_ref group -- --name=a --ioengine=null --size=1G "${G[@]}" --group_reporting >"$T/fio.g" \
	2>"$T/err" &
"$B" bench --name=a --filename=null:irqmode=none "${G[@]}" --group_reporting >"$T/b.g" 2>>"$T/err"
rc=$?
wait $! || rc=$?
fio_ref separate -- --name=a --ioengine=null --size=1G "${G[@]}" >"$T/fio.s" 2>>"$T/err" &
"$B" bench --name=a --filename=null:irqmode=none "${G[@]}" >"$T/b.s" 2>>"$T/err" || rc=$?
wait $! || rc=$?
why=$(python3 "$T/group.py" "$T/fio" "$T/b" 2>&1)
check group_reporting_sums '[[ $rc == 0 && -z $why ]]' "exit $rc: $(head -c 200 "$T/err") $why"

# One job file, run by both: the same JSON document but for the version
# key (every key, the nesting, the types, the options as given), the same
# amounts (bytes, KiB, I/Os) and the same units (ms, ns, KiB/s).
truncate -s 1M "$T/jf.img"
cat >"$T/both.fio" <<JOB
; a job file both run
[global]
filename=$T/jf.img
size=1M
bs=4k
ioengine=io_uring
iodepth=4

[r]
rw=randread
lat_percentiles=1

[w]
stonewall
rw=write
bs=8k
fsync=8
group_reporting
numjobs=2
JOB
cat >"$T/same.py" <<'PY'
import json, sys
def shape(o):
    if isinstance(o, dict):
        return {k: shape(v) for k, v in o.items()}
    if isinstance(o, list):
        return [shape(v) for v in o]
    return type(o).__name__
def diff(a, b, path=''):
    if isinstance(a, dict) and isinstance(b, dict):
        out = [path + '/' + k + ' only in one' for k in set(a) ^ set(b)]
        return out + sum((diff(a[k], b[k], path + '/' + k) for k in set(a) & set(b)), [])
    if isinstance(a, list) and isinstance(b, list):
        out = [] if len(a) == len(b) else [path + ': %d entries, %d' % (len(a), len(b))]
        return out + sum((diff(x, y, '%s[%d]' % (path, i)) for i, (x, y) in enumerate(zip(a, b))), [])
    return [] if a == b else ['%s: fio %s, blkring %s' % (path, a, b)]
fio, ours = (json.load(open(f)) for f in sys.argv[1:3])
fio.pop('fio version')
ours.pop('blkring version')
for j in ours['jobs']:  # blkring's own key, which fio does not have
    for d in ('read', 'write', 'trim'):
        j[d].pop('tw_wait_ns')
problems = diff(shape(fio), shape(ours))
problems += [] if fio['global options'] == ours['global options'] else ['global options']
for x, y in zip(fio['jobs'], ours['jobs']):
    if x['job options'] != y['job options']:
        problems.append('job options of ' + x['jobname'])
    for d in ('read', 'write', 'trim'):
        a, b = x[d], y[d]
        for k in ('io_bytes', 'io_kbytes', 'total_ios', 'short_ios'):
            if a[k] != b[k]:
                problems.append('%s %s %s: fio %s, blkring %s' % (x['jobname'], d, k, a[k], b[k]))
        if a['total_ios'] and not (0 <= a['runtime'] < 10000 and 0 <= b['runtime'] < 10000 and
                                   100 < a['clat_ns']['mean'] < 1e8 and 100 < b['clat_ns']['mean'] < 1e8):
            problems.append('%s %s: units of runtime or clat_ns' % (x['jobname'], d))
    if (x['sync']['total_ios'] > 0) != (y['sync']['total_ios'] > 0):
        problems.append(x['jobname'] + ' sync')
print('; '.join(problems))
PY
fio_ref jobfile -- --output-format=json "$T/both.fio" >"$T/fio.json" 2>"$T/err" &&
	"$B" bench --output-format=json "$T/both.fio" >"$T/b.json" 2>>"$T/err"
rc=$?
why=$(python3 "$T/same.py" "$T/fio.json" "$T/b.json" 2>&1)
check jobfile_same_json '[[ $rc == 0 && -z $why ]]' "exit $rc: $(head -c 200 "$T/err") $why"

# --showcmd: the job files as one command line, as fio writes it.
printf '[global]\nsize=1M\nioengine=null\ntime_based\nruntime=100ms\n[a]\niodepth=2\n[b]\nrw=randread\n' \
	>"$T/show.fio"
f=$(fio_ref showcmd -- --showcmd "$T/show.fio" | sed 's/^fio //; s/ *$//')
b=$("$B" bench --showcmd "$T/show.fio" | sed 's/^blkring bench //')
check showcmd '[[ -n $f && $f == "$b" ]]' "fio: $f; blkring: $b"

# Job files as fio reads them: include (from the including file's
# directory), ${VAR}, a comment anywhere after a value, and a group per
# later file.
mkdir "$T/inc"
printf '[global]\nsize=64k ; why\nioengine=null\n[a]\ninclude sub.fio\nbs=${BLKRING_T_BS}\nrw=read;x\n' \
	>"$T/inc/main.fio"
printf 'iodepth=2#y\n' >"$T/inc/sub.fio"
printf '[b]\nioengine=null\nsize=64k\n[c]\nioengine=null\nsize=64k\n' >"$T/second.fio"
export BLKRING_T_BS=8k
f=$(fio_ref showcmd_include -- --showcmd "$T/inc/main.fio" | sed 's/^fio //; s/ *$//')
b=$("$B" bench --showcmd "$T/inc/main.fio" | sed 's/^blkring bench //')
check jobfile_include_env_comments '[[ $f == "--size=64k --ioengine=null --name=a --iodepth=2 --bs=8k --rw=read" && $f == "$b" ]]' \
	"fio: $f; blkring: $b"
groups() { python3 -c "import json, sys; print([(j['jobname'], j['groupid']) for j in json.load(sys.stdin)['jobs']])"; }
f=$(fio_ref jobfiles -- --output-format=json "$T/inc/main.fio" "$T/second.fio" 2>/dev/null |
	groups)
b=$("$B" bench --output-format=json "$T/inc/main.fio" "$T/second.fio" 2>/dev/null | groups)
check jobfiles_grouped '[[ $f == "[('\''a'\'', 0), ('\''b'\'', 1), ('\''c'\'', 1)]" && $f == "$b" ]]' \
	"fio: $f; blkring: $b"

# --minimal: fio's terse version 3, field for field: the same number of
# fields in the same order, each of the same kind (whole number, %f,
# %3.1f%%, %3.2f%%, percentile=usec), the same amounts where a run
# decides nothing (name, group, error, KiB moved, percentile names).
TERSE=(--ioengine=null --size=256k --name=r --rw=read --lat_percentiles=1 --name=w --rw=write
	--stonewall --continue_on_error=all --percentile_list=50:99)
fio_ref terse -- --minimal "${TERSE[@]}" >"$T/fio.terse" 2>"$T/err" &&
	"$B" bench --minimal "${TERSE[@]}" >"$T/b.terse" 2>>"$T/err"
rc=$?
cat >"$T/terse.py" <<'PY'
import re, sys
KINDS = [('int', r'\d+'), ('f', r'-?\d+\.\d{6}'), ('pct1', r'\d+\.\d%'), ('pct2', r'\d+\.\d\d%'),
         ('pctf', r'\d+\.\d{6}%'), ('plist', r'\d+\.\d{6}%=\d+'), ('plist0', r'0%=0')]
def kind(x):
    return next((k for k, r in KINDS if re.fullmatch(r, x)), 'text')
fio, ours = ([l.split(';') for l in open(f).read().splitlines()] for f in sys.argv[1:3])
problems = [] if len(fio) == len(ours) == 2 else ['%d and %d lines' % (len(fio), len(ours))]
for n, (a, b) in enumerate(zip(fio, ours)):
    if len(a) != len(b):
        problems.append('line %d: %d fields, %d' % (n, len(a), len(b)))
    for i, (x, y) in enumerate(zip(a, b)):
        # version, name, group, error, read KiB, write KiB; percentile names
        fixed = i in (0, 2, 3, 4, 5, 46)
        if kind(x) != kind(y) or (fixed and x != y) or x.split('=')[0] != y.split('=')[0] and kind(x) == 'plist':
            problems.append('line %d field %d: fio %s, blkring %s' % (n, i + 1, x, y))
print('; '.join(problems[:5]))
PY
why=$(python3 "$T/terse.py" "$T/fio.terse" "$T/b.terse" 2>&1)
check terse_v3_fields '[[ $rc == 0 && -z $why && $(wc -l <"$T/b.terse") == 2 ]]' \
	"exit $rc: $(head -c 200 "$T/err") $why"

# Several formats at once print in fio's order: the job header, then
# terse, JSON and normal results.
markers() {
	grep -aoE '^(a: \(g=0\)|Starting|3;|\{|\}|a: \(groupid|Run status)' "$1" | tr '\n' ' '
}
fio_ref formats -- --output-format=normal,json,terse --name=a --ioengine=null --size=64k \
	>"$T/fio.out" 2>&1
"$B" bench --output-format=normal,json,terse --name=a --ioengine=null --size=64k \
	>"$T/b.out" 2>/dev/null
check formats_combined '[[ $(markers "$T/fio.out") == "$(markers "$T/b.out")" ]] &&
	[[ $(markers "$T/b.out") == "a: (g=0) Starting 3; { } a: (groupid Run status " ]]' \
	"fio: $(markers "$T/fio.out"); blkring: $(markers "$T/b.out")"

# --status-interval: the whole document again every interval, the
# results so far (the runtime grows), then the final one.
cat >"$T/docs.py" <<'PY'
import json, sys
for f in sys.argv[1:]:
    text, docs, dec = open(f).read(), [], json.JSONDecoder()
    i = text.index('{')
    while i < len(text):
        d, i = dec.raw_decode(text, i)
        docs.append(d)
        while i < len(text) and text[i].isspace():
            i += 1
    runs = [d['jobs'][0]['read']['runtime'] for d in docs]
    assert len(docs) >= 3 and runs == sorted(runs) and runs[-1] >= 1000, (f, runs)
PY
SI=(--name=a --ioengine=null --size=1G --runtime=1000ms --time_based --status-interval=300ms
	--output-format=json)
fio_ref status_interval -- "${SI[@]}" >"$T/fio.si" 2>"$T/err" &
"$B" bench "${SI[@]}" >"$T/b.si" 2>>"$T/err"
rc=$?
wait $! || rc=$?
why=$(python3 "$T/docs.py" "$T/fio.si" "$T/b.si" 2>&1)
check status_interval '[[ $rc == 0 && -z $why ]]' "exit $rc: $(head -c 200 "$T/err") $why"

# Files as fio lays them out: a missing file is made, a short one extended,
# to the job's size (written with data for a job that reads, allocated for
# one that only writes); names from directory=, fio's lists ("\:" inside a
# name), relative names and NAME.JOB.FILE for nrfiles, numjobs.  Each
# starts in a directory of its own; the names, sizes and allocated blocks
# of what is left must be fio's.
cat >"$T/layout.fio" <<'JOB'
[global]
ioengine=psync
[new_read]
filename=new1.dat
size=1M
rw=randread
[new_write]
filename=new2.dat
size=1M
rw=write
bs=64k
[short_read]
filename=short1.dat
size=1M
rw=read
bs=64k
[short_write]
filename=short2.dat
size=512k
rw=randwrite
[list]
directory=d
filename=x:y\:z:w
size=96k
[generated]
nrfiles=2
numjobs=2
size=128k
rw=write
bs=16k
[filesize]
directory=d
nrfiles=3
filesize=32k
JOB
listing() { (cd "$1" && find . -type f -printf '%P %s %b\n' | sort | tr '\n' ' '); }
for d in lay-fio lay-b; do
	mkdir -p "$T/$d/d"
	head -c 262144 /dev/zero | tr '\0' x >"$T/$d/short1.dat"
	cp "$T/$d/short1.dat" "$T/$d/short2.dat"
done
(cd "$T/lay-fio" && fio "$T/layout.fio") >/dev/null 2>&1
(cd "$T/lay-b" && "$B" bench "$T/layout.fio") >/dev/null 2>"$T/err"
rc=$?
f=$(listing "$T/lay-fio")
b=$(listing "$T/lay-b")
check layout_files '[[ $rc == 0 && $f == "$b" && $f == *new1.dat\ 1048576* && $f == *generated.1.1* ]]' \
	"fio: $f; blkring: $b; $(head -c 200 "$T/err")"

# description, loops, number_ios and startdelay as fio has them: the text
# in all three outputs, the same I/O counts, and a delay outside runtime.
DESC=(--ioengine=null --size=1M --description="two words" --name=l --loops=3 --name=n
	--rw=randrw --number_ios=50 --loops=2 --name=d --startdelay=300ms)
fio_ref desc -- --output-format=json "${DESC[@]}" >"$T/fio.desc" 2>"$T/err" &&
	"$B" bench --output-format=json "${DESC[@]}" >"$T/b.desc" 2>>"$T/err"
rc=$?
why=$(python3 - "$T/fio.desc" "$T/b.desc" <<'PY' 2>&1
import json, sys
fio, ours = ([j for j in json.load(open(f))['jobs']] for f in sys.argv[1:3])
for x, y in zip(fio, ours):
    for k in ('desc',):
        assert x.get(k) == y.get(k) == 'two words', (k, x.get(k), y.get(k))
    for d in ('read', 'write'):
        assert x[d]['total_ios'] == y[d]['total_ios'] or x['jobname'] == 'n', (x['jobname'], d)
    assert y['read']['runtime'] < 300, y['read']['runtime']
n = {j['jobname']: j for j in ours}['n']
assert n['read']['total_ios'] + n['write']['total_ios'] == 100, n['read']['total_ios']
assert {j['jobname']: j for j in ours}['l']['read']['total_ios'] == 768
PY
)
check fio_desc_loops_number_ios '[[ $rc == 0 && -z $why ]]' "exit $rc: $(head -c 200 "$T/err") $why"
"$B" bench "${DESC[@]}" >"$T/b.out" 2>&1
"$B" bench --minimal "${DESC[@]}" >"$T/b.terse" 2>&1
check fio_desc_outputs 'grep -c "^  Description  : \[two words\]$" "$T/b.out" | grep -qx 3 &&
	[[ $(grep -c ";two words$" "$T/b.terse") == 3 ]]' "$(head -c 300 "$T/b.out")"
start_ns=$(date +%s%N)
"$B" bench --name=s --ioengine=null --size=64k --startdelay=1 >/dev/null 2>&1
took_ms=$((($(date +%s%N) - start_ns) / 1000000))
check startdelay_waits '[[ $took_ms -ge 1000 ]]' "ran in $took_ms ms"

# rate_iops and rate as fio's linear rate: within 5% of the rate asked,
# as fio's own run of the same job (side by side: 2000 IOPS in all).
RATE=(--ioengine=null --size=1G --runtime=1500ms --time_based --rw=randread --output-format=json
	--name=i --rate_iops=1000 --iodepth=4 --name=b --rate=4m --bs=4k)
fio_ref rate -- "${RATE[@]}" >"$T/fio.rate" 2>"$T/err" &
"$B" bench "${RATE[@]}" >"$T/b.rate" 2>"$T/err.b"
rc=$?
wait $! || rc=$?
cat "$T/err.b" >>"$T/err"
why=$(python3 - "$T/fio.rate" "$T/b.rate" <<'PY' 2>&1
import json, sys
for f in sys.argv[1:3]:
    i, b = json.load(open(f))['jobs']
    assert abs(i['read']['iops'] - 1000) < 50, (f, i['read']['iops'])
    assert abs(b['read']['bw'] - 4096) < 205, (f, b['read']['bw'])
PY
)
check fio_rate_iops_and_rate '[[ $rc == 0 && -z $why ]]' "exit $rc: $(head -c 200 "$T/err") $why"

# thinktime: a pause after each thinktime_blocks I/Os, once they ended;
# the rates within 20% of fio's for the same jobs (10 ms pauses: a loaded
# 2-core machine wakes a sleeper a millisecond or two late).  fio 3.33 runs
# no thinktime_spin job here: a spin that a VM stretches past thinktime
# makes it sleep for hours (axboe/fio#1588), so blkring's spinning job is
# held to fio's plain one, as its pauses are as long.
THINK=(--ioengine=null --size=1G --runtime=1 --time_based --rw=randread --output-format=json
	--name=t --thinktime=10ms --name=b --thinktime=10000 --thinktime_blocks=8 --iodepth=8)
SPIN=(--name=s --thinktime=10ms --thinktime_spin=5ms)
FIO_TIMEOUT=15 fio_ref thinktime -- "${THINK[@]}" >"$T/fio.think" 2>"$T/err" &&
	"$B" bench "${THINK[@]}" "${SPIN[@]}" >"$T/b.think" 2>>"$T/err"
rc=$?
why=$(python3 - "$T/fio.think" "$T/b.think" <<'PY' 2>&1
import json, sys
fio, ours = (json.load(open(f))['jobs'] for f in sys.argv[1:3])
for x, y, want in zip(fio + fio[:1], ours, (100, 800, 100)):
    a, b = x['read']['iops'], y['read']['iops']
    assert 0.8 * want < a and 0.8 * a < b < 1.2 * a, (y['jobname'], a, b)
assert ours[2]['usr_cpu'] > 25, ours[2]['usr_cpu']
PY
)
check fio_thinktime '[[ $rc == 0 && -z $why ]]' "exit $rc: ${why##*$'\n'} ($(head -c 200 "$T/err"))"

# new_group: a reporting group of its own whose jobs still run beside the
# ones before (a stonewall waits), numbered as fio numbers them.
NG=(--ioengine=null --size=1G --time_based --runtime=400ms --name=a --name=b --new_group
	--name=c --stonewall --name=d --new_group)
f=$(fio_ref new_group -- --output-format=json "${NG[@]}" 2>/dev/null | groups)
start_ns=$(date +%s%N)
b=$("$B" bench --output-format=json "${NG[@]}" 2>/dev/null | groups)
took_ms=$((($(date +%s%N) - start_ns) / 1000000))
check new_group '[[ $f == "[('\''a'\'', 0), ('\''b'\'', 1), ('\''c'\'', 2), ('\''d'\'', 3)]" &&
	$f == "$b" && $took_ms -lt 1400 ]]' "fio: $f; blkring: $b in $took_ms ms (two phases of 400)"

# exitall: the first job's end ends the one beside it (at once), not the
# stonewalled job after them ("all jobs in the same group", fio's HOWTO;
# fio's own run sometimes ends that one too, so it is compared on a and b).
EA=(--exitall --ioengine=null --name=a --size=64k --name=b --size=1G --time_based --runtime=10
	--name=c --stonewall --size=64k --output-format=json)
ea() { sed -n '/^{/,$p' | python3 -c "import json, sys
print([(j['jobname'], j['read']['total_ios'] if j['jobname'] != 'b' else '-',
        j['read']['runtime'] < 2000) for j in json.load(sys.stdin)['jobs']])"; }
f=$(FIO_TIMEOUT=60 fio_ref exitall -- "${EA[@]}" 2>/dev/null | ea)
b=$(timeout 60 "$B" bench "${EA[@]}" 2>/dev/null | ea)
check exitall '[[ ${f%%", ('\''c'\''"*} == "${b%%", ('\''c'\''"*}" &&
	$b == "[('\''a'\'', 16, True), ('\''b'\'', '\''-'\'', True), ('\''c'\'', 16, True)]" ]]' \
	"fio: $f; blkring: $b"

# gtod_reduce, disable_clat and disable_lat leave out what fio leaves out:
# the same clat and lat entries measured or not, with percentiles or not.
for a in --gtod_reduce=1 --disable_clat=1 --disable_lat=1; do
	fio_ref lat -- --name=x "$a" --ioengine=null --size=1M --output-format=json >"$T/fio.lat" \
		2>/dev/null
	"$B" bench --name=x "$a" --ioengine=null --size=1M --output-format=json >"$T/b.lat" 2>/dev/null
	why=$(python3 - "$T/fio.lat" "$T/b.lat" <<'PY' 2>&1
import json, sys
def seen(f):
    j = json.load(open(f))['jobs'][0]
    r = j['read']
    return ([(k, r[k]['N'] > 0, 'percentile' in r[k]) for k in ('clat_ns', 'lat_ns')],
            sum(j['latency_us'].values()) + sum(j['latency_ns'].values()) > 0, r['total_ios'])
a, b = seen(sys.argv[1]), seen(sys.argv[2])
assert a == b, (a, b)
PY
)
	name=${a#--}
	check "fio_${name%%=*}" '[[ -z $why ]]' "$why"
done

# io_size: the region goes round until the bytes are done, over one file,
# two directions and two files, as fio counts them.
mkdir -p "$T/iosz"
total() { python3 -c "import json, sys
print(sum(j[d]['total_ios'] for j in json.load(sys.stdin)['jobs'] for d in ('read', 'write')))"; }
for a in "--rw=read" "--rw=randrw" "--nrfiles=2 --directory=$T/iosz"; do
	# shellcheck disable=SC2086
	f=$(fio_ref io_size 'iosz/*' -- --name=x --io_size=2M --size=1M --ioengine=null $a \
		--output-format=json 2>/dev/null | total)
	# shellcheck disable=SC2086
	b=$("$B" bench --name=x --io_size=2M --size=1M --ioengine=null $a --output-format=json 2>/dev/null |
		total)
	name=${a#--}
	name=${name#rw=}
	check "io_size_${name%%[= ]*}" '[[ $f == 512 && $b == 512 ]]' "fio: $f; blkring: $b ($a)"
done
