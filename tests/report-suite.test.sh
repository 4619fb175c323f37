#!/usr/bin/env bash
# The seed suite end to end, as `make run QUICK=1` runs it but with the
# shortest runs that still fill every table (SEEDS_RUNTIME): every seed
# script runs to the end, seeds.json has every table's rows, seeds.md a
# section per seed, and the plots are written when gnuplot is there.
# It runs once per `make test`, in the first sanitizer tree: the TSan tree
# would only run the same workloads again, several times slower.
cd "$(dirname "$0")/.." || exit 1
B=${BLKRING:-build/blkring}
if [[ $B == *tsan* && -z ${SEEDS_IN_TSAN:-} ]]; then
	echo "SKIP seed_suite_quick: runs once, outside the TSan tree (SEEDS_IN_TSAN=1 runs it here)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

SEEDS_RUNTIME=${SEEDS_RUNTIME:-100ms} REPORT_DIR=$T BLKRING=$B \
	timeout 120 bench/seeds/run-all.sh "$(dirname "$B")" >"$T/out" 2>"$T/err"
rc=$?
if [[ $rc == 0 ]]; then
	pass seed_suite_quick
else
	fail seed_suite_quick "exit $rc: $(tail -n 3 "$T/err" | tr '\n' ' ')"
fi

if why=$(python3 - "$T" 2>&1 <<'PY'
import json, os, re, sys
d = sys.argv[1]
doc = json.load(open(os.path.join(d, "seeds.json")))
s = {x["seed"]: x for x in doc["seeds"]}
assert sorted(s) == ["000", "001", "002"], sorted(s)
for n, sec in s.items():
    assert sec["status"] == "ok", (n, sec["status"], sec["notes"])
    assert not sec.get("fixture"), (n, "fixture rows in a measured report")
null = {r["size"] for r in s["000"]["rows"] if r["device"] == "null"}
assert null == {"4k", "1M"}, ("000 null rows", null)
loop = {r["size"] for r in s["000"]["rows"] if r["device"] == "loop"}
notes = " ".join(s["000"]["notes"])
assert loop == {"4k", "1M"} or (not loop and "loop: skipped: " in notes), ("000 loop", loop, notes)
assert len(s["001"]["rows"]) == 4, ("001", s["001"]["rows"])
depths = [r["depth"] for r in s["002"]["rows"]]
assert depths == [1, 4, 16, 64, 256, 1024, 4096, 16384], ("002 depths", depths)
for n, sec in s.items():
    for r in sec["rows"]:
        for k, v in r.items():
            if k.endswith(("_iops", "_us")) and not k.startswith("seed_"):
                assert isinstance(v, (int, float)) and v > 0, (n, k, v, r)
md = open(os.path.join(d, "seeds.md")).read()
assert re.findall(r"^## (Seed \d{3})", md, re.M) == ["Seed 000", "Seed 001", "Seed 002"], md[:300]
PY
); then
	pass seed_suite_rows
else
	fail seed_suite_rows "$(tail -c 400 <<<"$why")"
fi

if ! command -v gnuplot >/dev/null; then
	echo "SKIP seed_suite_plots: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox)"
else
	bad=
	for n in 000 001 002; do
		[[ -s $T/seed-$n.png ]] || bad+=" seed-$n.png"
	done
	if [[ -z $bad ]]; then pass seed_suite_plots; else fail seed_suite_plots "missing:$bad"; fi
fi
