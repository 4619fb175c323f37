#!/usr/bin/env bash
# The seed report's collector (bench/seeds/report.py) on the marked fixture
# of fake seed documents (tests/report-fixture/): the three sections, every
# row in seeds.json with measured and seed figures, the ratios, the plots
# when gnuplot is there, the fixture labelled as fake, and a failed or
# missing seed reported as such.  No benchmark runs here.
cd "$(dirname "$0")/.." || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/ok/raw"
cp tests/report-fixture/*.json tests/report-fixture/runs.jsonl "$T/ok/raw/"
python3 bench/seeds/report.py "$T/ok" >"$T/ok.out" 2>"$T/ok.err"
rc=$?
if [[ $rc == 0 ]] && cmp -s "$T/ok.out" "$T/ok/seeds.md"; then
	pass collector_prints_the_report
else
	fail collector_prints_the_report "exit $rc: $(head -c 300 "$T/ok.err")"
fi

if why=$(python3 - "$T/ok" 2>&1 <<'PY'
import json, os, re, sys
d = sys.argv[1]
md = open(os.path.join(d, "seeds.md")).read()
heads = re.findall(r"^## (Seed \d{3})", md, re.M)
assert heads == ["Seed 000", "Seed 001", "Seed 002"], heads
doc = json.load(open(os.path.join(d, "seeds.json")))
want = {"000": 2, "001": 4, "002": 8}
for sec in doc["seeds"]:
    n = sec["seed"]
    assert sec["status"] == "ok", (n, sec["status"], sec["notes"])
    assert len(sec["rows"]) == want[n], (n, len(sec["rows"]))
    assert sec.get("fixture") and "FAKE" in sec["title"], (n, "fixture not labelled")
    for r in sec["rows"]:
        seed = [k for k in r if k.startswith("seed_") and isinstance(r[k], (int, float))]
        ours = [k for k in r if not k.startswith("seed_") and k.endswith(("_iops", "_us"))]
        assert seed and ours, (n, "a row without both figures", r)
        # Every cell of the markdown table comes from a key of the row.
        for key, _ in sec["columns"]:
            for k in key if isinstance(key, list) else [key]:
                assert k in r, (n, k)
r0 = doc["seeds"][0]["rows"][0]
assert abs(r0["ratio"] - r0["async_iops"] / r0["sync_iops"]) < 1e-9, r0
assert abs(r0["seed_ratio"] - 1353 / 144) < 1e-9, r0
r2 = doc["seeds"][2]["rows"][-1]
assert abs(r2["defer_ratio"] - r2["defer_lat_us"] / r2["noprio_lat_us"]) < 1e-9, r2
assert "loop: skipped: " in " ".join(doc["seeds"][0]["notes"]), doc["seeds"][0]["notes"]
assert re.search(r"^\| 16384 ", md, re.M), "seed 002's depth 16384 row is not in seeds.md"
PY
); then
	pass collector_sections_rows_and_ratios
else
	fail collector_sections_rows_and_ratios "$(tail -c 300 <<<"$why")"
fi

if ! command -v gnuplot >/dev/null; then
	echo "SKIP collector_plots: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox)"
else
	bad=
	for n in 000 001 002; do
		f=$T/ok/seed-$n.png
		[[ $(head -c 8 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
			bad+=" seed-$n.png"
	done
	if [[ -z $bad ]]; then pass collector_plots; else fail collector_plots "not PNG:$bad"; fi
fi

# A seed whose script failed, one whose rows lack a field, one not in the tree.
mkdir -p "$T/bad/raw"
cp tests/report-fixture/seed-001.json "$T/bad/raw/"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
del d["table"][0]["prio_lat_us"]
json.dump(d, open(sys.argv[2], "w"))' tests/report-fixture/seed-002.json "$T/bad/raw/seed-002.json"
cat >"$T/bad/raw/runs.jsonl" <<'EOF'
{"seed": "000", "script": "bench/seeds/discard/run.sh", "rc": "missing", "seconds": 0, "log": "seed-000.log", "quick": true}
{"seed": "001", "script": "bench/seeds/poll/run.sh", "rc": 3, "seconds": 1, "log": "seed-001.log", "quick": true}
{"seed": "002", "script": "bench/seeds/taskwork/run.sh", "rc": 0, "seconds": 1, "log": "seed-002.log", "quick": true}
EOF
python3 bench/seeds/report.py "$T/bad" >"$T/bad.out" 2>"$T/bad.err"
rc=$?
if [[ $rc == 1 ]] && grep -q "seeds without a complete table: 000, 001, 002" "$T/bad.err" &&
	python3 -c '
import json, sys
s = {x["seed"]: x for x in json.load(open(sys.argv[1]))["seeds"]}
assert s["000"]["status"] == "missing", s["000"]
assert s["001"]["status"] == "failed" and "exited 3" in " ".join(s["001"]["notes"]), s["001"]
assert s["002"]["status"] == "failed" and "prio_lat_us" in " ".join(s["002"]["notes"]), s["002"]
' "$T/bad/seeds.json" && grep -q "Status: MISSING" "$T/bad/seeds.md"; then
	pass collector_reports_failed_seeds
else
	fail collector_reports_failed_seeds "exit $rc: $(head -c 300 "$T/bad.err")"
fi
