#!/usr/bin/env bash
# rw=trim|randtrim and zero|randzero: both engines issue them (ring
# commands, blocking calls), JSON has fio's "trim" object and a "zero" one
# shaped like it, zero_flags parses and is checked, devices without the
# operation are refused before anything runs, and trimmed or zeroed blocks
# read back as zeros, and such jobs allocate no data buffers.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"
# Verify jobs save their state in the current directory (fio's rule): the
# scratch one, not the checkout.
cd "$T" || exit 1

DEV=null:memory_backed=1,discard=1,write_zeroes=1,size=1M

# fio's trim object, keys and types, when fio is installed; "zero" has the
# same shape as blkring's own "trim".
shape='def shape(o):
    return {k: shape(v) for k, v in o.items()} if isinstance(o, dict) else type(o).__name__'
if command -v fio >/dev/null &&
	fio --output-format=json --name=t --ioengine=null --rw=randtrim --bs=16k --size=1M \
		--iodepth=8 >"$T/fio.json" 2>/dev/null; then
	like_fio="$shape
want = shape(json.load(open('$T/fio.json'))['jobs'][0]['trim'])
# tw_wait_ns is blkring's own key (docs/BENCH.md).
got = shape(d['jobs'][0]['trim'])
got.pop('tw_wait_ns')
assert got == want, 'trim is not shaped as fio has it'"
else
	echo "SKIP trim_like_fio: fio is not installed"
	like_fio=$shape
fi

# Each engine trims, then zeroes (nounmap,nofallback: the offload, keeping the memory).
expect_json trim_and_zero "$like_fio
for j in d['jobs']:
    assert j['error'] == 0, j
    trim = j['jobname'].startswith('t')
    t, n = (j['trim'], 64) if trim else (j['zero'], 16)
    assert t['total_ios'] == n and t['io_bytes'] == 1 << 20, t
    assert t['iops'] > 0 and t['clat_ns']['N'] == n, t
    assert ('zero' not in j) if trim else (j['trim']['total_ios'] == 0), 'trim and zero mixed'
    assert j['read']['total_ios'] == 0 and j['write']['total_ios'] == 0
z, t = d['jobs'][1], d['jobs'][0]
assert shape(z['zero']) == shape(t['trim']), 'zero is not shaped as trim'
assert z['job options']['zero_flags'] == 'nounmap,nofallback'" \
	--filename=$DEV --name=t1 --rw=randtrim --bs=16k --iodepth=8 \
	--name=z1 --stonewall --rw=zero --bs=64k --iodepth=4 --zero_flags=nounmap,nofallback \
	--name=t2 --stonewall --rw=randtrim --bs=16k --ioengine=sync \
	--name=z2 --stonewall --rw=zero --bs=64k --ioengine=sync --zero_flags=nounmap,nofallback

# Write zeroes falls back to writing zero pages where the device has no offload.
expect_json zero_fallback "assert d['jobs'][0]['zero']['total_ios'] == 32" \
	--name=z --filename=null:memory_backed=1,size=1M --rw=randzero --bs=32k --iodepth=4

# Trimmed and zeroed ranges, by each engine, read back as zeros: the verify
# headers there are gone, and nowhere else.
"$B" bench --output-format=json --filename=$DEV --bs=4k \
	--name=w --rw=write --verify=crc32c --do_verify=0 \
	--name=t1 --stonewall --rw=trim --offset=64k --size=8k \
	--name=t2 --stonewall --rw=trim --offset=128k --size=8k --ioengine=sync \
	--name=z1 --stonewall --rw=zero --offset=256k --size=8k \
	--name=z2 --stonewall --rw=zero --offset=512k --size=8k --ioengine=sync \
	--name=r --stonewall --rw=read --verify=crc32c --continue_on_error=verify \
	>"$T/out.json" 2>"$T/err"
rc=$?
offsets=$(sed -n 's/.*verify: bad header magic at offset \([0-9]*\), length 4096: expected 0x32565242, found 0x00000000 .*/\1/p' "$T/err" | tr '\n' ' ')
if [[ $rc == 1 && $offsets == "65536 69632 131072 135168 262144 266240 524288 528384 " ]]; then
	pass trimmed_and_zeroed_read_zeros
else
	fail trimmed_and_zeroed_read_zeros "exit $rc, offsets '$offsets': $(head -c 300 "$T/err")"
fi

expect_err zero_flags_word 2 "option 'zero_flags': 'unmap' is not a write zeroes flag (expected nounmap and/or nofallback" \
	--name=z --filename=$DEV --rw=zero --zero_flags=nounmap,unmap
expect_err zero_flags_empty 2 "option 'zero_flags': '' is not a write zeroes flag" \
	--name=z --filename=$DEV --rw=zero --zero_flags=nounmap,
expect_err trim_without_discard 2 "job 't': rw=randtrim: null:memory_backed=1,size=1M does not support discard" \
	--name=t --filename=null:memory_backed=1,size=1M --rw=randtrim
expect_err nofallback_without_offload 2 "rw=zero with zero_flags=nofallback: null:size=1M does not support write zeroes" \
	--name=z --filename=null:size=1M --rw=zero --zero_flags=nofallback
expect_err trim_misaligned 2 "bs=256 is not a multiple" \
	--name=t --filename=$DEV --rw=trim --bs=256
expect_err unknown_mode 2 "'trimwrite' is not one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, zero, randzero" \
	--name=t --filename=$DEV --rw=trimwrite

"$B" bench --name=t --filename=$DEV --rw=trim --bs=64k --name=z --rw=zero --filename=$DEV \
	--bs=64k >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]] && grep -q "^  trim: IOPS=" "$T/out" && grep -q "^  zero: IOPS=" "$T/out" &&
	grep -q "^   TRIM: bw=" "$T/out" && grep -q "^   ZERO: bw=" "$T/out" &&
	grep -q "issued zero: total=16 short=0" "$T/out"; then
	pass normal_output
else
	fail normal_output "exit $rc: $(head -c 300 "$T/err")"
fi

# Trim and write zeroes carry no data, so jobs that only do those allocate
# no data buffers (iodepth x bs: 512 MiB here, which used to be allocated
# and filled); the peak RSS of the whole run stays far below that.
peak_rss() { # prints "STATUS KIB" of the command
	python3 -c '
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
for kind in "randtrim null:memory_backed=1,discard=1,size=1G" "zero null:size=1G"; do
	read -r rw dev <<<"$kind"
	read -r rc kib < <(peak_rss "$B" bench --name=a --filename="$dev" --rw="$rw" \
		--bs=256m --iodepth=2 --runtime=100ms)
	check "no_buffers_$rw" '[[ $rc == 0 && $kib -lt 262144 ]]' "exit $rc, peak RSS ${kib} KiB"
done
