#!/usr/bin/env bash
# verify=crc32c with fio's do_verify: write jobs read their blocks back and
# check them, through both engines, on linear, striped and stacked volumes
# over memory-backed null devices; read jobs check what they read; a block
# overwritten, half overwritten or read at another place fails with the
# offset, the expected and the found value, exit 1.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

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
	"job 'r': verify: bad header magic at offset 8192, length 4096: expected 0x31565242, found 0x[0-9a-f]{8} on table:.*striped.table: EILSEQ" \
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
expect_err verify_method 2 "option 'verify': 'md5' is not one of 0, crc32c" \
	--name=t --filename=null:$M,size=1M --rw=write --verify=md5
