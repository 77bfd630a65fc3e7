#!/bin/bash
# Qwen3-30B-A3B on vLLM rollout (Runplane test script in the style of the vLLM-based variant's
# scripts/run-qwen3-30B-A3B.sh). One node by default; with ACTOR_NUM_NODES>1 the Ray cluster must
# already be up (head + workers) and multi-node defaults apply.

set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "${SCRIPT_DIR}/models/qwen3-30B-A3B.sh"

ACTOR_NUM_NODES=${ACTOR_NUM_NODES:-1}
ACTOR_NUM_GPUS_PER_NODE=${ACTOR_NUM_GPUS_PER_NODE:-8}
TOTAL_GPUS=$((ACTOR_NUM_NODES * ACTOR_NUM_GPUS_PER_NODE))
NUM_ROLLOUT=${NUM_ROLLOUT:-3000}
ENABLE_R3=${ENABLE_R3:-1}

if [ "${ACTOR_NUM_NODES}" -gt 1 ]; then
   export MASTER_ADDR=${MASTER_ADDR:?set MASTER_ADDR to the head node LAN IP}
   MEGATRON_TP=${MEGATRON_TP:-8}
   MEGATRON_EP=${MEGATRON_EP:-8}
   MEGATRON_CP=${MEGATRON_CP:-2}
   ROLLOUT_NUM_GPUS_PER_ENGINE=${ROLLOUT_NUM_GPUS_PER_ENGINE:-${TOTAL_GPUS}}
   ROLLOUT_BATCH_SIZE=4
   N_SAMPLES=2
   OPTIMIZER_OFFLOAD=()
else
   export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
   MEGATRON_TP=${MEGATRON_TP:-4}
   MEGATRON_EP=${MEGATRON_EP:-8}
   MEGATRON_CP=${MEGATRON_CP:-1}
   ROLLOUT_NUM_GPUS_PER_ENGINE=${ROLLOUT_NUM_GPUS_PER_ENGINE:-8}
   ROLLOUT_BATCH_SIZE=32
   N_SAMPLES=8
   OPTIMIZER_OFFLOAD=(
      --optimizer-cpu-offload
      --overlap-cpu-optimizer-d2h-h2d
      --use-precision-aware-optimizer
   )
fi

CKPT_ARGS=(
   --hf-checkpoint /root/Qwen3-30B-A3B
   --ref-load /root/Qwen3-30B-A3B_torch_dist
)

ROLLOUT_ARGS=(
   --prompt-data /root/dapo-math-17k/dapo-math-17k.jsonl
   --input-key prompt --label-key label
   --apply-chat-template
   --rm-type deepscaler
   --num-rollout ${NUM_ROLLOUT}
   --rollout-batch-size ${ROLLOUT_BATCH_SIZE}
   --n-samples-per-prompt ${N_SAMPLES}
   --rollout-max-response-len 8192
   --global-batch-size $(( ROLLOUT_BATCH_SIZE * N_SAMPLES ))
)

PERF_ARGS=(
   --tensor-model-parallel-size ${MEGATRON_TP}
   --sequence-parallel
   --pipeline-model-parallel-size 1
   --context-parallel-size ${MEGATRON_CP}
   --expert-model-parallel-size ${MEGATRON_EP}
   --expert-tensor-parallel-size 1
   --recompute-granularity full
   --recompute-method uniform
   --recompute-num-layers 1
   --use-dynamic-batch-size
   --max-tokens-per-gpu 20480
)

GRPO_ARGS=(
   --advantage-estimator gspo
   --kl-loss-coef 0.00
   --eps-clip 4e-4
)

OPTIMIZER_ARGS=(
   --optimizer adam
   --lr 1e-6
   --weight-decay 0.1
)
OPTIMIZER_ARGS+=("${OPTIMIZER_OFFLOAD[@]}")

VLLM_ARGS=(
   --rollout-num-gpus-per-engine ${ROLLOUT_NUM_GPUS_PER_ENGINE}
   --vllm-gpu-memory-utilization 0.7
   --vllm-enable-expert-parallel
   --vllm-cudagraph-capture-sizes 1 2 4 8 $(seq 16 8 256)
   --vllm-moe-backend triton
)
if [ "${ENABLE_R3}" = "1" ]; then
   VLLM_ARGS+=(--vllm-enable-eplb --vllm-eplb-config '{"num_redundant_experts": 16}')
fi

MISC_ARGS=(
   --attention-dropout 0.0
   --hidden-dropout 0.0
   --attention-backend flash
)

if [ "${ACTOR_NUM_NODES}" = "1" ]; then
   ray start --head --node-ip-address "${MASTER_ADDR}" --num-gpus "${ACTOR_NUM_GPUS_PER_NODE}" --disable-usage-stats
fi

ray job submit --address="http://127.0.0.1:8265" \
   --runtime-env-json='{"env_vars": {"PYTHONPATH": "/root/Megatron-LM/", "CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_NVLS_ENABLE": "1"}}' \
   -- python3 train.py \
   --actor-num-nodes "${ACTOR_NUM_NODES}" \
   --actor-num-gpus-per-node "${ACTOR_NUM_GPUS_PER_NODE}" \
   --colocate \
   "${MODEL_ARGS[@]}" \
   "${CKPT_ARGS[@]}" \
   "${ROLLOUT_ARGS[@]}" \
   "${OPTIMIZER_ARGS[@]}" \
   "${GRPO_ARGS[@]}" \
   "${PERF_ARGS[@]}" \
   "${VLLM_ARGS[@]}" \
   "${MISC_ARGS[@]}"
