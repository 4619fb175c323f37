#!/usr/bin/env bash
# blkring's nbd driver beside a minimal libnbd loop (bench/nbd-raw.c, the
# floor) and fio's nbd engine, all against one nbdkit memory server on a
# unix socket that the script starts (and stops by its pid at exit), 4k
# random I/O, one job each:
#
#   randread, randwrite at queue depth 32: blkring, raw, fio
#     (targets: randread >= 0.9 of raw and >= 1.0 of fio; randwrite
#     >= 1.2 of fio)
#   polled: blkring randread with poll_queues=1 and --hipri=1 against the
#     same without, at queue depth 1 and 32
#
# The export is written once first, so reads read data.  Each comparison
# alternates its runs ROUNDS times (the machine's other load shifts
# between runs); every run, the medians and their ratios are printed.
# With --pin the server runs on the last CPU and every client on the
# first, so where the scheduler puts them no longer moves the figures.
#
#   bench/nbd-vs-fio.sh [--pin] [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
SERVER_CPU=() CLIENT_CPU=()
if [[ ${1:-} == --pin ]]; then
	last=$(($(nproc) - 1))
	((last > 0)) || { echo "nbd-vs-fio: --pin needs two CPUs" >&2; exit 2; }
	SERVER_CPU=(taskset -c "$last") CLIENT_CPU=(taskset -c 0)
	shift
fi
O=${1:-build}
SECS=${2:-5}
ROUNDS=${3:-5}
SIZE=1G

for c in "$O/blkring" "$O/bench/nbd-raw" nbdkit fio jq; do
	command -v "$c" >/dev/null || { echo "nbd-vs-fio: $c is missing" >&2; exit 2; }
done
T=$(mktemp -d /tmp/blkring-nbd-vs-fio.XXXXXX)
SERVER=
cleanup() {
	[[ -z $SERVER ]] || { kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; }
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"${SERVER_CPU[@]}" nbdkit -f -P "$T/pid" -U "$T/sock" memory "$SIZE" >"$T/log" 2>&1 &
SERVER=$!
for ((i = 0; i < 500; i++)); do
	[[ -e $T/pid ]] && break
	sleep 0.01
done
[[ -e $T/pid ]] || { echo "nbd-vs-fio: nbdkit did not start: $(cat "$T/log")" >&2; exit 1; }
URI="nbd+unix:///?socket=$T/sock"
"$O/blkring" bench --name=fill --filename="$URI" --rw=write --bs=1M --iodepth=8 >/dev/null

JOB=(--bs=4k --runtime="$SECS" --time_based=1)

blkring_iops() { # rw depth spec-suffix [options...]
	local rw=$1 qd=$2 suffix=$3 dir=${1#rand}

	shift 3
	"${CLIENT_CPU[@]}" "$O/blkring" bench --output-format=json --name=b --filename="$URI$suffix" --rw="$rw" \
		--iodepth="$qd" "${JOB[@]}" "$@" | jq ".jobs[0].$dir.iops | round"
}

raw_iops() { # rw depth
	"${CLIENT_CPU[@]}" "$O/bench/nbd-raw" "$URI" "${1#rand}" 4096 "$2" "$SECS" | sed 's/^iops=//'
}

fio_iops() { # rw depth
	local dir=${1#rand}

	"${CLIENT_CPU[@]}" fio --output-format=json --output="$T/fio.json" --name=f --ioengine=nbd --uri="$URI" \
		--rw="$1" --iodepth="$2" "${JOB[@]}" >/dev/null
	jq ".jobs[0].$dir.iops | round" "$T/fio.json"
}

median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
ratio() { jq -n "$1 / $2 * 100 | round / 100"; }

# rw: blkring, raw and fio alternating; medians and ratios.
three_way() { # rw read-targets
	local rw=$1 b=() r=() f=() bm rm fm

	for _ in $(seq "$ROUNDS"); do
		b+=("$(blkring_iops "$rw" 32 "")")
		r+=("$(raw_iops "$rw" 32)")
		f+=("$(fio_iops "$rw" 32)")
	done
	bm=$(median "${b[@]}")
	rm=$(median "${r[@]}")
	fm=$(median "${f[@]}")
	printf '%-10s blkring %7d  raw %7d  fio %7d IOPS   blkring/raw %.2f  blkring/fio %.2f  (%s)\n' \
		"$rw" "$bm" "$rm" "$fm" "$(ratio "$bm" "$rm")" "$(ratio "$bm" "$fm")" "$2"
	printf '           runs: blkring %s | raw %s | fio %s\n' "${b[*]}" "${r[*]}" "${f[*]}"
}

polled() { # depth
	local qd=$1 p=() u=() pm um

	for _ in $(seq "$ROUNDS"); do
		p+=("$(blkring_iops randread "$qd" ",poll_queues=1" --hipri=1)")
		u+=("$(blkring_iops randread "$qd" ",poll_queues=1")")
	done
	pm=$(median "${p[@]}")
	um=$(median "${u[@]}")
	printf 'qd %-7s polled %7d  unpolled %7d IOPS   polled/unpolled %.2f\n' "$qd" "$pm" "$um" \
		"$(ratio "$pm" "$um")"
	printf '           runs: polled %s | unpolled %s\n' "${p[*]}" "${u[*]}"
}

echo "nbdkit memory $SIZE on a unix socket, ${SECS}s runs, $ROUNDS rounds, $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)${SERVER_CPU[*]:+, server: ${SERVER_CPU[*]}, clients: ${CLIENT_CPU[*]}}"
echo "blkring: $O/blkring bench --filename=$URI --rw=RW --iodepth=QD ${JOB[*]}"
echo "raw:     $O/bench/nbd-raw $URI read|write 4096 QD $SECS"
echo "fio:     fio --ioengine=nbd --uri=$URI --rw=RW --iodepth=QD ${JOB[*]}"
three_way randread "targets: >= 0.9 raw, >= 1.0 fio"
three_way randwrite "target: >= 1.2 fio"
echo "polled: blkring with ,poll_queues=1 and --hipri=1 against ,poll_queues=1 alone"
polled 1
polled 32
