#!/usr/bin/env python3
"""The library's and the bench tool's shares of a callgrind profile of
`blkring bench` (bench/core-vs-nop.sh, bench/dm-vs-null.sh).

    bench/callgrind-split.py CALLGRIND_OUT

prints "TOTAL LIBRARY": every instruction the program ran, and the part
run inside libblkring: the inclusive cost of its public entry points
(functions named blkring_* defined under src/; the tool calls nothing
else of the library, and those never call each other on the I/O path)
plus the lines of include/blkring.h's inline helpers, which are the
library's code compiled into the tool, as liburing's are.
"""
import re
import subprocess
import sys


def annotate(path, *args):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", *args, path],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S+)", line)
        if m:
            yield int(m.group(1).replace(",", "")), m.group(2), line


def main():
    path = sys.argv[1]
    total = lib = 0
    for cost, where, line in annotate(path, "--inclusive=yes"):
        if where == "PROGRAM" and "TOTALS" in line:
            total = cost
        # "src/ring/wait.c:blkring_submit [binary]": one line per function.
        elif re.fullmatch(r"(\S*/)?src/\S+:blkring_[a-z]\w*", where) and "[" in line:
            if not re.search(r":blkring__", where):
                lib += cost
    for cost, where, line in annotate(path):
        if re.fullmatch(r"(\S*/)?include/blkring\.h:\S+", where) and "[" not in line:
            lib += cost
    print(total, lib)


if __name__ == "__main__":
    main()
