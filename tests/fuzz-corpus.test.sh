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

for src in tests/fuzz/fuzz-*.c; do
	name=${src#tests/fuzz/fuzz-}
	name=${name%.c}
	bin=build/fuzz/fuzz-$name
	inputs=(tests/fuzz/corpus/"$name"/*)
	if [[ ! -x $bin ]]; then
		fail "fuzz_corpus_$name" "$bin is not built (make build-fuzz)"
	elif [[ ! -f ${inputs[0]} ]]; then
		fail "fuzz_corpus_$name" "tests/fuzz/corpus/$name is empty"
	elif timeout 300 "$bin" -timeout=20 -rss_limit_mb=4096 "${inputs[@]}" >"$T/log" 2>&1; then
		pass "fuzz_corpus_$name"
	else
		why=$(grep -m 1 -E '^fuzz:|ERROR:' "$T/log" || tail -n 1 "$T/log")
		fail "fuzz_corpus_$name" "${why:0:300}; input $(sed -n 's/^Running: //p' "$T/log" |
			tail -n 1)"
	fi
done
