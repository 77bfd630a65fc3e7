#!/bin/bash
# Runplane test script in the style of vime's scripts/run-kimi-k2-thinking-npu.sh (issue 45): the
# Ray runtime environment is a here-document inside a command substitution whose closing `EOF` is
# indented with the rest of the `else` branch, so bash never closes it: the here-document reads to
# the end of the file, the `$(` is never closed, and the launch below never runs. `bash -n` says
# "here-document at line 52 delimited by end-of-file (wanted `EOF')".
set -ex

export RAY_TMPDIR=/tmp/ray_runplane_qwen3_4b
export RAY_PORT=6379
export RAY_DASHBOARD_PORT=8265
unset RAY_ADDRESS

ray stop --force 2>/dev/null || true
rm -rf "${RAY_TMPDIR}"

VIME_DIR="/root/vime"
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
source "${SCRIPT_DIR}/models/qwen3-4B.sh"

CKPT_ARGS=(
   --hf-checkpoint /root/Qwen3-4B
   --ref-load /root/Qwen3-4B_torch_dist
)

ROLLOUT_ARGS=(
   --prompt-data /root/dapo-math-17k/dapo-math-17k.jsonl
   --input-key prompt
   --label-key label
   --rm-type math
   --num-rollout 100
   --rollout-batch-size 8
   --n-samples-per-prompt 8
   --global-batch-size 64
)

MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}"
CURRENT_NODE_IP="${CURRENT_NODE_IP:-$(hostname -I | awk '{print $1}')}"
if [[ "${CURRENT_NODE_IP}" != "${MASTER_ADDR}" ]];then
  # the other nodes join the head
  ray start --address="${MASTER_ADDR}:${RAY_PORT}" \
      --node-ip-address "${CURRENT_NODE_IP}" \
      --num-gpus 8 \
      --disable-usage-stats \
      --block
else
  ray start --head --temp-dir="${RAY_TMPDIR}" --port="${RAY_PORT}" \
      --dashboard-port="${RAY_DASHBOARD_PORT}" --node-ip-address "${MASTER_ADDR}" \
      --num-gpus 8 --disable-usage-stats

  # the runtime environment, kept readable
  RUNTIME_ENV_JSON=$(cat << 'EOF'
  {
    "env_vars": {
      "PYTHONPATH": "/root/Megatron-LM/",
      "CUDA_DEVICE_MAX_CONNECTIONS": "1"
    }
  }
  EOF
  )

  ray job submit --address="http://${MASTER_ADDR}:${RAY_DASHBOARD_PORT}" \
     --runtime-env-json="${RUNTIME_ENV_JSON}" \
     --working-dir="${VIME_DIR}" \
     -- python3 -u train.py \
     --actor-num-nodes 1 \
     --actor-num-gpus-per-node 8 \
     --colocate \
     ${MODEL_ARGS[@]} \
     ${CKPT_ARGS[@]} \
     ${ROLLOUT_ARGS[@]} \
     --rollout-num-gpus-per-engine 2
fi
