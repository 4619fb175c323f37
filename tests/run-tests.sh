#!/usr/bin/env bash
# Runs every test program (tests/test-*.c) and shell test (tests/*.test.sh)
# in each build tree given, and ends with the line CI reads:
#   N passed, N failed, N skipped
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
log=build/test-log.txt
mkdir -p build
: >"$log"

count() { # variant name < output
	local variant=$1 line
	while IFS= read -r line; do
		case $line in
		PASS*) pass=$((pass + 1)) ;;
		FAIL*) fail=$((fail + 1)); echo "$variant: $line" ;;
		SKIP*) skip=$((skip + 1)); echo "$variant: $line" ;;
		*) continue ;;
		esac
		echo "$variant: $line" >>"$log"
	done
}

# The checkout's changed and untracked files: a test that adds to them
# wrote into the source tree instead of its scratch directory.
checkout_changes() { git status --porcelain --untracked-files=all 2>/dev/null; }
before=$(checkout_changes)

# took VARIANT NAME START: the test's seconds, in the log (where a slow
# run went).
took() { echo "$1: TIME ${2##*/}: $(($(date +%s) - $3)) s" >>"$log"; }

# fio's reference runs are the same in every tree: the shell tests keep
# them here (tests/lib.sh's fio_ref) for the trees after the first.
BLKRING_FIO_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/blkring-fio-ref.XXXXXX") || exit 1
export BLKRING_FIO_CACHE
trap 'rm -rf "$BLKRING_FIO_CACHE"' EXIT

for tree in "$@"; do
	variant=${tree##*/}
	for t in "$tree"/tests/test-*; do
		[[ -x $t ]] || continue
		start=$(date +%s)
		out=$("$t" 2>&1)
		rc=$?
		took "$variant" "$t" "$start"
		count "$variant" <<<"$out"
		if [[ $rc -ne 0 ]]; then
			fail=$((fail + 1))
			echo "$variant: FAIL ${t##*/}: exited $rc"
		fi
	done
	for t in tests/*.test.sh; do
		[[ -f $t ]] || continue
		start=$(date +%s)
		out=$(BLKRING="$tree/blkring" bash "$t" 2>&1)
		rc=$?
		took "$variant" "$t" "$start"
		count "$variant" <<<"$out"
		if [[ $rc -ne 0 ]]; then
			fail=$((fail + 1))
			echo "$variant: FAIL ${t##*/}: exited $rc"
		fi
	done
done
left=$(comm -13 <(sort <<<"$before") <(sort <<<"$(checkout_changes)") | head -5 | tr '\n' ' ')
if [[ -n $left ]]; then
	fail=$((fail + 1))
	echo "FAIL checkout_left_clean: the tests left $left" | tee -a "$log"
else
	pass=$((pass + 1))
	echo "PASS checkout_left_clean" >>"$log"
fi
echo "details: $log"
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
