#!/bin/bash
# Constructs outside the supported subset, each on a known line (Runplane importer test).
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
source "${SCRIPT_DIR}/models/qwen3-4B.sh"
for WORKER_IP in $(awk '{print $1}' /root/mpi_rack_hostfile); do
  ssh root@"${WORKER_IP}" "ray start --address=${MASTER_ADDR}:6379 --num-gpus 8"
done
launch_worker() {
  echo "$1"
}
case "${MODE:-normal}" in
  debug) DEBUG_ARGS=(--debug-rollout-only) ;;
  *) DEBUG_ARGS=() ;;
esac
NUM_GPUS=$(nvidia-smi -L | wc -l)
BATCH=$((4 * 8))
while false; do
  LR=1e-5
done
launch_worker foo
ARGS=(
   --actor-num-nodes 1
   --actor-num-gpus-per-node ${NUM_GPUS}
   --rollout-batch-size ${BATCH}
   --lr ${LR:-1e-6}
   --my-custom-flag "${DEBUG_ARGS[@]}"
)
python3 train.py "${ARGS[@]}" "${MODEL_ARGS[@]}"
