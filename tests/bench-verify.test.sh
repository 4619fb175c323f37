#!/usr/bin/env bash
# verify= with fio's do_verify: write jobs read their blocks back and
# check them, through both engines, on linear, striped and stacked volumes
# over memory-backed null devices; read jobs check what they read; a block
# overwritten, half overwritten or read at another place fails with the
# offset, the expected and the found value, exit 1.  Every method catches a
# block another device wrote on the same file; verify_fatal, verify_only,
# verify_interval, verify_offset and verify_pattern do what fio's do.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"
# Verify jobs save their state in the current directory (fio's rule): the
# scratch one, not the checkout.
cd "$T" || exit 1

M=memory_backed=1
cat >"$T/linear.table" <<EOF
# 1 MiB, 8 sectors into its leg
0 2048 linear null:$M,size=2M,name=lin 8
EOF
cat >"$T/striped.table" <<EOF
0 4096 striped 2 128 null:$M,size=2M,name=s0 0 null:$M,size=2M,name=s1 0
EOF
cat >"$T/stacked.table" <<EOF
# a volume on volumes: linear on the striped one, then striped over the linear one and a null
0 2048 linear table:striped.table 1024
2048 2048 striped 2 8 table:linear.table 0 null:$M,size=1M,name=st 0
EOF

# Write and read back through each engine: the verify phase reads every
# block written, counted as reads; a read job then checks them again.
for vol in linear striped stacked; do
	# 24k blocks straddle the 64k stripe chunks.
	expect_json "round_trip_$vol" "
n = (1 << 20) // 24576 if '$vol' == 'linear' else (2 << 20) // 24576
for w, r in zip(d['jobs'][0::2], d['jobs'][1::2]):
    assert w['write']['total_ios'] == n and w['read']['total_ios'] == n, (w['write'], w['read'])
    assert w['error'] == 0 and r['error'] == 0 and r['read']['total_ios'] == n, r" \
		--filename="table:$T/$vol.table" --bs=24k --verify=crc32c \
		--name=w1 --rw=randwrite --iodepth=8 \
		--name=r1 --stonewall --rw=read --iodepth=4 \
		--name=w2 --stonewall --rw=randwrite --ioengine=sync \
		--name=r2 --stonewall --rw=read --ioengine=sync
done

expect_json do_verify_0 "
w = d['jobs'][0]
assert w['write']['total_ios'] == 256 and w['read']['total_ios'] == 0, w['read']" \
	--name=w --filename=null:$M,size=1M --rw=write --verify=crc32c --do_verify=0

# randrw: only the verify phase checks reads (fio's rule), and it reads every block written.
expect_json randrw_verify "
w = d['jobs'][0]
assert w['read']['total_ios'] > w['write']['total_ios'] > 0, (w['read'], w['write'])" \
	--name=w --filename=null:$M,size=1M --rw=randrw --verify=crc32c --iodepth=4

# A block overwritten by a plain write: its header is gone.
expect_err_re overwritten_block 1 \
	"job 'r': verify: bad header magic at offset 8192, length 4096: expected 0x32565242, found 0x[0-9a-f]{8} on table:.*striped.table: EILSEQ" \
	--filename="table:$T/striped.table" --bs=4k \
	--name=w --rw=randwrite --verify=crc32c --do_verify=0 --iodepth=8 \
	--name=c --stonewall --rw=write --offset=8k --size=4k \
	--name=r --stonewall --rw=read --verify=crc32c --iodepth=8

# Half a block overwritten, through the leg: the header holds, the checksum does not.
expect_err_re half_overwritten 1 \
	"verify: crc32c mismatch at offset 16384, length 8192: expected 0x[0-9a-f]{8}, found 0x[0-9a-f]{8}" \
	--bs=8k --name=w --filename="table:$T/linear.table" --rw=write --verify=crc32c --do_verify=0 \
	--name=c --stonewall --filename=null:$M,size=2M,name=lin --rw=write --bs=4k \
	--offset=$((4096 + 16384 + 4096)) --size=4k \
	--name=r --stonewall --filename="table:$T/linear.table" --rw=read --verify=crc32c

# A block read at another place than it was written: the linear volume is 8 sectors into its leg.
expect_err_re misplaced_block 1 \
	"verify: bad header offset at offset 4096, length 4096: expected 4096, found 0" \
	--bs=4k --name=w --filename="table:$T/linear.table" --rw=write --verify=crc32c --do_verify=0 \
	--name=r --stonewall --filename=null:$M,size=2M,name=lin --rw=read --verify=crc32c \
	--offset=4k --size=4k

# continue_on_error=verify counts the failures and goes on; the exit status still says so.
"$B" bench --output-format=json --filename=null:$M,size=1M --bs=4k \
	--name=w --rw=write --verify=crc32c --do_verify=0 \
	--name=c --stonewall --rw=write --offset=64k --size=8k \
	--name=r --stonewall --rw=read --verify=crc32c --continue_on_error=verify \
	>"$T/out.json" 2>"$T/err"
rc=$?
if [[ $rc == 1 ]] && [[ $(grep -c "verify: bad header magic" "$T/err") == 2 ]] && python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))['jobs'][2]
assert r['total_err'] == 2 and r['first_error'] == 84 and r['error'] == 0, r
assert r['read']['total_ios'] == 256, r['read']
" "$T/out.json"; then
	pass continue_on_verify_error
else
	fail continue_on_verify_error "exit $rc: $(head -c 300 "$T/err")"
fi

expect_err verify_trim 2 "job 't': verify checks reads and writes; rw=trim does neither" \
	--name=t --filename=null:$M,discard=1,size=1M --rw=trim --verify=crc32c
expect_err_re verify_rw_sizes 2 "verify with rw=randrw needs one block size for reads and writes \(bs=4096,8192\)" \
	--name=t --filename=null:$M,size=1M --rw=randrw --bs=4k,8k --verify=crc32c
expect_err verify_method 2 "option 'verify': 'sha3' is not one of 0, md5, crc64, crc32c, crc32c-intel, crc32, crc16, crc7, sha1, sha256, sha512, xxhash, meta, pattern" \
	--name=t --filename=null:$M,size=1M --rw=write --verify=sha3
expect_err_re verify_pattern_needed 2 "job 't': verify=pattern needs verify_pattern" \
	--name=t --filename=null:$M,size=1M --rw=write --verify=pattern
expect_err_re verify_pattern_bad 2 "option 'verify_pattern': 'xyz' is not a pattern: 0x-prefixed hex bytes" \
	--name=t --filename=null:$M,size=1M --rw=write --verify=crc32c --verify_pattern=xyz
expect_err_re verify_interval_bad 2 "option 'verify_interval': 1000 does not divide the block size 4096" \
	--name=t --filename=null:$M,size=1M --rw=write --verify=crc32c --verify_interval=1000

# Every method: a file written with it, 512 bytes of one block's data (of
# its header for meta, which checks no data) then written by a second
# device on the same file, and a read job that names that block.
F=/dev/shm/blkring-verify-$$
trap 'rm -rf "$T" "$F"' EXIT
for kind in md5 crc64 crc32c crc32c-intel crc32 crc16 crc7 sha1 sha256 sha512 xxhash meta pattern; do
	pat=()
	[[ $kind == pattern ]] && pat=(--verify_pattern=0x5a5b5c5d)
	what="$kind mismatch" at=21504
	[[ $kind == meta ]] && what="bad header magic" at=20480
	[[ $kind == pattern ]] && what="pattern mismatch"
	rm -f "$F"
	expect_err_re "corrupt_$kind" 1 "job 'r': verify: $what at offset 2[0-9]{4}, length 4096: expected 0x[0-9a-f]+, found 0x[0-9a-f]+ on file:$F" \
		--bs=4k --filename="file:$F,size=1M" \
		--name=w --rw=write --verify=$kind "${pat[@]}" --do_verify=0 \
		--name=c --stonewall --filename="file:$F,size=1M,hw_queue_depth=8" --rw=write --bs=512 --offset=$at --size=512 \
		--name=r --stonewall --rw=read --verify=$kind "${pat[@]}"
done

# verify_fatal=0 (fio's default) checks every block, then fails with the
# first and the count; verify_fatal=1 stops at the first.
rm -f "$F"
"$B" bench --output-format=json --bs=4k --filename="file:$F,size=1M" \
	--name=w --rw=write --verify=sha1 --do_verify=0 \
	--name=c --stonewall --filename="file:$F,size=1M,hw_queue_depth=8" --rw=write --offset=64k --size=12k \
	--name=r --stonewall --rw=read --verify=sha1 >"$T/fatal0.json" 2>"$T/err0"
rc0=$?
"$B" bench --output-format=json --bs=4k --filename="file:$F,size=1M" \
	--name=r --rw=read --verify=sha1 --verify_fatal=1 >"$T/fatal1.json" 2>"$T/err1"
rc1=$?
if [[ $rc0 == 1 && $rc1 == 1 ]] && grep -q "bad header magic at offset 65536, length 4096: .* (and 2 more blocks)" "$T/err0" &&
	grep -q "bad header magic at offset 65536, length 4096" "$T/err1" && ! grep -q "more blocks" "$T/err1" && python3 -c "
import json, sys
r0 = json.load(open(sys.argv[1]))['jobs'][2]['read']['total_ios']
r1 = json.load(open(sys.argv[2]))['jobs'][0]['read']['total_ios']
assert r0 == 256 and r1 < 256, (r0, r1)
" "$T/fatal0.json" "$T/fatal1.json"; then
	pass verify_fatal
else
	fail verify_fatal "exit $rc0/$rc1: $(head -c 300 "$T/err0") / $(head -c 300 "$T/err1")"
fi

# verify_only: the write job writes nothing and checks what an earlier run
# of it wrote (another generation), every block it covers.
rm -f "$F"
VO=(--bs=4k --filename="file:$F,size=1M" --name=w --rw=randwrite --verify=crc64
	--verify_interval=1k --verify_offset=512)
expect_json verify_only_first_run "
assert d['jobs'][0]['write']['total_ios'] == 256, d['jobs'][0]['write']" "${VO[@]}"
expect_json verify_only_checks "
w = d['jobs'][0]
assert w['write']['total_ios'] == 0 and w['read']['total_ios'] == 256, (w['write'], w['read'])" \
	"${VO[@]}" --verify_only=1
expect_err_re verify_only_corrupt 1 "bad header magic at offset 4096, length 1024" \
	--bs=4k --filename="file:$F,size=1M,hw_queue_depth=8" --name=c --rw=write --offset=4k --size=4k \
	--name=w --stonewall --filename="file:$F,size=1M" --rw=randwrite --verify=crc64 \
	--verify_interval=1k --verify_offset=512 --verify_only=1
