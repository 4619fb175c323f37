#!/usr/bin/env bash
# blkring's core path against the kernel's own io_uring, in one run:
#   - the kernel's io_uring NOP rate, one thread, batches of 32 (nop-uring);
#   - blkring bench on a null device, irqmode=none, 4k random reads,
#     iodepth 128 (submitted in batches of 32), one job, latency tracking on.
# The two alternate three times; the medians and their ratio are printed
# (target: ratio >= 1.0).  With --callgrind, also blkring's instructions per
# I/O: two runs of different sizes under callgrind, the difference divided
# by the difference in I/Os, so start-up and teardown cancel out.
#
#   bench/core-vs-nop.sh [--callgrind] [BUILD_DIR] [SECONDS]
set -euo pipefail
callgrind=0
if [[ ${1:-} == --callgrind ]]; then
	callgrind=1
	shift
fi
O=${1:-build}
SECS=${2:-1}
JOB=(--name=core --filename=null:irqmode=none --rw=randread --bs=4k --iodepth=128
	--iodepth_batch_submit=32)

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
printf 'blkring null 4k randread qd128: %12.0f IOPS    (runs: %s)\n' "$core" "${iops[*]}"
python3 -c "print('ratio blkring/NOP: %.3f' % ($core / $nop))"

if ((callgrind)); then
	if ! command -v valgrind >/dev/null; then
		echo "instructions per I/O: valgrind is not installed" >&2
		exit 0
	fi
	# 16384 and 131072 blocks: powers of two, so the random map skips nothing.
	count() {
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$O/blkring" bench \
			--output-format=json "${JOB[@]}" --size="$1" 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	small=$(count 64M)
	large=$(count 512M)
	echo "instructions per I/O (callgrind): $(( (large - small) / (131072 - 16384) ))"
fi
