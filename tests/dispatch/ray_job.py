"""A small real Ray job used as the launcher in the real-Ray dispatch test.

It connects to the cluster the dispatcher brought up (RAY_ADDRESS), places one task per declared
GPU, reports where they ran, then prints framework-shaped log lines (`eval N: {...}`,
`step N: {...}`) so the daemon's parser turns them into series. It keeps training-like output
going until it is stopped (StopRun) or a minute passes.
"""
import os
import sys
import time

import ray


@ray.remote(num_gpus=1)
def where(index):
    return index, ray.util.get_node_ip_address()


def main():
    ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    placed = ray.get([where.remote(i) for i in range(gpus)])
    nodes = sorted({ip for _, ip in placed})
    print(f"placed {len(placed)} tasks on nodes {','.join(nodes)}", flush=True)
    print(f"env ACTOR_NUM_NODES={os.environ.get('ACTOR_NUM_NODES')} "
          f"ACTOR_NUM_GPUS_PER_NODE={os.environ.get('ACTOR_NUM_GPUS_PER_NODE')}", flush=True)
    for step in range(4):
        print(f"eval {step}: {{'eval/arith': {0.2 + 0.1 * step:.2f}}}", flush=True)
        time.sleep(0.2)
    deadline = time.time() + 60
    step = 0
    while time.time() < deadline:
        print(f"step {step}: {{'train/loss': {1.0 / (step + 1):.4f}}}", flush=True)
        step += 1
        time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
