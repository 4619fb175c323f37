#!/usr/bin/env bash
# Against fio itself (3.33 when this was written), run here on files in
# /dev/shm: values fio accepts, and what the two print for the same job.
# Every case is skipped without fio.
B=${BLKRING:-build/blkring}
T=$(mktemp -d /dev/shm/blkring-fio.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/lib.sh"

if ! command -v fio >/dev/null; then
	skip fio "fio is not installed"
	exit 0
fi

# The job header line, but for the engine's name: bs per direction as fio
# reads bs=R,W,T lists (an empty entry keeps its default, the last one
# given fills the rest), sizes as fio's num2str prints them.
header() { sed -n '1s/ioengine=[a-z_]*, //p' "$1"; }
for bs in 8k,,16k ,8k 16k,; do
	fio --name=a --ioengine=null --rw=randrw --size=64k --bs=$bs --rwmixread=70% \
		>"$T/fio.out" 2>&1
	"$B" bench --name=a --filename=null:size=64k --rw=randrw --bs=$bs --rwmixread=70% \
		>"$T/b.out" 2>&1
	check "header_bs_$bs" '[[ -n $(header "$T/fio.out") && $(header "$T/fio.out") == "$(header "$T/b.out")" ]]' \
		"fio: $(header "$T/fio.out"); blkring: $(header "$T/b.out")"
done

# SIGTERM (a background job's SIGINT is ignored under a script): both
# print the results so far and exit 128.
# The signal goes once the program handles SIGTERM (SigCgt bit 14), so a
# slow start on a loaded machine does not make it the default action.
term_rc() {
	local pid cgt
	"$@" >"$T/sig.out" 2>"$T/sig.err" &
	pid=$!
	for _ in $(seq 100); do
		cgt=$(sed -n 's/^SigCgt:\t//p' /proc/$pid/status 2>/dev/null)
		[[ -n $cgt ]] && (((16#$cgt >> 14) & 1)) && break
		sleep 0.05
	done
	sleep 0.3
	kill -TERM $pid
	wait $pid
}
term_rc fio --name=a --ioengine=null --size=1G --runtime=30 --time_based --output-format=json
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
    assert 90 <= r['bw_agg'] <= 100, (f, r['bw_agg'])
    assert 0.8 < r['bw_mean'] / r['bw'] < 1.25, (f, r['bw_mean'], r['bw'])
    assert 0.8 < r['iops_mean'] / r['iops'] < 1.25, (f, r['iops_mean'], r['iops'])
    assert r['bw_samples'] >= 2 and r['bw_samples'] == r['iops_samples'], (f, r['bw_samples'])
    assert r['bw_min'] <= r['bw_mean'] <= r['bw_max'], f
    for j in s:
        assert 30 < j['read']['bw_agg'] < 70, (f, j['read']['bw_agg'])
PY
G=(--numjobs=2 --runtime=1100ms --time_based --output-format=json)
fio --name=a --ioengine=null --size=1G "${G[@]}" --group_reporting >"$T/fio.g" 2>"$T/err" &&
	fio --name=a --ioengine=null --size=1G "${G[@]}" >"$T/fio.s" 2>>"$T/err" &&
	"$B" bench --name=a --filename=null:irqmode=none "${G[@]}" --group_reporting >"$T/b.g" 2>>"$T/err" &&
	"$B" bench --name=a --filename=null:irqmode=none "${G[@]}" >"$T/b.s" 2>>"$T/err"
rc=$?
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
fio --output-format=json "$T/both.fio" >"$T/fio.json" 2>"$T/err" &&
	"$B" bench --output-format=json "$T/both.fio" >"$T/b.json" 2>>"$T/err"
rc=$?
why=$(python3 "$T/same.py" "$T/fio.json" "$T/b.json" 2>&1)
check jobfile_same_json '[[ $rc == 0 && -z $why ]]' "exit $rc: $(head -c 200 "$T/err") $why"
