#!/usr/bin/env bash
# JSON output: stdout holds the document alone; fio's keys and types for the
# same job shape (checked against fio itself when it is installed); groups,
# group_reporting, percentile lists.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

"$B" bench --output-format=json --thread=0 --name=a --filename=null:size=4M --rw=randread \
	--iodepth=2 --ioengine=sync >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$T/out" &&
	grep -q "thread=0 has no effect" "$T/err" && grep -q "iodepth=2 has no effect" "$T/err"; then
	pass stdout_is_json
else
	fail stdout_is_json "exit $rc: $(head -c 200 "$T/out")"
fi

# Keys and types of fio's document for the same job shape.
cat >"$T/shape.py" <<'PY'
import json, sys
def shape(o):
    if isinstance(o, dict):
        return {k: shape(v) for k, v in o.items()}
    if isinstance(o, list):
        return [shape(v) for v in o[:1]]
    return type(o).__name__
def diff(a, b, path=''):
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(path + '/' + k + ' only in blkring')
            elif k not in b:
                out.append(path + '/' + k + ' only in fio')
            else:
                out += diff(a[k], b[k], path + '/' + k)
    elif isinstance(a, list) and isinstance(b, list):
        if a and b:
            out += diff(a[0], b[0], path + '[0]')
    elif a != b:
        out.append('%s: fio has %s, blkring %s' % (path, a, b))
    return out
fio, ours = (shape(json.load(open(f))) for f in sys.argv[1:3])
fio.pop('fio version')
ours.pop('blkring version')
fio.pop('disk_util', None)
for d in (fio, ours):
    d.pop('global options', None)
    for j in d['jobs']:
        j.pop('job options')
# blkring's own key, which fio does not have.
for j in ours['jobs']:
    for dd in ('read', 'write', 'trim'):
        j[dd].pop('tw_wait_ns')
problems = diff(fio, ours)
print('; '.join(problems))
sys.exit(1 if problems else 0)
PY
shape="--rw=randrw --bs=4k --iodepth=8 --size=4M --fsync=4 --lat_percentiles=1 --continue_on_error=all"
if ! command -v fio >/dev/null; then
	echo "SKIP fio_keys_and_types: fio is not installed"
elif ! fio --output-format=json --name=a --ioengine=null $shape >"$T/fio.json" 2>"$T/err"; then
	echo "SKIP fio_keys_and_types: fio --ioengine=null failed: $(head -c 200 "$T/err")"
else
	"$B" bench --output-format=json --name=a --filename=null:irqmode=none $shape >"$T/b.json"
	if why=$(python3 "$T/shape.py" "$T/fio.json" "$T/b.json"); then
		pass fio_keys_and_types
	else
		fail fio_keys_and_types "$why"
	fi
fi

"$B" bench --output-format=json --name=a --filename=null:size=1M --numjobs=2 --group_reporting \
	--rw=randread --name=b --filename=null:size=1M --stonewall --rw=write --bs=8k \
	--percentile_list=50:99.5 >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
jobs = d['jobs']
assert [(j['jobname'], j['groupid']) for j in jobs] == [('a', 0), ('b', 1)], jobs
# two clones of a merged into one report: twice the region each
assert jobs[0]['read']['total_ios'] == 512 and jobs[0]['write']['total_ios'] == 0
assert jobs[1]['write']['total_ios'] == 128 and jobs[1]['write']['io_bytes'] == 1 << 20
assert list(jobs[1]['write']['clat_ns']['percentile']) == ['50.000000', '99.500000']
assert 'percentile' not in jobs[1]['write']['lat_ns']
# bare keys (--group_reporting) are left out, as fio leaves them out
assert jobs[0]['job options'] == {'name': 'a', 'filename': 'null:size=1M', 'numjobs': '2',
                                  'rw': 'randread'}, jobs[0]['job options']
assert 'global options' not in d
" "$T/out"; then
	pass groups_and_reporting
else
	fail groups_and_reporting "exit $rc: $(head -c 300 "$T/err")"
fi

"$B" bench --output-format=json --rw=read --filename=null:size=1M --name=a --numjobs=2 \
	>"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert [j['jobname'] for j in d['jobs']] == ['a', 'a']
assert d['global options'] == {'rw': 'read', 'filename': 'null:size=1M'}, d['global options']
" "$T/out"; then
	pass clones_and_globals
else
	fail clones_and_globals "exit $rc: $(head -c 300 "$T/err")"
fi

# tw_wait_ns: completions from the device's thread (softirq) run as task
# work and wait; inline ones (none) do not, nor does a direction without I/O.
"$B" bench --output-format=json --name=s --filename=null:irqmode=softirq,size=4M --rw=randrw \
	--iodepth=8 --runtime=200ms --time_based --ramp_time=50ms --name=n \
	--filename=null:irqmode=none,size=4M --rw=randread --iodepth=8 >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "
import json, sys
s, n = json.load(open(sys.argv[1]))['jobs']
assert s['read']['tw_wait_ns'] > 0 and s['read']['tw_wait_ns'] == s['write']['tw_wait_ns'], (
    s['read']['tw_wait_ns'], s['write']['tw_wait_ns'])
assert s['trim']['tw_wait_ns'] == 0, s['trim']
assert n['read']['total_ios'] > 0 and n['read']['tw_wait_ns'] == 0, n['read']
" "$T/out"; then
	pass tw_wait_ns
else
	fail tw_wait_ns "exit $rc: $(head -c 300 "$T/err")"
fi

# --status-interval with group_reporting: the reports so far merge copies,
# so the final report still counts every job once.
"$B" bench --output-format=json --status-interval=300ms --name=g --filename=null:size=1M \
	--numjobs=2 --group_reporting --rw=randread --runtime=700ms --time_based --name=s \
	--stonewall --filename=null:size=1M --size=256k >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "
import json, sys
text, dec, docs, i = open(sys.argv[1]).read(), json.JSONDecoder(), [], 0
while i < len(text):
    d, i = dec.raw_decode(text, i)
    docs.append(d)
    i += len(text[i:]) - len(text[i:].lstrip())
assert len(docs) >= 2, len(docs)
g = [d['jobs'][0]['read'] for d in docs]
assert [x['total_ios'] for x in g] == sorted(x['total_ios'] for x in g), g
last = docs[-1]['jobs']
assert [j['jobname'] for j in last] == ['g', 's'] and last[1]['read']['total_ios'] == 64
" "$T/out"; then
	pass status_interval_group
else
	fail status_interval_group "exit $rc: $(head -c 300 "$T/err")"
fi

# lat_percentiles on the one-direction fast path (submissions of one): the
# total latency's percentiles are taken, and each is at least the
# completion latency's, which it contains.
"$B" bench --output-format=json --name=p --filename=null:size=4M --rw=randread --iodepth=8 \
	--iodepth_batch_submit=1 --lat_percentiles=1 >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))['jobs'][0]['read']
lat, clat = r['lat_ns']['percentile'], r['clat_ns']['percentile']
assert r['total_ios'] == 1024, r['total_ios']
assert lat['50.000000'] > 0 and all(lat[k] >= clat[k] for k in clat), (lat, clat)
" "$T/out"; then
	pass lat_percentiles_fast_path
else
	fail lat_percentiles_fast_path "exit $rc: $(head -c 300 "$T/out") $(head -c 300 "$T/err")"
fi
