#!/usr/bin/env bash
# blkring's command line: version, help, a normal run, the sync engine,
# --output, `blkring info`, and usage errors (exit status 2).
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

v=$("$B" --version)
check version '[[ $v == blkring-* && $("$B" bench --version) == "$v" ]]' "got '$v'"

"$B" bench --help >"$T/help"
rc=$?
missing=
for o in name filename ioengine rw bs iodepth iodepth_batch_submit iodepth_batch_complete_min \
	numjobs thread size offset runtime time_based ramp_time randrepeat randseed norandommap \
	direct fsync end_fsync cpus_allowed group_reporting percentile_list lat_percentiles \
	continue_on_error output output-format; do
	[[ $(grep -c -- "^  --$o=" "$T/help") == 1 ]] || missing="$missing $o"
done
check help '[[ $rc == 0 && -z $missing ]] && grep -q "(also iodepth_batch_complete)" "$T/help"' \
	"exit $rc, options without their line:$missing"

"$B" bench --name=r --filename=null:irqmode=none,size=16M --rw=randread --iodepth=4 \
	>"$T/out" 2>"$T/err"
rc=$?
check normal_run '[[ $rc == 0 ]] && grep -q "^r: (g=0): rw=randread, bs=(R) 4096B-4096B" "$T/out" &&
	grep -q "^r: (groupid=0, jobs=1): err= 0" "$T/out" && grep -q "^  read: IOPS=" "$T/out" &&
	grep -q "^    clat percentiles (nsec):" "$T/out" &&
	grep -q "issued rwts: total=4096,0,0,0" "$T/out" &&
	grep -q "^Run status group 0 (all jobs):" "$T/out" && ! grep -q "Jobs:" "$T/out"' \
	"exit $rc: $(head -c 300 "$T/err")"

"$B" bench --name=s --filename=null:size=1M --ioengine=sync --rw=randwrite >"$T/out" 2>&1
rc=$?
check sync_engine '[[ $rc == 0 ]] && grep -q "^  write: IOPS=" "$T/out" &&
	! grep -q "slat" "$T/out" && grep -q "total=0,256,0,0" "$T/out"' "exit $rc"

"$B" bench --output="$T/res" --name=o --filename=null:size=1M >"$T/out" 2>&1
rc=$?
check output_file '[[ $rc == 0 && ! -s $T/out ]] && grep -q "Run status group 0" "$T/res"' \
	"exit $rc, stdout: $(head -c 200 "$T/out")"

"$B" info null:size=1G,bs=4096,submit_queues=2 >"$T/info" 2>&1
rc=$?
check info '[[ $rc == 0 ]] && grep -q "size: *1073741824 bytes" "$T/info" &&
	grep -q "logical block size: *4096" "$T/info" && grep -q "hardware queues: *2" "$T/info"' \
	"exit $rc: $(head -c 300 "$T/info")"

"$B" info --output-format=json null:size=64M >"$T/info.json" 2>&1
rc=$?
check info_json '[[ $rc == 0 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"size\"] == 64 << 20 and d[\"type\"] == \"null\"
assert isinstance(d[\"features\"], list) and isinstance(d[\"read_only\"], bool)
for k in (\"logical_block_size\", \"max_sectors\", \"nr_hw_queues\", \"queue_depth\"):
    assert isinstance(d[k], int), k
assert d[\"counters\"][\"read\"] == {\"ios\": 0, \"bytes\": 0, \"errors\": 0}
" "$T/info.json"' "exit $rc: $(head -c 300 "$T/info.json")"

# Sizes are unsigned 64-bit: above 8 EiB they stay positive in JSON.
"$B" info --output-format=json null:size=16777215T >"$T/info.json" 2>&1
rc=$?
check info_json_huge '[[ $rc == 0 ]] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"size\"] == 16777215 << 40, d[\"size\"]
" "$T/info.json"' "exit $rc: $(head -c 300 "$T/info.json")"

usage() { "$B" "$@" >"$T/out" 2>&1; echo $?; }
check usage_errors '[[ $(usage) == 2 && $(usage nosuch) == 2 && $(usage info) == 2 &&
	$(usage info null:bogus=1) == 2 && $(usage bench) == 2 && $(usage info a b) == 2 ]]' \
	"a usage error did not exit 2"
"$B" info null:bogus=1 >"$T/out" 2>&1
check info_spec_error 'grep -q "bogus" "$T/out"' "$(cat "$T/out")"

# On a terminal a live line in fio's shape: running jobs and files, each
# job's state, the share done, bandwidth, IOPS and the time left.
if ! command -v script >/dev/null; then
	echo "SKIP live_progress: script (util-linux) is not installed"
else
	script -qec "$B bench --name=p --filename=null:irqmode=none --runtime=1200ms --time_based" \
		/dev/null >"$T/tty" 2>&1
	check live_progress 'tr "\r" "\n" <"$T/tty" | grep -aEq "^Jobs: 1 \(f=1\): \[R\(1\)\]\[([0-9.]+|-\.-)%\]\[r=[0-9.]+[KMG]iB/s\]\[r=[0-9.]+[kMG]? IOPS\]\[eta 00m:0[01]s\]" &&
		grep -aq "Run status group 0" "$T/tty"' "$(tr '\r' '\n' <"$T/tty" | grep -a Jobs: | head -2)"
fi
# --eta=always shows it anywhere, --eta-newline=T starts a new one every T.
"$B" bench --eta=always --eta-newline=1 --name=p --filename=null:irqmode=none --runtime=2100ms \
	--time_based >"$T/out" 2>&1
check eta_always_newline '[[ $(grep -ac "^Jobs: 1 (f=1): \[R(1)\]" "$T/out") -ge 2 ]]' \
	"$(grep -a Jobs: "$T/out" | cat -A | head -3)"

# fio's command flags.  "--name value" is "--name=value" for every option
# that takes a value.
"$B" bench --output-format json --name a --filename null:size=1M --size 64k >"$T/out" 2>&1
check space_form 'python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))[\"jobs\"][0]
assert j[\"jobname\"] == \"a\" and j[\"read\"][\"io_bytes\"] == 65536, j[\"read\"][\"io_bytes\"]" "$T/out"' \
	"$(head -c 200 "$T/out")"
printf '[global]\nfilename=null:size=1M\nsize=64k\n[a]\n[b]\nrw=write\n[c]\n' >"$T/s.fio"
"$B" bench --section=c --section a --output-format=json "$T/s.fio" >"$T/out" 2>&1
check section 'python3 -c "
import json, sys
assert [j[\"jobname\"] for j in json.load(open(sys.argv[1]))[\"jobs\"]] == [\"a\", \"c\"]" "$T/out"' \
	"$(head -c 200 "$T/out")"
"$B" bench --parse-only "$T/s.fio" >"$T/out" 2>&1
check parse_only '[[ $? == 0 && ! -s $T/out ]]' "$(head -c 200 "$T/out")"
expect_err readonly 2 "job 'b': rw=write changes data, and --readonly allows reads only" \
	--readonly "$T/s.fio"
expect_err readonly_no_layout 2 "job 'r': $T/ro.dat would be laid out, and --readonly changes no file" \
	--readonly --name=r --filename="$T/ro.dat" --size=64k
check readonly_no_layout_file '[[ ! -e $T/ro.dat ]]' "$T/ro.dat was made"
"$B" bench --readonly --section=a "$T/s.fio" >"$T/out" 2>&1
check readonly_reads '[[ $? == 0 ]]' "$(head -c 200 "$T/out")"
"$B" bench --cmdhelp=blocksize >"$T/out" 2>&1
check cmdhelp_option '[[ $? == 0 ]] && grep -q "^ *bs: block size" "$T/out" &&
	grep -q "^ *default: 4k" "$T/out"' "$(head -c 200 "$T/out")"
"$B" bench --cmdhelp >"$T/out" 2>&1
check cmdhelp_all '[[ $? == 0 && $(grep -c "^[a-z_-]* *: " "$T/out") -gt 50 ]]' "$(head -c 200 "$T/out")"
expect_err cmdhelp_unknown 2 "--cmdhelp: no option 'nosuch'" --cmdhelp=nosuch
expect_err warnings_fatal 2 "1 note above, and --warnings-fatal makes them errors" \
	--warnings-fatal --name=a --filename=null:size=1M --ioengine=psync --iodepth=4
