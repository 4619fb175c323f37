#!/usr/bin/env bash
# The bench's polling options: --hipri=1 (a ring with BLKRING_SETUP_IOPOLL)
# and --poll_strategy=all|cookie (a volume's poll= key, replaced in the
# spec the job opens); their errors; the seed 001 script in QUICK mode on
# small settings, with its JSON rows.
B=${BLKRING:-build/blkring}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

SHORT=(--rw=randread --bs=4k --iodepth=16 --runtime=100ms --time_based)
# Reads done, polled.
POLLED="j = d['jobs'][0]
assert j['read']['total_ios'] > 0 and j['job options']['hipri'] == '1'"
for i in 0 1 2; do
	echo "$((i * 2048)) 2048 linear null:size=1M,irqmode=softirq,name=pb$i 0"
done >"$T/v.table"

expect_json hipri_null "$POLLED" --name=a --filename=null:size=1M --hipri=1 "${SHORT[@]}"
expect_json hipri_volume_all "$POLLED" --name=a --filename="table:$T/v.table" --hipri=1 \
	--poll_strategy=all "${SHORT[@]}"
expect_json hipri_volume_cookie "$POLLED" --name=a --filename="table:$T/v.table,poll=all" --hipri=1 \
	--poll_strategy=cookie "${SHORT[@]}"
# The spec's own poll= is replaced, not added to: a bad one never opens.
expect_json strategy_replaces_key "$POLLED" --name=a --filename="table:$T/v.table,poll=bogus" --hipri=1 \
	--poll_strategy=all "${SHORT[@]}"
expect_err strategy_bad_key 2 "bad value 'bogus' for key 'poll'" \
	--name=a --filename="table:$T/v.table,poll=bogus" --hipri=1 "${SHORT[@]}"
expect_err hipri_no_poll_queues 2 "hipri=1: null:size=1M,poll_queues=0 has no poll queues" \
	--name=a --filename=null:size=1M,poll_queues=0 --hipri=1 "${SHORT[@]}"
expect_err hipri_sync 2 "hipri=1 needs ioengine=blkring" \
	--name=a --filename=null:size=1M --hipri=1 --ioengine=sync "${SHORT[@]}"
expect_err strategy_not_volume 2 "poll_strategy=cookie applies to table: volumes" \
	--name=a --filename=null:size=1M --poll_strategy=cookie "${SHORT[@]}"
expect_err strategy_bad_value 2 "'some' is not one of all, cookie" \
	--name=a --filename=null:size=1M --poll_strategy=some "${SHORT[@]}"

# The seed script end to end, QUICK, on one tenth of its runtime.
script=$(dirname "$0")/../bench/seeds/poll/run.sh
if QUICK=1 SEED001_RUNTIME=100ms BLKRING=$B "$script" "$T/seed.json" >"$T/out" 2>"$T/err" &&
	grep -q "^3 dev, 1 job" "$T/out" && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
rows = d['rows']
assert d['seed'] == '001' and len(rows) == 4
for r in rows:
    for k in ('irq_iops', 'poll_all_iops', 'poll_cookie_iops', 'seed_irq_iops'):
        assert r[k] > 0, k
    assert abs(r['poll_all_ratio'] - r['poll_all_iops'] / r['irq_iops']) < 0.01
" "$T/seed.json"; then
	pass seed001_script
else
	fail seed001_script "$(head -c 300 "$T/err") $(head -c 300 "$T/out")"
fi
