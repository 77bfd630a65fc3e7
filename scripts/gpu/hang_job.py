# One rank of a real two-rank PyTorch job that hangs because one rank skips an all_reduce
# (issue #44, scripts/gpu/diagnose-daemon.sh). The host has one GPU and NCCL refuses two ranks on
# one device, so the job's world is a gloo group of 2 (the collective that hangs) and rank 0 also
# owns a real NCCL communicator on GPU 0 (a subgroup of rank 0), which it uses before the hang and
# keeps alive, so NCCL's RAS service reports it. Rank 0 then waits in all_reduce for rank 1, which
# skipped it and waits in skip_all_reduce(): py-spy sees both, RAS sees the NCCL communicator.
import os
import time

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
dist.init_process_group("gloo", rank=rank, world_size=2)
nccl = dist.new_group(ranks=[0], backend="nccl")  # every rank calls new_group; only 0 is in it
if rank == 0:
    torch.cuda.set_device(0)
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(20):
        dist.all_reduce(x, group=nccl)
    out = torch.empty(1 << 20, device="cuda")
    for _ in range(5):
        dist.all_gather_into_tensor(out, x, group=nccl)
    torch.cuda.synchronize()
    print(f"rank 0: NCCL collectives done (nccl {torch.cuda.nccl.version()})", flush=True)

    # Keep the GPU busy while the main thread hangs, so NVML reads its clocks under load.
    def burn():
        a = torch.randn(8192, 8192, device="cuda")
        stop = os.environ["READY_DIR"] + "/stop"
        while not os.path.exists(stop):
            for _ in range(20):
                a = a @ a
                a = a / a.norm()
            torch.cuda.synchronize()

    import threading

    threading.Thread(target=burn, daemon=True).start()
dist.barrier()
open(os.environ["READY_DIR"] + f"/rank{rank}", "w").close()
print(f"rank {rank}: at the step's all_reduce", flush=True)


def skip_all_reduce():
    # The bug: rank 1 never reaches the all_reduce its peer waits in.
    stop = os.environ["READY_DIR"] + "/stop"
    while not os.path.exists(stop):
        time.sleep(0.2)


t = torch.ones(4)
if rank == 0:
    dist.all_reduce(t)  # waits for rank 1 forever
else:
    skip_all_reduce()
