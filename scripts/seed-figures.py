#!/usr/bin/env python3
"""Prints the memory model's figures next to the sources' (docs/memory-model.md section 4).

Seed 000 (Qwen3.8-2.4T-A95B `full`, miles docs/models/qwen/qwen3-8.md s.6.4): trainer tms backup
~390 GB/node during rollout, engines' NVFP4 mirror ~372 GB/node during training, healthy peak
600-650 GB/node, clone backups ~75 GB/rank. slime docs/en/examples/deepseek-r1.md: DeepSeek-R1 on
128 H100 with CPU Adam, 1.4-1.5 TB host RAM per node (its script passes --use-kl-loss at
coefficient 0). Every node group is printed, not only the heaviest.

Usage: scripts/seed-figures.py [path/to/runplanectl]   (default build/backend/cli/runplanectl)
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GB = 1e9


def plan(ctl, recipe_path):
    out = subprocess.run([ctl, "plan", "--json", recipe_path], capture_output=True, text=True,
                         check=False).stdout
    return json.loads(out)["memory"]


def component(phase, name):
    return sum(c["bytes"] for c in phase["components"] if c["component"] == name)


def variant(recipe_path, old, new):
    with open(recipe_path, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        sys.exit(f"{recipe_path}: '{old}' not found")
    tmp = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, encoding="utf-8")
    tmp.write(text.replace(old, new, 1))
    tmp.close()
    return tmp.name


def diff(value, lo, hi=None):
    hi = lo if hi is None else hi
    if lo <= value <= hi:
        return "inside" if hi != lo else "+0.0 %"
    ref = lo if value < lo else hi
    return f"{(value - ref) / ref * 100:+.1f} %"


def groups(memory, key):
    """(first node, last node, value) runs of equal values over the nodes."""
    runs = []
    for node in memory["nodes"]:
        v = key(node)
        if runs and abs(runs[-1][2] - v) < 0.05 * GB:
            runs[-1][1] = node["node"]
        else:
            runs.append([node["node"], node["node"], v])
    return runs


def main():
    ctl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/backend/cli/runplanectl")
    full = os.path.join(ROOT, "recipes/qwen3.8-2.4T-A95B-full.yaml")
    m = plan(ctl, full)
    print("Qwen3.8-2.4T-A95B full (recipes/qwen3.8-2.4T-A95B-full.yaml) vs seed 000:")
    rows = [
        ("trainer tms backup (rollout)", 390, None,
         lambda n: component(n["phases"]["rollout"], "trainer tms backup")),
        ("engine NVFP4 mirror (train)", 372, None,
         lambda n: component(n["phases"]["train"], "engine weight mirror")),
        ("host peak", 600, 650, lambda n: n["peak_bytes"]),
    ]
    for label, lo, hi, key in rows:
        src = f"{lo}" if hi is None else f"{lo}-{hi}"
        for first, last, v in groups(m, key):
            print(f"  {label:30s} nodes {first:2d}-{last:2d}: {v / GB:7.1f} GB  "
                  f"source {src} GB  {diff(v / GB, lo, hi)}")
    clone = variant(full, "backup_mode: zero_copy", "backup_mode: clone")
    try:
        per_rank = plan(ctl, clone)["clone_arena_per_rank"]
    finally:
        os.unlink(clone)
    print(f"  {'clone arena per rank':30s}             {per_rank / GB:7.1f} GB  source 75 GB  "
          f"{diff(per_rank / GB, 75)}")

    r1 = os.path.join(ROOT, "recipes/known-good/slime-deepseek-r1.yaml")
    kl = variant(r1, "\noptimizer:\n",
                 "\nalgorithm:\n  use_kl_loss: true\n  kl_loss_coef: 0.0\noptimizer:\n")
    try:
        mr = plan(ctl, kl)
    finally:
        os.unlink(kl)
    print("DeepSeek-R1 on 16 x 8 H100, CPU Adam, --use-kl-loss at 0 "
          "(recipes/known-good/slime-deepseek-r1.yaml) vs slime deepseek-r1.md:")
    for first, last, v in groups(mr, lambda n: n["peak_bytes"]):
        print(f"  {'host peak':30s} nodes {first:2d}-{last:2d}: {v / 1e12:7.3f} TB  "
              f"source 1.4-1.5 TB  {diff(v / 1e12, 1.4, 1.5)}")


if __name__ == "__main__":
    main()
