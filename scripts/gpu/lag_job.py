# One rank of a real two-rank PyTorch NCCL job in which one rank stops issuing collectives
# (issue #44, scripts/gpu/diagnose-two-gpu.sh). Both ranks run STEPS all_reduce on one NCCL
# communicator of two ranks (each step synchronised, so both have launched the same number), print
# a JSON metric line per step (a progress line for the daemon's stall clock), then:
#   - rank LAG_RANK (default 1) stops in wait_for_rollout_data() and issues nothing more;
#   - every other rank enters the next all_reduce and blocks in torch.cuda.synchronize() in
#     train_step(), its AllReduce count one ahead of the lagging rank's in NCCL's RAS report.
# When READY_DIR/stop appears, the lagging rank issues the all_reduce after all and both finish.
#
# GPU_INDEX picks the device (default: the rank). On a host with one GPU the launcher gives both
# ranks GPU 0 and a distinct NCCL_HOSTID each (NCCL refuses two ranks of one host on one device);
# NCCL then treats them as two hosts joined by its socket transport: a real two-rank communicator.
import json
import os
import time

rank = int(os.environ["RANK"])
world = int(os.environ.get("WORLD_SIZE", "2"))
steps = int(os.environ.get("STEPS", "8"))
lag_rank = int(os.environ.get("LAG_RANK", "1"))
ready = os.environ["READY_DIR"]
print(json.dumps({"metric": "job/started", "value": rank, "step": 0}), flush=True)

import torch  # noqa: E402  (after the first progress line: the import takes seconds)
import torch.distributed as dist  # noqa: E402

dev = int(os.environ.get("GPU_INDEX", str(rank)))
torch.cuda.set_device(dev)
t0 = time.time()
dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", dev))
x = torch.ones(1 << 16, device="cuda")
for step in range(1, steps + 1):
    dist.all_reduce(x)
    x /= world
    value = x.sum().item()  # waits for the step's all_reduce on this rank
    print(json.dumps({"metric": "train/allreduce_mean_sum", "value": value, "step": step}),
          flush=True)
torch.cuda.synchronize()
print(f"rank {rank}: {steps} all_reduce done in {time.time() - t0:.1f} s on cuda:{dev} "
      f"(nccl {'.'.join(map(str, torch.cuda.nccl.version()))})", flush=True)


def wait_for_rollout_data():
    # The bug: this rank never reaches the all_reduce its peers wait in.
    while not os.path.exists(ready + "/stop"):
        time.sleep(0.2)


def train_step():
    dist.all_reduce(x)
    torch.cuda.synchronize()  # blocks: the peer never launches its half


open(f"{ready}/rank{rank}", "w").close()
if rank == lag_rank:
    wait_for_rollout_data()
    dist.all_reduce(x)  # late: releases the peers
    torch.cuda.synchronize()
else:
    train_step()
print(f"rank {rank}: released", flush=True)
dist.destroy_process_group()
