#!/usr/bin/env python3
"""Seed 002's table from run.sh's rows: the seed's figures beside ours.

usage: table.py RAW_ROWS JSON_OUT NPROC LOAD_BEFORE LOAD_AFTER QUICK RUNTIME
"""
import json
import statistics
import sys

# Hao Xu's figures (seeds/002_*): depth -> (avg latency us with the priority
# list, without); peak IOPS with and without.
SEED_LAT = {
    1: (7.05, 7.10), 2: (8.47, 8.60), 4: (10.42, 10.42), 8: (13.78, 13.22),
    16: (27.41, 24.33), 32: (49.40, 53.08), 64: (102.53, 103.36),
    128: (196.98, 205.61), 256: (372.99, 414.88), 512: (747.23, 791.30),
    1024: (1472.59, 1538.72), 2048: (3153.49, 3329.01), 4096: (6387.86, 6682.54),
    8192: (12150.25, 12774.14), 16384: (23085.58, 26044.71),
}
SEED_PEAK = (710e3, 665e3)


def load_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def runs(rows, config, depth):
    return sorted((r for r in rows if r["config"] == config and r["depth"] == depth),
                  key=lambda r: r["rep"])


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def mean_of(rows, key):
    """The mean over the rows that have the key (rows of older runs have no
    tw_wait_us), or None."""
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.mean(vals) if vals else None


def fmt(v, width, prec):
    return f"{'-':>{width}}" if v is None else f"{v:>{width}.{prec}f}"


def depth_summary(rows, depth):
    prio, noprio, defer = (runs(rows, c, depth) for c in ("prio", "noprio", "defer"))
    s = {
        "depth": depth,
        "seed_prio_lat_us": SEED_LAT[depth][0],
        "seed_noprio_lat_us": SEED_LAT[depth][1],
        "seed_ratio": SEED_LAT[depth][0] / SEED_LAT[depth][1],
        "prio_lat_us": median(prio, "lat_us"),
        "noprio_lat_us": median(noprio, "lat_us"),
        "defer_lat_us": median(defer, "lat_us"),
        "prio_iops": median(prio, "iops"),
        "noprio_iops": median(noprio, "iops"),
        "defer_iops": median(defer, "iops"),
        "prio_tw_wait_us": mean_of(prio, "tw_wait_us"),
        "noprio_tw_wait_us": mean_of(noprio, "tw_wait_us"),
        "reps": len(prio),
    }
    s["ratio"] = s["prio_lat_us"] / s["noprio_lat_us"]
    tw, tw_no = s["prio_tw_wait_us"], s["noprio_tw_wait_us"]
    s["tw_wait_ratio"] = tw / tw_no if tw is not None and tw_no else None
    # Each repetition's pair ran back to back: its ratio, and each side's
    # spread over the repetitions, say how much is noise.
    pair = [p["lat_us"] / q["lat_us"] for p, q in zip(prio, noprio)]
    s["pair_ratios"] = pair
    s["pairs_faster"] = sum(r < 1 for r in pair)
    s["pair_efficiency"] = [efficiency(p) / efficiency(q) for p, q in zip(prio, noprio)]
    s["prio_spread"] = spread(prio)
    s["noprio_spread"] = spread(noprio)
    return s


def efficiency(row):
    return row["ios"] / row["cpu_s"]


def spread(rows):
    lats = [r["lat_us"] for r in rows]
    return (max(lats) - min(lats)) / statistics.median(lats)


def verdict(s):
    """How many back-to-back pairs favour the priority list, and their range."""
    pair = s["pair_ratios"]
    faster = sum(r < 1 for r in pair)
    return f"{faster}/{len(pair)} faster, {min(pair):.2f}-{max(pair):.2f}"


def print_table(summary, peak):
    print("Seed 002: SQPOLL 4k randread, issue as task work; average latency, usec")
    print("  seed: NVMe, fio (Linux 5.17)   ours: null irqmode=signal,completion_nsec=5000,")
    print("  submit_nsec=1000; the SQ thread (which the completions interrupt) on CPU 1,")
    print("  the application on CPU 0")
    print("  tw_wait: mean wait of the completions run as task work, usec (mean of the reps)")
    print()
    print(f"{'depth':>6} | {'seed prio':>9} {'no prio':>9} {'ratio':>5} |"
          f" {'prio':>9} {'no prio':>9} {'ratio':>5} | {'defer':>9} |"
          f" {'tw prio':>9} {'tw noprio':>9} {'ratio':>5} | pairs run back to back")
    for s in summary:
        note = verdict(s) if s["reps"] > 1 else ""
        print(f"{s['depth']:>6} | {s['seed_prio_lat_us']:>9.2f} {s['seed_noprio_lat_us']:>9.2f}"
              f" {s['seed_ratio']:>5.2f} | {s['prio_lat_us']:>9.1f} {s['noprio_lat_us']:>9.1f}"
              f" {s['ratio']:>5.2f} | {s['defer_lat_us']:>9.1f} |"
              f" {fmt(s['prio_tw_wait_us'], 9, 1)} {fmt(s['noprio_tw_wait_us'], 9, 1)}"
              f" {fmt(s['tw_wait_ratio'], 5, 2)} | {note}")
    deep = [r for s in summary if s["depth"] >= 256 for r in s["pair_ratios"]]
    if len(deep) > 1:
        print(f"depths >= 256, all pairs: {sum(r < 1 for r in deep)}/{len(deep)} faster with"
              f" the priority list, median pair ratio {statistics.median(deep):.2f}")
    eff = [r for s in summary if s["depth"] >= 256 for r in s["pair_efficiency"]]
    if eff:
        print(f"depths >= 256, I/Os per CPU second (set-up and ramp included), prio/no prio:"
              f" median {statistics.median(eff):.2f}, {sum(r > 1 for r in eff)}/{len(eff)}"
              f" pairs higher with the priority list")
    print()
    print(f"peak IOPS: seed {SEED_PEAK[0] / 1e3:.0f}K with, {SEED_PEAK[1] / 1e3:.0f}K without;"
          f" ours {peak['prio'] / 1e3:.0f}K with (depth {peak['prio_depth']}),"
          f" {peak['noprio'] / 1e3:.0f}K without (depth {peak['noprio_depth']}),"
          f" defer {peak['defer'] / 1e3:.0f}K (depth {peak['defer_depth']})")


def peaks(summary):
    out = {}
    for c in ("prio", "noprio", "defer"):
        best = max(summary, key=lambda s: s[c + "_iops"])
        out[c], out[c + "_depth"] = best[c + "_iops"], best["depth"]
    return out


def targets(summary, peak):
    deep = [s for s in summary if s["depth"] >= 256]
    at1024 = [s for s in summary if s["depth"] == 1024]
    t = {
        "ratio_below_1_at_every_depth_from_256": all(s["ratio"] < 1 for s in deep),
        "ratio_at_1024_at_most_0.9": bool(at1024) and at1024[0]["ratio"] <= 0.9,
        "peak_iops_prio_at_least_noprio": peak["prio"] >= peak["noprio"],
        "tw_wait_ratio_at_most_0.5_at_every_depth_from_256": all(
            s["tw_wait_ratio"] is not None and s["tw_wait_ratio"] <= 0.5 for s in deep),
    }
    for name, ok in t.items():
        print(f"target {name}: {'met' if ok else 'NOT met'}")
    return t


def main():
    raw, out, nproc, load_before, load_after, quick, runtime = sys.argv[1:8]
    rows = load_rows(raw)
    depths = sorted({r["depth"] for r in rows})
    summary = [depth_summary(rows, d) for d in depths]
    peak = peaks(summary)
    print_table(summary, peak)
    met = targets(summary, peak)
    doc = {
        "seed": "002",
        "workload": "SQPOLL (prio, noprio) or DEFER_TASKRUN (defer), tw_issue=1, 4k randread, "
                    "null:irqmode=signal,completion_nsec=5000,submit_nsec=1000,"
                    "hw_queue_depth=16384; application on CPU 0, SQ thread on CPU 1",
        "machine": {"nproc": int(nproc), "loadavg_before": load_before,
                    "loadavg_after": load_after},
        "quick": quick == "1",
        "runtime": runtime,
        "rows": rows,
        "table": summary,
        "deep_pair_ratios": [r for s in summary if s["depth"] >= 256 for r in s["pair_ratios"]],
        "peak_iops": peak,
        "seed_peak_iops": {"prio": SEED_PEAK[0], "noprio": SEED_PEAK[1]},
        "targets": met,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
