#!/usr/bin/env bash
# Jobs as fio runs them: a job file with [global], groups and command-line
# overrides; size, offset and the random map; rwmixread; fsync; ramp_time;
# batches; cpus_allowed; end_fsync.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

# name, python assertions on the JSON document `d` (jobs in `j`), bench args
json_case() {
	local name=$1 check=$2 rc
	shift 2
	"$B" bench --output-format=json "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [[ $rc != 0 ]]; then
		fail "$name" "exit $rc: $(head -c 300 "$T/err")"
	elif why=$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
j = d['jobs']
$check
" "$T/out" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(echo "$why" | tail -1)"
	fi
}

cat >"$T/two.fio" <<'JOB'
; two groups on one device
[global]
filename=null:irqmode=none,size=8M
size=1M            # each job's region
iodepth=4

[reader]
rw=randread

[writer]
stonewall
rw=write
bs=8k
JOB
json_case jobfile_groups "
assert [(x['jobname'], x['groupid']) for x in j] == [('reader', 0), ('writer', 1)]
assert j[0]['read']['total_ios'] == 256 and j[1]['write']['total_ios'] == 128
assert d['global options']['iodepth'] == '4'
assert j[1]['job options'] == {'rw': 'write', 'bs': '8k'}
" "$T/two.fio"

# A command-line global beats the file.
json_case command_line_overrides "
assert j[0]['read']['io_bytes'] == 64 << 10 and j[1]['write']['io_bytes'] == 64 << 10
assert d['global options']['size'] == '64k'
" --size=64k "$T/two.fio"

# Without a time limit a job covers its region once: with the random map
# every block once, without it the same number of blocks.
json_case random_map "
assert j[0]['read']['total_ios'] == 512 and j[1]['read']['total_ios'] == 512
" --filename=null:size=2M --rw=randread --name=map --name=nomap --norandommap

json_case offset_and_percent "
assert j[0]['read']['io_bytes'] == 1 << 20 and j[1]['read']['io_bytes'] == 1 << 20
" --filename=null:size=2M --name=a --offset=1M --name=b --offset=50% --size=50%

json_case rwmixread "
assert j[0]['write']['total_ios'] == 0 and j[0]['read']['total_ios'] == 256
assert j[1]['read']['total_ios'] == 0 and j[1]['write']['total_ios'] == 256
r, w = j[2]['read']['total_ios'], j[2]['write']['total_ios']
assert r + w == 2048 and 1200 < r < 1700, (r, w)
" --filename=null:size=1M --name=allread --rw=randrw --rwmixread=100 \
	--name=allwrite --rw=rw --rwmixwrite=100 --name=mix --rw=randrw --rwmixread=70 --size=8M \
	--filename=null:size=8M

json_case fsync_every_n "
assert j[0]['write']['total_ios'] == 16 and j[0]['sync']['total_ios'] == 4
assert j[0]['sync']['lat_ns']['N'] == 4
assert j[1]['sync']['total_ios'] == 4
" --filename=null:size=64k --rw=write --fsync=4 --name=ring --iodepth=4 \
	--name=sync --ioengine=sync --end_fsync=1

json_case batches "
x = j[0]
assert x['iodepth_submit']['8'] == 100.0, x['iodepth_submit']
assert x['iodepth_level']['8'] > 50.0, x['iodepth_level']
assert x['read']['slat_ns']['N'] == 1024
" --name=b --filename=null:irqmode=none,size=4M --rw=randread --iodepth=8 \
	--iodepth_batch_submit=8 --iodepth_batch_complete_min=8

json_case ramp_and_runtime "
r = j[0]['read']
assert r['total_ios'] > 0 and 100 <= r['runtime'] < 5000, r['runtime']
assert j[0]['elapsed'] >= 0
" --name=r --filename=null:irqmode=none,size=1M --runtime=100ms --ramp_time=50ms \
	--time_based --cpus_allowed=0

# fio's engine names: asynchronous ones on a ring, synchronous ones as
# blocking calls, null on a null device of the job's size; each mapping
# said once.
ENGINES=(io_uring libaio posixaio psync vsync pvsync pvsync2 null)
args=()
for e in "${ENGINES[@]}"; do
	args+=(--name="$e" --ioengine="$e" --name="$e" --ioengine="$e")
done
json_case engine_names "
assert [x['read']['total_ios'] for x in j] == [16] * 16, [x['read']['total_ios'] for x in j]
err = open(sys.argv[1].replace('out', 'err')).read()
for e in '${ENGINES[*]}'.split():
    assert err.count('note: ioengine=%s ' % e) == 1, (e, err)
" --filename=null:size=1M --size=64k "${args[@]}"
# The null engine's job has a null device, not fio's NAME.JOB.FILE file.
check engine_null_makes_no_file '[[ ! -e null.0.0 ]]' "null.0.0 was made"
json_case engine_options "
assert [x['read']['total_ios'] for x in j] == [256, 256]
err = open(sys.argv[1].replace('out', 'err')).read()
assert \"job 'a': registerfiles has no effect: a job's device is always registered\" in err, err
assert \"job 'a': cmdprio_percentage has no effect\" in err, err
" --ioengine=io_uring --filename=null:irqmode=softirq,size=1M --iodepth=8 --registerfiles \
	--cmdprio_percentage=10 --name=a --force_async=3 --name=b --nowait=1
expect_err engine_nbd_uri 2 "job 'a': ioengine=nbd needs uri= (the NBD server's URI)" \
	--name=a --ioengine=nbd
expect_err engine_rbd_name 2 "job 'a': ioengine=rbd needs rbdname= (the image is pool=POOL rbdname=IMAGE)" \
	--name=a --ioengine=rbd --pool=rbd
expect_err rate_one_direction 2 "job 'a': rate and rate_iops are for jobs of one direction here (rw=randrw has two)" \
	--name=a --filename=null: --rw=randrw --rate_iops=100
expect_err engine_null_size 2 "job 'a': ioengine=null needs size= (in bytes: the size of its null device)" --name=a --ioengine=null
# As fio, the jobs of a group start their I/O together, once all are set
# up: a job whose 256 MiB of buffers take a while to fill still runs as
# long as the one beside it that ends the run with exitall.
expect_json jobs_start_together '
a, b = (x["job_runtime"] for x in d["jobs"])
assert abs(a - b) < 150, (a, b)' --filename=null:size=1G --rw=read --time_based --runtime=1 \
	--name=a --bs=8m --iodepth=32 --name=b --exitall
