#!/usr/bin/env python3
"""The seed report: the three seed tables, the seed's figures beside ours.

usage: report.py REPORT_DIR

Reads what bench/seeds/run-all.sh left in REPORT_DIR/raw/: runs.jsonl (one
line per seed script: seed, script, rc, seconds, log) and each script's
JSON document, seed-000.json (discard), seed-001.json (poll) and
seed-002.json (taskwork).  Writes REPORT_DIR/seeds.md (a section per seed),
REPORT_DIR/seeds.json (every table row, measured and seed figures side by
side), and, when gnuplot is installed, seed-000.png, seed-001.png and
seed-002.png from the .gp scripts next to this one (their data in
REPORT_DIR/seed-00N.dat).  Prints seeds.md.  Exits 1 when a seed script
failed or left no rows, so `make run` says so.
"""
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Seed 000's figures (Jens Axboe's runs in the seed thread): IOPS and
# latency avg/max in usec at qd 64, 64 threads of BLKDISCARD against one
# ring.  null_blk rows compare with our null devices, the NVMe rows (the
# only real device in the seed) with our loop device.
SEED000 = {
    "null": {"device": "null_blk",
             "4k": {"sync": (144e3, 444, 20314), "async": (1353e3, 47, 595)},
             "1M": {"sync": (56e3, 1136, 21031), "async": (94e3, 680, 760)}},
    "loop": {"device": "PM174X NVMe",
             "4k": {"sync": (21e3, 3000, 21000), "async": (76e3, 845, 2200)},
             "1M": {"sync": (14e3, 5000, 25000), "async": (56e3, 1153, 3600)}},
}
SIZES = ("4k", "1M")


class ReportError(Exception):
    """A seed document that does not have what its table needs."""


# ---- number formats ----

def fmt_iops(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e3:
        return f"{v / 1e3:.0f}K" if v >= 1e5 else f"{v / 1e3:.1f}K"
    return f"{v:.0f}"


def fmt_us(v):
    if v is None:
        return "-"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_ratio(v):
    return "-" if v is None else f"{v:.2f}"


def fmt_pairs(v):
    """Repeated pairs: how many were faster with, and the spread of their ratios."""
    if not v or len(v) < 2:
        return "-"
    return f"{sum(r < 1 for r in v)}/{len(v)}, {min(v):.2f}-{max(v):.2f}"


def fmt_text(v):
    return "-" if v is None else str(v)


def fmt_avg_max(v):
    return f"{fmt_us(v[0])}/{fmt_us(v[1])}"


def ratio(a, b):
    return a / b if a is not None and b else None


# ---- seed 000: async against sync discard ----

def seed000_runs(doc):
    """The script's measured rows by (device, size, sync|async).

    bench/seeds/discard/run.sh writes a list of rows, each with type
    (sync, async, or ratio: its own verdict, recomputed here) and bs.
    """
    runs = {}
    for r in doc.get("rows", []) if isinstance(doc, dict) else doc:
        try:
            if r["type"] == "ratio":
                continue
            size = {"1m": "1M"}.get(r["bs"], r["bs"])
            runs[(r["device"], size, r["type"])] = r
        except KeyError as e:
            raise ReportError(f"seed 000: a row without {e}: {r}") from None
    return runs


def seed000_rows(doc):
    """Rows of the discard table, one per device and size."""
    runs = seed000_runs(doc)
    rows = []
    for device in ("null", "loop"):
        for size in SIZES:
            sync, asyn = runs.get((device, size, "sync")), runs.get((device, size, "async"))
            if not sync and not asyn:
                continue
            if not sync or not asyn:
                raise ReportError(f"seed 000: {device} {size}: only one of sync and async ran")
            seed = SEED000[device][size]
            rows.append({
                "device": device, "size": size,
                "sync_iops": sync["iops"], "async_iops": asyn["iops"],
                "ratio": ratio(asyn["iops"], sync["iops"]),
                "sync_lat_avg_us": sync["lat_avg_us"], "sync_lat_max_us": sync["lat_max_us"],
                "async_lat_avg_us": asyn["lat_avg_us"], "async_lat_max_us": asyn["lat_max_us"],
                "seed_device": SEED000[device]["device"],
                "seed_sync_iops": seed["sync"][0], "seed_async_iops": seed["async"][0],
                "seed_ratio": ratio(seed["async"][0], seed["sync"][0]),
                "seed_sync_lat_avg_us": seed["sync"][1], "seed_sync_lat_max_us": seed["sync"][2],
                "seed_async_lat_avg_us": seed["async"][1],
                "seed_async_lat_max_us": seed["async"][2],
            })
    return rows


def seed000(doc):
    rows = seed000_rows(doc)
    notes = []
    skipped = doc.get("skipped", {}) if isinstance(doc, dict) else {}
    for what, why in sorted(skipped.items()):
        notes.append(f"{what}: skipped: {why}")
    if not any(r["device"] == "loop" for r in rows) and "loop" not in skipped:
        notes.append("loop: no rows and no reason given by the script")
    return {
        "workload": "random discards, qd 64: sync = 64 threads of blocking discards, async = "
                    "one ring with 64 discard commands in flight",
        "ratio": "async/sync IOPS",
        "columns": [
            ("device", "device", fmt_text), ("size", "size", fmt_text),
            ("seed_sync_iops", "seed sync", fmt_iops), ("seed_async_iops", "seed async", fmt_iops),
            ("seed_ratio", "seed async/sync", fmt_ratio),
            ("sync_iops", "sync", fmt_iops), ("async_iops", "async", fmt_iops),
            ("ratio", "async/sync", fmt_ratio),
            (("seed_sync_lat_avg_us", "seed_sync_lat_max_us"), "seed sync lat", fmt_avg_max),
            (("sync_lat_avg_us", "sync_lat_max_us"), "sync lat", fmt_avg_max),
            (("seed_async_lat_avg_us", "seed_async_lat_max_us"), "seed async lat", fmt_avg_max),
            (("async_lat_avg_us", "async_lat_max_us"), "async lat", fmt_avg_max),
        ],
        "units": "IOPS; latencies in usec, average/maximum; seed figures from null_blk for "
                 "null rows and from the seed's PM174X NVMe for loop rows",
        "rows": rows,
        "notes": notes,
    }


# ---- seed 001: polled against IRQ completion through a volume ----

def seed001(doc):
    rows = []
    for r in doc.get("rows", []):
        try:
            rows.append({
                "setup": r["setup"], "devices": r["devices"], "jobs": r["jobs"],
                "oversubscribed": r.get("oversubscribed", False),
                "seed_irq_iops": r["seed_irq_iops"], "seed_poll_iops": r["seed_poll_iops"],
                "seed_ratio": r["seed_ratio"],
                "irq_iops": r["irq_iops"],
                "poll_all_iops": r["poll_all_iops"], "poll_all_ratio": r["poll_all_ratio"],
                "poll_cookie_iops": r["poll_cookie_iops"],
                "poll_cookie_ratio": r["poll_cookie_ratio"],
            })
        except KeyError as e:
            raise ReportError(f"seed 001: a row without {e}: {r}") from None
    notes = []
    over = [r["setup"] for r in rows if r["oversubscribed"]]
    if over:
        notes.append(f"more jobs than the {doc.get('cpus', '?')} CPUs in: {', '.join(over)}")
    return {
        "workload": "4k randread, iodepth 64; seed: NVMe legs (poll_queues=1); ours: null legs "
                    "(irqmode=softirq, poll_queues=1), polled with the seed's list of every "
                    "poll queue (all) and with Linux 5.18's per-bio cookies (cookie)",
        "ratio": "poll/IRQ IOPS",
        "columns": [
            ("setup", "setup", fmt_text),
            ("seed_irq_iops", "seed IRQ", fmt_iops), ("seed_poll_iops", "seed poll", fmt_iops),
            ("seed_ratio", "seed poll/IRQ", fmt_ratio),
            ("irq_iops", "IRQ", fmt_iops),
            ("poll_all_iops", "poll all", fmt_iops), ("poll_all_ratio", "all/IRQ", fmt_ratio),
            ("poll_cookie_iops", "poll cookie", fmt_iops),
            ("poll_cookie_ratio", "cookie/IRQ", fmt_ratio),
        ],
        "units": "IOPS",
        "rows": rows,
        "notes": notes,
    }


# ---- seed 002: completion task work with and without the priority list ----

def seed002(doc):
    rows = []
    for s in doc.get("table", []):
        try:
            rows.append({
                "depth": s["depth"],
                "seed_prio_lat_us": s["seed_prio_lat_us"],
                "seed_noprio_lat_us": s["seed_noprio_lat_us"],
                "seed_ratio": s["seed_ratio"],
                "prio_lat_us": s["prio_lat_us"], "noprio_lat_us": s["noprio_lat_us"],
                "ratio": s["ratio"],
                "defer_lat_us": s["defer_lat_us"],
                "defer_ratio": ratio(s["defer_lat_us"], s["noprio_lat_us"]),
                "prio_iops": s["prio_iops"], "noprio_iops": s["noprio_iops"],
                "defer_iops": s["defer_iops"], "reps": s.get("reps", 1),
                "pair_ratios": s.get("pair_ratios", []),
                # Tables of older runs have no task-work wait.
                "prio_tw_wait_us": s.get("prio_tw_wait_us"),
                "noprio_tw_wait_us": s.get("noprio_tw_wait_us"),
                "tw_wait_ratio": s.get("tw_wait_ratio"),
            })
        except KeyError as e:
            raise ReportError(f"seed 002: a row without {e}: {s}") from None
    notes = []
    peak, seed_peak = doc.get("peak_iops"), doc.get("seed_peak_iops")
    if peak and seed_peak:
        notes.append(
            f"peak IOPS: seed {fmt_iops(seed_peak['prio'])} with the priority list, "
            f"{fmt_iops(seed_peak['noprio'])} without; ours {fmt_iops(peak['prio'])} with "
            f"(depth {peak['prio_depth']}), {fmt_iops(peak['noprio'])} without (depth "
            f"{peak['noprio_depth']}), {fmt_iops(peak['defer'])} with deferred running "
            f"(depth {peak['defer_depth']})")
    repeated = [r["depth"] for r in rows if r["reps"] > 1]
    if repeated:
        notes.append(f"with/without: the median of {max(r['reps'] for r in rows)} alternating "
                     f"pairs at depths {repeated[0]} and up")
    if any(r["prio_tw_wait_us"] is not None for r in rows):
        notes.append("tw_wait: the mean wait of the completions run as task work, from the push "
                     "of their task work to the CQ tail store (the mean of the runs at each "
                     "depth)")
    return {
        "workload": "SQPOLL, every issue as task work, 4k randread; seed: NVMe (Linux 5.17); "
                    "ours: null irqmode=signal (completions interrupt the thread that runs "
                    "the ring's task work), completion_nsec=5000, submit_nsec=1000, "
                    "hw_queue_depth=16384; the SQ thread on CPU 1, the application on CPU 0; "
                    "deferred = DEFER_TASKRUN without SQPOLL",
        "ratio": "average latency with/without the priority list, and deferred/without; "
                 "task-work wait with/without",
        "columns": [
            ("depth", "depth", fmt_text),
            ("seed_prio_lat_us", "seed with", fmt_us), ("seed_noprio_lat_us", "seed without",
                                                        fmt_us),
            ("seed_ratio", "seed with/without", fmt_ratio),
            ("prio_lat_us", "with", fmt_us), ("noprio_lat_us", "without", fmt_us),
            ("ratio", "with/without", fmt_ratio),
            ("pair_ratios", "pairs faster with, range", fmt_pairs),
            ("defer_lat_us", "deferred", fmt_us), ("defer_ratio", "deferred/without", fmt_ratio),
            ("prio_tw_wait_us", "tw_wait with", fmt_us),
            ("noprio_tw_wait_us", "tw_wait without", fmt_us),
            ("tw_wait_ratio", "tw_wait with/without", fmt_ratio),
        ],
        "units": "average latency and task-work wait (tw_wait), usec",
        "rows": rows,
        "notes": notes,
    }


SEEDS = (
    ("000", "discard", "async discard commands against synchronous BLKDISCARD", seed000),
    ("001", "poll", "polled (hipri=1) against IRQ completion through a linear volume", seed001),
    ("002", "taskwork", "completion task work on a priority list, and deferred task running",
     seed002),
)


# ---- reading what the scripts left ----

def read_runs(raw):
    runs = {}
    path = os.path.join(raw, "runs.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    runs[r["seed"]] = r
    return runs


def build_section(raw, seed, name, title, fn, run):
    sec = {"seed": seed, "title": title, "script": f"bench/seeds/{name}/run.sh", "rows": [],
           "notes": []}
    if run and run.get("rc") != "missing":
        sec.update(seconds=run.get("seconds"), rc=run.get("rc"), log=run.get("log"))
    path = os.path.join(raw, f"seed-{seed}.json")
    if not run:
        sec["status"] = "not run"
    elif run.get("rc") == "missing":
        sec["status"] = "missing"
        sec["notes"].append(f"{sec['script']} is not in this tree")
    elif not os.path.exists(path):
        sec["status"] = "failed"
        sec["notes"].append(f"the script exited {run.get('rc')} without writing its rows; "
                            f"see {run.get('log')}")
    else:
        with open(path) as f:
            doc = json.load(f)
        try:
            sec.update(fn(doc))
            if "_fixture" in doc:
                sec["fixture"] = True
                sec["title"] = "FAKE FIXTURE ROWS, " + sec["title"]
                sec["notes"].insert(0, doc["_fixture"])
            sec["status"] = "ok" if run.get("rc") == 0 and sec["rows"] else "failed"
            if run.get("rc") != 0:
                sec["notes"].append(f"the script exited {run.get('rc')}; see {run.get('log')}")
        except ReportError as e:
            sec["status"] = "failed"
            sec["notes"].append(str(e))
    sec["notes"] += script_targets(os.path.join(os.path.dirname(raw), run.get("log") or "")
                                   if run else "")
    return sec


SCRIPT_VERDICTS = ("target", "depths >= ")


def script_targets(log):
    """The seed script's verdicts: its `target ...` and noise summary lines."""
    if not log or not os.path.isfile(log):
        return []
    with open(log, errors="replace") as f:
        return [f"script: {line.strip()}" for line in f if line.startswith(SCRIPT_VERDICTS)]


# ---- markdown ----

def cell_value(row, key):
    """A column's value: one field, or a tuple of fields for a combined cell."""
    return tuple(row.get(k) for k in key) if isinstance(key, tuple) else row.get(key)


def md_table(sec):
    cols = sec["columns"]
    cells = [[c[1] for c in cols]]
    for r in sec["rows"]:
        cells.append([c[2](cell_value(r, c[0])) for c in cols])
    width = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    lines = []
    for n, row in enumerate(cells):
        # The first column is a label; numbers align right.
        out = [row[0].ljust(width[0])] + [v.rjust(w) for v, w in zip(row[1:], width[1:])]
        lines.append("| " + " | ".join(out) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 1) + (":" if i else "-")
                                        for i, w in enumerate(width)) + "|")
    return lines


def markdown(doc):
    mode = "QUICK" if doc["quick"] else "full"
    out = [f"# blkring: the seed tables ({mode} run)", "",
           f"{doc['generated']} on {doc['machine']['nproc']} CPUs, Linux "
           f"{doc['machine']['kernel']}. Seed figures are the seeds' own (their hardware); "
           "ours are measured on this machine in this run.", ""]
    for sec in doc["seeds"]:
        out.append(f"## Seed {sec['seed']}: {sec['title']}")
        out.append("")
        if "workload" in sec:
            out += [sec["workload"] + ".", ""]
        head = f"Ratio that matters: {sec['ratio']}." if "ratio" in sec else ""
        if sec.get("seconds") is not None:
            head += f" Ran in {sec['seconds']:.0f} s ({sec['script']})."
        if sec["status"] != "ok":
            head += f" Status: {sec['status'].upper()}."
        out += [head.strip(), ""]
        if sec["rows"]:
            out += [f"Units: {sec['units']}.", ""] + md_table(sec) + [""]
        for n in sec["notes"]:
            out.append(f"- {n}")
        if sec["notes"]:
            out.append("")
        if sec.get("plot"):
            out += [f"Plot: {sec['plot']}", ""]
    return "\n".join(out)


# ---- plots ----

def dat_value(v):
    return "NaN" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.6g}"


def write_dat(path, header, rows):
    with open(path, "w") as f:
        f.write("# " + " ".join(header) + "\n")
        for r in rows:
            f.write(" ".join(f'"{v}"' if isinstance(v, str) else dat_value(v) for v in r) + "\n")


def plot_data(sec):
    """The data file rows of a seed's plot: a label or x value, then series."""
    rows = sec["rows"]
    if sec["seed"] == "000":
        return (["label", "sync", "async", "seed_sync", "seed_async"],
                [(f"{r['device']} {r['size']}\\nours x{r['ratio']:.1f}, seed x"
                  f"{r['seed_ratio']:.1f}", r["sync_iops"], r["async_iops"],
                  r["seed_sync_iops"], r["seed_async_iops"]) for r in rows])
    if sec["seed"] == "001":
        return (["label", "irq", "poll_all", "poll_cookie", "seed_irq", "seed_poll"],
                [(f"{r['setup']}\\nseed x{r['seed_ratio']:.2f}\\nall x{r['poll_all_ratio']:.2f},"
                  f" cookie x{r['poll_cookie_ratio']:.2f}", r["irq_iops"], r["poll_all_iops"],
                  r["poll_cookie_iops"], r["seed_irq_iops"], r["seed_poll_iops"])
                 for r in rows])
    return (["depth", "prio", "noprio", "defer", "seed_prio", "seed_noprio", "ratio",
             "defer_ratio", "seed_ratio", "prio_tw_wait", "noprio_tw_wait", "tw_wait_ratio"],
            [(r["depth"], r["prio_lat_us"], r["noprio_lat_us"], r["defer_lat_us"],
              r["seed_prio_lat_us"], r["seed_noprio_lat_us"], r["ratio"], r["defer_ratio"],
              r["seed_ratio"], r["prio_tw_wait_us"], r["noprio_tw_wait_us"], r["tw_wait_ratio"])
             for r in rows])


def plot(sec, out_dir, mode):
    png = os.path.join(out_dir, f"seed-{sec['seed']}.png")
    if os.path.exists(png):
        os.unlink(png)
    if not sec["rows"]:
        return None, "no rows to plot"
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return None, "gnuplot is not installed (scripts/setup.sh installs gnuplot-nox)"
    dat = os.path.join(out_dir, f"seed-{sec['seed']}.dat")
    write_dat(dat, *plot_data(sec))
    gp = os.path.join(HERE, f"seed-{sec['seed']}.gp")
    res = subprocess.run([gnuplot, "-e", f"dat='{dat}'; out='{png}'; mode='{mode}'", gp],
                         capture_output=True, text=True)
    if res.returncode or not os.path.exists(png):
        return None, f"gnuplot failed: {res.stderr.strip()[:300]}"
    return png, None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    raw = os.path.join(out_dir, "raw")
    runs = read_runs(raw)
    quick = any(r.get("quick") for r in runs.values())
    doc = {
        "generated": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "quick": quick,
        "machine": {"nproc": os.cpu_count(), "kernel": platform.release(),
                    "root": os.geteuid() == 0},
        "seeds": [build_section(raw, seed, name, title, fn, runs.get(seed))
                  for seed, name, title, fn in SEEDS],
    }
    for sec in doc["seeds"]:
        png, why = plot(sec, out_dir, "QUICK" if quick else "full")
        if png:
            sec["plot"] = os.path.basename(png)
        else:
            sec["notes"].append(f"plot: not written: {why}")
    text = markdown(doc)
    with open(os.path.join(out_dir, "seeds.md"), "w") as f:
        f.write(text + "\n")
    for sec in doc["seeds"]:
        # Formatters are code, not data.
        sec["columns"] = [[list(c[0]) if isinstance(c[0], tuple) else c[0], c[1]]
                          for c in sec.get("columns", [])]
    with open(os.path.join(out_dir, "seeds.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(text)
    bad = [s["seed"] for s in doc["seeds"] if s["status"] != "ok"]
    if bad:
        print(f"seeds without a complete table: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
