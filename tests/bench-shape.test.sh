#!/usr/bin/env bash
# Workload shapes (issue 22), against fio itself (3.33 when this was
# written) and its fio-genzipf: offset modifiers and rw_sequencer, bsrange,
# bssplit and bs_unaligned, random_distribution against fio-genzipf's hit
# counts, percentage_random, random_generator=lfsr, strided zones,
# offset_increment, fill_device, and every new option's bad values.  The
# offsets and sizes come from the per-I/O latency logs (write_lat_log with
# log_offset=1), which both write in fio's format.  Cases that need fio
# are skipped without it.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d /dev/shm/blkring-shape.XXXXXX)
# A file system's last file is let go a moment after the ring that had it
# is gone: umount tries for a few seconds.
unmount() {
	for _ in $(seq 50); do
		mountpoint -q "$1" || return 0
		umount "$1" 2>/dev/null && return 0
		sleep 0.1
	done
}
trap 'unmount "$T/fs"; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/lib.sh"
HAVE_FIO=1
command -v fio >/dev/null || HAVE_FIO=0

# ours NAME ARGS...: blkring's job a, its clat log in $T/NAME_clat.1.log.
ours() {
	local name=$1
	shift
	rm -f "$T/$name"_*.log
	"$B" bench --name=a "$@" --write_lat_log="$T/$name" --log_offset=1 >"$T/$name.out" \
		2>"$T/$name.err"
}
# theirs NAME ARGS...: the same with fio, a reference run (fio_ref) done
# once for every tree.
theirs() {
	local name=$1
	shift
	rm -f "$T/$name"_*.log
	fio_ref "$name" "${name}_*.log" -- --name=a "$@" --write_lat_log="$T/$name" --log_offset=1 \
		>"$T/$name.out" 2>"$T/$name.err"
}
# The log's I/Os as "OFFSET BS DIRECTION" lines.
ios() { awk -F', ' '{print $5, $4, $3}' "$1"; }
# same_ios NAME ARGS...: fio's and blkring's I/Os, in order, the same.  A
# null device as large as the region's end stands for fio's null engine.
same_ios() {
	local name=$1 dev=$2
	shift 2
	if ((!HAVE_FIO)); then
		skip "$name" "fio is not installed"
		return
	fi
	theirs "$name.fio" --ioengine=null "$@"
	ours "$name.b" --filename="null:irqmode=none,size=$dev" "$@"
	check "$name" 'cmp -s <(ios "$T/$name.fio_clat.1.log") <(ios "$T/$name.b_clat.1.log")' \
		"fio $(wc -l <"$T/$name.fio_clat.1.log") I/Os, blkring $(wc -l <"$T/$name.b_clat.1.log") \
($(head -c 200 "$T/$name.b.err")); first differing: $(diff <(ios "$T/$name.fio_clat.1.log") \
<(ios "$T/$name.b_clat.1.log") | head -3 | tr '\n' ' ')"
}
# py NAME CHECK LOG...: PASS when the Python CHECK passes with each log's
# I/Os as logs[i], a list of (offset, bs, direction).
py() {
	local name=$1 code=$2 why
	shift 2
	if why=$(python3 - "$@" 2>&1 <<PY
import collections, sys
logs = [[tuple(int(x) for x in l.split(',')[4:1:-1]) for l in open(f)] for f in sys.argv[1:]]
$code
PY
	); then
		pass "$name"
	else
		fail "$name" "$(tail -n 2 <<<"$why")"
	fi
}

# ---- offset modifiers and rw_sequencer ----

# rw=read:8k: 8k skipped after each block, the same offsets as fio's; with
# a region that is the device, a hole past its end goes round (fio's).
same_ios skip_8k 1M --size=1M --rw=read:8k
same_ios skip_wraps 1004k --size=1004k --rw=read:8k
same_ios skip_offset 3M --offset=1M --size=2M --rw=write:4k --bs=8k
same_ios skip_io_size 1M --size=1M --rw=read:8k --io_size=3M
# rw=read:-8k: fio's backwards skip, from the region's end once a hole
# would go before its start.
# Skips near 2^64 (which fio refuses) wrap nothing: every hole and zone
# step goes round to the start.
ours skip_huge --filename=null:irqmode=none,size=1M --size=1M --bs=8k --rw=read:18446744073709547520
py skip_huge 'assert len(logs[0]) == 128 and all(o == 0 for o, _, _ in logs[0]), logs[0][:3]' \
	"$T/skip_huge_clat.1.log"
ours zoneskip_huge --filename=null:irqmode=none,size=1M --size=1M --zonemode=strided \
	--zonesize=8k --zonerange=64k --zoneskip=18446744073709547520 --rw=read
py zoneskip_huge 'assert len(logs[0]) == 256 and all(o < 8192 for o, _, _ in logs[0]), logs[0][:3]' \
	"$T/zoneskip_huge_clat.1.log"
same_ios skip_back 1M --size=1M --rw=read:-8k
same_ios skip_back_write 1M --size=1M --rw=write:-16k --bs=8k
same_ios skip_back_io_size 1M --size=1M --rw=read:-8k --io_size=3M
py skip_8k_holes '
o = [x[0] for x in logs[0]]
assert o == list(range(0, 1 << 20, 12288))[:len(o)] and len(o) == 86, o[:5]
' "$T/skip_8k.b_clat.1.log"

# rw=randread:4: a random offset, then 3 sequential I/Os after it; with
# rw_sequencer=identical the same offset 4 times.  (A large region, so
# that no random offset lands where its sequential run would go past it.)
SEQ4='
for log in logs:
    assert len(log) == 256, len(log)
    groups = [log[i:i + 4] for i in range(0, len(log), 4)]
    for g in groups:
        assert all(g[k + 1][0] == g[k][0] + STEP for k in range(3)), g
    starts = [g[0][0] for g in groups]
    assert len(set(starts)) > 40, starts[:8]
'
R4=(--rw=randread:4 --number_ios=256)
ours rand4 --filename=null:irqmode=none,size=64M "${R4[@]}"
ours ident4 --filename=null:irqmode=none,size=64M "${R4[@]}" --rw_sequencer=identical
if ((HAVE_FIO)); then
	theirs rand4.fio --ioengine=null --size=64M "${R4[@]}"
	theirs ident4.fio --ioengine=null --size=64M "${R4[@]}" --rw_sequencer=identical
	py randread_4 "${SEQ4//STEP/4096}" "$T/rand4_clat.1.log" "$T/rand4.fio_clat.1.log"
	py rw_sequencer_identical "${SEQ4//STEP/0}" "$T/ident4_clat.1.log" "$T/ident4.fio_clat.1.log"
else
	py randread_4 "${SEQ4//STEP/4096}" "$T/rand4_clat.1.log"
	py rw_sequencer_identical "${SEQ4//STEP/0}" "$T/ident4_clat.1.log"
fi
# rw=randread:1k is 1024 I/Os per random offset, as fio reads it since 3.34
# (3.33's atoi took 1).
ours rand1k --filename=null:irqmode=none,size=16G --rw=randread:1k --number_ios=2048
py randread_1k '
log = logs[0]
assert len(log) == 2048, len(log)
for g in (log[:1024], log[1024:]):
    assert all(b[0] == a[0] + 4096 for a, b in zip(g, g[1:])), g[:3]
' "$T/rand1k_clat.1.log"

# ---- block sizes ----

# bssplit, per direction: each size's share within 2 points of the split
# asked for (the write split's empty share takes the 70% left).
ours split --filename=null:irqmode=none,size=16G --rw=randrw --number_ios=40000 \
	--bssplit=4k/10:64k/50:32k/40,8k/30:16k/
py bssplit_shares '
want = {0: {4096: 10, 65536: 50, 32768: 40}, 1: {8192: 30, 16384: 70}}
for d, split in want.items():
    sizes = collections.Counter(bs for _, bs, dd in logs[0] if dd == d)
    n = sum(sizes.values())
    assert n > 15000 and set(sizes) == set(split), (d, sizes)
    for bs, pct in split.items():
        assert abs(100 * sizes[bs] / n - pct) < 2, (d, bs, 100 * sizes[bs] / n)
' "$T/split_clat.1.log"
# Shares over 100% with at most one size left without: fio 3.33 runs them
# (its draw stops at 100%, 4k/60:8k/60 is 60:40); so does blkring, with a
# note.
OVER='
for log in logs:
    sizes = collections.Counter(bs for _, bs, _ in log)
    n = sum(sizes.values())
    assert n == 20000 and abs(100 * sizes[4096] / n - 60) < 2, sizes
'
ours over --filename=null:irqmode=none,size=16G --rw=randread --number_ios=20000 \
	--bssplit=4k/60:8k/60
grep -qF "note: job 'a': bssplit: the read shares add up to 120%" "$T/over.err" ||
	fail bssplit_over_100_note "$(cat "$T/over.err")"
if ((HAVE_FIO)); then
	theirs over.fio --ioengine=null --size=16G --rw=randread --number_ios=20000 \
		--bssplit=4k/60:8k/60
	py bssplit_over_100 "$OVER" "$T/over_clat.1.log" "$T/over.fio_clat.1.log"
else
	py bssplit_over_100 "$OVER" "$T/over_clat.1.log"
fi
# The results count the bytes the I/Os moved, whatever their sizes.
ours bytes --filename=null:irqmode=none,size=256M --rw=randrw --number_ios=4000 \
	--bssplit=4k/10:64k/50:32k/40,8k/30:16k/ --output-format=json
JSON=$T/bytes.out py bssplit_bytes '
import json, os
d = json.load(open(os.environ["JSON"]))["jobs"][0]
moved = {dd: sum(bs for _, bs, x in logs[0] if x == dd) for dd in (0, 1)}
assert (d["read"]["io_bytes"], d["write"]["io_bytes"]) == (moved[0], moved[1]), (moved, d["read"]["io_bytes"])
' "$T/bytes_clat.1.log"

# bsrange: sizes in the range, multiples of its minimum, with fio's shares
# (the minimum plus up to the maximum, aligned down; norandommap, as fio's
# random map cuts I/Os short where they would overlap blocks done, which
# blkring, keeping no map, does not); sequential ones end at the region's
# end.  With bs_unaligned, any multiple of the device's 512-byte blocks,
# which fio's byte sizes are counted in.
RANGE='
sizes = collections.Counter(bs for _, bs, _ in logs[0])
assert all(LO <= bs <= HI and bs % ALIGN == 0 for bs in sizes), sorted(sizes)
assert len(sizes) >= KINDS, sorted(sizes)
if len(logs) > 1:
    theirs = collections.Counter(bs - bs % ALIGN for _, bs, _ in logs[1])
    for bs in set(sizes) | set(theirs):
        a, b = 100 * sizes[bs] / len(logs[0]), 100 * theirs[bs] / len(logs[1])
        assert abs(a - b) < 2, (bs, a, b)
'
BR=(--rw=randread --norandommap --number_ios=20000)
ours range --filename=null:irqmode=none,size=1G "${BR[@]}" --bsrange=4k-16k
ours range_seq --filename=null:irqmode=none,size=1M --rw=write --bsrange=4k-16k
ours unaligned --filename=null:irqmode=none,size=1G "${BR[@]}" --bsrange=4k-10k --bs_unaligned
r=(LO 4096 HI 16384 ALIGN 4096 KINDS 4)
u=(LO 4096 HI 10240 ALIGN 512 KINDS 13)
code=$RANGE
code2=$RANGE
for ((i = 0; i < 8; i += 2)); do
	code=${code//${r[i]}/${r[i + 1]}}
	code2=${code2//${u[i]}/${u[i + 1]}}
done
if ((HAVE_FIO)); then
	theirs range.fio --ioengine=null --size=1G "${BR[@]}" --bsrange=4k-16k
	theirs unaligned.fio --ioengine=null --size=1G "${BR[@]}" --bsrange=4k-10k --bs_unaligned
	py bsrange "$code" "$T/range_clat.1.log" "$T/range.fio_clat.1.log"
	py bs_unaligned "$code2" "$T/unaligned_clat.1.log" "$T/unaligned.fio_clat.1.log"
else
	py bsrange "$code" "$T/range_clat.1.log"
	py bs_unaligned "$code2" "$T/unaligned_clat.1.log"
fi
py bsrange_sequential '
at = 0
for off, bs, _ in logs[0]:
    assert off == at and 4096 <= bs <= 16384 and bs % 4096 == 0, (off, at, bs)
    at += bs
assert at == 1 << 20, at
' "$T/range_seq_clat.1.log"

# ---- random offsets ----

# zipf, pareto and normal: the hits per block, ranked, as fio-genzipf
# counts them for the same parameters (its -g 2 -b 65536: 32768 blocks and
# as many draws): the top 1, 10, 100 and 1000 blocks' shares within 1.5
# points, and as many blocks hit within 5%.
for dist in "zipf 1.2" "zipf 0.8" "pareto 0.3" "normal 10"; do
	# shellcheck disable=SC2086
	set -- $dist
	name=genzipf_$1_$2
	if ! command -v fio-genzipf >/dev/null; then
		skip "$name" "fio-genzipf is not installed"
		continue
	fi
	fio-genzipf -t "$1" -i "$2" -g 2 -b 65536 -c >"$T/$name.csv"
	ours "$name" --filename=null:irqmode=none,size=2G --rw=randread --bs=64k \
		--random_distribution="$1:$2"
	REF=$T/$name.csv py "$name" '
import os
hits = sorted(collections.Counter(o for o, _, _ in logs[0]).values(), reverse=True)
ref = sorted((int(l.split(",")[1]) for l in open(os.environ["REF"]) if not l.startswith("rank")),
             reverse=True)
assert sum(hits) == sum(ref) == 32768, (sum(hits), sum(ref))
assert abs(len(hits) - len(ref)) < 0.05 * len(ref), (len(hits), len(ref))
for k in (1, 10, 100, 1000):
    a, b = 100 * sum(hits[:k]) / 32768, 100 * sum(ref[:k]) / 32768
    assert abs(a - b) < 1.5, (k, a, b)
' "$T/${name}_clat.1.log"
done

# zoned: each zone's share of the accesses within 2 points; zoned_abs per
# direction.
ours zoned --filename=null:irqmode=none,size=1G --rw=randread --number_ios=40000 \
	--random_distribution=zoned:60/10:30/20:8/30:2/40
py zoned '
zones = [(0, 10, 60), (10, 30, 30), (30, 60, 8), (60, 100, 2)]
for lo, hi, want in zones:
    n = sum(lo <= 100 * o / (1 << 30) < hi for o, _, _ in logs[0])
    assert abs(100 * n / len(logs[0]) - want) < 2, (lo, hi, 100 * n / len(logs[0]))
' "$T/zoned_clat.1.log"
ours zoned_abs --filename=null:irqmode=none,size=1G --rw=randrw --number_ios=40000 \
	--random_distribution=zoned_abs:50/1M:50/2M,100/4M
py zoned_abs '
reads = [o for o, _, d in logs[0] if d == 0]
writes = [o for o, _, d in logs[0] if d == 1]
assert abs(100 * sum(o < 1 << 20 for o in reads) / len(reads) - 50) < 2
assert all(o < 3 << 20 for o in reads) and all(o < 4 << 20 for o in writes)
assert any(o >= 2 << 20 for o in writes)
' "$T/zoned_abs_clat.1.log"

# percentage_random=50: about half the offsets follow on from the last
# I/O, as fio's do.
PCT='
for log in logs:
    seq = sum(log[i][0] == log[i - 1][0] + log[i - 1][1] for i in range(1, len(log)))
    assert 45 < 100 * seq / (len(log) - 1) < 55, 100 * seq / (len(log) - 1)
'
ours pct --filename=null:irqmode=none,size=1G --rw=randread --percentage_random=50 \
	--number_ios=20000
if ((HAVE_FIO)); then
	theirs pct.fio --ioengine=null --size=1G --rw=randread --percentage_random=50 \
		--number_ios=20000
	py percentage_random "$PCT" "$T/pct_clat.1.log" "$T/pct.fio_clat.1.log"
else
	py percentage_random "$PCT" "$T/pct_clat.1.log"
fi

# random_generator=lfsr visits every block once per pass even with
# norandommap, which alone repeats blocks.
ours lfsr --filename=null:irqmode=none,size=4M --rw=randread --norandommap \
	--random_generator=lfsr
ours nomap --filename=null:irqmode=none,size=4M --rw=randread --norandommap
py random_generator_lfsr '
assert sorted(o for o, _, _ in logs[0]) == list(range(0, 4 << 20, 4096))
assert len(set(o for o, _, _ in logs[1])) < 1024
' "$T/lfsr_clat.1.log" "$T/nomap_clat.1.log"

# ---- zones and clones ----

# zonemode=strided: zonesize bytes of every zonerange, zoneskip apart, at
# fio's offsets, round the device when the region is all of it; on a
# larger file the zones go on past the region, as fio's do.
same_ios strided 1M --size=1M --zonemode=strided --zonesize=8k --zonerange=64k --rw=read
same_ios strided_skip 1M --size=1M --zonemode=strided --zonesize=8k --zonerange=16k \
	--zoneskip=16k --rw=write
same_ios strided_repeat 1M --size=1M --zonemode=strided --zonesize=32k --zonerange=16k \
	--rw=read
py strided_visits '
assert all(o % 65536 < 8192 for o, _, _ in logs[0]), [o for o, _, _ in logs[0] if o % 65536 >= 8192][:4]
assert len(logs[0]) == 256
' "$T/strided.b_clat.1.log"
truncate -s 4M "$T/strided.img"
# A job with more to move than one pass goes round from the first zone,
# as fio's next loop, also when the device ends in a partial zone.
same_ios strided_io_size 1M --size=1M --zonemode=strided --zonesize=48k --zonerange=48k \
	--rw=read --bs=16k --io_size=4M
same_ios strided_partial_io_size 1M --size=1M --zonemode=strided --zonesize=16k --zonerange=48k \
	--rw=read --bs=16k --io_size=4M
ours strided_timed --filename=null:irqmode=none,size=1M --size=1M --rw=randread --bs=16k \
	--zonemode=strided --zonesize=16k --zonerange=48k --time_based --runtime=300ms \
	--output-format=json
check strided_timed 'python3 -c "import json, sys
assert json.load(open(sys.argv[1]))[\"jobs\"][0][\"read\"][\"io_bytes\"] > 16 << 20" "$T/strided_timed.out"' \
	"$(head -c 300 "$T/strided_timed.out" "$T/strided_timed.err")"
ours strided_file --filename="$T/strided.img" --size=1M --zonemode=strided --zonesize=4k \
	--zonerange=16k --rw=randread
py strided_random '
o = [x[0] for x in logs[0]]
assert sorted(x // 16384 for x in o) == list(range(256)), o[:8]
' "$T/strided_file_clat.1.log"
# Sizes drawn (bsrange, bssplit) must fit in the region, as fio's
# io_u_fits(): on a larger device a strided job of varying sizes ends at
# the region's end (fio's last I/O ends at 688k), where one of fixed size
# goes on through the zones past it.
VARY='
for log in logs:
    assert max(o + bs for o, bs, _ in log) == 688 << 10, max(o + bs for o, bs, _ in log)
    assert {(o - (128 << 10)) >> 18 for o, _, _ in log} == {0, 1, 2}, log[-3:]
'
ours strided_vary --filename="$T/strided.img" --offset=128k --size=560k --zonemode=strided \
	--zonesize=64k --zonerange=256k --rw=read --bsrange=4k-60k
if ((HAVE_FIO)); then
	theirs strided_vary.fio --filename="$T/strided.img" --offset=128k --size=560k \
		--zonemode=strided --zonesize=64k --zonerange=256k --rw=read --bsrange=4k-60k
	py strided_sizes_fit_region "$VARY" "$T/strided_vary_clat.1.log" \
		"$T/strided_vary.fio_clat.1.log"
else
	py strided_sizes_fit_region "$VARY" "$T/strided_vary_clat.1.log"
fi

# offset_increment with numjobs=2: the second clone starts at the increment.
if ((HAVE_FIO)); then
	theirs inc.fio --ioengine=null --size=256k --rw=read:4k --numjobs=2 --offset_increment=128k
fi
ours inc --filename=null:irqmode=none,size=384k --size=256k --rw=read:4k --numjobs=2 \
	--offset_increment=128k
check offset_increment '[[ $(head -n 1 "$T/inc_clat.2.log" | cut -d, -f5) == " 131072" &&
	$(head -n 1 "$T/inc_clat.1.log" | cut -d, -f5) == " 0" ]] && { ((!HAVE_FIO)) ||
	cmp -s <(ios "$T/inc_clat.2.log") <(ios "$T/inc.fio_clat.2.log"); }' \
	"clone 2 starts at $(head -n 1 "$T/inc_clat.2.log")"
ours inc_pct --filename=null:irqmode=none,size=1M --size=256k --numjobs=3 \
	--offset_increment=25%
check offset_increment_pct '[[ $(head -n 1 "$T/inc_pct_clat.3.log" | cut -d, -f5) == " 524288" ]]' \
	"clone 3 starts at $(head -n 1 "$T/inc_pct_clat.3.log")"
# ioengine=null's device reaches the last clone's region, also for a
# percentage increment (of the device itself); one that cannot be is named.
expect_json null_engine_increment_pct 'assert d["jobs"][1]["read"]["io_bytes"] == 65536, d["jobs"][1]["read"]' \
	--name=a --ioengine=null --size=64k --numjobs=2 --offset_increment=50%
expect_err null_engine_increment_full 2 "offset_increment=50% with numjobs=3: the clones would start past the end" \
	--name=a --ioengine=null --size=64k --numjobs=3 --offset_increment=50%
# offset=N%: the start and each clone's increment added up, then rounded up
# to the smallest block, as fio's get_start_offset() (fio: 106496, 208896).
ours inc_offset_pct --filename=null:irqmode=none,size=1M --size=64k --numjobs=2 \
	--offset=10% --offset_increment=100k
check offset_pct_increment '[[ $(head -n 1 "$T/inc_offset_pct_clat.1.log" | cut -d, -f5) == " 106496" &&
	$(head -n 1 "$T/inc_offset_pct_clat.2.log" | cut -d, -f5) == " 208896" ]]' \
	"clones start at $(head -n 1 "$T/inc_offset_pct_clat.1.log"), $(head -n 1 "$T/inc_offset_pct_clat.2.log")"

# ---- fill_device ----

# A full file system ends a writing job without an error (fio's
# fill_device); a missing file without a size takes the free space.
mkdir "$T/fs"
if [[ $(id -u) != 0 ]] || ! mount -t tmpfs -o size=2m tmpfs "$T/fs" 2>/dev/null; then
	skip fill_device "needs root for a 2 MiB tmpfs"
else
	truncate -s 8M "$T/fs/sparse.img"
	expect_json fill_device_enospc 'assert d["jobs"][0]["write"]["io_bytes"] == 2 << 20, d["jobs"][0]["write"]' \
		--name=a --filename="$T/fs/sparse.img" --rw=write --bs=64k --fill_device=1
	rm -f "$T/fs/sparse.img"
	expect_json fill_device_layout 'assert d["jobs"][0]["write"]["io_bytes"] == 2 << 20, d["jobs"][0]["write"]' \
		--name=a --filename="$T/fs/new.img" --rw=write --bs=64k --fill_fs=1
	rm -f "$T/fs/new.img"
	# With a size larger than the space: laid out sparse, written until full (fio's).
	expect_json fill_device_size 'assert d["jobs"][0]["write"]["io_bytes"] == 2 << 20, d["jobs"][0]["write"]' \
		--name=a --filename="$T/fs/new.img" --rw=write --bs=64k --size=8M --fill_device=1
	rm -f "$T/fs/new.img"
	truncate -s 8M "$T/fs/sparse.img"
	expect_err fill_device_off 1 "ENOSPC" --name=a --filename="$T/fs/sparse.img" --rw=write --bs=64k
	unmount "$T/fs"
fi

# ---- bad values: exit 2, the option named with what it takes ----

bad() {
	local name=$1 text=$2
	shift 2
	expect_err "bad_$name" 2 "$text" --name=a --filename=null:irqmode=none,size=1M "$@"
}
bad rw_random_nr "option 'rw': 'randread:0': after ':' comes the number of I/Os per random offset" \
	--rw=randread:0
bad rw_random_size "option 'rw': 'randread:4x': after ':' comes the number of I/Os" --rw=randread:4x
bad rw_skip "option 'rw': 'read:-x': after ':' comes the bytes to skip" --rw=read:-x
bad rw_skip_back_0 "option 'rw': 'read:-0': a backwards skip of 0 bytes" --rw=read:-0
bad rw_skip_blocks "rw=MODE:N: a skip of 1000 is not a multiple" --rw=read:1000
bad rw_sequencer "option 'rw_sequencer': 'same' is not one of sequential, identical" \
	--rw_sequencer=same
bad bsrange "option 'bsrange': '4k' is not a block size range (MIN-MAX" --bsrange=4k
bad bsrange_range "option 'bsrange': '4k-2g' is out of range" --bsrange=4k-2g
bad bsrange_blocks "bsrange: a size of 1000 is not a multiple" --bsrange=1000-4k
bad bssplit "option 'bssplit': '4q/10' is not a block size and its share (SIZE/PERCENT" \
	--bssplit=4q/10:8k/90
bad zonerange_random "zonemode=strided: a zone of 2097152 bytes at 0 goes past the end of" \
	--rw=randread --zonemode=strided --zonesize=64k --zonerange=2M
bad bssplit_sum "option 'bssplit': '4k/60:8k/50:16k:32k': the shares add up to 110%" \
	--bssplit=4k/60:8k/50:16k:32k
bad bssplit_pct "option 'bssplit': '4k/101' is not a block size and its share" --bssplit=4k/101
bad bssplit_dirs "option 'bssplit': '4k,8k,4k,8k' has more than 3 splits" --bssplit=4k,8k,4k,8k
bad bs_unaligned "option 'bs_unaligned': '2' is not 0 or 1" --bs_unaligned=2
bad dist "option 'random_distribution': 'uniform' is not one of random, zipf" \
	--random_distribution=uniform
bad dist_zipf "option 'random_distribution': 'zipf:1': zipf's theta cannot be 1" \
	--random_distribution=zipf:1
bad dist_pareto "option 'random_distribution': 'pareto:1.5': pareto's power is above 0" \
	--random_distribution=pareto:1.5
bad dist_normal "option 'random_distribution': 'normal:100': normal's deviation is from 0" \
	--random_distribution=normal:100
bad dist_center "option 'random_distribution': 'zipf:1.2:2' is not KIND:VALUE[:CENTER]" \
	--random_distribution=zipf:1.2:2
bad dist_zoned "option 'random_distribution': '60/10:30/20': the accesses add up to 90%" \
	--random_distribution=zoned:60/10:30/20
bad dist_zoned_sizes "option 'random_distribution': '50/60:50/60': the sizes add up to 120%" \
	--random_distribution=zoned:50/60:50/60
bad dist_zoned_empty "option 'random_distribution': 'zoned' needs its zones" \
	--random_distribution=zoned
bad dist_zoned_abs "zoned_abs: the read zones take 3145728 bytes, more than the job's 1048576" \
	--rw=randread --random_distribution=zoned_abs:50/1M:50/2M
bad percentage_random "option 'percentage_random': '101' is not a percentage (0 to 100" \
	--percentage_random=101
bad random_generator "option 'random_generator': 'mt' is not one of tausworthe, lfsr" \
	--random_generator=mt
bad offset_increment "option 'offset_increment': '1q' is not a size" --offset_increment=1q
bad offset_increment_end "offset=1048576 (clone 2, offset_increment=524288) is at or past the end" \
	--size=512k --numjobs=3 --offset_increment=512k
bad zonemode "option 'zonemode': 'zbd' needs a zoned block device" --zonemode=zbd
bad zonesize "option 'zonesize': '1x' is not a size" --zonemode=strided --zonesize=1x
bad zonesize_alone "zonesize needs zonemode=strided" --zonesize=64k
bad zonesize_missing "zonemode=strided needs zonesize" --zonemode=strided
bad zonerange "a zone of 2048 bytes is smaller than one read block (4096)" --zonemode=strided \
	--zonesize=8k --zonerange=2k
bad zoneskip "zoneskip=1000 is not a multiple" --zonemode=strided --zonesize=8k --zoneskip=1000
bad fill_device "option 'fill_device': 'yes' is not 0 or 1" --fill_device=yes
bad rate_sizes "rate= with block sizes that vary" --rate=1m --bsrange=4k-8k
bad verify_sizes "verify needs one block size per direction" --rw=write --verify=crc32c \
	--bsrange=4k-8k
