#!/usr/bin/env bash
# Runs the stress programs (test-stress-*) of each build tree given, with
# STRESS_SECONDS from the environment, and ends as tests/run-tests.sh does:
#   N passed, N failed, N skipped
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0 skip=0
for tree in "$@"; do
	variant=${tree##*/}
	for t in "$tree"/tests/test-stress-*; do
		[[ -x $t ]] || continue
		start=$SECONDS
		while IFS= read -r line; do
			case $line in
			PASS*) pass=$((pass + 1)) ;;
			FAIL*) fail=$((fail + 1)) ;;
			SKIP*) skip=$((skip + 1)) ;;
			*) continue ;;
			esac
			echo "$variant: $line"
		done < <("$t" 2>&1)
		echo "$variant: ${t##*/}: $((SECONDS - start)) s"
	done
done
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
