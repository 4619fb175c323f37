#!/usr/bin/env bash
# Runs the libFuzzer harnesses built by `make build-fuzz` (tests/fuzz/fuzz.mk).
#   run-fuzz.sh run NAME...     each for $FUZZ_SECONDS, one after another, then
#                               one summary line each (coverage, exec/s); new
#                               inputs go to build/fuzz/corpus/NAME, crashes
#                               to build/fuzz/crashes/NAME
#   run-fuzz.sh merge NAME...   the seed corpus and what runs found, minimised
#                               (-merge=1) into tests/fuzz/corpus/NAME; named
#                               inputs (reproducers) are kept as they are
#   run-fuzz.sh seed NAME...    tests/fuzz/seeds.py's seeds merged the same way
set -u
cd "$(dirname "$0")/../.." || exit 1
B=build/fuzz
CORPUS_MAX=$((1024 * 1024))
mkdir -p "$B/tmp" "$B/log"
# Harnesses put their scratch directories here, not in /tmp.
TMPDIR=$(realpath "$B/tmp")
export TMPDIR
export UBSAN_OPTIONS=print_stacktrace=1

# Flags every run takes; a dictionary where the harness has one.
flags() { # name
	local f=(-timeout=20 -rss_limit_mb=4096)
	[[ -f tests/fuzz/$1.dict ]] && f+=("-dict=tests/fuzz/$1.dict")
	echo "${f[@]}"
}

# The last status line and the final stats of a run's log, as one line.
summary() { # name log rc
	local name=$1 log=$2 rc=$3 status execs eps crash
	status=$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	printf '%-6s cov %s ft %s corpus %s execs %s exec/s %s' "$name" \
		"$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")" \
		"$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")" \
		"$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$status")" "${execs:-?}" "${eps:-?}"
	if [[ $rc -ne 0 ]]; then
		crash=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -n 1)
		printf '  FAILED (exit %s) %s, see %s' "$rc" "${crash:-}" "$log"
	fi
	echo
}

run() {
	local name rc status=0 lines=()
	for name in "$@"; do
		mkdir -p "$B/corpus/$name" "$B/crashes/$name"
		echo "fuzz-$name: ${FUZZ_SECONDS}s, log $B/log/$name.log" >&2
		# shellcheck disable=SC2046
		"$B/fuzz-$name" $(flags "$name") -max_total_time="$FUZZ_SECONDS" \
			-print_final_stats=1 -artifact_prefix="$B/crashes/$name/" \
			"$B/corpus/$name" "tests/fuzz/corpus/$name" >"$B/log/$name.log" 2>&1
		rc=$?
		[[ $rc -ne 0 ]] && status=1
		lines+=("$(summary "$name" "$B/log/$name.log" "$rc")")
	done
	printf '%s\n' "${lines[@]}"
	return $status
}

# Minimises into a fresh directory, then swaps it in for the seed corpus.
merge_into() { # name dirs...
	local name=$1 out=$B/merge/$name size
	shift
	rm -rf "$out"
	mkdir -p "$out" "tests/fuzz/corpus/$name"
	# shellcheck disable=SC2046
	if ! "$B/fuzz-$name" $(flags "$name") -merge=1 "$out" "tests/fuzz/corpus/$name" "$@" \
		>"$B/log/merge-$name.log" 2>&1; then
		echo "fuzz-$name: merge failed, see $B/log/merge-$name.log" >&2
		return 1
	fi
	# Inputs with names (a defect's reproducer) stay as they are.
	find "tests/fuzz/corpus/$name" -type f ! -regex '.*/[0-9a-f]\{40\}' -exec cp {} "$out" \;
	rm -rf "tests/fuzz/corpus/$name"
	mv "$out" "tests/fuzz/corpus/$name"
	size=$(du -sb "tests/fuzz/corpus/$name" | cut -f1)
	echo "fuzz-$name: $(find "tests/fuzz/corpus/$name" -type f | wc -l) inputs, $size bytes"
	if [[ $size -gt $CORPUS_MAX ]]; then
		echo "fuzz-$name: corpus over 1 MiB" >&2
		return 1
	fi
}

merge() {
	local name status=0
	for name in "$@"; do
		mkdir -p "$B/corpus/$name"
		merge_into "$name" "$B/corpus/$name" || status=1
	done
	return $status
}

seed() {
	local name status=0
	rm -rf "$B/seeds"
	python3 tests/fuzz/seeds.py "$B/seeds" || return 1
	for name in "$@"; do
		merge_into "$name" "$B/seeds/$name" || status=1
	done
	return $status
}

cmd=${1:-}
shift
case $cmd in
run) run "$@" ;;
merge) merge "$@" ;;
seed) seed "$@" ;;
*)
	echo "usage: $0 run|merge|seed NAME..." >&2
	exit 2
	;;
esac
