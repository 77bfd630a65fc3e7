#!/usr/bin/env python3
"""Peers runner (issue 21): the history beside raw SQLite, MLflow and TensorBoard, interleaved.

Each round runs every peer once on the same stream (SERIES x STEPS samples, BATCH a call), in an
order rotated by one each round so no peer always runs first or last on a warm machine; the table
shows medians over the rounds and the ratios, the project's history first:
  ingest ratio = ours samples/s / peer samples/s;  read ratio = ours points/s / peer points/s;
  bytes ratio  = peer bytes per sample / ours bytes per sample  (> 1: ours is smaller).
Usage: bench/peers/run.py [--build build] [--rounds 3] [--steps 31250] [--venv DIR] [--json FILE]
The Python peers are skipped (with a message) when the venv is missing or lacks a package.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ("ingest_per_s", "bytes_per_sample", "read_per_s", "read_points")


def parse_result(text):
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return {k: v for k, v in (kv.split("=", 1) for kv in line.split()[1:])}
    return None


def peers(args, scratch):
    common = ["--series", str(args.series), "--steps", str(args.steps), "--batch", str(args.batch)]
    bench = os.path.join(args.build, "bench", "peers")
    out = [("runplane", [os.path.join(bench, "history_peer"), "--db",
                         os.path.join(scratch, "history.sqlite")] + common),
           ("sqlite_c", [os.path.join(bench, "sqlite_peer"), "--db",
                         os.path.join(scratch, "raw.sqlite")] + common),
           ("sqlite_c_noindex", [os.path.join(bench, "sqlite_peer"), "--db",
                                 os.path.join(scratch, "raw-noindex.sqlite"), "--no-index"] + common)]
    python = os.path.join(args.venv, "bin", "python")
    check = subprocess.run([python, "-c", "import mlflow.store.tracking.sqlalchemy_store, "
                            "tensorboard.summary.writer.event_file_writer"],
                           capture_output=True, text=True) if os.path.exists(python) else None
    if check is None or check.returncode != 0:
        reason = "no venv at " + args.venv if check is None else check.stderr.strip().splitlines()[-1]
        print(f"peers: MLflow and TensorBoard skipped ({reason}; run bench/peers/setup.sh)")
    else:
        for peer in ("mlflow", "tensorboard"):
            out.append((peer, [python, os.path.join(HERE, "python_peers.py"), peer, "--dir",
                               scratch] + common))
    return out


def versions(args):
    python = os.path.join(args.venv, "bin", "python")
    code = ("import importlib.metadata as m, sqlite3\n"
            "print(' '.join(f'{p}=={m.version(p)}' for p in ('mlflow-skinny','tensorboard',"
            "'SQLAlchemy')), 'python', __import__('sys').version.split()[0])")
    got = subprocess.run([python, "-c", code], capture_output=True, text=True) \
        if os.path.exists(python) else None
    sqlite = subprocess.run(["sh", "-c", "dpkg-query -W -f '${Version}' libsqlite3-0"],
                            capture_output=True, text=True).stdout
    return {"python_peers": got.stdout.strip() if got and got.returncode == 0 else "none",
            "libsqlite3": sqlite, "cpu": cpu_name(), "cores": os.cpu_count(),
            "kernel": platform.release(), "load_before": os.getloadavg()[0]}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            return next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--series", type=int, default=32)
    parser.add_argument("--steps", type=int, default=31250)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--venv", default=os.environ.get("RUNPLANE_PEERS_VENV", "build/peers-venv"))
    parser.add_argument("--scratch", default=None, help="folder for the peers' files")
    parser.add_argument("--json", default=None, help="write every round's results here")
    args = parser.parse_args()
    if args.rounds < 1 or args.series < 1 or args.steps < 1 or args.batch < 1:
        parser.error("--rounds, --series, --steps and --batch want positive integers")
    scratch = args.scratch or os.path.join(args.build, "peers-scratch")
    os.makedirs(scratch, exist_ok=True)
    todo = peers(args, scratch)
    info = versions(args)
    print(f"peers: {args.series} series x {args.steps} steps = {args.series * args.steps} samples, "
          f"{args.batch} a batch, {args.rounds} rounds; {info}", flush=True)
    rounds = {name: [] for name, _ in todo}
    failed = 0
    for r in range(args.rounds):
        shift = r % len(todo)
        for name, cmd in todo[shift:] + todo[:shift]:
            proc = subprocess.run(cmd, capture_output=True, text=True)
            got = parse_result(proc.stdout)
            if proc.returncode != 0 or got is None:
                failed += 1
                print(f"peers: round {r + 1} {name} failed (exit {proc.returncode}): "
                      f"{proc.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            rounds[name].append({k: float(got[k]) for k in FIELDS})
            print(f"  round {r + 1} {name:17s} ingest {float(got['ingest_per_s']):>11,.0f}/s  "
                  f"{float(got['bytes_per_sample']):7.2f} B/sample  read "
                  f"{float(got['read_per_s']):>11,.0f} points/s", flush=True)
    med = {n: {k: statistics.median(x[k] for x in rs) for k in FIELDS}
           for n, rs in rounds.items() if rs}
    ours = med.get("runplane")
    print(f"\n{'peer':17s} {'ingest/s':>11s} {'B/sample':>9s} {'read/s':>11s} {'1M read':>8s}"
          f" {'ingest x':>9s} {'read x':>7s} {'bytes x':>8s}   (medians; x = ours vs peer)")
    for name, m in med.items():
        ratio = ("", "", "") if ours is None else (
            f"{ours['ingest_per_s'] / m['ingest_per_s']:.2f}",
            f"{ours['read_per_s'] / m['read_per_s']:.2f}",
            f"{m['bytes_per_sample'] / ours['bytes_per_sample']:.2f}")
        print(f"{name:17s} {m['ingest_per_s']:>11,.0f} {m['bytes_per_sample']:>9.2f} "
              f"{m['read_per_s']:>11,.0f} {1e6 / m['read_per_s']:>7.2f}s {ratio[0]:>9s} "
              f"{ratio[1]:>7s} {ratio[2]:>8s}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": vars(args), "machine": info, "rounds": rounds, "medians": med}, f,
                      indent=1)
    return 1 if failed or ours is None else 0


if __name__ == "__main__":
    sys.exit(main())
