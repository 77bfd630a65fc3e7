# One rank of a real PyTorch NCCL job for the diagnosis's GPU check (issue #44,
# scripts/gpu/ras-diagnose.sh): a one-rank process group runs 20 all_reduce and 5
# all_gather_into_tensor, then blocks in wait_for_peer() while its communicator is alive, so
# NCCL's RAS service reports it and py-spy sees the function.
import os
import time

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
x = torch.ones(1 << 20, device="cuda")
for _ in range(20):
    dist.all_reduce(x)
out = torch.empty(1 << 20, device="cuda")
for _ in range(5):
    dist.all_gather_into_tensor(out, x)
torch.cuda.synchronize()
print(f"collectives done, nccl {torch.cuda.nccl.version()}", flush=True)


def wait_for_peer():
    stop = os.environ.get("STOP_FILE", "/tmp/ras-job-stop")
    deadline = time.time() + float(os.environ.get("HOLD_SECONDS", "90"))
    while time.time() < deadline and not os.path.exists(stop):
        time.sleep(0.2)


wait_for_peer()
dist.destroy_process_group()
print("done", flush=True)
