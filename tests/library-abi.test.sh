#!/usr/bin/env bash
# The shared library as a program built against the installed header sees
# it: it exports the public API and the module interface, nothing else
# (src/libblkring.map), and the example and the blkring command link
# against it alone and run.  It
# tests the main build tree's library (make all), whichever sanitizer tree
# runs the tests.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
lib=build/libblkring.so
if [[ ! -e $lib ]]; then
	skip library_exports "$lib is not built (make all builds it)"
	skip library_example_links "$lib is not built (make all builds it)"
	skip tool_links_shared "$lib is not built (make all builds it)"
	skip tool_runs_shared "$lib is not built (make all builds it)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The module interface (blkring__ names, version BLKRING_MODULE_1) is for
# the library's own separately loaded drivers.
nm -D --defined-only "$lib" | awk '$3 != "BLKRING_1" && $3 != "BLKRING_MODULE_1" &&
	$3 !~ /^blkring__[a-z_0-9]*@@BLKRING_MODULE_1$/ { sub(/@.*/, "", $3); print $3 }' |
	grep -v -e '^blkring_[a-z]' -e '^blkring__get_cqe$' >"$T/extra"
nm -D --defined-only "$lib" | grep -q ' T blkring_queue_init@@BLKRING_1$' ||
	echo "blkring_queue_init (missing)" >>"$T/extra"
check library_exports '[[ ! -s $T/extra ]]' "not public API: $(head -5 "$T/extra" | tr '\n' ' ')"

if cc -std=gnu11 -Iinclude -o "$T/example" examples/null-randread.c -Lbuild -lblkring \
	2>"$T/err" && LD_LIBRARY_PATH=build "$T/example" null:irqmode=none 0.1 >"$T/out" 2>>"$T/err"; then
	check library_example_links 'grep -q "errors: none" "$T/out"' "$(head -3 "$T/out")"
else
	fail library_example_links "$(head -3 "$T/err" | tr '\n' ' ')"
fi

# The command is a client of the public API: its sources build against
# include/ alone and link against the shared library and its own libraries.
json_cflags=$(pkg-config --cflags json-c 2>/dev/null)
json_libs=$(pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
if cc -std=gnu11 -D_GNU_SOURCE -pthread -Iinclude $json_cflags -o "$T/blkring" tools/*.c \
	-Lbuild -lblkring -lisal -lcrypto -lxxhash $json_libs -lm 2>"$T/err"; then
	check tool_links_shared 'readelf -d "$T/blkring" | grep -q "NEEDED.*libblkring\.so"' \
		"not linked against libblkring.so"
	if LD_LIBRARY_PATH=build "$T/blkring" info null: >"$T/out" 2>"$T/err" &&
		LD_LIBRARY_PATH=build "$T/blkring" bench --name=t --filename=null:irqmode=none \
			--rw=randread --size=1M >>"$T/out" 2>>"$T/err"; then
		check tool_runs_shared 'grep -q "^  type: *null$" "$T/out" &&
			grep -q "(groupid=0, jobs=1): err= 0:" "$T/out"' "$(head -3 "$T/out" | tr '\n' ' ')"
	else
		fail tool_runs_shared "$(head -3 "$T/err" | tr '\n' ' ')"
	fi
else
	fail tool_links_shared "$(head -3 "$T/err" | tr '\n' ' ')"
	skip tool_runs_shared "the command did not build"
fi
