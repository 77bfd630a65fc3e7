"""Importing a 1 M-point TensorBoard run: runplane's import (read + store into a history) beside
TensorBoard's own loader (EventAccumulator, every scalar of every tag) on the same files, in the
same run (issue 49, docs/imports.md "Speed"). The files are written once by TensorBoard's own
EventFileWriter: TAGS tags x STEPS steps, one value per event (as PyTorch's add_scalar writes).

Usage (the venv of scripts/setup-imports-venv.sh):
  build/imports-venv/bin/python bench/imports/run.py [--tags 10] [--steps 100000] [--work DIR]
    [--bench build/bench/imports/import_bench]
"""
import argparse
import json
import os
import subprocess
import time


def write(logdir, tags, steps):
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    w = EventFileWriter(logdir, max_queue_size=1000, flush_secs=120)
    names = [f"train/m{k:02d}" for k in range(tags)]
    t0 = 1796553600.0
    for step in range(steps):
        for k, name in enumerate(names):
            w.add_event(Event(wall_time=t0 + step * 0.5 + k * 1e-3, step=step,
                              summary=Summary(value=[Summary.Value(tag=name,
                                                                   simple_value=(step % 977) * 0.001 + k)])))
    w.close()


def tensorboard_load(logdir):
    from tensorboard.backend.event_processing import event_accumulator
    start = time.perf_counter()
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    points = sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])
    return points, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tags", type=int, default=10)
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--work", default="/tmp/runplane-import-bench")
    p.add_argument("--bench", default="build/bench/imports/import_bench")
    a = p.parse_args()
    logdir = os.path.join(a.work, f"tb-{a.tags}x{a.steps}")
    if not os.path.isdir(logdir):
        start = time.perf_counter()
        write(logdir, a.tags, a.steps)
        print(f"wrote {a.tags * a.steps} points in {time.perf_counter() - start:.1f} s")
    size = sum(os.path.getsize(os.path.join(logdir, f)) for f in os.listdir(logdir))
    # Both readers start from a file the page cache holds (read once first).
    for f in os.listdir(logdir):
        with open(os.path.join(logdir, f), "rb") as fh:
            while fh.read(1 << 20):
                pass
    tb_points, tb_s = tensorboard_load(logdir)
    start = time.perf_counter()
    out = subprocess.run([a.bench, logdir, os.path.join(a.work, "history.sqlite")],
                         check=True, capture_output=True, text=True).stdout
    rp_wall = time.perf_counter() - start
    rp = json.loads(out)
    result = {"points": a.tags * a.steps, "file_bytes": size,
              "tensorboard": {"points": tb_points, "seconds": round(tb_s, 3)},
              "runplane": {"points": rp["points"], "stored": rp["stored"],
                           "read_s": round(rp["read_s"], 3), "store_s": round(rp["store_s"], 3),
                           "process_wall_s": round(rp_wall, 3)},
              "ratio_tensorboard_over_runplane_read": round(tb_s / rp["read_s"], 1),
              "ratio_tensorboard_over_runplane_import": round(tb_s / rp_wall, 1)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
