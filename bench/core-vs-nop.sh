#!/usr/bin/env bash
# blkring's core path against the kernel's own io_uring, in one run:
#   - the kernel's io_uring NOP rate, one thread, batches of 32 (nop-uring);
#   - blkring bench on a null device, irqmode=none, 4k random reads,
#     iodepth 128, one job, latency tracking on, submitted in batches of 32
#     or, with --unbatched, one I/O per submit (fio's default).
# The two alternate three times; the medians and their ratio are printed
# (targets: ratio >= 1.0 batched, >= 2.0 unbatched as issue 25 asks).
# With --callgrind, also blkring's instructions per I/O: two runs of
# different sizes under callgrind, the difference divided by the
# difference in I/Os, so start-up and teardown cancel out; the library's
# share and the tool's are given apart (bench/callgrind-split.py).
#
#   bench/core-vs-nop.sh [--callgrind] [--unbatched] [BUILD_DIR] [SECONDS]
set -euo pipefail
callgrind=0 batch=32
while [[ ${1:-} == --* ]]; do
	case $1 in
	--callgrind) callgrind=1 ;;
	--unbatched) batch=1 ;;
	*) echo "core-vs-nop: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
O=${1:-build}
SECS=${2:-1}
JOB=(--name=core --filename=null:irqmode=none --rw=randread --bs=4k --iodepth=128
	--iodepth_batch_submit=$batch)

for f in "$O/blkring" "$O/bench/nop-uring"; do
	[[ -x $f ]] || { echo "core-vs-nop: $f is missing: run make first" >&2; exit 2; }
done

json_field() { # python expression on the document d
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

nops=() iops=()
for _ in 1 2 3; do
	nops+=("$("$O/bench/nop-uring" "$SECS" | sed -n 's/^nop_ops_per_sec=//p')")
	iops+=("$("$O/blkring" bench --output-format=json "${JOB[@]}" --runtime="$SECS" \
		--time_based | json_field "round(d['jobs'][0]['read']['iops'])")")
done
nop=$(median "${nops[@]}")
core=$(median "${iops[@]}")
printf 'kernel io_uring NOP, batch 32:   %12.0f ops/s   (runs: %s)\n' "$nop" "${nops[*]}"
printf 'blkring null 4k randread qd128, batch %s: %12.0f IOPS    (runs: %s)\n' "$batch" "$core" "${iops[*]}"
python3 -c "print('ratio blkring/NOP: %.3f' % ($core / $nop))"

if ((callgrind)); then
	if ! command -v valgrind >/dev/null; then
		echo "instructions per I/O: valgrind is not installed" >&2
		exit 0
	fi
	# 16384 and 131072 blocks: powers of two, so the random map skips nothing.
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	count() { # size -> "TOTAL LIBRARY"
		valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$1" "$O/blkring" bench \
			--output-format=json "${JOB[@]}" --size="$1" >/dev/null 2>&1
		"$(dirname "$0")/callgrind-split.py" "$dir/cg.$1"
	}
	read -r small small_lib < <(count 64M)
	read -r large large_lib < <(count 512M)
	python3 -c "ios = 131072 - 16384
total, lib = ($large - $small) / ios, ($large_lib - $small_lib) / ios
print('instructions per I/O (callgrind): %.0f (library %.0f, tool %.0f)' % (total, lib, total - lib))"
fi
