#!/usr/bin/env bash
# The shared library as a program built against the installed header sees
# it: it exports the public API and nothing else (src/libblkring.map), and
# the example links against it alone and runs.  It tests the main build
# tree's library (make all), whichever sanitizer tree runs the tests.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
lib=build/libblkring.so
if [[ ! -e $lib ]]; then
	skip library_exports "$lib is not built (make all builds it)"
	skip library_example_links "$lib is not built (make all builds it)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

nm -D --defined-only "$lib" | awk '$3 != "BLKRING_0" { sub(/@.*/, "", $3); print $3 }' |
	grep -v -e '^blkring_[a-z]' -e '^blkring__get_cqe$' >"$T/extra"
nm -D --defined-only "$lib" | grep -q ' T blkring_queue_init@@BLKRING_0$' ||
	echo "blkring_queue_init (missing)" >>"$T/extra"
check library_exports '[[ ! -s $T/extra ]]' "not public API: $(head -5 "$T/extra" | tr '\n' ' ')"

if cc -std=gnu11 -Iinclude -o "$T/example" examples/null-randread.c -Lbuild -lblkring \
	2>"$T/err" && LD_LIBRARY_PATH=build "$T/example" null:irqmode=none 0.1 >"$T/out" 2>>"$T/err"; then
	check library_example_links 'grep -q "errors: none" "$T/out"' "$(head -3 "$T/out")"
else
	fail library_example_links "$(head -3 "$T/err" | tr '\n' ' ')"
fi
