#!/usr/bin/env bash
# rbd devices from the command line, against a one-node cluster
# (tests/ceph-cluster.sh) and an nbdkit server, both started in a scratch
# directory and stopped on any exit by their pid files: `blkring info`,
# verified benches in both completion modes and polled, fio's rbd engine
# options, a volume striped over an RBD image and an NBD server verified
# with --verify=crc32c, the OSD killed mid-run (errors within
# osd_op_timeout, exit 1, no hang), and rbd: without its module.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d /tmp/blkring-rbd-bench.XXXXXX)
NBDKIT_PID=
cleanup() {
	tests/ceph-cluster.sh stop "$T/ceph" >/dev/null 2>&1
	if [[ -n $NBDKIT_PID ]]; then
		kill -KILL "$NBDKIT_PID" 2>/dev/null
		{ wait "$NBDKIT_PID"; } 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
# What librados keeps past exit, and what it touches inside Ceph code the
# thread sanitizer cannot see (tests/test-rbd.c says the same).
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizer/rbd-lsan.supp:print_suppressions=0
export TSAN_OPTIONS=ignore_noninstrumented_modules=1

CASES="rbd_info rbd_verify_callback rbd_verify_eventfd rbd_polled rbd_fio_engine
	rbd_striped_nbd_verify rbd_osd_killed rbd_no_module"
module=${B%/*}/blkring-modules/rbd.so
if [[ ! -e $module ]]; then
	why="$module is not built (make builds it with librbd-dev)"
elif ! command -v ceph-mon >/dev/null || ! command -v nbdkit >/dev/null; then
	why="ceph-mon or nbdkit not installed (scripts/setup.sh test installs them)"
elif ! tests/ceph-cluster.sh start "$T/ceph" >"$T/ceph.log" 2>&1 ||
	! tests/ceph-cluster.sh image "$T/ceph" img 128 >>"$T/ceph.log" 2>&1; then
	why="the cluster did not start: $(tail -c 300 "$T/ceph.log")"
else
	nbdkit -f -P "$T/nbd.pid" -U "$T/nbd.sock" memory 128M >"$T/nbd.log" 2>&1 &
	NBDKIT_PID=$!
	for ((i = 0; i < 500; i++)); do
		[[ -e $T/nbd.pid ]] && break
		sleep 0.01
	done
	[[ -e $T/nbd.pid ]] || why="nbdkit did not start: $(head -c 200 "$T/nbd.log")"
fi
if [[ -n ${why:-} ]]; then
	for c in $CASES; do
		skip "$c" "$why"
	done
	exit 0
fi
export CEPH_CONF=$T/ceph/ceph.conf
R=rbd:rbd/img

"$B" info "$R" >"$T/info" 2>&1
rc=$?
check rbd_info '[[ $rc == 0 ]] && grep -q "type: *rbd" "$T/info" &&
	grep -q "size: *134217728 bytes" "$T/info"' "exit $rc: $(head -c 400 "$T/info")"

# bench_ok NAME ARGS...: the job j runs with no error.
bench_ok() {
	local name=$1 rc
	shift
	# In the scratch directory: a verify job saves its state in the current one.
	(cd "$T" && timeout 300 "$B" bench --name=j "$@") >"$T/out" 2>&1
	rc=$?
	check "$name" '[[ $rc == 0 ]] && grep -q "^j: (groupid=0, jobs=1): err= 0" "$T/out"' \
		"exit $rc: $(tail -c 300 "$T/out")"
}

bench_ok rbd_verify_callback --filename="$R" --rw=randwrite --bs=4k --iodepth=32 --size=8M \
	--verify=crc32c
bench_ok rbd_verify_eventfd --filename="$R,completion=eventfd" --rw=randwrite --bs=16k \
	--iodepth=16 --offset=8M --size=8M --verify=crc32c
bench_ok rbd_polled --filename="$R,poll_queues=1" --rw=randrw --bs=4k --iodepth=16 --hipri=1 \
	--offset=16M --size=4M --verify=crc32c
bench_ok rbd_fio_engine --ioengine=rbd --pool=rbd --rbdname=img --clientname=admin \
	--rw=randread --bs=4k --iodepth=32 --size=4M

# 64 MiB striped over the image and the server in 64 KiB chunks.
printf '0 131072 striped 2 128 %s 65536 nbd+unix:///?socket=%s 0\n' "$R" "$T/nbd.sock" \
	>"$T/striped.table"
bench_ok rbd_striped_nbd_verify --filename="table:$T/striped.table" --rw=randwrite --bs=16k \
	--iodepth=16 --size=16M --verify=crc32c

# The OSD dies mid-run: in-flight I/O fails within osd_op_timeout, and the
# bench says so and exits 1.  Of 2 s: librbd's close after the errors
# waits about three more, so the run ends some 9 s after the kill, well
# within the 15 s a hang is told by (3 s made it 13 to 14 s).
"$B" bench --name=k --filename="$R,osd_op_timeout=2" --rw=randrw --bs=4k --iodepth=16 \
	--runtime=60 --time_based >"$T/out" 2>"$T/err" &
bpid=$!
sleep 1
tests/ceph-cluster.sh kill-osd "$T/ceph"
start_s=$SECONDS
timeout 60 tail --pid=$bpid -f /dev/null
wait $bpid
rc=$?
took=$((SECONDS - start_s))
check rbd_osd_killed '[[ $rc == 1 && $took -lt 15 ]] && grep -q "error .*rbd/img" "$T/err"' \
	"exit $rc after ${took}s: $(head -c 300 "$T/err")"

# Without the module, rbd: says what is missing (the cluster is not asked).
BLKRING_MODULE_DIR=$T/none "$B" info "$R" >"$T/out" 2>&1
rc=$?
check rbd_no_module '[[ $rc != 0 ]] && grep -q "rbd: support is not installed" "$T/out"' \
	"exit $rc: $(head -c 300 "$T/out")"
