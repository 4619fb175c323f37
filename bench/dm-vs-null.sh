#!/usr/bin/env bash
# The volume layer's cost (issue 5's targets), in one run: blkring bench,
# 4k random reads, iodepth 128, one job, irqmode=none, on
#   - one null device;
#   - a linear volume over one null device (target: >= 0.8 of the null IOPS);
#   - a striped volume over two null devices, chunk 128 sectors (>= 0.8).
# The three alternate ROUNDS times (the machine is noisy: each ratio is taken
# within one round, against that round's null run); every round's ratios
# are printed, then their median, minimum and maximum.  With --callgrind,
# also the instructions per I/O of each: two runs of different sizes under
# callgrind, the difference divided by the difference in I/Os, so start-up
# and teardown cancel out.
#
#   bench/dm-vs-null.sh [--callgrind] [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
callgrind=0
if [[ ${1:-} == --callgrind ]]; then
	callgrind=1
	shift
fi
O=${1:-build}
SECS=${2:-3}
ROUNDS=${3:-5}

[[ -x $O/blkring ]] || { echo "dm-vs-null: $O/blkring is missing: run make first" >&2; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 250 GiB null devices (the default size): 524288000 sectors each.
echo "0 524288000 linear null:irqmode=none 0" >"$dir/linear.table"
echo "0 1048576000 striped 2 128 null:irqmode=none,name=a 0 null:irqmode=none,name=b 0" \
	>"$dir/striped.table"
SPECS=(null:irqmode=none "table:$dir/linear.table" "table:$dir/striped.table")
NAMES=(null linear striped)
JOB=(--name=dm --rw=randread --bs=4k --iodepth=128)

iops() { # spec
	"$O/blkring" bench --output-format=json "${JOB[@]}" --filename="$1" --runtime="$SECS" \
		--time_based | python3 -c "import json, sys; print(json.load(sys.stdin)['jobs'][0]['read']['iops'])"
}

lin=() str=()
for ((r = 1; r <= ROUNDS; r++)); do
	n=$(iops "${SPECS[0]}")
	l=$(iops "${SPECS[1]}")
	s=$(iops "${SPECS[2]}")
	lin+=("$(python3 -c "print('%.3f' % ($l / $n))")")
	str+=("$(python3 -c "print('%.3f' % ($s / $n))")")
	printf 'round %d: null %9.0f  linear %9.0f (%s)  striped %9.0f (%s) IOPS\n' \
		"$r" "$n" "$l" "${lin[-1]}" "$s" "${str[-1]}"
done

summary() { # name ratios...
	local name=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v name="$name" '{ v[NR] = $1 }
		END { printf "%-8s/null: median %.3f, min %.3f, max %.3f (target >= 0.8)\n",
		      name, v[int((NR + 1) / 2)], v[1], v[NR] }'
}
summary linear "${lin[@]}"
summary striped "${str[@]}"

if ((callgrind)); then
	if ! command -v valgrind >/dev/null; then
		echo "instructions per I/O: valgrind is not installed" >&2
		exit 0
	fi
	# 16384 and 131072 blocks: powers of two, so the random map skips nothing.
	count() { # spec size
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$O/blkring" bench \
			--output-format=json "${JOB[@]}" --filename="$1" --size="$2" 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	for i in 0 1 2; do
		small=$(count "${SPECS[i]}" 64M)
		large=$(count "${SPECS[i]}" 512M)
		python3 -c "print('instructions per I/O, %-8s %.1f' % ('${NAMES[i]}:', ($large - $small) / (131072 - 16384)))"
	done
fi
