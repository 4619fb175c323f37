#!/usr/bin/env bash
# The header as C++ and as strict ISO C: a C++ program on a ring (inline
# helpers included) built by g++ and clang++ as every standard from C++11
# up, -Wall -Wextra -Werror, and run; the header alone as C11, C17 and
# gnu11 under -pedantic.  Against the main tree's library (make all); runs
# once, in the ASan tree's turn.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[[ ${BLKRING:-} == *asan* ]] || exit 0
lib=build/libblkring.a
if [[ ! -e $lib ]]; then
	skip cxx "$lib is not built (make all builds it)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W=(-Wall -Wextra -Werror -Iinclude)

cxx_case() { # compiler std
	local name=cxx_${1//+/x}_${2//+/x}
	if ! command -v "$1" >/dev/null; then
		skip "$name" "$1 is not installed (scripts/setup.sh installs it)"
	elif "$1" -std="$2" "${W[@]}" -o "$T/$name" tests/cxx/ring.cpp "$lib" -luring -pthread \
		2>"$T/err"; then
		check "$name" '[[ $("$T/$name" 2>&1) == ok ]]' "$("$T/$name" 2>&1 | head -2)"
	else
		fail "$name" "$(head -3 "$T/err" | tr '\n' ' ')"
	fi
}
for std in c++11 c++14 c++17 c++20; do
	cxx_case g++ "$std"
	cxx_case clang++ "$std"
done
cxx_case clang++ c++2b

for std in c11 c17 gnu11; do
	for cc in gcc clang; do
		if "$cc" -std="$std" -pedantic "${W[@]}" -c -o "$T/h.o" tests/cxx/header.c 2>"$T/err"; then
			pass "header_${cc}_$std"
		else
			fail "header_${cc}_$std" "$(head -3 "$T/err" | tr '\n' ' ')"
		fi
	done
done
