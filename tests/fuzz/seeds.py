#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the fuzz harnesses' seed inputs into OUTDIR/NAME/ (run-fuzz.sh seed
merges them into tests/fuzz/corpus/NAME): valid specs of every driver, tables
with every target and reloads, the bench's job files and command lines, and
SQE streams for fuzz-sqe.c's input format (chains, drains, every opcode,
every ring kind)."""
import glob
import hashlib
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "build/fuzz/seeds"


def put(name, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


# ---- specs ----
SPECS = [
    "null:", "null:irqmode=none", "null:size=1M,memory_backed=1,irqmode=none",
    "null:size=1G,bs=4096,submit_queues=2,poll_queues=2,hw_queue_depth=8",
    "null:irqmode=timer,completion_nsec=1000,name=t", "null:irqmode=2",
    "null:memory_backed=1,discard=1,write_zeroes=1,max_sectors=128,max_discard_sectors=1000",
    "null:badblocks=100-199+4096-4103,ro=1", "null:mbps=100,irq_cpu=0,spin_nsec=1000",
    "null:size=4K,bs=4K,max_write_zeroes_sectors=8,name=a\\,b", "null:poll_queues=0,ro=yes",
    "null:sise=1", "null:irqmode=hard", "null:size=1P", "null:size=1M,size=2M",
    "file:f,size=1M", "./g,size=64K,direct=0", "file:./h,size=1M,hw_queue_depth=4,iopoll=0",
    "file:f,size=1M,ro=1,io_workers=1,spin_nsec=0", "file:missing", "file:f,discard_cmd=0",
    "table:z.table", "table:n.table,ro=1", "table:n.table,poll=all", "table:loop.table",
    "table:missing.table", "bogus:x", "./", "null:a\\",
    "null:size=1M,irqmode=none\nnull:irqmode=none,size=1M\nnull:size=1M,irqmode=none",
    "file:f,size=1M\nfile:f\ntable:n.table\ntable:n.table",
]

# ---- tables ----
L = "null:size=1M,memory_backed=1,irqmode=none"
TABLES = [
    "0 2048 linear %s 0\n" % L,
    "# comment\n\n0 1024 linear %s,name=a 0\n1024 1024 linear %s,name=b 1024\n" % (L, L),
    "0 4096 striped 2 8 %s,name=s0 0 %s,name=s1 0\n" % (L, L),
    "0 3072 striped 3 16 %s,name=s0 0 %s,name=s1 0 %s,name=s2 0\n" % (L, L, L),
    "0 64 zero\n64 64 error\n",
    "0 2048 flakey %s 0 1 1\n" % L,
    "0 2048 flakey %s 0 0 1 2 error_reads drop_writes\n" % L,
    "0 2048 flakey %s 0 1 0 1 error_writes\n" % L,
    "0 64 linear table:z.table 0\n64 2048 linear table:n.table 0\n",
    "0 8 linear table:loop.table 0\n",
    "0 2048 linear file:f,size=1M 0\n",
    "0 2048 linear ./g,size=1M,direct=0 0\n",
    "0 2048 linear null:irqmode=none,size=1M,bs=4096 0\n",
    "0 100 zero\n50 100 zero\n", "0 100 zero\n200 100 zero\n", "0 8 bogus\n",
    "0 4096 striped 2 7 %s 0 %s 0\n" % (L, L), "0 4096 linear %s 0\n" % L,
    "0 2048 linear %s 0\n%%%%\n0 4096 striped 2 8 %s,name=s0 0 %s,name=s1 0\n%%%%\n0 64 zero\n"
    % (L, L, L),
    "0 64 zero\n%%%%\n0 64 error\n%%%%\n0 8 bogus\n",
    "0 2048 linear %s,name=r 0\n%%%%\n0 2048 flakey %s,name=r 0 0 1 1 drop_writes\n" % (L, L),
]

# ---- the bench: argv lines, then "%%" and a job file ----
JOBS = [
    "--name=r\n--filename=null:irqmode=none\n--rw=randread\n--bs=4k\n--iodepth=128\n"
    "--runtime=5\n--time_based\n",
    "--filename=table:my.table\n--rw=randwrite\n--verify=crc32c\n--size=64M\n--name=a\n",
    "--output-format=json\n--name=a\n--filename=null:\n--name=b\n--stonewall\n--bs=4k,8k,16k\n",
    "--numjobs=2\n--cpus_allowed=0-1\n--percentile_list=99:99.9\n--name=x\n--filename=null:\n"
    "--rwmixwrite=30\n--rw=randrw\n--offset=10%\n--size=50%\n--ramp_time=10ms\n",
    "--name=z\n--filename=null:\n--rw=randzero\n--zero_flags=nounmap,nofallback\n"
    "--sqthread_poll=1\n--sqthread_poll_cpu=0\n--taskrun=defer\n",
    "--name=h\n--filename=null:\n--hipri\n--ioengine=sync\n", "-x\n", "--help\n", "--version\n",
    "--=1\n--name\n", "--bssplit=4k/50\n--name=a\n--filename=null:\n",
    "job.fio\n%%\n[global]\nfilename=null:irqmode=none\nbs=8k ; trailing\n# comment\n"
    "time_based\nruntime=1\n[first]\nrw=randread\r\n[second]\niodepth=16\nnorandommap\n"
    "[global]\nbs=16k\n[third]\nstonewall\n",
    "--iodepth=32\njob.fio\n--clocksource=clock_gettime\n%%\n[global]\nfilename=null:\n"
    "clocksource=cpu\n[a]\nclocksource=cpu\n",
    "job.fio\n%%\nbs=4k\n", "job.fio\n%%\n[a\n", "job.fio\n%%\n[]\n", "job.fio\n%%\n[a]\n=1\n",
    "job.fio\n%%\n[a]\nfilename=null:\nx\x00y\n",
]
for path in sorted(glob.glob("bench/seeds/*/*.fio")):
    with open(path) as f:
        JOBS.append("--output-format=json\njob.fio\n%%\n" + f.read())

# ---- SQE streams (fuzz-sqe.c) ----
# Header: ring byte (modes 0 plain, 1 DEFER_TASKRUN, 2 SQPOLL; 4 IOPOLL,
# 8 TW_PRIO, 16 TW_ISSUE, 32 CQSIZE, 64 fixed buffers, 128 exit early),
# sizes byte (SQ 1 << (b & 7), workers (b >> 3) & 3, 32 SQ_AFF), 2 spare.
MAIN, VOL, SOFT, EMPTY, POLLVOL, RO = range(6)
READ, WRITE, READV, WRITEV, RFIX, WFIX, FSYNC, DISCARD, ZERO, RAWCMD, NOP, TIMEOUT, RAWOP = (
    0, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
SUBMIT, SUBMIT_WAIT, REAP, WAIT, SUSPEND, RESUME, LOAD, TOGGLE = range(20, 28)
LINK, DRAIN, ASYNC, HARD = 1, 2, 4, 8


def rec(kind, flags=0, dev=MAIN, mode=0, off=0, length=0, aux=0):
    return struct.pack("<BBBBIII", kind, flags, dev, mode, off & 0xffffffff,
                       length & 0xffffffff, aux & 0xffffffff)


def stream(ring, sizes, *recs):
    return bytes([ring, sizes, 0, 0]) + b"".join(recs)


def io(kind, dev=MAIN, sector=0, blocks=8, flags=0, mode=0, aux=0):
    """Aligned I/O: off mode 0 (sector index), len mode 0 (blocks of 512)."""
    return rec(kind, flags, dev, mode, sector, blocks - 1, aux)


SQES = [
    # Reads and writes on every device, then reap.
    stream(0, 4, *[io(k, d, 16 * i) for i, (k, d) in enumerate(
        [(WRITE, MAIN), (READ, MAIN), (WRITE, VOL), (READ, VOL), (WRITE, SOFT), (READ, SOFT),
         (READ, POLLVOL), (WRITE, RO), (READ, RO), (READ, EMPTY)])],
           rec(SUBMIT), rec(WAIT, length=3)),
    # A chain: write, read back, flush, NOP; then one that fails midway.
    stream(0, 4, io(WRITE, flags=LINK), io(READ, flags=LINK), rec(FSYNC, LINK), rec(NOP),
           io(WRITE, flags=LINK), rec(READ, LINK, MAIN, 1, 3, 63), io(READ, flags=LINK),
           rec(NOP), rec(SUBMIT)),
    # Hard links go on after a failure; a soft one after them still cancels.
    stream(0, 4, io(WRITE, flags=HARD), rec(READ, HARD, MAIN, 1, 3, 63), io(READ, flags=LINK),
           rec(READ, LINK, MAIN, 2, 3, 7), io(READ, flags=HARD), rec(NOP),
           rec(FSYNC, 0, MAIN, 0x20, 0, 0, 1), rec(SUBMIT), rec(WAIT, length=3)),
    # Timeouts: by time, by count (two CQEs), in a chain, drained.
    stream(1, 4, rec(TIMEOUT, 0, 0, 0, 0, 1000), rec(TIMEOUT, 0, 0, 0, 2, 900000), io(READ),
           io(READ, SOFT), rec(TIMEOUT, LINK, 0, 0, 0, 10), io(READ), rec(TIMEOUT, DRAIN),
           rec(SUBMIT), rec(WAIT, length=3)),
    # Drain: writes, a drained flush, reads after it; a drained chain.
    stream(1, 5, io(WRITE, SOFT, 0), io(WRITE, SOFT, 64), rec(FSYNC, DRAIN, SOFT),
           io(READ, SOFT, 0), io(READ, MAIN, 8, flags=DRAIN | LINK), io(READ, MAIN),
           rec(SUBMIT_WAIT, length=3)),
    # Vectors: a few, many (heap copy), too many, with a NULL base.
    stream(0, 3, rec(WRITEV, 0, MAIN, 0, 0, 4, 7), rec(READV, 0, MAIN, 0, 0, 4, 7),
           rec(WRITEV, 0, VOL, 0, 100, 220, 9), rec(READV, 0, MAIN, 0, 0, 255, 1),
           rec(READV, 0, MAIN, 0x10, 0, 3, 5), rec(READV, 0, MAIN, 0x08, 0, 2, 11)),
    # Fixed buffers: in range, past the buffer, a bad index.
    stream(64, 4, rec(WFIX, 0, MAIN, 0, 0, 7, 0), rec(RFIX, 0, MAIN, 0, 0, 7, 1 << 24),
           rec(RFIX, 0, MAIN, 4, 0, 300, 0), rec(RFIX, 0, MAIN, 0, 0, 7, 5 << 24)),
    # Discard and write zeroes: valid, bad flags, dirty fields, unknown command.
    stream(0, 4, rec(DISCARD, 0, MAIN, 0, 0, 15, 0), rec(ZERO, 0, MAIN, 0, 64, 15, 1 << 8),
           rec(ZERO, 0, SOFT, 4, 0, 100, 2 << 8), rec(DISCARD, 0, VOL, 4, 0, 2000, 0),
           rec(DISCARD, 0, MAIN, 0x20, 0, 15, 3), rec(RAWCMD, 0, MAIN, 0, 0, 15, 0x1234),
           rec(DISCARD, 0, RO, 0, 0, 15, 0), rec(ZERO, 0, MAIN, 0x40, 0, 15, 0xff00)),
    # Checks: misaligned, past the end, huge, NULL buffer, bad flags and devices.
    stream(0, 5, rec(READ, 0, MAIN, 2, 3, 7), rec(READ, 0, MAIN, 1, 0, 63),
           rec(READ, 0, MAIN, 3, 1, 0xffffffff, 0), rec(WRITE, 0, MAIN, 0x0c, 0, 0),
           rec(READ, 0, MAIN, 0x20, 0, 7), rec(READ, 0x80 | 0x41, MAIN), rec(READ, 0, 6),
           rec(READ, 0, 7, 0, 0, 0, 12345), rec(RAWOP, 0, MAIN, 0, 0, 0, 99),
           rec(READ, 0, MAIN, 0xc0, 0, 7, 0xfff00000), rec(WRITE, 0, MAIN, 0x40),
           rec(READ, 0, MAIN, 0x80, 0, 7), rec(FSYNC, 0, MAIN, 0x20, 0, 0, 1)),
    # The volume: across targets, split by chunks, then suspend, load, resume.
    stream(0, 5, *[io(READ, VOL, s, 64) for s in (0, 2040, 6100, 6656, 7680, 8704)],
           io(WRITE, VOL, 7700, 16), rec(SUBMIT), rec(SUSPEND), io(READ, VOL, 0),
           rec(SUBMIT), rec(LOAD, 0, 0, 0, 0, 0, 1), rec(RESUME), io(READ, VOL, 4000, 64),
           rec(LOAD, 0, 0, 0, 0, 1, 2), io(WRITE, VOL, 100, 64, flags=LINK), io(READ, VOL, 100, 64),
           rec(SUBMIT_WAIT, length=2)),
    # SQPOLL, with a chain and a drain; SQ_AFF.
    stream(2, 0x24, io(WRITE, flags=LINK), io(READ), rec(NOP, DRAIN), io(READ, SOFT),
           rec(SUBMIT), rec(WAIT, length=3), io(READ, VOL, 0, 16, flags=ASYNC)),
    # IOPOLL on the polling volume and the main device, and on SQPOLL.
    stream(4, 4, io(READ, POLLVOL, 0), io(READ, POLLVOL, 2040, 64), io(WRITE, MAIN),
           io(READ, VOL), rec(FSYNC), rec(SUBMIT), rec(WAIT, length=3)),
    stream(6, 4, io(READ, POLLVOL, 0, flags=LINK), io(READ, MAIN), rec(SUBMIT)),
    # Task work kinds: TW_PRIO, TW_ISSUE, deferred.
    stream(8, 4, io(READ, SOFT), io(READ, SOFT, 8), io(READ, RO), rec(SUBMIT), rec(WAIT)),
    stream(16 | 1, 4, io(READ, SOFT, flags=LINK), io(READ, MAIN, flags=DRAIN), rec(SUBMIT)),
    # A CQ as small as the SQ, overflowed by NOPs.
    stream(32, 1, *[rec(NOP) for _ in range(8)], rec(SUBMIT), rec(REAP, length=0)),
    # ASYNC and NOWAIT, and unregistering with I/O in flight.
    stream(0, 0x0c, io(READ, SOFT, flags=ASYNC), io(WRITE, MAIN, flags=ASYNC, mode=0x80),
           io(READ, VOL, 2000, 64, mode=0x80), rec(SUBMIT), rec(TOGGLE), rec(TOGGLE),
           io(READ), rec(WAIT, length=3)),
    # Exit with I/O in flight on the slow devices.
    stream(128, 4, io(READ, RO), io(READ, SOFT, flags=LINK), io(READ, SOFT), rec(SUBMIT)),
    stream(128 | 2, 4, io(READ, RO), io(READ, VOL), rec(SUBMIT)),
]

for s in SPECS:
    put("spec", s)
for t in TABLES:
    put("table", t)
for j in JOBS:
    put("jobs", j)
for q in SQES:
    put("sqe", q)
