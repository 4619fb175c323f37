#!/usr/bin/env bash
# blkring's file driver against fio's io_uring engine, same machine, same
# file, same options: 4k random reads at queue depth 32, O_DIRECT, on a
# 512 MiB file in /dev/shm (tmpfs takes O_DIRECT since Linux 6.6, so the
# software path is what is measured), one job each:
#
#   plain:     --rw=randread --bs=4k --iodepth=32 --direct=1
#   fixedbufs: the same plus --fixedbufs=1 --iodepth_batch_submit=16
#   rootdisk:  plain, on a 512 MiB file on the root filesystem (device-bound)
#
# Each pair alternates ROUNDS times (the machine's other load shifts
# between runs); the medians and their ratio are printed.  Targets: plain
# >= 1.0, fixedbufs >= 1.1, rootdisk >= 0.95.  Files the script makes are
# removed at exit.
#
#   bench/file-vs-fio.sh [BUILD_DIR] [SECONDS] [ROUNDS] [FILE] [ROOT_FILE]
set -euo pipefail
O=${1:-build}
SECS=${2:-5}
ROUNDS=${3:-5}
F=${4:-/dev/shm/blkring-file-vs-fio.img}
R=${5:-/var/tmp/blkring-file-vs-fio.img}

for c in "$O/blkring" fio jq; do
	command -v "$c" >/dev/null || { echo "file-vs-fio: $c is missing" >&2; exit 2; }
done
made=()
cleanup() { [[ ${#made[@]} == 0 ]] || rm -f "${made[@]}"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
for f in "$F" "$R"; do
	if [[ ! -f $f ]]; then
		made+=("$f")
		dd if=/dev/urandom of="$f" bs=1M count=512 status=none
	fi
done

COMMON=(--name=randread --rw=randread --bs=4k --iodepth=32 --direct=1 --runtime="$SECS"
	--time_based=1)
FIXED=(--fixedbufs=1 --iodepth_batch_submit=16)

blkring_iops() { # file [options...]
	local f=$1

	shift
	"$O/blkring" bench --output-format=json --filename="file:$f" "${COMMON[@]}" "$@" |
		jq '.jobs[0].read.iops | round'
}

fio_iops() { # file [options...]
	local f=$1

	shift
	fio --output-format=json --ioengine=io_uring --filename="$f" "${COMMON[@]}" "$@" |
		jq '.jobs[0].read.iops | round'
}

median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }

compare() { # label target file [options...]
	local label=$1 target=$2 file=$3 b=() f=()

	shift 3
	for _ in $(seq "$ROUNDS"); do
		b+=("$(blkring_iops "$file" "$@")")
		f+=("$(fio_iops "$file" "$@")")
	done
	local bm fm
	bm=$(median "${b[@]}")
	fm=$(median "${f[@]}")
	printf '%-9s blkring %8d IOPS  fio %8d IOPS  ratio %.2f (target >= %s)\n' "$label" "$bm" \
		"$fm" "$(jq -n "$bm / $fm")" "$target"
	printf '          blkring runs: %s\n          fio runs:     %s\n' "${b[*]}" "${f[*]}"
}

echo "file: $F, ${SECS}s runs, $ROUNDS rounds, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "blkring: $O/blkring bench --filename=file:$F ${COMMON[*]}"
echo "fio:     fio --ioengine=io_uring --filename=$F ${COMMON[*]}"
compare plain 1.0 "$F"
echo "both with: ${FIXED[*]}"
compare fixedbufs 1.1 "$F" "${FIXED[@]}"
echo "on the root filesystem: $R"
compare rootdisk 0.95 "$R"
