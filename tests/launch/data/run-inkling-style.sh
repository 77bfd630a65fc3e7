#!/usr/bin/env bash
# Runplane test script, in the style of miles' scripts/run-inkling-small*.sh (written here, not
# copied): the Inkling launcher `scripts/run_inkling.py train` decides the placement, samples per
# prompt, rollout count and parallel layout itself; the command gives the model, the nodes, the
# batch sizes and --extra-args (appended last by the launcher, so they win).
set -euo pipefail
cd "$(dirname "$0")/.."

export MILES_SCRIPT_EXTERNAL_RAY=1
export MASTER_ADDR=${MASTER_ADDR:?the head node IP}

MODELS=${MODELS:-/data/models}
MODE=${MODE:-full}

python3 scripts/run_inkling.py train \
  --model-name Inkling-Small --train-mode "${MODE}" --task dapo_math \
  --num-nodes 4 --num-gpus-per-node 8 \
  --hf-checkpoint "${MODELS}/Inkling-Small" \
  --torch-dist "${MODELS}/Inkling-Small_torch_dist" \
  --rollout-batch-size 64 --global-batch-size 128 \
  --sglang-context-length 4096 --rollout-max-response-len 2048 \
  --extra-args "--offload-train-target cpu --sglang-mem-fraction-static 0.7" \
  "$@"
