#!/usr/bin/env bash
# `make install` as a distribution runs it (DESTDIR, PREFIX=/usr): the .pc
# names that prefix and lists only libblkring's own libraries, the driver
# modules sit beside the library, so a program builds against the
# installed header and .pc, shared and fully static; every man page
# renders and `man` finds them; `make uninstall` removes everything it put
# there.  Runs once, in the ASan tree's turn.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[[ ${BLKRING:-} == *asan* ]] || exit 0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
R=$T/root

if ! make -s --no-print-directory install DESTDIR="$R" PREFIX=/usr >"$T/out" 2>&1; then
	fail install "make install: $(tail -3 "$T/out" | tr '\n' ' ')"
	exit 0
fi
pc=$R/usr/lib/pkgconfig/blkring.pc
# libblkring's own libraries only: not the command's json-c and ISA-L.
check pc_prefix 'grep -qx "prefix=/usr" "$pc" && grep -q "^Libs.private: -pthread -luring" "$pc" &&
	! grep -q "isal\|json" "$pc"' "$(tr '\n' ' ' <"$pc")"

# The network drivers are modules beside the library, which itself needs
# neither libnbd nor librbd.
check installed_modules '[[ -e $R/usr/lib/blkring-modules/nbd.so ]] &&
	! readelf -d "$R/usr/lib/libblkring.so" | grep -q "NEEDED.*\(libnbd\|librbd\|librados\)"' \
	"$(ls "$R/usr/lib/blkring-modules" 2>&1 | tr '\n' ' ')"

export PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$R/usr/lib/pkgconfig
# shellcheck disable=SC2046
if cc -o "$T/shared" examples/null-randread.c $(pkg-config --cflags --libs blkring) 2>"$T/err" &&
	LD_LIBRARY_PATH=$R/usr/lib "$T/shared" null:irqmode=none 0.1 >"$T/out" 2>&1; then
	check installed_shared 'grep -q "errors: none" "$T/out" &&
		readelf -d "$T/shared" | grep -q "NEEDED.*libblkring\.so\.[0-9]"' "$(tail -2 "$T/out")"
else
	fail installed_shared "$(head -3 "$T/err" "$T/out" 2>/dev/null | tr '\n' ' ')"
fi
# libblkring.a with what --static lists (the system's libraries stay
# shared).
# shellcheck disable=SC2046
if cc -o "$T/static" examples/null-randread.c $(pkg-config --cflags blkring) \
	-Wl,-Bstatic -lblkring -Wl,-Bdynamic $(pkg-config --static --libs blkring | sed 's/-lblkring//') \
	2>"$T/err" && "$T/static" null:irqmode=none 0.1 >"$T/out" 2>&1; then
	check installed_static 'grep -q "errors: none" "$T/out" && ! readelf -d "$T/static" |
		grep -q "NEEDED.*libblkring"' "$(tail -2 "$T/out")"
else
	fail installed_static "$(head -3 "$T/err" "$T/out" 2>/dev/null | tr '\n' ' ')"
fi

bad=
for page in "$R"/usr/share/man/man3/*.3 "$R"/usr/share/man/man7/*.7; do
	out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[[ -z $out ]] || bad+="${page##*/}: $out "
done
n=$(find "$R/usr/share/man/man3" -name 'blkring_*.3' | wc -l)
check man_pages_render '[[ -z $bad && $n -ge 60 ]]' "$n pages; ${bad:0:300}"
check man_finds_page 'MANWIDTH=80 man -M "$R/usr/share/man" blkring_queue_init 2>/dev/null |
	grep -q "^SYNOPSIS"' "man -M ... blkring_queue_init found nothing"

# The Makefile asks pkg-config where nbdkit's plugins go: not the DESTDIR's.
env -u PKG_CONFIG_SYSROOT_DIR -u PKG_CONFIG_LIBDIR \
	make -s --no-print-directory uninstall DESTDIR="$R" PREFIX=/usr >"$T/out" 2>&1
left=$(find "$R" -type f -o -type l)
check uninstall '[[ -z $left ]]' "left behind: $(head -c 300 <<<"$left")"
