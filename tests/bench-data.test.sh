#!/usr/bin/env bash
# fio's buffer and verify-data options: what blkring writes with
# buffer_compress_percentage, dedupe_percentage, buffer_pattern,
# zero_buffers, refill_buffers and scramble_buffers is held against what
# fio 3.33 writes for the same job on /dev/shm files (zlib's ratio, the
# share of repeated blocks, the bytes themselves); verify_backlog catches a
# block another device overwrote while the job still writes;
# verify_state_save/load let verify_only check only what a stopped write run
# completed; every new option's bad value is refused with its name.
B=$(realpath "${BLKRING:-build/blkring}")
T=$(mktemp -d /dev/shm/blkring-data.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"
# The state files go to the current directory, as fio's do.
cd "$T" || exit 1

have_fio=1
command -v fio >/dev/null || have_fio=0

# write_both NAME OPTIONS...: the same 8 MiB sequential 4k write job by
# fio ($T/NAME.fio, a reference run done once for every tree: fio_ref)
# and blkring ($T/NAME.blk); false when either fails.
write_both() {
	local name=$1
	shift
	fio_ref "$name" "$name.fio" -- --name=t --filename="$T/$name.fio" --size=8M --bs=4k \
		--rw=write --ioengine=psync "$@" --output=/dev/null 2>"$T/err.fio" &&
		"$B" bench --name=t --filename="file:$T/$name.blk,size=8M" --bs=4k --rw=write "$@" \
			--output=/dev/null 2>"$T/err.blk"
}

# stats FILE: zlib's compressed size over the file's, the share of 4k
# blocks that repeat an earlier one, and how many blocks differ.
stats() {
	python3 -c "
import sys, zlib
d = open(sys.argv[1], 'rb').read()
blocks = [d[i:i + 4096] for i in range(0, len(d), 4096)]
print('%.4f %.4f %d' % (len(zlib.compress(d, 6)) / len(d),
                        1 - len(set(blocks)) / len(blocks), len(set(blocks))))" "$1"
}

# like_fio NAME WHAT TOLERANCE OPTIONS...: field WHAT (1: ratio, 2: repeats)
# of blkring's file within TOLERANCE of fio's.
like_fio() {
	local name=$1 field=$2 tol=$3 f b
	shift 3
	if ((!have_fio)); then
		skip "$name" "fio is not installed"
		return
	fi
	if ! write_both "$name" "$@"; then
		fail "$name" "$(cat "$T/err.fio" "$T/err.blk" | head -c 300)"
		return
	fi
	f=$(stats "$T/$name.fio" | cut -d' ' -f"$field")
	b=$(stats "$T/$name.blk" | cut -d' ' -f"$field")
	check "$name" "python3 -c 'import sys; sys.exit(abs($f - $b) > $tol)'" \
		"blkring $b, fio $f (tolerance $tol)"
	rm -f "$T/$name.fio" "$T/$name.blk"
}

for pct in 0 50 90; do
	like_fio "compress_$pct" 1 0.01 --buffer_compress_percentage=$pct
done
like_fio compress_chunk_0_64k 1 0.01 --buffer_compress_percentage=50 --buffer_compress_chunk=0 \
	--bs=64k
like_fio compress_pattern 1 0.01 --buffer_compress_percentage=70 --buffer_pattern=0x0102
like_fio dedupe_50 2 0.04 --dedupe_percentage=50
like_fio dedupe_80_compress_50 2 0.04 --dedupe_percentage=80 --buffer_compress_percentage=50

# The compression asked for, not only fio's: 50% compresses to about half.
"$B" bench --name=t --filename="file:$T/c50,size=8M" --rw=write --buffer_compress_percentage=50 \
	--output=/dev/null
r=$(stats "$T/c50" | cut -d' ' -f1)
check compress_50_is_half "python3 -c 'import sys; sys.exit(not 0.48 < $r < 0.55)'" "ratio $r"

# zero_buffers: nothing but zeroes, though a job's buffers start random.
"$B" bench --name=t --filename="file:$T/z,size=1M" --rw=randwrite --iodepth=4 --zero_buffers \
	--output=/dev/null
check zero_buffers "python3 -c 'import sys; sys.exit(open(\"$T/z\", \"rb\").read().count(0) != 1 << 20)'" \
	"non-zero bytes in the file"

# buffer_pattern: fio's bytes exactly (a 12-byte pattern restarts in each
# 4k block; decimals are their bytes, least significant first).
for pat in '0xdeadface"abcd"-12' '1234567' '-100xab"1"' '0xff0x14' '0xabc'; do
	if ((!have_fio)); then
		skip "buffer_pattern $pat" "fio is not installed"
		continue
	fi
	if write_both pat --buffer_pattern="$pat" && cmp -s "$T/pat.fio" "$T/pat.blk"; then
		pass "buffer_pattern $pat"
	else
		fail "buffer_pattern $pat" "blkring's file is not fio's: $(cmp "$T/pat.fio" "$T/pat.blk" 2>&1 | head -c 200)"
	fi
done
# A 'file' in the pattern: its bytes.
printf 'XYZ' >"$T/pfile"
"$B" bench --name=t --filename="file:$T/pf,size=8k" --rw=write --buffer_pattern="0x00'$T/pfile'" \
	--output=/dev/null
check buffer_pattern_file "[[ \$(head -c 8 '$T/pf' | od -An -tx1 | tr -d ' ') == 0058595a0058595a ]]" \
	"$(head -c 8 "$T/pf" | od -An -tx1)"
# verify_pattern's %o: every block holds its own offset, as fio writes it.
if ((have_fio)); then
	if write_both vpat --verify=pattern --verify_pattern='%o"x"' && cmp -s "$T/vpat.fio" "$T/vpat.blk"; then
		pass verify_pattern_offset
	else
		fail verify_pattern_offset "$(cat "$T/err.blk"; cmp "$T/vpat.fio" "$T/vpat.blk" 2>&1 | head -c 200)"
	fi
else
	skip verify_pattern_offset "fio is not installed"
fi

# Distinct blocks: scrambled by default, refilled on request; one buffer
# written over and over without either.
distinct() {
	"$B" bench --name=t --filename="file:$T/d,size=4M" --rw=write --iodepth=1 "$@" \
		--output=/dev/null && stats "$T/d" | cut -d' ' -f3
}
check scramble_default "[[ \$(distinct) == 1024 ]]" "$(distinct) distinct blocks of 1024"
check scramble_off "[[ \$(distinct --scramble_buffers=0) == 1 ]]" \
	"$(distinct --scramble_buffers=0) distinct blocks, not 1"
check refill_buffers "[[ \$(distinct --scramble_buffers=0 --refill_buffers) == 1024 ]]" \
	"$(distinct --scramble_buffers=0 --refill_buffers) distinct blocks of 1024"
# Refilled data is random: it does not compress (scrambled data does).
"$B" bench --name=t --filename="file:$T/d,size=4M" --rw=write --refill_buffers --output=/dev/null
r=$(stats "$T/d" | cut -d' ' -f1)
check refill_random "python3 -c 'import sys; sys.exit($r < 0.99)'" "ratio $r"

# verify_backlog: a second device on the same file overwrites blocks while
# the job writes; the backlog's checks find one and verify_fatal stops the
# job before its writes are done.  Without the backlog the writes all end
# and the verify phase finds it.  The writing job's 1024 writes take
# about 0.26 s at 4000 IOPS (the backlog stops it sooner): the overwriting
# job runs 1 s, well past them (3 s only kept the bench going).
F=$T/backlog
corrupt() {
	"$B" bench --output-format=json --bs=4k \
		--name=w --filename="file:$F,size=4M" --rw=write --verify=crc32c --verify_fatal=1 \
		--rate_iops=4000 "$@" \
		--name=c --filename="file:$F,size=4M,hw_queue_depth=8" --rw=randwrite --rate_iops=20000 \
		--time_based --runtime=1 >"$T/bl.json" 2>"$T/bl.err"
}
corrupt --verify_backlog=8
rc=$?
check verify_backlog_catches "[[ $rc == 1 ]] && grep -q \"job 'w': verify: bad header magic\" '$T/bl.err' &&
	python3 -c 'import json, sys; sys.exit(json.load(open(\"$T/bl.json\"))[\"jobs\"][0][\"write\"][\"total_ios\"] >= 1024)'" \
	"exit $rc: $(head -c 300 "$T/bl.err")"
corrupt
rc=$?
check verify_backlog_off_at_end "[[ $rc == 1 ]] && grep -q \"job 'w': verify: bad header magic\" '$T/bl.err' &&
	python3 -c 'import json, sys; sys.exit(json.load(open(\"$T/bl.json\"))[\"jobs\"][0][\"write\"][\"total_ios\"] != 1024)'" \
	"exit $rc: $(head -c 300 "$T/bl.err")"

# Each block is read once, as fio's: the backlog's checks, then the rest.
for batch in 4 8 32; do
	expect_json "verify_backlog_batch_$batch" "
w = d['jobs'][0]
assert w['error'] == 0 and w['write']['total_ios'] == 256 and w['read']['total_ios'] == 256, w['read']" \
		--name=w --filename="file:$T/b,size=1M" --rw=randwrite --verify=crc32c --iodepth=8 \
		--verify_backlog=8 --verify_backlog_batch=$batch
done

# verify_state_save/load: a write run stopped part way saves what it
# completed; verify_only with the state checks those blocks only (and
# their generation), while a full verify_only fails on the blocks never written.
# The state files go into the current directory, as fio's: the scratch one.
S=(--name=w --filename="file:$T/st,size=64M" --rw=randwrite --bs=4k --verify=crc32c)
cd "$T" || exit 1
timeout -s INT 1 "$B" bench --output-format=json "${S[@]}" --rate_iops=4000 >"$T/s1.json" 2>/dev/null
written=$(python3 -c "import json; print(json.load(open('$T/s1.json'))['jobs'][0]['write']['total_ios'])")
check verify_state_saved "[[ -s local-w-0-verify.state ]] && ((written > 0 && written < 16384))" \
	"no state file, or $written blocks written"
expect_json verify_state_load "
w = d['jobs'][0]
assert w['error'] == 0 and w['read']['total_ios'] == $written and w['write']['total_ios'] == 0, w['read']" \
	"${S[@]}" --verify_only --verify_state_load
expect_err_re verify_only_without_state 1 "job 'w': verify: bad header magic" "${S[@]}" --verify_only
# The state knows the writer's run: blocks of another run fail.
"$B" bench "${S[@]}" --size=64k --verify_state_save=0 --output=/dev/null
expect_err_re verify_state_generation 1 "block from another run \(generation\)" "${S[@]}" \
	--verify_only --verify_state_load
rm -f local-w-0-verify.state
"$B" bench "${S[@]}" --size=64k --verify_state_save=0 --output=/dev/null
check verify_state_save_0 "[[ ! -e local-w-0-verify.state ]]" "a state file was written"
expect_err verify_state_missing 1 "job 'w': verify_state_load: cannot open local-w-0-verify.state" \
	"${S[@]}" --verify_only --verify_state_load
"$B" bench "${S[@]}" --size=64k --output=/dev/null
expect_err verify_state_other_job 1 "was saved by a job of another block size or region" \
	"${S[@]}" --bs=8k --verify_only --verify_state_load
cd - >/dev/null || exit 1

# experimental_verify: taken, with fio's meaning noted.
expect_err experimental_verify_note 0 "note: job 'w': experimental_verify has no effect: blkring's verify always reads back" \
	--name=w --filename=null:memory_backed=1,size=1M --rw=write --verify=crc32c --experimental_verify=1

# Bad values name the option and what it takes.
bad() {
	local name=$1 text=$2
	shift 2
	expect_err "$name" 2 "$text" --name=t --filename=null:size=1M --rw=write "$@"
}
bad bad_compress "option 'buffer_compress_percentage': '101' is not a percentage" --buffer_compress_percentage=101
bad bad_compress_chunk "option 'buffer_compress_chunk': 'x' is not a size" --buffer_compress_chunk=x
bad bad_dedupe "option 'dedupe_percentage': 'half' is not a percentage" --dedupe_percentage=half
bad bad_pattern_format "option 'buffer_pattern': '%o' is not a pattern" --buffer_pattern=%o
bad bad_pattern_string "option 'buffer_pattern': '\"ab' is not a pattern" --buffer_pattern='"ab'
bad bad_pattern_hex "option 'buffer_pattern': '0xzz' is not a pattern" --buffer_pattern=0xzz
bad bad_pattern_file "option 'buffer_pattern': ''/nonexistent'' is not a pattern" --buffer_pattern="'/nonexistent'"
bad bad_verify_pattern "option 'verify_pattern': '%x' is not a pattern" --verify_pattern=%x
bad bad_zero "option 'zero_buffers': '2' is not 0 or 1" --zero_buffers=2
bad bad_refill "option 'refill_buffers': 'yes' is not 0 or 1" --refill_buffers=yes
bad bad_scramble "option 'scramble_buffers': '3' is not 0 or 1" --scramble_buffers=3
bad bad_backlog "option 'verify_backlog': 'x' is not a whole number" --verify_backlog=x
bad bad_backlog_batch "option 'verify_backlog_batch': '-1' is not a whole number" --verify_backlog_batch=-1
bad bad_state_save "option 'verify_state_save': '2' is not 0 or 1" --verify_state_save=2
bad bad_state_load "option 'verify_state_load': 'x' is not 0 or 1" --verify_state_load=x
bad bad_experimental "option 'experimental_verify': '5' is not 0 or 1" --experimental_verify=5
