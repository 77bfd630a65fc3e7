#!/usr/bin/env bash
# GPU memory by process role on a GPU host (issue 43), in one call:
#   1. unpack the node bundle (make package on the build machine) and start its runplaned with
#      NVML on, its telemetry ingested into a history file by the bundled runplanectl watch;
#   2. start one CUDA process per role, each titled as its framework titles it (`exec -a`, the
#      argv[0] that setproctitle writes) and holding a known amount of GPU memory on GPU 0:
#      trainer  "ray::MegatronTrainRayActor.train"  3 GiB
#      rollout  "sglang::scheduler_TP0"             2 GiB
#      rollout  "VLLM::Worker_TP0"                  1 GiB (a second engine)
#      other    "python3" (no title)                0.5 GiB
#   3. after a few reports, read gpu.0.role.<role>.mem.used_bytes and role.<role>.rss_bytes
#      from the history and compare each role's GPU bytes with what its processes allocated
#      (NVML's figure also holds each process's CUDA context, ~0.5 GB);
#   4. copy the history, the table and the logs to $OUT.
# Run from the repository root ON the GPU host:
#   OUT=/tmp/out scripts/gpu/role-attribution.sh [build/package/runplane-node-*.tar.gz]
set -euo pipefail

step() { echo "== [$(date +%H:%M:%S)] $*"; }
OUT=${OUT:-$PWD/out-role-attribution}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TARBALL=${1:-$(ls build/package/runplane-node-*-linux-x86_64.tar.gz 2>/dev/null | head -1)}
[ -f "$TARBALL" ] || { echo "role-attribution: no bundle (make package first)" >&2; exit 2; }
WORK=${WORK:-/tmp/runplane-role-attribution}
PYTHON=${PYTHON:-python3}
# The interpreter itself: a wrapper on PATH (a pyenv shim) would exec it again and drop the title.
PYTHON=$("$PYTHON" -c 'import sys; print(sys.executable)')
rm -rf "$WORK"
mkdir -p "$WORK"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

step "environment"
{
    echo "date: $(date -Is)"
    grep PRETTY_NAME /etc/os-release || true
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true
    "$PYTHON" -c 'import torch; print("torch", torch.__version__)'
} | tee "$OUT/env.txt"

step "1. the bundle's daemon and ingest"
tar -C "$WORK" -xzf "$TARBALL"
BUNDLE=$(echo "$WORK"/runplane-node-*)
CTL=$BUNDLE/bin/runplanectl
"$BUNDLE/bin/runplaned" --listen 127.0.0.1:0 --state-dir "$WORK/state" --sample-hz 2 --node-id gpu-host \
    >"$WORK/daemon.out" 2>"$WORK/daemon.err" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$WORK/daemon.out" && break; sleep 0.1; done
ADDR=$(sed -n 's/^runplaned listening on //p' "$WORK/daemon.out")
echo "daemon at $ADDR"

step "2. one CUDA process per role"
cat >"$WORK/hold.py" <<'EOF'
import sys, time, torch
gib = float(sys.argv[1])
x = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda:0")
x.fill_(1)
torch.cuda.synchronize()
open(sys.argv[2], "w").close()
time.sleep(600)
EOF
# A process started under another argv[0] (`exec -a`) cannot find its venv from it: Python then
# starts without the venv's site-packages. Hand them over explicitly.
SITE=$("$PYTHON" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
start() {  # TITLE GIB FLAG
    if [ "$1" = "-" ]; then
        "$PYTHON" "$WORK/hold.py" "$2" "$3" &
    else
        (exec -a "$1" "$PYTHON" "$WORK/hold.py" "$2" "$3") &
    fi
    pids+=($!)
    echo "$1 $2 $!" >>"$WORK/processes.txt"
}
start "ray::MegatronTrainRayActor.train" 3 "$WORK/f1"
start "sglang::scheduler_TP0" 2 "$WORK/f2"
start "VLLM::Worker_TP0" 1 "$WORK/f3"
start - 0.5 "$WORK/f4"
for _ in $(seq 600); do
    [ -f "$WORK/f1" ] && [ -f "$WORK/f2" ] && [ -f "$WORK/f3" ] && [ -f "$WORK/f4" ] && break
    sleep 0.1
done
cp "$WORK/processes.txt" "$OUT/"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv | tee "$OUT/nvidia-smi-apps.csv"

step "3. ingest a few reports and read the role series"
"$CTL" watch "$ADDR" --history "$WORK/history.sqlite" --seconds 8 --hz 2 >"$WORK/watch.log" 2>&1 || true
{
    echo "| series | last value | GiB |"
    echo "|---|---|---|"
    for s in gpu.0.role.trainer.mem.used_bytes gpu.0.role.rollout.mem.used_bytes \
             gpu.0.role.other.mem.used_bytes gpu.0.mem.used_bytes role.trainer.rss_bytes \
             role.rollout.rss_bytes role.rollout.processes roles.scanned roles.scan_seconds; do
        v=$("$CTL" history points --history "$WORK/history.sqlite" --node gpu-host --name "$s" \
            2>/dev/null | awk '!/^#/ && NF {last=$2} END {print last}' || true)
        g=$(awk -v v="${v:-0}" 'BEGIN {printf "%.2f", v / 1073741824}')
        echo "| \`$s\` | ${v:-none} | $g |"
    done
} | tee "$OUT/roles.md"
"$CTL" history series --history "$WORK/history.sqlite" >"$OUT/series.txt" 2>&1 || true

step "4. collect"
cp "$WORK/history.sqlite" "$WORK/daemon.out" "$WORK/daemon.err" "$WORK/watch.log" "$OUT/" || true
echo "done: $OUT"
