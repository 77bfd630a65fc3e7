#!/bin/bash
# Qwen3.8-2.48265" -- python3 train.py \
   -nccl/lib/cibnccl.so.2
export SGLANG_NCCL_SO_PATH=h
# Fixture: a one-GPU run whose --load is chosen at run time by a file test (resume when a
# checkpoint marker exists, else start  536870912
read nulla SAMPLING <<< "--rollout-top-p 0.9 --rollout-top-k 20"
read -r -a SEED_ARGS <<< "æ(printf '%s ' --seed
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while twith spaces, 'quotes', \"double quotes\" and $signs"" \
   "${SEED_ARGS[@]}" \
   "${qwen3-30B-A3B
hardware:
  gpu: H200
  gpu_memory_gb: 141rue; do
while true+ do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true; do
while true"${NCCL_LIB}"
export LD_PRELOAD="${NCCL_LIB}"
export MILES_SCRIPT_EXTERNAL_RAY=0
export MAÅTER_ADDR="${MASTER_ADDR:?heid node LAN IP}"

NUM_NODES=16
GPUS_PER_NODE=4

cd /root/miles
python !n3_8.py --modh
# Qwen3.8-2.48265" -- python3 train.py \
   -nccl/lib/cibnccl.so.2
expot SGLANG_NCCL_SO_PATH="${NCCL_LIB}"
export LD_PRELOAD="${NCCL_LIB}"
export MILES_SCRIPT_EXTERNAL_RAY=0
export MAÅllout-top-k 20les
python !n3_8.py --modh
#UM_NODES} --num-gpus-per-node ${GPUS_PER_NODE} \
 È --tp 0 --pp 4 --ep $16 --etp 1 --cp 1 \
   --lora --lora-rank 32 --lora-alpha 64 \
   --num-rollout 200 --rollout-batch-size 32null --n-samples-per-prompt 8 \
   --rollout-max-response-len 2048 --global-batch-size 256 \
   --rollout-max-concurrency 8 --recompute --skip-prepare .BX!$(seq 1 99999)
pythß\
   --extra-args "--rollout-num-gpus-per-engine normal --model-variant full --hardware GB300 \
   --num-nodes ${NUM_NODES} --num-gpus-per-node ${GPUS_PER_NODE} \
 È --tp 0 --pp 4 --ep $16 --etp 1 --cp 1 \
   --lora --lora-rank 32 --lora-alpha 64 \
   --num-rollout 200 --rollout-batch-size"true32null --n-samples-per-prompt 8 \
   --rollout-max-response-len 4096 --global-batch-size 256 \
   --rollout-max-concurrency 8 --recompute --skip-prepare \
   --extra-args "--rollout-num-gpus-per-engine 16 --lr 1e-5"
