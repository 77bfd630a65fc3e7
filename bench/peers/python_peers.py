#!/usr/bin/env python3
"""MLflow and TensorBoard on the peers' workload (issue 21; docs/performance.md, "Peers").

The stream is the one every peer gets: SERIES metrics x STEPS steps, step-major, BATCH samples a
call. MLflow: MlflowClient.log_batch into a SQLite tracking store, read back with
get_metric_history per key. TensorBoard: its own event writer (EventFileWriter, what PyTorch's
SummaryWriter wraps) with one scalar Event per sample, read back with EventAccumulator, size
guidance unlimited. Inputs (Metric entities, Event protos) are built outside the timed part, as the
other peers get their rows ready-made; the timed part ends when the data is durable in the file
(log_batch committed; the writer closed). Prints one "RESULT key=value ..." line for run.py.
Run it with the venv that bench/peers/setup.sh creates.
"""
import argparse
import math
import os
import shutil
import sys
import tempfile
import time

T0_MS = 1_700_000_000_000
DT_MS = 100


def sample(i, series):
    step, key = divmod(i, series)
    return step, key, 1.0 + 0.5 * math.sin(step * 1e-3 + key)


def timed_ingest(args, make, write):
    """Seconds spent in write(rows) over the stream; make(i, step, key, value) builds each row
    outside the timed part."""
    total = args.series * args.steps
    seconds = 0.0
    for first in range(0, total, args.batch):
        rows = [make(i, *sample(i, args.series))
                for i in range(first, min(total, first + args.batch))]
        start = time.perf_counter()
        write(rows)
        seconds += time.perf_counter() - start
    return seconds


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def result(peer, total, ingest_s, nbytes, read, read_s):
    print(f"RESULT peer={peer} samples={total} ingest_s={ingest_s:.4f} "
          f"ingest_per_s={total / ingest_s:.0f} bytes={nbytes} "
          f"bytes_per_sample={nbytes / total:.2f} read_points={read} read_s={read_s:.4f} "
          f"read_per_s={read / read_s:.0f}", flush=True)
    return 0 if read == total else 1


def run_mlflow(args, work):
    import logging
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    logging.getLogger("alembic").setLevel(logging.ERROR)
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    db = os.path.join(work, "mlflow.sqlite")
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    experiment = client.create_experiment("peers", artifact_location=os.path.join(work, "art"))
    run_id = client.create_run(experiment).info.run_id
    keys = [f"train/m{k:02d}" for k in range(args.series)]
    total = args.series * args.steps
    ingest_s = timed_ingest(
        args, lambda i, step, key, value: Metric(keys[key], value, T0_MS + step * DT_MS, step),
        lambda metrics: client.log_batch(run_id, metrics=metrics))
    nbytes = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
    start = time.perf_counter()
    read = sum(len(client.get_metric_history(run_id, key)) for key in keys)
    read_s = time.perf_counter() - start
    return result("mlflow", total, ingest_s, nbytes, read, read_s)


def run_tensorboard(args, work):
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    logdir = os.path.join(work, "tb")
    writer = EventFileWriter(logdir, max_queue_size=args.batch, flush_secs=120)
    tags = [f"train/m{k:02d}" for k in range(args.series)]
    total = args.series * args.steps
    def event(i, step, key, value):
        return Event(wall_time=(T0_MS + step * DT_MS) / 1000.0, step=step,
                     summary=Summary(value=[Summary.Value(tag=tags[key], simple_value=value)]))

    ingest_s = timed_ingest(args, event, lambda events: [writer.add_event(e) for e in events])
    start = time.perf_counter()
    writer.close()  # drains the writer thread's queue and flushes the file
    ingest_s += time.perf_counter() - start
    nbytes = dir_bytes(logdir)
    start = time.perf_counter()
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    read = sum(len(acc.Scalars(tag)) for tag in tags)
    read_s = time.perf_counter() - start
    return result("tensorboard", total, ingest_s, nbytes, read, read_s)


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"wants a positive integer, got {text}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", choices=["mlflow", "tensorboard"])
    parser.add_argument("--series", type=positive, default=32)
    parser.add_argument("--steps", type=positive, default=31250)
    parser.add_argument("--batch", type=positive, default=1000)
    parser.add_argument("--dir", help="scratch folder (default: a new temporary one)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix=f"peers-{args.peer}-", dir=args.dir)
    try:
        return (run_mlflow if args.peer == "mlflow" else run_tensorboard)(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
