#!/usr/bin/env bash
# `blkring serve` and the nbdkit plugin against real NBD clients: nbdinfo,
# nbdcopy, qemu-img, qemu-io, fio's nbd engine and blkring's own nbd:
# driver.  nbdkit is not instrumented, so this runs once, in the ASan
# tree's turn, with the main build's plugin (tests/test-plugin.c is the
# plugin's instrumented test); the ASan blkring is copied beside it so that
# serve finds the plugin next to itself.  Unix sockets and 127.0.0.1 only;
# every server is this script's child, stopped by its pid, also on failure.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[[ ${BLKRING:-} == *asan* ]] || exit 0
PLUGIN=${BLKRING_PLUGIN:-build/nbdkit-blkring-plugin.so}
if [[ ! -f $PLUGIN ]]; then
	skip serve "no $PLUGIN (nbdkit-plugin-dev: scripts/setup.sh, then make)"
	exit 0
fi
for c in nbdkit nbdinfo nbdcopy qemu-img qemu-io fio jq; do
	if ! command -v $c >/dev/null; then
		skip serve "$c is not installed (scripts/setup.sh)"
		exit 0
	fi
done

T=$(mktemp -d /tmp/blkring-serve-test.XXXXXX)
pids=()
teardown() {
	local p i
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for ((i = 0; i < 200; i++)); do
		local alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[[ $alive == 0 ]] && break
		sleep 0.02
	done
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap teardown EXIT
mkdir "$T/bin"
cp "$BLKRING" "$T/bin/blkring"
ln -s "$PWD/$PLUGIN" "$T/bin/nbdkit-blkring-plugin.so"
ln -s "$PWD/$(dirname "$PLUGIN")/libblkring.so.1" "$T/bin/libblkring.so.1"
# The plugin's library loads the nbd module from beside itself (so does
# the command, which gets the main tree's then: it needs it only to look).
ln -s "$PWD/$(dirname "$PLUGIN")/blkring-modules" "$T/bin/blkring-modules"
SB=$T/bin/blkring

# serve NAME SPEC [ARGS...]: `blkring serve` on $T/NAME.sock in the
# background; SPID its pid, URI what it printed (empty if it failed).
serve() {
	local name=$1 i
	shift
	"$SB" serve "$@" --socket="$T/$name.sock" >"$T/$name.uri" 2>"$T/$name.err" &
	SPID=$!
	pids+=("$SPID")
	for ((i = 0; i < 500; i++)); do
		[[ -s $T/$name.uri ]] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.01
	done
	URI=$(head -n 1 "$T/$name.uri")
}

# stop PID [SECONDS]: SIGTERM, then its exit status (124 if it hung).
stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < ${2:-10} * 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# exits PID SECONDS: 0 once PID has exited (its status in $RC), 1 if it hangs.
exits() {
	local i
	for ((i = 0; i < $2 * 50; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			RC=$?
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# In the scratch directory: a verify job that fails leaves fio's
# local-j-0-verify.state in its working directory.
fio_nbd() {
	(cd "$T" && fio --name=j --ioengine=nbd --uri="$1" --bs=4k --iodepth=16 \
		--output-format=json --output="$T/fio.json" "${@:2}") >"$T/fio.out" 2>&1
}

head -c 16M /dev/urandom >"$T/rand16"

# ---- a memory-backed null device with discard and write zeroes ----
serve mem null:size=16M,memory_backed=1,discard=1,write_zeroes=1
check serve_prints_uri '[[ $URI == "nbd+unix:///?socket=$T/mem.sock" ]]' \
	"uri '$URI': $(head -c 300 "$T/mem.err")"
nbdinfo --json "$URI" >"$T/info.json" 2>"$T/info.err"
check nbdinfo_size_caps 'jq -e ".exports[0] | .\"export-size\" == 16777216 and .can_trim and
	.can_zero and .can_fast_zero and .can_multi_conn and (.is_read_only | not) and
	.block_size_minimum == 512" "$T/info.json" >/dev/null' "$(head -c 400 "$T/info.json" "$T/info.err")"

nbdcopy "$T/rand16" "$URI" 2>"$T/err" && nbdcopy "$URI" "$T/out16" 2>>"$T/err"
check nbdcopy_roundtrip 'cmp -s "$T/rand16" "$T/out16"' "$(head -c 300 "$T/err")"

head -c 16M /dev/urandom >"$T/q16"
qemu-img convert -n -f raw -O raw "$T/q16" "$URI" 2>"$T/err" &&
	qemu-img compare -f raw -F raw "$T/q16" "$URI" >"$T/cmp" 2>>"$T/err"
check qemu_img_convert_compare 'grep -q "Images are identical" "$T/cmp"' \
	"$(head -c 300 "$T/err" "$T/cmp")"

fio_nbd "$URI" --rw=randwrite --size=4M --verify=crc32c --verify_fatal=1 --do_verify=1
rc=$?
check fio_verify_crc32c '[[ $rc == 0 ]] && jq -e ".jobs[0].error == 0 and .jobs[0].read.io_bytes > 0" \
	"$T/fio.json" >/dev/null' "exit $rc: $(tail -c 300 "$T/fio.out")"

# Discard frees the null device's memory and write zeroes zeroes it:
# both read back as zeroes; what is around them is untouched.
qemu-io -f raw -c "write -P 0xab 0 256k" -c "discard 0 64k" -c "write -z 64k 64k" \
	-c "write -z -u 128k 64k" -c "read -P 0 0 192k" -c "read -P 0xab 192k 64k" \
	"$URI" >"$T/qio" 2>&1
rc=$?
check trim_zero_read_zeroes '[[ $rc == 0 ]] && ! grep -qi "fail\|error" "$T/qio"' \
	"exit $rc: $(grep -i "fail\|error" "$T/qio" | head -c 300)"

stop "$SPID"
rc=$?
check stop_exits_0 '[[ $rc == 0 && ! -e $T/mem.sock ]]' "exit $rc: $(head -c 300 "$T/mem.err")"

# ---- a striped volume over a null device and a file ----
cat >"$T/striped.table" <<EOF
0 32768 striped 2 64 null:size=8M,memory_backed=1 0 file:leg.img,size=8M 0
EOF
serve striped "table:$T/striped.table"
nbdcopy "$T/rand16" "$URI" 2>"$T/err" && nbdcopy "$URI" "$T/out16" 2>>"$T/err"
# 32 KiB chunks: the file leg holds the volume's odd ones.
check striped_null_file_roundtrip 'cmp -s "$T/rand16" "$T/out16" &&
	cmp -s <(dd if="$T/rand16" bs=32k skip=1 count=1 2>/dev/null) <(head -c 32k "$T/leg.img")' \
	"$(head -c 300 "$T/err" "$T/striped.err")"
# NBD's preferred block size is the volume's minimum I/O size: its chunk.
nbdinfo --json "$URI" >"$T/info.json" 2>&1
check striped_preferred_block_chunk 'jq -e ".exports[0].block_size_preferred == 32768" \
	"$T/info.json" >/dev/null' "$(head -c 400 "$T/info.json")"
stop "$SPID" >/dev/null

# ---- read-only, and TCP on 127.0.0.1 ----
serve ro null:size=16M,memory_backed=1 --readonly
nbdinfo --json "$URI" >"$T/info.json" 2>&1
nbdcopy "$T/rand16" "$URI" >"$T/err" 2>&1
rc=$?
check readonly_refuses_writes '[[ $rc != 0 ]] && jq -e ".exports[0].is_read_only" \
	"$T/info.json" >/dev/null' "nbdcopy exit $rc; $(head -c 300 "$T/info.json")"
stop "$SPID" >/dev/null

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$SB" serve null:size=1M --bind=127.0.0.1 --port="$port" >"$T/tcp.uri" 2>"$T/tcp.err" &
SPID=$!
pids+=("$SPID")
for ((i = 0; i < 500; i++)); do [[ -s $T/tcp.uri ]] && break; sleep 0.01; done
check tcp_127_0_0_1 '[[ $(head -n 1 "$T/tcp.uri") == "nbd://127.0.0.1:$port/" ]] &&
	[[ $(nbdinfo --size "nbd://127.0.0.1:$port/" 2>&1) == 1048576 ]]' \
	"$(head -c 300 "$T/tcp.uri" "$T/tcp.err")"
stop "$SPID" >/dev/null

# ---- refusals ----
"$SB" serve null:sise=1 --socket="$T/bad.sock" >"$T/out" 2>"$T/err"
rc=$?
check bad_spec_refused '[[ $rc == 1 ]] && grep -q "unknown key .sise." "$T/err" && [[ ! -s $T/out ]]' \
	"exit $rc: $(head -c 300 "$T/err")"
"$SB" serve null: --port=10809 >"$T/out" 2>"$T/err"
rc=$?
check needs_socket_or_bind '[[ $rc == 2 ]] && grep -q "is required" "$T/err"' "exit $rc"
PATH=/nonexistent "$SB" serve null: --socket="$T/x.sock" >"$T/out" 2>"$T/err"
rc=$?
check nbdkit_missing '[[ $rc == 1 ]] && grep -q "nbdkit is not installed" "$T/err"' \
	"exit $rc: $(head -c 300 "$T/err")"

# ---- SIGHUP reload with a client connected (nbdkit run as a user would,
# with the plugin's own parameters) ----
cat >"$T/vol.table" <<EOF
0 16384 linear null:size=8M,memory_backed=1,name=a 0
EOF
rm -f "$T/hup.sock"
nbdkit -f --exit-with-parent -P "$T/hup.pid" -U "$T/hup.sock" "$PLUGIN" "table=$T/vol.table" \
	depth=8 sqpoll=1 2>"$T/hup.err" &
NPID=$!
pids+=("$NPID")
for ((i = 0; i < 500; i++)); do [[ -s $T/hup.pid ]] && break; sleep 0.01; done
HURI="nbd+unix:///?socket=$T/hup.sock"
nbdcopy <(head -c 8M "$T/rand16") "$HURI" 2>"$T/err"
fio_nbd "$HURI" --rw=randread --size=8M --runtime=600ms --time_based &
FPID=$!
sleep 0.2
cat >"$T/vol.table" <<EOF
0 16384 linear null:size=8M,memory_backed=1,name=b 0
EOF
kill -HUP "$NPID"
exits "$FPID" 10
frc=$RC
nbdcopy "$HURI" "$T/out8" 2>>"$T/err"
check sighup_reload_client_connected '[[ $frc == 0 ]] && kill -0 $NPID &&
	jq -e ".jobs[0].error == 0 and .jobs[0].read.io_bytes > 0" "$T/fio.json" >/dev/null &&
	cmp -s "$T/out8" <(head -c 8M /dev/zero)' \
	"fio $frc: $(tail -c 200 "$T/fio.out"); $(head -c 300 "$T/hup.err" "$T/err")"
stop "$NPID" >/dev/null

# The same through blkring serve, which passes SIGHUP on for a table.
serve hup2 "table:$T/vol.table"
sz1=$(nbdinfo --size "$URI" 2>&1)
echo "0 32768 linear null:size=16M,name=c 0" >"$T/vol.table"
kill -HUP "$SPID"
for ((i = 0; i < 200; i++)); do
	sz2=$(nbdinfo --size "$URI" 2>&1)
	[[ $sz2 == 16777216 ]] && break
	sleep 0.01
done
check serve_sighup_reloads '[[ $sz1 == 8388608 && $sz2 == 16777216 ]] && kill -0 $SPID' \
	"sizes $sz1 $sz2: $(head -c 300 "$T/hup2.err")"
stop "$SPID" >/dev/null

# ---- stopped under load: clients see errors, nothing hangs, the file is flushed ----
serve load "file:$T/disk.img,size=16M"
fio_nbd "$URI" --rw=randrw --size=16M --runtime=30 --time_based &
FPID=$!
sleep 0.5
stop "$SPID" 10
src=$?
exits "$FPID" 10
fhang=$?
check stop_under_load '[[ $src == 0 && $fhang == 0 && $RC != 0 ]]' \
	"serve $src, fio hung $fhang exit ${RC:-}: $(tail -c 200 "$T/fio.out")"

serve flush "file:$T/disk.img,size=16M"
nbdcopy "$T/rand16" "$URI" 2>"$T/err"
stop "$SPID" >/dev/null
check stop_flushes_file 'cmp -s "$T/rand16" "$T/disk.img"' "$(head -c 300 "$T/err")"

# ---- blkring's own nbd: driver reads what another client wrote: a second
# server re-exports the first through it ----
serve first null:size=16M,memory_backed=1
first=$SPID
furi=$URI
nbdcopy "$T/q16" "$furi" 2>"$T/err"
if "$SB" info "$furi" >/dev/null 2>&1; then
	serve second "$furi"
	nbdcopy "$URI" "$T/out16" 2>>"$T/err"
	check nbd_driver_reads_back 'cmp -s "$T/q16" "$T/out16"' \
		"$(head -c 300 "$T/err" "$T/second.err")"
	stop "$SPID" >/dev/null
else
	skip nbd_driver_reads_back "blkring has no nbd: driver"
fi
stop "$first" >/dev/null
