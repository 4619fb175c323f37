#!/usr/bin/env bash
# File devices from the command line: bench jobs on a regular file (with
# and without registered buffers, batched) and on a loop device the test
# attaches itself, `blkring info` saying how polled I/O is done and that a
# device the kernel marks read-only is read-only, and a bad
# path's message.  Loop devices and files are removed on any exit.
B=${BLKRING:-build/blkring}
T=$(mktemp -d /dev/shm/blkring-file-bench.XXXXXX)
LOOP=
cleanup() {
	[[ -n $LOOP ]] && losetup -d "$LOOP"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/lib.sh"

F="$T/f.img"
"$B" bench --name=w --filename="file:$F,size=16M" --rw=write --bs=64k --iodepth=8 \
	--end_fsync=1 >"$T/out" 2>&1
rc=$?
check write_creates '[[ $rc == 0 && $(stat -c %s "$F") == 16777216 ]] &&
	grep -q "issued rwts: total=0,256,0,0" "$T/out"' "exit $rc: $(tail -c 300 "$T/out")"

"$B" bench --name=r --filename="$F" --rw=randread --bs=4k --iodepth=32 --direct=1 \
	--runtime=1 --time_based >"$T/out" 2>&1
rc=$?
check randread '[[ $rc == 0 ]] && grep -q "^r: (groupid=0, jobs=1): err= 0" "$T/out"' \
	"exit $rc: $(tail -c 300 "$T/out")"

"$B" bench --name=x --filename="$F" --rw=randread --bs=4k --iodepth=32 --fixedbufs=1 \
	--iodepth_batch_submit=16 --runtime=1 --time_based >"$T/out" 2>&1
rc=$?
check fixedbufs_batched '[[ $rc == 0 ]] && grep -q "^x: (groupid=0, jobs=1): err= 0" "$T/out"' \
	"exit $rc: $(tail -c 300 "$T/out")"

"$B" bench --name=x --filename="$F" --rw=randread --bs=4k --iodepth=32 --fixedbufs=1 \
	--sqthread_poll=1 --runtime=1 --time_based >"$T/out" 2>&1
rc=$?
check fixedbufs_sqpoll '[[ $rc == 0 ]] && grep -q "^x: (groupid=0, jobs=1): err= 0" "$T/out"' \
	"exit $rc: $(tail -c 300 "$T/out")"

"$B" info "file:$F" >"$T/info" 2>&1
rc=$?
check info_poll '[[ $rc == 0 ]] && grep -q "features:.* poll$" "$T/info" &&
	grep -q "hardware queues: *1 (+1 poll)" "$T/info"' "exit $rc: $(head -c 400 "$T/info")"

"$B" info "file:$T/missing.img" >"$T/out" 2>&1
rc=$?
check missing_file '[[ $rc != 0 ]] && grep -q "$T/missing.img.*no such file" "$T/out"' \
	"exit $rc: $(head -c 300 "$T/out")"

if [[ $(id -u) != 0 ]]; then
	skip loop_device "losetup needs root"
	exit 0
fi
truncate -s 64M "$T/loop.img"
if ! LOOP=$(losetup -f --show "$T/loop.img" 2>"$T/err"); then
	LOOP=
	skip loop_device "losetup: $(head -c 200 "$T/err")"
	exit 0
fi
"$B" bench --name=l --filename="$LOOP" --rw=randwrite --bs=4k --iodepth=16 --size=8M \
	--fixedbufs=1 >"$T/out" 2>&1 &&
	"$B" bench --name=l --filename="$LOOP" --rw=randread --bs=4k --iodepth=16 --size=8M \
		>>"$T/out" 2>&1
rc=$?
check loop_device '[[ $rc == 0 ]] && [[ $(grep -c "^l: (groupid=0, jobs=1): err= 0" "$T/out") == 2 ]]' \
	"exit $rc: $(tail -c 300 "$T/out")"

"$B" info "file:$LOOP,iopoll=1" >"$T/info" 2>&1
rc=$?
check info_kernel_poll '[[ $rc == 0 ]] && grep -q "features:.* poll kernel_poll" "$T/info"' \
	"exit $rc: $(head -c 400 "$T/info")"

# A device the kernel marks read-only (BLKROSET) is read-only here too.
blockdev --setro "$LOOP"
"$B" info "$LOOP" >"$T/info" 2>&1
rc=$?
blockdev --setrw "$LOOP"
check info_kernel_read_only '[[ $rc == 0 ]] && grep -q "read only: *yes" "$T/info"' \
	"exit $rc: $(head -c 400 "$T/info")"
