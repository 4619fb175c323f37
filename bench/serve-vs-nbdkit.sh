#!/usr/bin/env bash
# `blkring serve` against nbdkit's own in-memory plugin (issue 20's
# targets), same client, one run: fio's nbd engine, 4k random reads and
# writes, iodepth 32, one connection over a unix socket, to
#   - nbdkit memory 256M;
#   - blkring serve null:size=256M,memory_backed=1,irqmode=none
#     (target: >= 1.0 of nbdkit memory, reads and writes);
#   - blkring serve of a striped volume over two such null devices of
#     128M, chunk 128 sectors (target: >= 0.9 of the single null device).
# Each server is filled first (reads then find data everywhere).  The three
# alternate ROUNDS times, and each ratio is taken within its round (the
# machine is noisy; client and servers share its CPUs); every round is
# printed, then the median, minimum and maximum of each ratio.  Beside the
# IOPS, the I/Os per second of the server's own CPU time (nbdkit's threads,
# from /proc), which a busy machine skews far less.  With --callgrind,
# also the servers' own instructions per request (nbdkit and its plugin,
# not the kernel's socket work), which do not depend on the load: nbdkit
# under callgrind with each plugin, filled, then fio runs of 20000 and
# 60000 requests, the difference divided by 40000.
#
#   bench/serve-vs-nbdkit.sh [--callgrind] [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
callgrind=0
[[ ${1:-} == --callgrind ]] && { callgrind=1; shift; }
O=${1:-build}
SECS=${2:-5}
ROUNDS=${3:-5}

for c in nbdkit fio jq python3; do
	command -v $c >/dev/null || { echo "serve-vs-nbdkit: $c is missing (make setup)" >&2; exit 2; }
done
[[ -x $O/blkring && -f $O/nbdkit-blkring-plugin.so ]] ||
	{ echo "serve-vs-nbdkit: $O/blkring or its plugin is missing: run make first" >&2; exit 2; }

dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

NULLDEV=size=128M,memory_backed=1,irqmode=none
echo "0 524288 striped 2 128 null:$NULLDEV,name=a 0 null:$NULLDEV,name=b 0" >"$dir/striped.table"
NAMES=(memory null striped)

# name command... : a server on $dir/name.sock; the pid whose CPU time counts in $dir/name.cpid.
start() {
	local name=$1 i
	shift
	"$@" >"$dir/$name.out" 2>"$dir/$name.err" &
	pids+=($!)
	echo $! >"$dir/$name.pid"
	for ((i = 0; i < 500; i++)); do
		[[ -S $dir/$name.sock && ($name == memory || -s $dir/$name.out) ]] && break
		sleep 0.01
	done
	[[ -S $dir/$name.sock ]] || { echo "serve-vs-nbdkit: $name did not start: $(cat "$dir/$name.err")" >&2; exit 1; }
	# blkring serve runs nbdkit as its child: that process does the work.
	local p=$!
	[[ $name == memory ]] || { p=$(</proc/$p/task/$p/children) && p=${p%% *}; }
	echo "$p" >"$dir/$name.cpid"
}

start memory nbdkit -f --exit-with-parent -U "$dir/memory.sock" memory 256M
start null "$O/blkring" serve "null:size=256M,${NULLDEV#size=128M,}" --socket="$dir/null.sock"
start striped "$O/blkring" serve "table:$dir/striped.table" --socket="$dir/striped.sock"

uri() { echo "nbd+unix:///?socket=$dir/$1.sock"; }

cpu_ticks() { # all threads of a process, user + system
	awk '{ print $14 + $15 }' /proc/"$1"/stat
}

fio_run() { # name rw seconds -> "IOPS IOPS-per-server-CPU-second"
	local name=$1 rw=$2 cpid before after
	cpid=$(cat "$dir/$name.cpid")
	before=$(cpu_ticks "$cpid")
	fio --name=s --ioengine=nbd --uri="$(uri "$name")" --rw="$rw" --bs=4k --iodepth=32 \
		--size=256M --runtime="$3" --time_based --output-format=json \
		--output="$dir/fio.json" >/dev/null 2>&1
	after=$(cpu_ticks "$cpid")
	jq -r --argjson t $((after - before)) --argjson hz "$(getconf CLK_TCK)" \
		".jobs[0].${rw#rand} | [.iops, (if \$t > 0 then .total_ios / (\$t / \$hz) else 0 end)] | @tsv" \
		"$dir/fio.json"
}

for n in "${NAMES[@]}"; do
	fio --name=fill --ioengine=nbd --uri="$(uri "$n")" --rw=write --bs=1m --iodepth=8 \
		--size=256M --output="$dir/fill.out" >/dev/null 2>&1
done

ratio() { python3 -c "print('%.3f' % ($1 / $2 if $2 else 0))"; }
declare -A R
for ((r = 1; r <= ROUNDS; r++)); do
	for rw in randread randwrite; do
		declare -A iops cpu
		for n in "${NAMES[@]}"; do
			read -r iops[$n] cpu[$n] < <(fio_run "$n" "$rw" "$SECS")
		done
		R[$rw.null]+=" $(ratio "${iops[null]}" "${iops[memory]}")"
		R[$rw.striped]+=" $(ratio "${iops[striped]}" "${iops[null]}")"
		R[$rw.null.cpu]+=" $(ratio "${cpu[null]}" "${cpu[memory]}")"
		R[$rw.striped.cpu]+=" $(ratio "${cpu[striped]}" "${cpu[null]}")"
		printf 'round %d %-9s IOPS memory %6.0f  null %6.0f  striped %6.0f   per server CPU-s %6.0f %6.0f %6.0f\n' \
			"$r" "$rw" "${iops[memory]}" "${iops[null]}" "${iops[striped]}" \
			"${cpu[memory]}" "${cpu[null]}" "${cpu[striped]}"
	done
done

summary() { # what target ratios
	printf '%s\n' $3 | sort -g | awk -v what="$1" -v target="$2" '{ v[NR] = $1 }
		END { printf "%-36s median %.3f, min %.3f, max %.3f (target >= %s)\n",
		      what, v[int((NR + 1) / 2)], v[1], v[NR], target }'
}
for rw in randread randwrite; do
	summary "$rw null/nbdkit-memory, IOPS:" 1.0 "${R[$rw.null]}"
	summary "$rw striped/null, IOPS:" 0.9 "${R[$rw.striped]}"
	summary "$rw null/nbdkit-memory, per CPU-s:" 1.0 "${R[$rw.null.cpu]}"
	summary "$rw striped/null, per CPU-s:" 0.9 "${R[$rw.striped.cpu]}"
done

((callgrind)) || exit 0
command -v valgrind >/dev/null || { echo "instructions per request: valgrind is not installed" >&2; exit 0; }

# name rw requests plugin... -> the instructions of nbdkit serving them
cg_total() {
	local name=$1 rw=$2 n=$3 sock=$dir/cg.sock vp i
	shift 3
	rm -f "$sock" "$dir/cg.pid"
	valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" nbdkit -f -P "$dir/cg.pid" \
		-U "$sock" "$@" >/dev/null 2>"$dir/cg.err" &
	vp=$!
	for ((i = 0; i < 600; i++)); do
		[[ -S $sock ]] && break
		sleep 0.05
	done
	fio --name=fill --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw=write --bs=1m \
		--size=256M --output=/dev/null >/dev/null 2>&1
	fio --name=s --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw="$rw" --bs=4k \
		--iodepth=32 --size=256M --number_ios="$n" --output=/dev/null >/dev/null 2>&1
	kill -TERM "$(cat "$dir/cg.pid")"
	wait "$vp" || true
	callgrind_annotate "$dir/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}

for rw in randread randwrite; do
	for name in memory null; do
		if [[ $name == memory ]]; then
			plugin=(memory 256M)
		else
			plugin=("$O/nbdkit-blkring-plugin.so" "spec=null:size=256M,${NULLDEV#size=128M,}")
		fi
		a=$(cg_total "$name" "$rw" 20000 "${plugin[@]}")
		b=$(cg_total "$name" "$rw" 60000 "${plugin[@]}")
		printf '%-9s %-6s server instructions per request (callgrind): %d\n' "$rw" "$name" \
			$(((b - a) / 40000))
	done
done
