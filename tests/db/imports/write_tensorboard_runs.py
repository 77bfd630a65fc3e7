"""Writes real TensorBoard event files with TensorBoard's own writer (EventFileWriter, the writer
PyTorch's SummaryWriter wraps) for tests/db/imports_test.cpp, and prints every point it wrote as
JSON (wall times and values as float.hex(), exact). Usage: write_tensorboard_runs.py OUTDIR.

Runs:
  tf1/  scalars in Summary.Value.simple_value (TF1 writers, tensorboardX, PyTorch), one value per
        event, special values included (NaN, +-inf, -0.0, a float32 denormal), and a histogram
        (a non-scalar, skipped); two event files, the second continuing the steps (a resume).
  tf2/  scalars as rank-0 tensors of the "scalars" plugin (what TF2's tf.summary.scalar writes):
        float32, float64 and int64 tensors; as TF2's writer does, the plugin metadata only on a
        tag's first value. Several values in one event.
"""
import json
import math
import os
import struct
import sys

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary, HistogramProto
from tensorboard.plugins.scalar import summary_v2
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.util import tensor_util

out = sys.argv[1]
T0 = 1796553600.123456  # 2026-12-06, fractional seconds on purpose
points = {}


def record(run, tag, step, wall, value):
    points.setdefault(run, []).append([tag, step, float(wall).hex(), float(value).hex()])


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ---- tf1: simple_value
special = [float("nan"), float("inf"), float("-inf"), -0.0, f32(1e-40)]
for part, (first, last) in enumerate([(0, 300), (300, 520)]):
    w = EventFileWriter(os.path.join(out, "tf1"), filename_suffix=f".part{part}")
    for step in range(first, last):
        wall = T0 + step * 0.731 + (step % 7) * 1e-6
        for tag, value in (("train/loss", 2.0 / (1 + step) + 0.01 * math.sin(step)),
                           ("train/reward", -1.0 + step * 0.0123)):
            if tag == "train/loss" and step % 97 == 3:
                value = special[(step // 97) % len(special)]
            v = f32(value)
            w.add_event(Event(wall_time=wall, step=step,
                              summary=Summary(value=[Summary.Value(tag=tag, simple_value=v)])))
            record("tf1", tag, step, wall, v)
        if step % 50 == 0:
            histo = HistogramProto(min=0, max=1, num=3, sum=1.5)
            w.add_event(Event(wall_time=wall, step=step,
                              summary=Summary(value=[Summary.Value(tag="weights", histo=histo)])))
        if step % 25 == 0:
            ev = 0.5 + step / 2000.0
            w.add_event(Event(wall_time=wall, step=step,
                              summary=Summary(value=[Summary.Value(tag="eval/gsm8k",
                                                                   simple_value=f32(ev))])))
            record("tf1", "eval/gsm8k", step, wall, f32(ev))
    w.close()

# ---- tf2: tensor-valued scalars, metadata on the first value of a tag only
w = EventFileWriter(os.path.join(out, "tf2"))
seen = set()
for step in range(0, 400):
    wall = T0 + 5000 + step * 1.25
    values = []
    for tag, value, dtype in (("loss", 1.0 / (step + 1.5), np.float32),
                              ("lr", 1e-6 * (1 + step % 10) / 3.0, np.float64),
                              ("tokens", 4096 * step + 12345678901, np.int64)):
        v = summary_v2.scalar_pb(tag, value).value[0]
        if dtype is not np.float32:
            v.tensor.CopyFrom(tensor_util.make_tensor_proto(dtype(value)))
        if tag in seen:
            v.ClearField("metadata")
        seen.add(tag)
        values.append(v)
        record("tf2", tag, step, wall, float(dtype(value)))
    w.add_event(Event(wall_time=wall, step=step, summary=Summary(value=values)))
w.close()

json.dump(points, sys.stdout)
