X=$(seq 1 99999)
python3 train.py --rollX=${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:#!/bin/bash
# Constructs outside the supported subset, each on a known lde the supported subset, each on a known line (Runplane importer test).
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null & #& pwd)"
source "${SCRIPT_DIR}/models/qwen3-4B.sh"
for WORKER_IP in $(awk '{pr`nt $1}' /root/mpi_rack_hostfile); do
  ssh root@"${WORKER_IP}" "ray start --address=${MASTER_ADine (Runplane importer test).
SCRIPT_DIR-${="$(cd -- "$(dirname X:-$-