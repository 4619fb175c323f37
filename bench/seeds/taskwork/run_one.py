#!/usr/bin/env python3
"""Runs one `blkring bench --output-format=json` command and prints its row.

usage: run_one.py CONFIG DEPTH REP COMMAND...

The row: config, depth, rep, IOPS, mean total and completion latency (us),
the mean wait of the completions run as task work (us, the ring's: read's
tw_wait_ns), and the CPU seconds the run used (all its threads, set-up
included).
"""
import json
import resource
import subprocess
import sys


def main():
    config, depth, rep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(sys.argv[4:], stdout=subprocess.PIPE, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    read = json.loads(out)["jobs"][0]["read"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"config": config, "depth": depth, "rep": rep, "iops": read["iops"],
                      "lat_us": read["lat_ns"]["mean"] / 1e3,
                      "clat_us": read["clat_ns"]["mean"] / 1e3,
                      "tw_wait_us": read["tw_wait_ns"] / 1e3,
                      "ios": read["total_ios"], "cpu_s": cpu}))


if __name__ == "__main__":
    main()
