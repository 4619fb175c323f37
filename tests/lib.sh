# Shared by the shell tests (tests/*.test.sh): one line per case, as
# tests/run-tests.sh counts them.
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }
# check NAME CONDITION WHY: PASS when the condition (evaluated) holds.
check() { if eval "$2"; then pass "$1"; else fail "$1" "$3"; fi; }
