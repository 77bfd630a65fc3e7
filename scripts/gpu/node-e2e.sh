#!/usr/bin/env bash
# The node bundle end to end on a GPU host, in one call (docs/results/node-e2e-h200.md):
#   1. unpack the bundle built on the Debian machine (make package) and check it runs here;
#   2. start the bundled runplaned (NVML on, --metrics-listen) and ingest its telemetry into a
#      history file with the bundled runplanectl watch;
#   3. build runplane-smoke against the host's torch and SUBMIT it through the daemon with
#      --device cuda; wait for it to finish;
#   4. the NCCL version gate (Preflight through gRPC, a recipe whose engines span nodes) and the
#      NCCL probe (ProbeNccl through gRPC, stored in the history);
#   5. scrape /metrics, GetNode, then copy the history and every log to $OUT.
# Run from the repository root ON the GPU host:
#   OUT=/tmp/out scripts/gpu/node-e2e.sh [build/package/runplane-node-*.tar.gz]
# Then, on the build machine: runplane --history OUT/history.sqlite --report DIR --run RUN_ID
set -euo pipefail

step() { echo "== [$(date +%H:%M:%S)] $*"; }
OUT=${OUT:-$PWD/out-node-e2e}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TARBALL=${1:-$(ls build/package/runplane-node-*-linux-x86_64.tar.gz 2>/dev/null | head -1)}
[ -f "$TARBALL" ] || { echo "node-e2e: no bundle (pass its path, or make package first)" >&2; exit 2; }
WORK=${WORK:-/tmp/runplane-node-e2e}
PYTHON=${PYTHON:-python3}
# The run is named after the GPU this host really has ("NVIDIA H100 80GB HBM3" -> h100-80gb-hbm3),
# "cpu" where nvidia-smi finds none; RUN_NAME overrides it.
gpu_slug() {
    local name
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
    name=$(printf '%s' "$name" | tr '[:upper:]' '[:lower:]' | sed -E 's/^nvidia[ -]*//; s/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
    printf '%s' "${name:-cpu}"
}
RUN_NAME=${RUN_NAME:-$(gpu_slug)-node-e2e}
RUN_ID=${RUN_ID:-$RUN_NAME-$(date +%Y%m%d-%H%M%S)}
# The smoke's CUDA arch from the GPU's compute capability (9.0 -> 9.0a as before on H100/H200).
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ' || true)
[ "$cc" = "9.0" ] && cc=9.0a
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-${cc:-9.0a}}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
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
    echo "host: $(hostname)"
    echo "run: $RUN_NAME ($RUN_ID)"
    echo "bundle: $(basename "$TARBALL") ($(du -h "$TARBALL" | cut -f1))"
    grep PRETTY_NAME /etc/os-release || true
    ldd --version 2>&1 | head -1 || true
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true
} | tee "$OUT/env.txt"

step "1. unpack the bundle"
tar -C "$WORK" -xzf "$TARBALL"
BUNDLE=$(echo "$WORK"/runplane-node-*)
CTL=$BUNDLE/bin/runplanectl
for exe in "$BUNDLE"/bin/*; do
    LD_LIBRARY_PATH= "$exe" --version
done | tee "$OUT/versions.txt"
# What the host provides vs the bundle (NVML from the driver; everything else ours or glibc's).
ldd "$BUNDLE/bin/runplaned" >"$OUT/ldd-runplaned.txt"
echo "libraries from outside the bundle:"; grep -v "$BUNDLE/bin/../lib/" "$OUT/ldd-runplaned.txt" | tee "$OUT/ldd-system.txt"

step "2. start runplaned (NVML on) and the ingest"
# Smoke build in parallel with the daemon start: it is the slow part.
TORCH_PREFIX=$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')
(
    cmake -S compute/smoke/standalone -B "$WORK/smoke-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DTorch_DIR="$TORCH_PREFIX/Torch" -DRUNPLANE_SMOKE_CUDA=AUTO &&
        cmake --build "$WORK/smoke-build"
) >"$OUT/smoke-build.log" 2>&1 &
SMOKE_BUILD=$!
"$BUNDLE/bin/runplaned" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --state-dir "$WORK/state" \
    --sample-hz 2 --log-level info >"$OUT/runplaned.out" 2>"$OUT/runplaned.err" &
pids+=($!)
ADDR=
for _ in $(seq 100); do
    ADDR=$(sed -n 's/^runplaned listening on //p' "$OUT/runplaned.out" | head -1)
    METRICS=$(sed -n 's/^runplaned metrics on //p' "$OUT/runplaned.out" | head -1)
    [ -n "$ADDR" ] && [ -n "$METRICS" ] && break
    sleep 0.1
done
[ -n "$ADDR" ] || { echo "node-e2e: runplaned did not start" >&2; cat "$OUT/runplaned.err" >&2; exit 1; }
echo "runplaned at $ADDR, metrics at $METRICS"
"$CTL" nodes "$ADDR" | tee "$OUT/nodes.txt"
"$CTL" nodes "$ADDR" --json >"$OUT/node.json"
export RUNPLANE_HISTORY=$OUT/history.sqlite
"$CTL" watch "$ADDR" --seconds 0 >"$OUT/watch.log" 2>&1 &
WATCH=$!
pids+=($WATCH)

step "3. build runplane-smoke against the host's torch, submit it through the daemon"
wait "$SMOKE_BUILD" || { tail -30 "$OUT/smoke-build.log"; exit 1; }
SMOKE=$WORK/smoke-build/runplane-smoke
mapfile -d '' argv < <("$CTL" argv -0 recipes/smoke-local.yaml)
argv[0]=$SMOKE
# The recipe is the CPU demo's; on the GPU host the same run goes to CUDA.
for i in "${!argv[@]}"; do
    [ "${argv[$i]}" = "--device" ] && argv[$((i + 1))]=cuda
done
echo "${argv[*]}" >"$OUT/smoke-argv.txt"
"$CTL" submit "$ADDR" --recipe recipes/smoke-local.yaml --name "$RUN_NAME" --run-id "$RUN_ID" \
    -- "${argv[@]}" | tee "$OUT/submit.txt"
start=$SECONDS
while :; do
    state=$("$CTL" logs "$ADDR" "$RUN_ID" 2>/dev/null | grep -E '^\[runplane-phase\] done|^eval [0-9]+:' | tail -1 || true)
    echo "[$((SECONDS - start))s] ${state:-starting}"
    [[ $state == "[runplane-phase] done"* ]] && break
    if "$CTL" logs "$ADDR" "$RUN_ID" --stderr 2>/dev/null | grep -qiE 'error|terminate'; then
        echo "node-e2e: the run reported an error:" >&2
        "$CTL" logs "$ADDR" "$RUN_ID" --stderr | tail -20 >&2
        break
    fi
    (( SECONDS - start < 600 )) || { echo "node-e2e: run did not finish in 600 s" >&2; break; }
    sleep 5
done
"$CTL" logs "$ADDR" "$RUN_ID" >"$OUT/run.stdout" 2>&1 || true
"$CTL" logs "$ADDR" "$RUN_ID" --stderr >"$OUT/run.stderr" 2>&1 || true

step "4. NCCL gate (Preflight over gRPC) and probe (ProbeNccl over gRPC)"
# A recipe whose vLLM engine spans two nodes with CUDA graphs: the gate (>= 2.30.7) applies.
set +e
"$CTL" dispatch preflight --recipe recipes/vime-qwen3-30B-A3B-2x8.yaml "$ADDR" >"$OUT/preflight.txt" 2>&1
echo "preflight exit $?" >>"$OUT/preflight.txt"
"$CTL" dispatch preflight --recipe recipes/vime-qwen3-30B-A3B-2x8.yaml --json "$ADDR" >"$OUT/preflight.json" 2>/dev/null
"$CTL" nccl probe "$ADDR" --run-id "$RUN_ID" --history "$RUNPLANE_HISTORY" >"$OUT/probe.txt" 2>&1
echo "probe exit $?" >>"$OUT/probe.txt"
"$CTL" nccl probe "$ADDR" --no-history --json --max-bytes 64M >"$OUT/probe.json" 2>/dev/null
set -e
cat "$OUT/preflight.txt" "$OUT/probe.txt"

step "5. /metrics, GetNode, history"
if command -v curl >/dev/null; then
    curl -fsS "$METRICS" >"$OUT/metrics.txt"
else
    "$PYTHON" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' "$METRICS" >"$OUT/metrics.txt"
fi
grep -E '^(runplane_build_info|runplane_daemon_info|DCGM_FI_DEV_FB_USED|process_resident_memory_bytes)' "$OUT/metrics.txt" || true
sleep 3  # the last telemetry batch reaches the history
kill -INT "$WATCH" 2>/dev/null || true
wait "$WATCH" 2>/dev/null || true
"$CTL" runs | tee "$OUT/runs.txt"
{
    echo "run_id: $RUN_ID"
    echo "smoke: $(grep -E '^\[runplane-smoke\].*(eval|rise|done)' "$OUT/run.stdout" | tail -3 | tr '\n' ' ')"
    echo "evals: $(grep -cE '^eval [0-9]+:' "$OUT/run.stdout")"
    echo "first_eval: $(grep -E '^eval [0-9]+:' "$OUT/run.stdout" | head -1)"
    echo "last_eval: $(grep -E '^eval [0-9]+:' "$OUT/run.stdout" | tail -1)"
    echo "gate: $(grep -iE 'nccl' "$OUT/preflight.txt" | head -3 | tr '\n' ' ')"
    echo "history_bytes: $(stat -c %s "$RUNPLANE_HISTORY")"
} | tee "$OUT/summary.txt"
step "done: results in $OUT"
