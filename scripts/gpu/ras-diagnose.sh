#!/usr/bin/env bash
# The diagnosis on a GPU host (issue #44, docs/results/diagnosis-gpu.md): a real one-rank PyTorch
# NCCL job (scripts/gpu/ras_job.py) holds a live communicator while runplane-ras-report reads
# NCCL's RAS report over loopback (CLIENT PROTOCOL 2 / SET FORMAT json / VERBOSE STATUS), with the
# job's py-spy stack and the kernel log, and judges them. Also the text format (STATUS) once.
# Usage: scripts/gpu/ras-diagnose.sh DIR  (DIR holds runplane-ras-report and py-spy built/copied
# on the build machine); writes $OUT/{job.log,stack.json,diagnosis.json,status.txt,summary.txt}.
set -u
dir="${1:?usage: ras-diagnose.sh DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/ras-out}"
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export STOP_FILE=/tmp/ras-job-stop HOLD_SECONDS=120 PYTHONUNBUFFERED=1
rm -f "$STOP_FILE"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/summary.txt" 2>&1
t0=$(date +%s%N)
python3 "$here/ras_job.py" > "$OUT/job.log" 2>&1 &
pid=$!
for _ in $(seq 1 900); do
  grep -q "collectives done" "$OUT/job.log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
echo "job pid $pid ready after $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/summary.txt"
"$dir/py-spy" dump --json --pid $pid > "$OUT/stack.json" 2> "$OUT/stack.err"
echo "py-spy rc=$?" >> "$OUT/summary.txt"
t1=$(date +%s%N)
"$dir/runplane-ras-report" --timeout-ms 10000 --stack "$pid=$OUT/stack.json" > "$OUT/diagnosis.json" 2> "$OUT/ras.err"
echo "runplane-ras-report rc=$? in $(( ($(date +%s%N) - t1) / 1000000 )) ms" >> "$OUT/summary.txt"
# The text format for the record (bash's /dev/tcp; loopback).
exec 3<>/dev/tcp/127.0.0.1/28028 && { printf 'CLIENT PROTOCOL 2\nSTATUS\n' >&3; timeout 15 cat <&3 > "$OUT/status.txt"; exec 3<&-; }
touch "$STOP_FILE"
wait $pid
echo "job exit $?" >> "$OUT/summary.txt"
python3 - "$OUT/diagnosis.json" >> "$OUT/summary.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("headline:", d["verdict"]["headline"])
n = d["nodes"][0]
print("ras available:", n["ras"]["available"], n["ras"]["missing"], "took_ms", n["ras"]["took_ms"])
r = n["ras"]["report"] or {}
print("nccl_version:", r.get("nccl_version"), "communicators:", r.get("communicators_count"))
for c in r.get("communicators", []):
    for k in c["ranks"]:
        print(" rank", k["rank"], "pid", k["pid"], "status", k["status"], "counts", k["collective_counts"])
PY
cat "$OUT/summary.txt"
