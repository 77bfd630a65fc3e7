#!/usr/bin/env bash
# Builds runplane-smoke on the GPU host against the image's torch and runs it with --device cuda,
# once with --backup-mode zero_copy and once with clone, sampling the process's host RSS and GPU
# memory while it runs. Everything lands in $OUT:
#   build.log, <mode>.log (the workload's stdout+stderr), <mode>.jsonl (metrics),
#   <mode>_mem.csv (t_s, host_rss_mb, gpu_used_mb, proc_gpu_mb), summary.txt, env.txt
# Run from the repository root ON the GPU host (no network needed):
#   OUT=/tmp/out scripts/gpu/smoke.sh [extra runplane-smoke flags...]
# Environment knobs: SCALE_MB (default 2048), MODES (default "zero_copy clone"),
#   BUILD_DIR (default build-smoke-gpu), PYTHON (default python3), TORCH_CUDA_ARCH_LIST (9.0a).
set -euo pipefail

step() { echo "== [$(date +%H:%M:%S)] $*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

OUT=${OUT:-$PWD/out-smoke-gpu}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SCALE_MB=${SCALE_MB:-2048}
MODES=${MODES:-"zero_copy clone"}
BUILD_DIR=${BUILD_DIR:-build-smoke-gpu}
PYTHON=${PYTHON:-python3}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0a}
# Keep NVLink multicast off in every child (gpu-host.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

if [ ! -f compute/smoke/standalone/CMakeLists.txt ]; then
  echo "smoke.sh: run me from the repository root (compute/smoke/standalone not found)" >&2
  exit 2
fi

step "environment -> $OUT/env.txt"
{
  echo "date: $(date -Is)"
  echo "host: $(hostname)"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "cpus: $(nproc)"
  grep MemTotal /proc/meminfo || true
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true
  echo "cmake: $(cmake --version | head -1)"
  echo "ninja: $(ninja --version 2>/dev/null || echo missing)"
  echo "c++: $(c++ --version | head -1)"
  "$PYTHON" -c 'import torch; print("torch:", torch.__version__, "cuda:", torch.version.cuda, "available:", torch.cuda.is_available())'
} | tee "$OUT/env.txt"

TORCH_PREFIX=$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')
step "configure against $TORCH_PREFIX (TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST)"
t0=$(now)
# Only the image's torch may be found (never a CPU-only LibTorch elsewhere on the host).
cmake -S compute/smoke/standalone -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DTorch_DIR="$TORCH_PREFIX/Torch" \
  -DRUNPLANE_SMOKE_CUDA=AUTO 2>&1 | tee "$OUT/build.log"
t1=$(now)
step "build"
cmake --build "$BUILD_DIR" 2>&1 | tee -a "$OUT/build.log"
t2=$(now)
BIN="$BUILD_DIR/runplane-smoke"
echo "configure_s=$(elapsed "$t0" "$t1") build_s=$(elapsed "$t1" "$t2")" | tee "$OUT/timing.txt"

# Samples the child's VmRSS and GPU memory (whole GPU and this process) every 0.25 s.
sample() {
  local pid=$1 file=$2 start rss gpu proc
  start=$(now)
  echo "t_s,host_rss_mb,gpu_used_mb,proc_gpu_mb" >"$file"
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null || true)
    gpu=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1 || true)
    proc=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      awk -F', *' -v p="$pid" '$1 == p { print $2 }' || true)
    echo "$(elapsed "$start" "$(now)"),${rss},${gpu},${proc}" >>"$file"
    sleep 0.25
  done
}

: >"$OUT/summary.txt"
status=0
for mode in $MODES; do
  step "run --device cuda --backup-mode $mode --backup-scale-mb $SCALE_MB $*"
  rm -f "$OUT/$mode.jsonl"
  t0=$(now)
  "$BIN" --device cuda --backup-mode "$mode" --backup-scale-mb "$SCALE_MB" \
    --metrics-jsonl "$OUT/$mode.jsonl" "$@" >"$OUT/$mode.log" 2>&1 &
  pid=$!
  sample "$pid" "$OUT/${mode}_mem.csv" &
  sampler=$!
  rc=0
  wait "$pid" || rc=$?
  wait "$sampler" || true
  t1=$(now)
  wall=$(elapsed "$t0" "$t1")
  echo "exit code $rc, wall ${wall} s"
  tail -3 "$OUT/$mode.log"
  {
    echo "### $mode (exit $rc, wall ${wall} s)"
    echo "command: $BIN --device cuda --backup-mode $mode --backup-scale-mb $SCALE_MB $*"
    grep -E '^\[runplane-smoke\]|^eval ' "$OUT/$mode.log" || true
    awk -F, 'NR > 1 && $2 != "" { if ($2 > r) r = $2 } NR > 1 && $3 != "" { if ($3 > g) g = $3 }
             NR > 1 && $4 != "" { if ($4 > p) p = $4 }
             END { printf "sampled peaks: host_rss_mb=%s gpu_used_mb=%s proc_gpu_mb=%s\n", r, g, p }' \
      "$OUT/${mode}_mem.csv"
    grep -E '^memory ' "$OUT/$mode.log" | tail -1 || true
    echo
  } >>"$OUT/summary.txt"
  [ "$rc" -eq 0 ] || status=$rc
done

step "summary ($OUT/summary.txt)"
cat "$OUT/timing.txt" "$OUT/summary.txt"
exit "$status"
