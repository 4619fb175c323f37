#!/usr/bin/env bash
# The volume layer's cost (issue 5's targets), in one run: blkring bench,
# 4k random reads, iodepth 128, one job, irqmode=none, on
#   - one null device;
#   - a linear volume over one null device (target: >= 0.8 of the null IOPS);
#   - a striped volume over two null devices, chunk 128 sectors (>= 0.8).
# The three alternate ROUNDS times (the machine is noisy: each ratio is taken
# within one round, against that round's null run); every round's ratios
# are printed, then their median, minimum and maximum.  Two ratios: of the
# IOPS (wall clock), and of the I/Os per second of the job thread's own
# CPU time (user + system, from getrusage), which a busy machine that
# takes the CPU away from the job skews far less.  With --callgrind,
# also the instructions per I/O of each: two runs of different sizes
# under callgrind, the difference divided by the difference in I/Os, so
# start-up and teardown cancel out.
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

run() { # spec -> "IOPS IOPS-per-CPU-second"
	"$O/blkring" bench --output-format=json "${JOB[@]}" --filename="$1" --runtime="$SECS" \
		--time_based | python3 -c "import json, sys
j = json.load(sys.stdin)['jobs'][0]
cpu = (j['usr_cpu'] + j['sys_cpu']) / 100
print(j['read']['iops'], j['read']['iops'] / cpu if cpu else 0)"
}

ratio() { python3 -c "print('%.3f' % ($1 / $2))"; }

lin=() str=() lin_cpu=() str_cpu=()
for ((r = 1; r <= ROUNDS; r++)); do
	read -r n nc < <(run "${SPECS[0]}")
	read -r l lc < <(run "${SPECS[1]}")
	read -r s sc < <(run "${SPECS[2]}")
	lin+=("$(ratio "$l" "$n")") str+=("$(ratio "$s" "$n")")
	lin_cpu+=("$(ratio "$lc" "$nc")") str_cpu+=("$(ratio "$sc" "$nc")")
	printf 'round %d: IOPS null %9.0f  linear %9.0f (%s)  striped %9.0f (%s)\n' \
		"$r" "$n" "$l" "${lin[-1]}" "$s" "${str[-1]}"
	printf '         per CPU-s  %9.0f         %9.0f (%s)          %9.0f (%s)\n' \
		"$nc" "$lc" "${lin_cpu[-1]}" "$sc" "${str_cpu[-1]}"
done

summary() { # what ratios...
	local what=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v what="$what" '{ v[NR] = $1 }
		END { printf "%-26s median %.3f, min %.3f, max %.3f (target >= 0.8)\n",
		      what, v[int((NR + 1) / 2)], v[1], v[NR] }'
}
summary "linear/null, IOPS:" "${lin[@]}"
summary "striped/null, IOPS:" "${str[@]}"
summary "linear/null, per CPU-s:" "${lin_cpu[@]}"
summary "striped/null, per CPU-s:" "${str_cpu[@]}"

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
