#!/usr/bin/env bash
# nbd devices from the command line, against nbdkit servers the test starts
# on unix sockets in a scratch directory and stops on any exit (by their
# pids, never by name): `blkring info` and `blkring bench` on an nbd: spec,
# polled and not, and through fio's nbd engine options; a bench against a
# server stopped with SIGSTOP exits 1 naming the error; a striped volume
# over two servers verified with --verify=crc32c.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d /tmp/blkring-nbd-bench.XXXXXX)
PIDS=()
cleanup() {
	local pid
	# Memory servers have nothing to save; SIGKILL also ends the
	# stopped one, which woken would reply on a connection the client
	# shut down (nbdkit 1.32 then aborts, noisily).
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		{ wait "$pid"; } 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/lib.sh"
# Verify jobs save their state in the current directory (fio's rule): the
# scratch one, not the checkout.
cd "$T" || exit 1

CASES="info bench_randread bench_polled fio_engine bench_stopped striped_verify"
if ! command -v nbdkit >/dev/null; then
	for c in $CASES; do
		skip "$c" "nbdkit not installed (scripts/setup.sh installs it)"
	done
	exit 0
fi

# start NAME SIZE: nbdkit's memory plugin on $T/NAME.sock, ready once its
# pid file exists.
start() {
	local i
	nbdkit -f -P "$T/$1.pid" -U "$T/$1.sock" memory "$2" >"$T/$1.log" 2>&1 &
	PIDS+=($!)
	for ((i = 0; i < 500; i++)); do
		[[ -e $T/$1.pid ]] && return 0
		sleep 0.01
	done
	return 1
}
start a 256M && start b 256M && start stop 64M || {
	for c in $CASES; do
		skip "$c" "nbdkit did not start: $(head -c 200 "$T"/*.log)"
	done
	exit 0
}
A="nbd+unix:///?socket=$T/a.sock"
BB="nbd+unix:///?socket=$T/b.sock"
S="nbd+unix:///?socket=$T/stop.sock"
STOP_PID=${PIDS[2]}

"$B" info "$A" >"$T/info" 2>&1
rc=$?
check info '[[ $rc == 0 ]] && grep -q "type: *nbd" "$T/info" &&
	grep -q "features:.* multi_conn" "$T/info"' "exit $rc: $(head -c 400 "$T/info")"

"$B" bench --name=r --filename="$A" --rw=randread --bs=4k --iodepth=32 --runtime=500ms \
	--time_based >"$T/out" 2>&1
rc=$?
check bench_randread '[[ $rc == 0 ]] && grep -q "^r: (groupid=0, jobs=1): err= 0" "$T/out"' \
	"exit $rc: $(tail -c 300 "$T/out")"

"$B" bench --name=p --filename="$A,poll_queues=1" --rw=randrw --bs=4k --iodepth=16 --hipri=1 \
	--size=8M --verify=crc32c >"$T/out" 2>&1
rc=$?
check bench_polled '[[ $rc == 0 ]] && grep -q "^p: (groupid=0, jobs=1): err= 0" "$T/out"' \
	"exit $rc: $(tail -c 300 "$T/out")"

# fio's nbd engine options: the job runs on the nbd: device of its uri=.
"$B" bench --name=e --ioengine=nbd --uri="$BB" --rw=randwrite --bs=4k --iodepth=16 --size=4M \
	--verify=crc32c >"$T/out" 2>&1
rc=$?
check fio_engine '[[ $rc == 0 ]] && grep -q "^e: (groupid=0, jobs=1): err= 0" "$T/out" &&
	grep -q "ioengine=nbd runs on a blkring ring over the nbd: device" "$T/out"' \
	"exit $rc: $(tail -c 300 "$T/out")"

# The server stops answering mid-run: in-flight I/O fails after
# io_timeout_ms, and the bench says so and exits 1.
"$B" bench --name=s --filename="$S,io_timeout_ms=300" --rw=randrw --bs=4k --iodepth=16 \
	--runtime=20 --time_based >"$T/out" 2>"$T/err" &
bpid=$!
sleep 0.3
kill -STOP "$STOP_PID"
start_s=$SECONDS
wait $bpid
rc=$?
took=$((SECONDS - start_s))
check bench_stopped '[[ $rc == 1 && $took -lt 5 ]] &&
	grep -q "error .*stop.sock.*EIO (Input/output error)" "$T/err"' \
	"exit $rc after ${took}s: $(head -c 300 "$T/err")"

# 64 MiB striped over the two servers in 4 KiB chunks.
printf '0 131072 striped 2 8 %s 0 %s 0\n' "$A" "$BB" >"$T/striped.table"
"$B" bench --name=v --filename="table:$T/striped.table" --rw=randwrite --bs=16k --iodepth=16 \
	--size=32M --verify=crc32c >"$T/out" 2>&1
rc=$?
check striped_verify '[[ $rc == 0 ]] && grep -q "^v: (groupid=0, jobs=1): err= 0" "$T/out" &&
	grep -q "issued rwts: total=2048,2048" "$T/out"' "exit $rc: $(tail -c 300 "$T/out")"
