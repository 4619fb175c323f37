#!/usr/bin/env bash
# blkring's rbd driver beside fio's rbd engine, both on one image of a
# one-node memstore cluster (tests/ceph-cluster.sh, started in a scratch
# directory and stopped by its pid files at exit), 4k random I/O at queue
# depth 32, one job each, with librbd's cache as each side uses it:
#
#   randread, randwrite: blkring with completion=callback, blkring with
#     completion=eventfd, fio (targets: randread >= 1.0 of fio, randwrite
#     >= 1.3 of fio) and the floor, a minimal librbd loop (bench/rbd-raw.c)
#     in either completion mode with blkring's cache setting; twice:
#     blkring's cache=writeback against fio's default (its engine flushes
#     once after open, which turns librbd's cache to writeback), and
#     blkring's cache=none against fio with --direct=1 (its engine turns
#     the cache off)
#
# The image is written once first: reads of never-written objects are
# answered without the OSD.  Each comparison alternates its runs ROUNDS
# times; every run, the medians and their ratios are printed, and the
# medians of the CPU time per I/O of the client (user + system) and of
# the OSD (from /proc), which share the machine's CPUs.
#
#   bench/rbd-vs-fio.sh [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
O=${1:-build}
SECS=${2:-5}
ROUNDS=${3:-3}
SIZE_MB=256

for c in "$O/blkring" "$O/bench/rbd-raw" fio jq ceph-mon; do
	command -v "$c" >/dev/null || { echo "rbd-vs-fio: $c is missing" >&2; exit 2; }
done
[[ -e $O/blkring-modules/rbd.so ]] ||
	{ echo "rbd-vs-fio: $O/blkring-modules/rbd.so is not built (needs librbd-dev)" >&2; exit 2; }
T=$(mktemp -d /tmp/blkring-rbd-vs-fio.XXXXXX)
cleanup() {
	tests/ceph-cluster.sh stop "$T/ceph" >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tests/ceph-cluster.sh start "$T/ceph"
tests/ceph-cluster.sh image "$T/ceph" img "$SIZE_MB"
export CEPH_CONF=$T/ceph/ceph.conf
"$O/blkring" bench --name=fill --filename=rbd:rbd/img --rw=write --bs=1M --iodepth=8 >/dev/null

JOB=(--bs=4k --iodepth=32 --runtime="$SECS" --time_based=1)

blkring_iops() { # rw completion cache
	"$O/blkring" bench --output-format=json --name=b \
		--filename="rbd:rbd/img,completion=$2,cache=$3" --rw="$1" "${JOB[@]}" |
		jq ".jobs[0].${1#rand}.iops | round"
}

fio_iops() { # rw direct
	fio --output-format=json --output="$T/fio.json" --name=f --ioengine=rbd --pool=rbd \
		--rbdname=img --clientname=admin --rw="$1" --direct="$2" "${JOB[@]}" >/dev/null
	jq ".jobs[0].${1#rand}.iops | round" "$T/fio.json"
}

raw_iops() { # rw completion cache
	"$O/bench/rbd-raw" rbd img "${1#rand}" 4096 32 "$SECS" "$2" "$3" | sed 's/^iops=//'
}

OSD_PID=$(cat "$T"/ceph/run/osd.*.pid)
osd_ticks() { awk '{ print $14 + $15 }' "/proc/$OSD_PID/stat"; }

run_one() { # KIND rw cache fio-direct: IOPS of one run
	case $1 in
	callback | eventfd) blkring_iops "$2" "$1" "$3" ;;
	fio) fio_iops "$2" "$4" ;;
	raw-*) raw_iops "$2" "${1#raw-}" "$3" ;;
	esac
}

# measured ARGS... (run_one's): "IOPS CLIENT-US OSD-US", the CPU time per
# I/O of the client (the subshell's children, from `times`) and the OSD.
measured() {
	local t0 iops cpu
	t0=$(osd_ticks)
	read -r iops cpu < <(
		iops=$(run_one "$@")
		# times, not forked: this shell's user and system time, then its children's.
		times >"$T/times"
		echo "$iops $(tail -1 "$T/times" | sed 's/\([0-9]*\)m\([0-9.]*\)s/\1*60+\2/g; s/ /+/')"
	)
	python3 -c "import os
n = $iops * $SECS
print($iops, round(($cpu) / n * 1e6, 1),
      round(($(osd_ticks) - $t0) / os.sysconf('SC_CLK_TCK') / n * 1e6, 1))"
}

median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
ratio() { jq -n "$1 / $2 * 100 | round / 100"; }

KINDS=(callback eventfd fio raw-callback raw-eventfd)

compare() { # rw cache fio-direct target
	local k iops cu ou
	declare -A runs=() cl=() osd=() m=()

	for _ in $(seq "$ROUNDS"); do
		for k in "${KINDS[@]}"; do
			read -r iops cu ou < <(measured "$k" "$1" "$2" "$3")
			runs[$k]+="$iops " cl[$k]+="$cu " osd[$k]+="$ou "
		done
	done
	for k in "${KINDS[@]}"; do
		# shellcheck disable=SC2086 # the lists split on purpose
		m[$k]=$(median ${runs[$k]})
	done
	printf '%-10s %-9s callback %6d  eventfd %6d  fio %6d IOPS   callback/fio %.2f  eventfd/fio %.2f  (%s)\n' \
		"$1" "$2" "${m[callback]}" "${m[eventfd]}" "${m[fio]}" \
		"$(ratio "${m[callback]}" "${m[fio]}")" "$(ratio "${m[eventfd]}" "${m[fio]}")" "$4"
	printf '%-20s raw loop: callback %6d  eventfd %6d IOPS   blkring/raw callback %.2f  eventfd %.2f\n' \
		"" "${m[raw-callback]}" "${m[raw-eventfd]}" \
		"$(ratio "${m[callback]}" "${m[raw-callback]}")" "$(ratio "${m[eventfd]}" "${m[raw-eventfd]}")"
	printf '%-20s runs:' ""
	for k in "${KINDS[@]}"; do printf ' %s %s|' "$k" "${runs[$k]}"; done
	printf '\n%-20s CPU us per I/O, client/OSD:' ""
	for k in "${KINDS[@]}"; do
		# shellcheck disable=SC2086
		printf ' %s %s/%s' "$k" "$(median ${cl[$k]})" "$(median ${osd[$k]})"
	done
	echo
}

echo "memstore image ${SIZE_MB}M, ${SECS}s runs, $ROUNDS rounds, $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "blkring: $O/blkring bench --filename=rbd:rbd/img,completion=MODE,cache=CACHE --rw=RW ${JOB[*]}"
echo "raw:     $O/bench/rbd-raw rbd img read|write 4096 32 $SECS callback|eventfd CACHE"
echo "fio:     fio --ioengine=rbd --pool=rbd --rbdname=img --clientname=admin --rw=RW --direct=0|1 ${JOB[*]}"
echo "writeback: blkring cache=writeback, fio --direct=0; none: blkring cache=none, fio --direct=1"
for cache in writeback none; do
	direct=$([[ $cache == none ]] && echo 1 || echo 0)
	compare randread "$cache" "$direct" "target: >= 1.0 fio"
	compare randwrite "$cache" "$direct" "target: >= 1.3 fio"
done
