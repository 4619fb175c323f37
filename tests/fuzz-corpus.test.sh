#!/usr/bin/env bash
# Every libFuzzer harness (tests/fuzz/fuzz-NAME.c, built by make build-fuzz)
# runs each input of its seed corpus, tests/fuzz/corpus/NAME, once: the
# harnesses keep building and the inputs that once found a defect keep
# passing.  run-tests.sh runs shell tests once per sanitizer tree; the
# harnesses have a tree of their own, so this runs in the asan tree's turn
# only and prints nothing in the others.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
case ${BLKRING:-build/asan/blkring} in
*/asan/blkring) ;;
*) exit 0 ;;
esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TMPDIR=$T UBSAN_OPTIONS=print_stacktrace=1

# The harnesses run at once (each is one busy thread: together they keep
# every core busy), and report in order.
names=() pids=()
for src in tests/fuzz/fuzz-*.c; do
	name=${src#tests/fuzz/fuzz-}
	name=${name%.c}
	bin=build/fuzz/fuzz-$name
	inputs=(tests/fuzz/corpus/"$name"/*)
	names+=("$name")
	if [[ ! -x $bin ]]; then
		echo "$bin is not built (make build-fuzz)" >"$T/$name.why"
		pids+=("")
	elif [[ ! -f ${inputs[0]} ]]; then
		echo "tests/fuzz/corpus/$name is empty" >"$T/$name.why"
		pids+=("")
	else
		timeout 300 "$bin" -timeout=20 -rss_limit_mb=4096 "${inputs[@]}" >"$T/$name.log" 2>&1 &
		pids+=($!)
	fi
done
for i in "${!names[@]}"; do
	name=${names[i]}
	if [[ -z ${pids[i]} ]]; then
		fail "fuzz_corpus_$name" "$(cat "$T/$name.why")"
	elif wait "${pids[i]}"; then
		pass "fuzz_corpus_$name"
	else
		why=$(grep -m 1 -E '^fuzz:|ERROR:' "$T/$name.log" || tail -n 1 "$T/$name.log")
		fail "fuzz_corpus_$name" "${why:0:300}; input $(sed -n 's/^Running: //p' "$T/$name.log" |
			tail -n 1)"
	fi
done
