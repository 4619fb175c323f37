#!/usr/bin/env bash
# Parse errors exit 2 naming the file, line and option; I/O errors exit 1
# naming the errno and the offset; continue_on_error=all keeps going.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

# name, expected fragment of the message, then the bench arguments
expect2() {
	local name=$1 frag=$2 rc
	shift 2
	"$B" bench "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [[ $rc == 2 ]] && grep -qF -- "$frag" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -c 300 "$T/err")"
	fi
}

expect2 unknown_option "command line: unknown option 'bogus'" --name=a --filename=null: --bogus=1
expect2 fio_only_option "'blockalign' is a fio option blkring does not support" \
	--name=a --filename=null: --blockalign=8k
expect2 bad_value "option 'iodepth': '0' is out of range" --name=a --filename=null: --iodepth=0
# Without a filename a job's file is fio's NAME.JOB.FILE, which needs a size to be made.
expect2 no_filename "job 'a': a.0.0 does not exist: give size= or filesize=" --name=a
expect2 no_jobs "no jobs" --filename=null:
expect2 time_based "time_based needs a runtime" --name=a --filename=null: --time_based
expect2 bad_spec "filename=null:bogus=1" --name=a --filename=null:bogus=1
expect2 past_end "size=2097152 at offset=0 goes past the end" \
	--name=a --filename=null:size=1M --size=2M
expect2 offset_past_end "offset=1048576 is at or past the end" \
	--name=a --filename=null:size=1M --offset=1M
# A percentage is shown with what it came to: alone "size=0" would puzzle.
expect2 size_pct_below_block "size=1% (0 bytes of 1048576, in whole blocks) is smaller than one block (bs=1048576)" \
	--name=a --filename=null:size=1M --bs=1m --size=1%
expect2 offset_pct_past_end "offset=100% (1048576 bytes of 1048576, in whole blocks) is at or past the end" \
	--name=a --filename=null:size=1M --offset=100%
expect2 block_size "bs=512 is not a multiple of null:bs=4096" \
	--name=a --filename=null:bs=4096 --bs=512
expect2 output_format "'xml' is not one of normal, json" --output-format=xml --name=a

printf '[global]\nfilename=null:\n\n[a]\nrw=randread\nbs=4q\n' >"$T/bad.fio"
expect2 jobfile_line "$T/bad.fio:6: option 'bs': '4q' is not a size" "$T/bad.fio"
printf '[a]\nfilename=null:\nioscheduler=none\n' >"$T/bad.fio"
expect2 jobfile_fio_only "$T/bad.fio:3: option 'ioscheduler' is a fio option" "$T/bad.fio"
expect2 jobfile_missing "cannot open the job file" "$T/none.fio"
mkdir "$T/dir.fio"
expect2 jobfile_directory "$T/dir.fio: cannot read the job file: Is a directory" "$T/dir.fio"
# A NUL byte used to end the file there: job b, and its bad rw=, went unread.
printf '[global]\nfilename=null:size=1M\nruntime=100ms\n[a]\nrw=write\n\0\n[b]\nrw=foo\n' \
	>"$T/nul.fio"
expect2 jobfile_nul "$T/nul.fio:6: a NUL byte" "$T/nul.fio"
check jobfile_nul_no_run '[[ ! -s $T/out ]]' "stdout: $(head -c 200 "$T/out")"
# Something that is no job file (/dev/zero) is not read until memory runs out.
expect2 jobfile_endless "/dev/zero: larger than 1048576 bytes: not a job file" /dev/zero

# I/O errors: sectors 100-199 fail; the first read there stops the job.
"$B" bench --name=bad --filename=null:badblocks=100-199,size=1M --rw=read >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 1 ]] && grep -q "job 'bad': read error at offset 49152, buflen 4096 on .*EIO" "$T/err" &&
	grep -q "^bad: (groupid=0, jobs=1): err= 5" "$T/out" && grep -q "total=12,0,0,0" "$T/out"; then
	pass io_error_stops
else
	fail io_error_stops "exit $rc: $(head -c 300 "$T/err")"
fi

"$B" bench --output-format=json --name=bad --filename=null:badblocks=100-199,size=1M --rw=read \
	--continue_on_error=all >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 1 ]] && python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
# 100 bad sectors touch 13 blocks of 4 KiB: 96-103 ... 192-199
assert j['error'] == 0 and j['total_err'] == 13 and j['first_error'] == 5, j
assert j['read']['total_ios'] == 256 - 13, j['read']['total_ios']
" "$T/out"; then
	pass continue_on_error
else
	fail continue_on_error "exit $rc: $(head -c 300 "$T/err")"
fi

# Writes to a read-only device are refused before anything runs, as a
# trim without discard is.
expect_err read_only_device 2 "job 'ro': rw=write: null:ro=1,size=1M is read-only" \
	--name=ro --filename=null:ro=1,size=1M --rw=write

# A run refused before it starts leaves an existing --output file as it was.
# name, the message, then the job's options
output_kept() {
	local name=$1 frag=$2
	shift 2
	echo "earlier results" >"$T/keep.txt"
	expect2 "$name" "$frag" --output="$T/keep.txt" --name=a "$@"
	check "${name}_file" '[[ $(cat "$T/keep.txt") == "earlier results" ]]' \
		"$T/keep.txt was changed: '$(head -c 100 "$T/keep.txt")'"
}
output_kept output_kept_bad_bs "bs=3 is not a multiple" --filename=null: --bs=3 --runtime=100ms
output_kept output_kept_bad_spec "filename=null:sise=1: null: unknown key 'sise'" \
	--filename=null:sise=1
# A refused run creates no --output file; an --output that cannot be
# written stops the run before a file device is created; special files
# and links are written as fopen writes them.
expect2 output_new_removed "bs=3 is not a multiple" --output="$T/new.txt" --name=a \
	--filename=null: --bs=3
check output_new_removed_file '[[ ! -e $T/new.txt ]]' "$T/new.txt was left behind"
expect2 output_unwritable "output=$T/nodir/x: No such file or directory" \
	--output="$T/nodir/x" --name=a --filename="file:$T/made.img,size=1M" --runtime=10ms
check output_unwritable_no_device '[[ ! -e $T/made.img ]]' "$T/made.img was created"
"$B" bench --output=/dev/null --name=a --filename=null: --runtime=10ms >"$T/out" 2>"$T/err"
check output_dev_null '[[ $? == 0 && ! -s $T/out ]]' "$(head -c 200 "$T/err")"
ln -s "$T/target.txt" "$T/dangling"
"$B" bench --output="$T/dangling" --name=a --filename=null: --runtime=10ms >/dev/null 2>"$T/err"
check output_dangling_link '[[ $? == 0 && -s $T/target.txt ]]' "$(head -c 200 "$T/err")"

# A runtime whose nanoseconds do not fit used to wrap and end the run at once.
expect2 runtime_too_long "option 'runtime': '18446744073709551615us' is too long (at most 106751d" \
	--name=a --filename=null: --runtime=18446744073709551615us --time_based

# Results that cannot be written are a failed run (fio exits 0 there).
"$B" bench --output=/dev/full --name=a --filename=null: --runtime=10ms >"$T/out" 2>"$T/err"
rc=$?
check output_full '[[ $rc == 1 ]] && grep -q "writing the results to /dev/full: No space left on device" "$T/err"' \
	"exit $rc: $(head -c 200 "$T/err")"
"$B" bench --output-format=json --name=a --filename=null: --runtime=10ms >/dev/full 2>"$T/err"
rc=$?
check stdout_full '[[ $rc == 1 ]] && grep -q "writing the results to standard output: No space" "$T/err"' \
	"exit $rc: $(head -c 200 "$T/err")"
# A latency log that cannot be created refuses the run, as --output does,
# before any device is created.
expect2 latlog_unwritable "job 'a': write_lat_log: cannot create $T/nodir/x_slat.1.log: No such file or directory" \
	--name=a --filename="file:$T/made.img,size=1M" --write_lat_log="$T/nodir/x"
check latlog_unwritable_no_device '[[ ! -e $T/made.img ]]' "$T/made.img was created"
