#!/usr/bin/env python3
"""Replay real log pastes through a real daemon and count what the history kept (issue #42).

Each paste PASTES/NAME.log (first line: `# source: ...`, not replayed) is run as its own run
through the real path: `runplanectl submit ADDR --run-id NAME -- sed 1d NAME.log`, then
`runplanectl watch`, then the history's series, points and events (`runplanectl history sql`).
EXPECT/NAME.expect holds, written by hand, what a careful reader extracts from the paste:

    v SERIES VALUE [STEP]          a value (several lines of one series: several points)
    e<TAB>KIND[<TAB>key=value...]  a failure event and the attributes it must carry

Counted per series by value (and step where given): a stored point equal to an expected one
(relative 1e-9) is exact; an expected value with no equal point is wrong when the series holds
an unmatched point, else missing; a run series that no expected line names is spurious (series
every run has, found from an empty baseline run, and the daemon's `run.*` telemetry are not log
series and are left out). An
expected event is recognised when an event of its kind carries every listed attribute (numbers
compared as numbers); events of an expected kind beyond those expected are reported as extra.

Usage: scripts/replay-measure.py --pastes DIR --expect DIR [--build build] [--json OUT]
Exit 0 when it measured (whatever the figures), 2 on a usage or setup error.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def parse_expect(path):
    values, events = [], []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("v "):
                parts = line.split()
                step = int(parts[3]) if len(parts) > 3 else None
                values.append((parts[1], float(parts[2]), step))
            elif line.startswith("e\t"):
                parts = line.split("\t")
                attrs = dict(p.split("=", 1) for p in parts[2:])
                events.append((parts[1], attrs))
            else:
                raise SystemExit(f"{path}: cannot read line {line!r}")
    return values, events


def close(a, b):
    if a != a and b != b:  # both NaN
        return True
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def attr_matches(want, got):
    if got is None:
        return False
    if want == got:
        return True
    try:
        return close(float(want), float(got))
    except ValueError:
        return False


def sql(ctl, history, query):
    out = subprocess.run([ctl, "history", "sql", "--history", history, "--json", "--max-rows",
                          "1000000", query], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["rows"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pastes", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--build", default="build")
    ap.add_argument("--json", help="write the per-paste figures here")
    ap.add_argument("--watch-seconds", type=int, default=6)
    args = ap.parse_args()
    daemon = os.path.abspath(os.path.join(args.build, "backend/daemon/runplaned"))
    ctl = os.path.abspath(os.path.join(args.build, "backend/cli/runplanectl"))
    for exe in (daemon, ctl):
        if not os.access(exe, os.X_OK):
            print(f"{exe}: not built", file=sys.stderr)
            return 2
    names = sorted(f[:-4] for f in os.listdir(args.pastes) if f.endswith(".log"))
    missing = [n for n in names if not os.path.exists(os.path.join(args.expect, n + ".expect"))]
    if missing:
        print("no expected file for: " + ", ".join(missing), file=sys.stderr)
        return 2

    tmp = tempfile.mkdtemp(prefix="replay-measure-")
    history = os.path.join(tmp, "history.sqlite")
    err = open(os.path.join(tmp, "daemon.err"), "w")
    proc = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--state-dir",
                             os.path.join(tmp, "state"), "--no-gpu", "--kernel-log", "off",
                             "--no-engine-metrics", "--stall-seconds", "0"],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        first = proc.stdout.readline()
        m = re.search(r"listening on (\S+)", first)
        if not m:
            print(f"daemon did not start: {first!r}", file=sys.stderr)
            return 2
        addr = m.group(1)
        runs = ["baseline"] + names
        for run in runs:
            if run == "baseline":
                cmd = ["/bin/true"]
            else:
                cmd = ["/bin/sed", "1{/^# source:/d}", os.path.abspath(
                    os.path.join(args.pastes, run + ".log"))]
            subprocess.run([ctl, "submit", addr, "--history", history, "--run-id", run, "--"] +
                           cmd, capture_output=True, text=True, check=True, cwd=tmp)
        time.sleep(2)
        subprocess.run([ctl, "watch", addr, "--history", history, "--seconds",
                        str(args.watch_seconds)], capture_output=True, text=True, cwd=tmp)
        series = sql(ctl, history, "SELECT run_id, name FROM v_series WHERE run_id != ''")
        points = sql(ctl, history,
                     "SELECT run_id, series, step, value FROM v_points WHERE run_id != ''")
        events = sql(ctl, history, "SELECT run_id, kind, attrs_json FROM v_events")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        err.close()

    baseline = {s["name"] for s in series if s["run_id"] == "baseline"}
    kind_of = {}  # EVENT_CUDA_OOM / cuda_oom spellings
    total = {"values": 0, "exact": 0, "wrong": 0, "missing": 0, "spurious_series": 0,
             "events": 0, "recognised": 0, "extra_events": 0}
    report = []
    for run in names:
        values, want_events = parse_expect(os.path.join(args.expect, run + ".expect"))
        got = {}
        for p in points:
            if p["run_id"] == run:
                got.setdefault(p["series"], []).append((p["value"], p["step"]))
        # The daemon's own telemetry of a run (`run.tree.rss_bytes`, ...) is no log series.
        names_got = {s["name"] for s in series
                     if s["run_id"] == run and not s["name"].startswith("run.")} - baseline
        row = {"paste": run, "values": len(values), "exact": 0, "wrong": [], "missing": [],
               "spurious": sorted(names_got - {v[0] for v in values}), "events": len(want_events),
               "recognised": 0, "unrecognised": [], "extra_events": []}
        pool = {k: list(v) for k, v in got.items()}
        unmatched = []
        for name, value, step in values:
            cands = pool.get(name, [])
            hit = next((i for i, (v, s) in enumerate(cands)
                        if v is not None and close(float(v), value) and
                        (step is None or s is None or s == step or s == -1)), None)
            if hit is None:
                unmatched.append((name, value, step))
            else:
                cands.pop(hit)
                row["exact"] += 1
        for name, value, step in unmatched:
            cands = pool.get(name, [])
            if cands:
                v, s = cands.pop(0)
                row["wrong"].append(f"{name}={value} stored {v} (step {s})")
            else:
                row["missing"].append(f"{name}={value}")
        evs = []
        for e in events:
            if e["run_id"] != run:
                continue
            kind = e["kind"].lower()
            kind = kind[len("event_"):] if kind.startswith("event_") else kind
            evs.append((kind, json.loads(e["attrs_json"] or "{}")))
        used = set()
        for kind, attrs in want_events:
            hit = next((i for i, (k, a) in enumerate(evs) if i not in used and k == kind and
                        all(attr_matches(w, a.get(key)) for key, w in attrs.items())), None)
            if hit is None:
                near = [a for k, a in evs if k == kind]
                row["unrecognised"].append(f"{kind} {attrs}" + (f" (stored: {near})" if near
                                                                 else ""))
            else:
                used.add(hit)
                row["recognised"] += 1
        want_kinds = {k for k, _ in want_events} | {"cuda_oom", "ray_oom", "host_oom",
                                                    "nccl_error", "crash", "weight_sync_failure",
                                                    "batch_mismatch", "nan_loss",
                                                    "skipped_iteration"}
        for i, (k, a) in enumerate(evs):
            if i not in used and k in want_kinds:
                row["extra_events"].append(f"{k} {a.get('summary', '')}")
        total["values"] += row["values"]
        total["exact"] += row["exact"]
        total["wrong"] += len(row["wrong"])
        total["missing"] += len(row["missing"])
        total["spurious_series"] += len(row["spurious"])
        total["events"] += row["events"]
        total["recognised"] += row["recognised"]
        total["extra_events"] += len(row["extra_events"])
        report.append(row)

    for row in report:
        flag = "" if (row["exact"] == row["values"] and not row["spurious"] and
                      row["recognised"] == row["events"]) else "  <--"
        print(f"{row['paste']}: values {row['exact']}/{row['values']} exact, "
              f"{len(row['wrong'])} wrong, {len(row['missing'])} missing, "
              f"{len(row['spurious'])} spurious; events {row['recognised']}/{row['events']}"
              f"{', ' + str(len(row['extra_events'])) + ' extra' if row['extra_events'] else ''}"
              f"{flag}")
        for key in ("wrong", "missing", "spurious", "unrecognised", "extra_events"):
            for item in row[key][:12]:
                print(f"    {key}: {item}")
            if len(row[key]) > 12:
                print(f"    {key}: ... {len(row[key]) - 12} more")
    v = total["values"] or 1
    e = total["events"] or 1
    print(f"\nTOTAL {len(names)} pastes: values {total['exact']}/{total['values']} exact "
          f"({100.0 * total['exact'] / v:.1f} %), {total['wrong']} wrong, {total['missing']} "
          f"missing; {total['spurious_series']} spurious series; events {total['recognised']}/"
          f"{total['events']} recognised ({100.0 * total['recognised'] / e:.1f} %), "
          f"{total['extra_events']} extra")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"total": total, "pastes": report}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
