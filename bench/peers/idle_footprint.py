#!/usr/bin/env python3
"""runplaned's idle resident memory, by mapping (issue 21). Usage:
  bench/peers/idle_footprint.py [--wait 8] [--rounds 2] [--daemon-arg ARG ...] RUNPLANED [...]
Starts each binary in turn (rounds alternate them, so a busy machine moves all alike) as
`runplaned --listen 127.0.0.1:0 --sample-hz 1 --no-gpu --state-dir TMP` with no run and no
client, reads /proc/PID/status (VmRSS, RssFile, RssAnon) and smaps_rollup (Pss) after --wait
seconds, then sums Rss over /proc/PID/smaps by mapped file ([heap], [stack], [anon] for the
rest) and prints the largest. MB = 10^6 bytes. --daemon-arg adds a flag to every daemon (e.g.
--daemon-arg=--tls-cert --daemon-arg=FILE for a TLS port). Each binary needs runplane-supervisor beside it.
"""
import argparse
import collections
import os
import shutil
import subprocess
import tempfile
import time


def measure(exe, wait, extra):
    work = tempfile.mkdtemp(prefix="runplane-idle-")
    p = subprocess.Popen([exe, "--listen", "127.0.0.1:0", "--state-dir", work + "/state",
                          "--sample-hz", "1", "--no-gpu", *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(wait)
        with open(f"/proc/{p.pid}/status") as f:
            status = dict(l.split(":", 1) for l in f if ":" in l)
        kb = {k: int(status[k].split()[0]) for k in ("VmRSS", "RssFile", "RssAnon")}
        with open(f"/proc/{p.pid}/smaps_rollup") as f:
            kb["Pss"] = next(int(l.split()[1]) for l in f if l.startswith("Pss:"))
        per = collections.Counter()
        name = "[anon]"
        with open(f"/proc/{p.pid}/smaps") as f:
            for line in f:
                parts = line.split()
                if parts and "-" in parts[0] and not parts[0].endswith(":"):
                    name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
                elif parts and parts[0] == "Rss:":
                    per[name] += int(parts[1])
        kb["threads"] = len(os.listdir(f"/proc/{p.pid}/task"))
        return kb, per
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wait", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--daemon-arg", action="append", default=[])
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    mb = lambda k: k * 1024 / 1e6
    last = {}
    for r in range(args.rounds):
        for exe in args.binaries:
            kb, per = measure(exe, args.wait, args.daemon_arg)
            last[exe] = per
            print(f"round {r + 1} {exe}: VmRSS {mb(kb['VmRSS']):.1f} MB, RssFile "
                  f"{mb(kb['RssFile']):.1f}, RssAnon {mb(kb['RssAnon']):.1f}, PSS "
                  f"{mb(kb['Pss']):.1f}, threads {kb['threads']}", flush=True)
    for exe, per in last.items():
        print(f"{exe}, by mapping (last round):")
        for name, k in per.most_common(args.top):
            print(f"  {mb(k):6.2f} MB  {name}")


if __name__ == "__main__":
    main()
