#!/usr/bin/env python3
"""runplaned's footprint beside Prometheus node_exporter (issue 21), one minute, same machine.

Starts runplaned on 127.0.0.1 (port 0, --sample-hz 1, a fresh state dir) with the telemetry load
of bench/daemon: one attached run printing a framework metric line (3 metrics) every 100 ms, and
`runplanectl watch` ingesting the stream into a scratch history as the controller does. Beside it
starts prometheus-node-exporter on 127.0.0.1 with a free port (no systemd), scraped once a second
as a 1 Hz Prometheus would. After a warm-up, both are sampled every second for WINDOW seconds:
  RSS = VmRSS (/proc/PID/status), PSS = Pss (/proc/PID/smaps_rollup), anon = RssAnon (heap,
  stacks: the process's own memory; the rest of RSS is mapped library and program pages), in MB
  (10^6 bytes);
  CPU % of one core per interval = 100 x delta(utime + stime) / (CLK_TCK x interval seconds);
  the window's CPU % = the same over the whole window. Medians and maxima are printed, and the
  ratios runplaned / node_exporter. Usage: bench/peers/footprint.py [--build build] [--window 60]
Extra daemon environment for experiments: --daemon-env KEY=VALUE (repeatable).
"""
import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")
RUN = ("i=0; while :; do echo \"step $i: {'train/loss': 0.5, 'train/grad_norm': 0.08, "
       "'perf/step_time': 1.5}\"; i=$((i+1)); sleep 0.1; done")


def proc_sample(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    pss = 0
    with open(f"/proc/{pid}/status") as f:
        status = dict(l.split(":", 1) for l in f if ":" in l)
    rss, anon = (int(status[k].split()[0]) * 1024 for k in ("VmRSS", "RssAnon"))
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            pss = next(int(l.split()[1]) for l in f if l.startswith("Pss:")) * 1024
    except (OSError, StopIteration):
        pass
    threads = len(os.listdir(f"/proc/{pid}/task"))
    return ticks, rss, pss, threads, anon


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not come up within {seconds} s")


def find_node_exporter():
    for name in ("prometheus-node-exporter", "node_exporter"):
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "prometheus-node-exporter"],
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                       stdout=subprocess.DEVNULL, check=False)
    return shutil.which("prometheus-node-exporter")


def summary(samples, window_s):
    ticks = samples[-1][1] - samples[0][1]
    cpu = [100.0 * (b[1] - a[1]) / TICK / (b[0] - a[0]) for a, b in zip(samples, samples[1:])]
    return {"rss_med": statistics.median(s[2] for s in samples) / 1e6,
            "rss_max": max(s[2] for s in samples) / 1e6,
            "pss_med": statistics.median(s[3] for s in samples) / 1e6,
            "cpu_window": 100.0 * ticks / TICK / window_s,
            "cpu_med": statistics.median(cpu), "cpu_max": max(cpu),
            "threads": samples[-1][4], "anon_med": statistics.median(s[5] for s in samples) / 1e6}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--window", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--daemon-env", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    daemon = os.path.join(args.build, "backend", "daemon", "runplaned")
    ctl = os.path.join(args.build, "backend", "cli", "runplanectl")
    for exe in (daemon, ctl):
        if not os.access(exe, os.X_OK):
            print(f"footprint: {exe} was not built", file=sys.stderr)
            return 2
    exporter = find_node_exporter()
    if exporter is None:
        print("footprint: prometheus-node-exporter is not installed and could not be; skipped")
        return 0
    work = tempfile.mkdtemp(prefix="runplane-footprint-")
    env = dict(os.environ, RUNPLANE_HISTORY=os.path.join(work, "history.sqlite"))
    daemon_env = dict(env, **dict(kv.split("=", 1) for kv in args.daemon_env))
    procs = []
    addr = None
    try:
        out = open(os.path.join(work, "runplaned.out"), "w+")
        d = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--state-dir",
                              os.path.join(work, "state"), "--sample-hz", "1", "--no-gpu"],
                             stdout=out, stderr=subprocess.DEVNULL, env=daemon_env)
        procs.append(d)

        def address():
            out.seek(0)
            m = re.search(r"runplaned listening on (\S+)", out.read())
            return m.group(1) if m else None

        addr = wait_for(address, 20, "runplaned")
        port = free_port()
        ne = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(ne)
        url = f"http://127.0.0.1:{port}/metrics"

        def scrape():
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    return len(r.read())
            except OSError:
                return 0

        scrape_bytes = wait_for(scrape, 20, "node_exporter")
        procs.append(subprocess.Popen([ctl, "watch", addr, "--seconds", "0"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        subprocess.run([ctl, "submit", addr, "--name", "footprint", "--run-id", "footprint", "--",
                        "/bin/sh", "-c", RUN], env=env, check=True, stdout=subprocess.DEVNULL)
        time.sleep(args.warmup)
        samples = {"runplaned": [], "node_exporter": []}
        start = time.monotonic()
        for i in range(args.window + 1):
            time.sleep(max(0.0, start + i - time.monotonic()))
            scrape()
            now = time.monotonic()
            for name, pid in (("runplaned", d.pid), ("node_exporter", ne.pid)):
                samples[name].append((now,) + proc_sample(pid))
        window = time.monotonic() - start
        res = {n: summary(s, window) for n, s in samples.items()}
        version = subprocess.run([exporter, "--version"], capture_output=True, text=True)
        print(f"footprint: {args.window} s at 1 Hz after {args.warmup} s warm-up; runplaned "
              f"--sample-hz 1 with a run (3 metrics / 100 ms) streamed to runplanectl watch; "
              f"node_exporter scraped at 1 Hz ({scrape_bytes} bytes a scrape, "
              f"{(version.stdout + version.stderr).split(chr(10))[0].strip()})")
        print(f"{'process':14s} {'RSS med MB':>10s} {'RSS max':>8s} {'PSS med':>8s} "
              f"{'anon med':>8s} {'CPU % win':>9s} {'CPU % med':>9s} {'CPU % max':>9s} {'threads':>7s}")
        for name, r in res.items():
            print(f"{name:14s} {r['rss_med']:10.1f} {r['rss_max']:8.1f} {r['pss_med']:8.1f} "
                  f"{r['anon_med']:8.1f} {r['cpu_window']:9.2f} {r['cpu_med']:9.2f} {r['cpu_max']:9.2f} "
                  f"{r['threads']:7d}")
        a, b = res["runplaned"], res["node_exporter"]
        print(f"ratio runplaned / node_exporter: RSS {a['rss_med'] / b['rss_med']:.2f}, "
              f"PSS {a['pss_med'] / b['pss_med']:.2f}, CPU "
              f"{a['cpu_window'] / max(b['cpu_window'], 1e-9):.2f}; goal RSS <= 15 MB: "
              f"{'met' if a['rss_max'] <= 15.0 else 'not met'}")
        return 0
    finally:
        if addr:  # the run outlives its daemon by design; stop it through the daemon
            subprocess.run([ctl, "stop", addr, "footprint", "--grace", "1"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
