#!/usr/bin/env bash
# blkring's rbd driver beside fio's rbd engine, both on one image of a
# one-node memstore cluster (tests/ceph-cluster.sh, started in a scratch
# directory and stopped by its pid files at exit), 4k random I/O at queue
# depth 32, one job each, with librbd's cache as each side uses it:
#
#   randread, randwrite: blkring with completion=callback, blkring with
#     completion=eventfd, fio (targets: randread >= 1.0 of fio, randwrite
#     >= 1.3 of fio), twice: blkring's cache=writeback against fio's
#     default (its engine flushes once after open, which turns librbd's
#     cache to writeback), and blkring's cache=none against fio with
#     --direct=1 (its engine turns the cache off)
#
# The image is written once first: reads of never-written objects are
# answered without the OSD.  Each comparison alternates its runs ROUNDS
# times; every run, the medians and their ratios are printed.
#
#   bench/rbd-vs-fio.sh [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
O=${1:-build}
SECS=${2:-5}
ROUNDS=${3:-3}
SIZE_MB=256

for c in "$O/blkring" fio jq ceph-mon; do
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

median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
ratio() { jq -n "$1 / $2 * 100 | round / 100"; }

three_way() { # rw cache fio-direct target
	local rw=$1 c=() e=() f=() cm em fm

	for _ in $(seq "$ROUNDS"); do
		c+=("$(blkring_iops "$rw" callback "$2")")
		e+=("$(blkring_iops "$rw" eventfd "$2")")
		f+=("$(fio_iops "$rw" "$3")")
	done
	cm=$(median "${c[@]}")
	em=$(median "${e[@]}")
	fm=$(median "${f[@]}")
	printf '%-10s %-9s callback %6d  eventfd %6d  fio %6d IOPS   callback/fio %.2f  eventfd/fio %.2f  (%s)\n' \
		"$rw" "$2" "$cm" "$em" "$fm" "$(ratio "$cm" "$fm")" "$(ratio "$em" "$fm")" "$4"
	printf '                     runs: callback %s | eventfd %s | fio %s\n' "${c[*]}" "${e[*]}" \
		"${f[*]}"
}

echo "memstore image ${SIZE_MB}M, ${SECS}s runs, $ROUNDS rounds, $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "blkring: $O/blkring bench --filename=rbd:rbd/img,completion=MODE,cache=CACHE --rw=RW ${JOB[*]}"
echo "fio:     fio --ioengine=rbd --pool=rbd --rbdname=img --clientname=admin --rw=RW --direct=0|1 ${JOB[*]}"
echo "writeback: blkring cache=writeback, fio --direct=0; none: blkring cache=none, fio --direct=1"
for cache in writeback none; do
	direct=$([[ $cache == none ]] && echo 1 || echo 0)
	three_way randread "$cache" "$direct" "target: >= 1.0 fio"
	three_way randwrite "$cache" "$direct" "target: >= 1.3 fio"
done
