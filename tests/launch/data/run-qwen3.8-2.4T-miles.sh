#!/bin/bash
# Qwen3.8-2.4T-A95B `full` on 16 x 4 GB300 through the miles Python launcher (Runplane test
# script; the command line is the one miles docs/models/qwen/qwen3-8.md §6.3 prints, see
# docs/domain.md). Ray is brought up on every node first; this runs on the head.

set -euo pipefail

NCCL_LIB=/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2
export SGLANG_NCCL_SO_PATH="${NCCL_LIB}"
export LD_PRELOAD="${NCCL_LIB}"
export MILES_SCRIPT_EXTERNAL_RAY=1
export MASTER_ADDR="${MASTER_ADDR:?head node LAN IP}"

NUM_NODES=16
GPUS_PER_NODE=4

cd /root/miles
python scripts/run_qwen3_8.py --mode normal --model-variant full --hardware GB300 \
   --num-nodes ${NUM_NODES} --num-gpus-per-node ${GPUS_PER_NODE} \
   --tp 1 --pp 4 --ep 16 --etp 1 --cp 1 \
   --lora --lora-rank 32 --lora-alpha 64 \
   --num-rollout 200 --rollout-batch-size 32 --n-samples-per-prompt 8 \
   --rollout-max-response-len 4096 --global-batch-size 256 \
   --rollout-max-concurrency 8 --recompute --skip-prepare \
   --extra-args "--rollout-num-gpus-per-engine 16 --lr 1e-5"
