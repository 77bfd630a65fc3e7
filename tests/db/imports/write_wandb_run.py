"""Writes a real W&B offline run with the `wandb` package (WANDB_MODE=offline: no network, no
account) for tests/db/imports_test.cpp and prints what it logged as JSON: every (key, step,
value as float.hex()) and, per step, the wall clock just before and just after its log call
(W&B stamps `_timestamp` in between). Usage: write_wandb_run.py OUTDIR.
"""
import json
import math
import os
import sys
import time

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true",
                  HOME=out, WANDB_CONFIG_DIR=os.path.join(out, ".config"))
import wandb  # noqa: E402

run = wandb.init(project="runplane-import", name="grpo-qwen-7b", dir=out, tags=["baseline"],
                 config={"lr": 1e-6, "model": {"name": "qwen2.5-7b"}, "rollout_batch": 512})
points, bounds = [], []
for step in range(0, 300):
    row = {"train/loss": 2.0 / (1 + step) + 0.001 * math.sin(step),
           "train/reward": -1.0 + step * 0.01,
           "perf": {"tokens_per_s": 1000 + 7 * step},  # nested: perf/tokens_per_s
           "done": step % 2 == 0,
           "phase": "rollout"}  # text: not a scalar
    if step % 20 == 0:
        row["eval/gsm8k"] = 0.3 + step / 1000.0
    before = time.time()
    run.log(row, step=step)
    after = time.time()
    bounds.append([step, before, after])
    for key, value in row.items():
        if isinstance(value, dict):
            for k, v in value.items():
                points.append([f"{key}/{k}", step, float(v).hex()])
        elif isinstance(value, (bool, int, float)):
            points.append([key, step, float(value).hex()])
run.summary["best_gsm8k"] = 0.58
run.finish()
json.dump({"points": points, "bounds": bounds}, sys.stdout)
