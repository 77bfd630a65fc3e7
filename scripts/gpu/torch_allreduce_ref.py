#!/usr/bin/env python3
"""torch.distributed all-reduce reference for runplane-nccl-probe (docs/nccl-health.md).

One process per GPU (torchrun, or mp.spawn when started plainly). Per size: float32 tensor of
size/4 elements, a correctness check (fill rank+1, expect n(n+1)/2), warm-up, then timed
iterations with CUDA events; an iteration's time is the slowest rank's. Same formulas as the probe:
p50/p95 nearest rank, algbw = bytes / t_p50 (GB = 1e9 B), busbw = algbw * 2(n-1)/n.
Rank 0 writes one JSON report to --out.
"""
import argparse
import json
import math
import os
import sys
import time


def parse_size(text):
    units = {"K": 10, "M": 20, "G": 30}
    text = text.strip()
    if text and text[-1] in units:
        return int(text[:-1]) << units[text[-1]]
    return int(text)


def percentile(values, q):
    ordered = sorted(values)
    rank = math.ceil(q / 100.0 * len(ordered))
    return ordered[max(rank, 1) - 1]


def run(local_rank, world_size, args):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(local_rank)
    if "RANK" not in os.environ:  # mp.spawn: one process per local GPU
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(args.port))
        dist.init_process_group("nccl", rank=local_rank, world_size=world_size,
                                device_id=torch.device("cuda", local_rank))
    else:
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank = dist.get_rank()
    n = dist.get_world_size()
    rows = []
    size = args.min_bytes
    while size <= args.max_bytes:
        count = size // 4
        free, _ = torch.cuda.mem_get_info()
        if count * 4 + (1 << 30) > free:
            if rank == 0:
                print(f"skip {size} B: does not fit", file=sys.stderr)
            size *= 2
            continue
        tensor = torch.empty(count, dtype=torch.float32, device="cuda")
        tensor.fill_(rank + 1)
        dist.all_reduce(tensor)
        expected = n * (n + 1) / 2
        wrong = int((tensor != expected).sum().item())
        for _ in range(args.warmup):
            dist.all_reduce(tensor)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
        stream = torch.cuda.current_stream()
        for it in range(args.iters):
            starts[it].record(stream)
            dist.all_reduce(tensor)
            stops[it].record(stream)
        torch.cuda.synchronize()
        times = torch.tensor([starts[it].elapsed_time(stops[it]) * 1000.0 for it in range(args.iters)],
                             dtype=torch.float64, device="cuda")
        dist.all_reduce(times, op=dist.ReduceOp.MAX)  # slowest rank per iteration
        wrong_total = torch.tensor([wrong], dtype=torch.int64, device="cuda")
        dist.all_reduce(wrong_total)
        us = times.tolist()
        p50 = percentile(us, 50)
        algbw = size / (p50 * 1e-6) / 1e9
        busbw = algbw * 2.0 * (n - 1) / n
        row = {"collective": "all_reduce", "bytes": size, "time_us_p50": p50,
               "time_us_p95": percentile(us, 95), "time_us_min": min(us),
               "algbw_gbps": algbw, "busbw_gbps": busbw, "correct": int(wrong_total.item()) == 0}
        rows.append(row)
        if rank == 0:
            print(f"torch all_reduce {size:>12} B  p50 {p50:10.1f} us  algbw {algbw:8.2f}  busbw {busbw:8.2f} GB/s"
                  f"  {'correct' if row['correct'] else 'WRONG'}", file=sys.stderr, flush=True)
        del tensor
        torch.cuda.empty_cache()
        size *= 2
    if rank == 0:
        report = {"tool": "torch_allreduce_ref", "torch_version": torch.__version__,
                  "nccl_version": ".".join(str(v) for v in torch.cuda.nccl.version()),
                  "world_size": n, "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
                  "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
                  "warmup_iters": args.warmup, "iters": args.iters, "rows": rows,
                  "time_unix": time.time()}
        with open(args.out, "w") as out:
            json.dump(report, out, indent=1)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--min-bytes", default="8M")
    parser.add_argument("--max-bytes", default="8G")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--port", type=int, default=29517)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    args.min_bytes = parse_size(args.min_bytes)
    args.max_bytes = parse_size(args.max_bytes)
    if "LOCAL_RANK" in os.environ:
        run(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]), args)
    else:
        import torch
        import torch.multiprocessing as mp
        world = torch.cuda.device_count()
        if world == 0:
            sys.exit("no CUDA device")
        mp.spawn(run, args=(world, args), nprocs=world, join=True)


if __name__ == "__main__":
    main()
