#!/usr/bin/env python3
"""Measures the fixed per-process memory the planner budgets (docs/memory-model.md, section 5).

Run on a GPU host with PyTorch: prints host RSS of one GPU process (Python + torch + CUDA context +
cuBLAS + a one-rank NCCL group), the device memory outside PyTorch's caching allocator, and the
allocator's reserved/allocated ratio over a Megatron-like step (persistent weights, fp32 grads and
Adam state of a Qwen3-30B-A3B TP4/EP8 rank, then variable-length activations of 48 recomputed
layers under dynamic batching)."""
import json
import os
import random


def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


out = {"rss_python": rss()}
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

out["rss_after_import_torch"] = rss()
torch.cuda.init()
x = torch.ones(4096, 4096, device="cuda", dtype=torch.bfloat16)
y = x @ x
torch.cuda.synchronize()
out["rss_after_cuda_cublas"] = rss()
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
out["rss_after_nccl"] = rss()
free, total = torch.cuda.mem_get_info()
out["device_used_outside_allocator"] = (total - free) - torch.cuda.memory_reserved()
del x, y, t
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()

# Persistent state of one Qwen3-30B-A3B rank (TP4, EP8, distributed Adam over DP 2 / EDP 1).
H, F, L, local_experts = 2048, 768, 48, 16
weights = []
for _ in range(L):
    weights.append(torch.empty(local_experts, 2 * F, H, device="cuda", dtype=torch.bfloat16))
    weights.append(torch.empty(local_experts, H, F, device="cuda", dtype=torch.bfloat16))
    for shape in ((H // 4 * 3, H), (H, H // 4), (128, H), (H,), (H,)):
        weights.append(torch.empty(*shape, device="cuda", dtype=torch.bfloat16))
weights.append(torch.empty(151936 // 4, H, device="cuda", dtype=torch.bfloat16))
weights.append(torch.empty(151936 // 4, H, device="cuda", dtype=torch.bfloat16))
params = sum(w.numel() for w in weights)
grads = torch.empty(params, device="cuda", dtype=torch.float32)
adam = [torch.empty(params, device="cuda", dtype=torch.float32) for _ in range(3)]
persistent = torch.cuda.memory_allocated()

import sys
cap = float(sys.argv[1]) if len(sys.argv) > 1 else 0
if cap > 0:  # the smallest pool that still runs the step = allocated peak + real fragmentation
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap / total))
random.seed(1)
for step in range(24):
    tokens = random.randint(2048, 20480)  # dynamic batching: micro-batches up to max_tokens_per_gpu
    kept = [torch.empty(tokens // 4, H, device="cuda", dtype=torch.bfloat16) for _ in range(L)]
    for layer in range(L):  # recompute: one layer's working set at a time, freed after use
        work = [torch.empty(tokens // 4, H, device="cuda", dtype=torch.bfloat16) for _ in range(17)]
        moe = torch.empty(tokens * 8, 2 * F, device="cuda", dtype=torch.bfloat16)
        del work, moe
    logits = torch.empty(tokens, 151936 // 4, device="cuda", dtype=torch.float32)
    grad_logits = torch.empty_like(logits)
    del logits, grad_logits, kept
torch.cuda.synchronize()
out["persistent_allocated"] = persistent
out["peak_allocated"] = torch.cuda.max_memory_allocated()
out["peak_reserved"] = torch.cuda.max_memory_reserved()
out["transient_peak"] = out["peak_allocated"] - persistent
out["slack_over_transient"] = (out["peak_reserved"] - out["peak_allocated"]) / out["transient_peak"]
out["torch"] = torch.__version__
out["gpu"] = torch.cuda.get_device_name(0)
print(json.dumps(out, indent=1))
dist.destroy_process_group()
