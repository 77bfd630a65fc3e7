#!/usr/bin/env bash
# NCCL health on a GPU host (issue 7): build the probe and helpers with nvcc/g++ (no CMake), then
# run the NCCL resolution + version gate, nvidia-smi topo, the NVML sampler, the bandwidth probe
# (all local GPUs, all collectives, 8 MiB..8 GiB, once per NCCL copy), the multi-node code path on
# this host, and the torch.distributed all-reduce reference with a ratio table. Results go to $OUT.
#
# Usage (from the repo root): OUT=/path/to/results scripts/gpu/nccl.sh
# Knobs: MAX_BYTES (8G), ITERS (20), WARMUP (5), BUILD_DIR (/tmp/runplane-nccl-build),
#        TORCH_PYTHON (/opt/torch/.venv/bin/python3 if present, else python3), SKIP_TORCH=1,
#        PROBE_TIMEOUT (300 s per probe run).
set -euo pipefail

OUT="${OUT:-$PWD/nccl-out}"
BUILD_DIR="${BUILD_DIR:-/tmp/runplane-nccl-build}"
MAX_BYTES="${MAX_BYTES:-8G}"
ITERS="${ITERS:-20}"
WARMUP="${WARMUP:-5}"
PROBE_TIMEOUT="${PROBE_TIMEOUT:-300}"
mkdir -p "$OUT" "$BUILD_DIR"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[[ -f compute/gpu/nccl_resolve.h ]] || { echo "run from the repo root" >&2; exit 2; }

SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
# step NAME CMD...: runs one step (a command or a function), logs it and its exit status, and never
# stops the script: one failing step must not hide the others' results.
step() {
    local name="$1"
    shift
    echo "=== [$(date +%H:%M:%S)] $name: $*"
    local start=$SECONDS rc=0
    "$@" || rc=$?
    echo "$name rc=$rc ($((SECONDS - start)) s)" | tee -a "$SUMMARY"
}
to_bytes() {  # 8M -> 8388608
    local v="$1"
    case "$v" in
        *K) echo $((${v%K} << 10)) ;;
        *M) echo $((${v%M} << 20)) ;;
        *G) echo $((${v%G} << 30)) ;;
        *) echo "$v" ;;
    esac
}
MAX="$(to_bytes "$MAX_BYTES")"
MIN=$((8 << 20))

TORCH_PYTHON="${TORCH_PYTHON:-}"
if [[ -z "$TORCH_PYTHON" ]]; then
    if [[ -x /opt/torch/.venv/bin/python3 ]]; then TORCH_PYTHON=/opt/torch/.venv/bin/python3; else TORCH_PYTHON=python3; fi
fi
TORCH_NCCL="$("$TORCH_PYTHON" -c '
import os, sys
for p in sys.path:
    f = os.path.join(p, "nvidia", "nccl", "lib", "libnccl.so.2")
    if os.path.isfile(f):
        print(f)
        break
' 2>/dev/null || true)"
SYSTEM_NCCL=""
for candidate in /usr/lib/x86_64-linux-gnu/libnccl.so.2 /usr/local/cuda/lib64/libnccl.so.2; do
    if [[ -f "$candidate" ]]; then SYSTEM_NCCL="$candidate"; break; fi
done
NCCL_INCLUDE=""
for dir in /usr/include /usr/local/cuda/include "${TORCH_NCCL%/lib/libnccl.so.2}/include"; do
    if [[ -f "$dir/nccl.h" ]]; then NCCL_INCLUDE="$dir"; break; fi
done
NGPUS="$(nvidia-smi --list-gpus 2>/dev/null | grep -c '^GPU' || true)"
NGPUS="${NGPUS:-0}"

# ---------------------------------------------------------------- environment and topology
environment() {
    {
        echo "date: $(date -u +%FT%TZ)"
        echo "host: $(hostname)  kernel: $(uname -r)"
        echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
        nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,driver_version,compute_cap --format=csv || true
        nvcc --version | tail -2 || true
        g++ --version | head -1 || true
        echo "torch python: $TORCH_PYTHON ($("$TORCH_PYTHON" -c 'import torch;print(torch.__version__, torch.cuda.nccl.version())' 2>&1 | tail -1))"
        echo "torch's NCCL: ${TORCH_NCCL:-none}"
        echo "system NCCL: ${SYSTEM_NCCL:-none}"
        echo "nccl.h used to build: ${NCCL_INCLUDE:-none}"
        echo "GPUs: $NGPUS"
        echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
        env | grep -E '^(NCCL_|CUDA_VISIBLE|TORCH_SYMM|NVSHMEM)' | sort || true
    } >"$OUT/environment.txt" 2>&1
    cat "$OUT/environment.txt"
}
topology() {
    nvidia-smi topo -m >"$OUT/topo.txt" 2>&1
    local rc=$?
    cat "$OUT/topo.txt"
    return $rc
}
step environment environment
step topology topology

# ---------------------------------------------------------------- build (plain g++ / nvcc)
SM="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .' || true)"
SM="${SM:-90}"
CXXFLAGS=(-O2 -std=c++17 -I. -Wall -Wextra)
CORE=(compute/gpu/json_text.cpp compute/gpu/nccl_version.cpp common/build_info.cpp)
build_helpers() {
    {
        g++ "${CXXFLAGS[@]}" -o "$BUILD_DIR/runplane-nccl-version" compute/gpu/nccl_version_main.cpp \
            "${CORE[@]}" -ldl &
        g++ "${CXXFLAGS[@]}" -o "$BUILD_DIR/runplane-gpu-info" compute/gpu/gpu_info_main.cpp \
            compute/gpu/gpu_inventory.cpp compute/gpu/json_text.cpp common/build_info.cpp -ldl -pthread &
        g++ "${CXXFLAGS[@]}" -o "$BUILD_DIR/runplane-nccl-resolve" compute/gpu/nccl_resolve_main.cpp \
            compute/gpu/nccl_resolve.cpp compute/gpu/nccl_gate.cpp compute/gpu/subprocess.cpp \
            compute/gpu/helper_path.cpp "${CORE[@]}" -ldl &
        local rc=0 job
        for job in $(jobs -p); do wait "$job" || rc=1; done
        return $rc
    } >"$OUT/build-helpers.log" 2>&1
}
build_probe() {
    [[ -n "$NCCL_INCLUDE" ]] || { echo "no nccl.h found" | tee "$OUT/build-probe.log"; return 1; }
    nvcc -O2 -std=c++17 -I. -I"$NCCL_INCLUDE" -gencode "arch=compute_${SM},code=sm_${SM}" \
        -Xcompiler -Wall,-Wextra -o "$BUILD_DIR/runplane-nccl-probe" \
        compute/gpu/probe/probe_main.cpp compute/gpu/probe/probe_kernels.cu \
        compute/gpu/probe/probe_report.cpp compute/gpu/probe/nccl_api.cpp compute/gpu/nccl_verdict.cpp \
        compute/gpu/rdma_nics.cpp compute/gpu/nccl_unique_id.cpp "${CORE[@]}" -ldl -lpthread \
        >"$OUT/build-probe.log" 2>&1
}
build_probe &
PROBE_BUILD=$!
step build-helpers build_helpers
step build-probe wait "$PROBE_BUILD"
tail -5 "$OUT/build-helpers.log" "$OUT/build-probe.log" || true

PROBE="$BUILD_DIR/runplane-nccl-probe"
RESOLVE="$BUILD_DIR/runplane-nccl-resolve"

# ---------------------------------------------------------------- NVML sampler
gpu_info() {
    "$BUILD_DIR/runplane-gpu-info" >"$OUT/gpu-info.json" 2>"$OUT/gpu-info.err"
    local rc=$?
    cat "$OUT/gpu-info.json"
    return $rc
}
step gpu-info gpu_info

# ---------------------------------------------------------------- resolution + version gate
# Exit 1 from the resolver means the gate failed (expected on this host: 2.28.x < 2.30.7).
resolve() {  # resolve NAME ARGS...
    local name="$1"
    shift
    "$RESOLVE" --version-helper "$BUILD_DIR/runplane-nccl-version" "$@" >"$OUT/resolve-$name.json" \
        2>"$OUT/resolve-$name.err"
    local rc=$?
    echo "\$ runplane-nccl-resolve $*" >"$OUT/resolve-$name.cmd"
    cat "$OUT/resolve-$name.json"
    return $rc
}
step resolve-torch-venv resolve torch-venv --inherit-env --python "$TORCH_PYTHON"
step resolve-python3 resolve python3 --inherit-env --python python3
step resolve-clean-env resolve clean-env --env PATH=/usr/bin:/bin
if [[ -n "$SYSTEM_NCCL" ]]; then
    step resolve-preload-system resolve preload-system --inherit-env --python "$TORCH_PYTHON" \
        --env "LD_PRELOAD=$SYSTEM_NCCL"
fi
if [[ -n "$TORCH_NCCL" ]]; then
    step resolve-sglang-torch resolve sglang-torch --inherit-env --python "$TORCH_PYTHON" \
        --env "SGLANG_NCCL_SO_PATH=$TORCH_NCCL" --env "LD_PRELOAD=$TORCH_NCCL"
fi

# ---------------------------------------------------------------- bandwidth probe
probe() {  # probe NAME ARGS...
    local name="$1"
    shift
    echo "\$ runplane-nccl-probe $*" >"$OUT/probe-$name.cmd"
    timeout "$PROBE_TIMEOUT" "$PROBE" "$@" >"$OUT/probe-$name.json" 2>"$OUT/probe-$name.log"
    local rc=$?
    tail -60 "$OUT/probe-$name.log"
    grep -o '"verdict":"[^"]*"' "$OUT/probe-$name.json" || true
    return $rc
}
ALL=all_reduce,all_gather,reduce_scatter,all_to_all
SWEEP=(--collectives "$ALL" --min-bytes "$MIN" --max-bytes "$MAX" --warmup "$WARMUP" --iters "$ITERS")
step probe-default probe default "${SWEEP[@]}"
if [[ -n "$TORCH_NCCL" ]]; then step probe-torch-nccl probe torch-nccl "${SWEEP[@]}" --nccl-lib "$TORCH_NCCL"; fi
if [[ -n "$SYSTEM_NCCL" ]]; then step probe-system-nccl probe system-nccl "${SWEEP[@]}" --nccl-lib "$SYSTEM_NCCL"; fi

# Multi-node code path on one host: a unique id from a holder process, then ranks in separate
# processes (one GPU each when there are >= 2 GPUs, else one process with world size 1).
multinode() {
    local holder uid_file="$OUT/multinode-unique-id.txt"
    "$PROBE" --print-unique-id --hold-seconds 300 >"$uid_file" 2>"$OUT/multinode-holder.log" &
    holder=$!
    local uid="" tries=0
    while [[ -z "$uid" && $tries -lt 100 ]]; do
        uid="$(head -1 "$uid_file" 2>/dev/null || true)"
        sleep 0.1
        tries=$((tries + 1))
    done
    if [[ ! "$uid" =~ ^[0-9a-f]{256}$ ]]; then
        echo "no unique id: '$uid'"
        kill "$holder" 2>/dev/null || true
        return 1
    fi
    local world=1 rc=0
    ((NGPUS >= 2)) && world=2
    local pids=() r
    for ((r = 0; r < world; r++)); do
        echo "\$ CUDA_VISIBLE_DEVICES=$r runplane-nccl-probe --collectives $ALL --min-bytes $MIN --max-bytes $((256 << 20)) --unique-id <id> --world-size $world --first-rank $r" \
            >"$OUT/probe-multinode-rank$r.cmd"
        CUDA_VISIBLE_DEVICES=$r timeout 600 "$PROBE" --collectives "$ALL" --min-bytes "$MIN" \
            --max-bytes $((256 << 20)) --warmup "$WARMUP" --iters "$ITERS" --unique-id "$uid" \
            --world-size "$world" --first-rank "$r" >"$OUT/probe-multinode-rank$r.json" \
            2>"$OUT/probe-multinode-rank$r.log" &
        pids+=($!)
    done
    for r in "${pids[@]}"; do wait "$r" || rc=1; done
    kill "$holder" 2>/dev/null || true
    wait "$holder" 2>/dev/null || true
    cat "$OUT"/probe-multinode-rank*.log
    return $rc
}
step probe-multinode multinode

# ---------------------------------------------------------------- torch reference + ratio table
torch_ref() {
    local n=$((NGPUS > 0 ? NGPUS : 1))
    echo "\$ torchrun --standalone --nproc_per_node=$n scripts/gpu/torch_allreduce_ref.py --min-bytes $MIN --max-bytes $MAX --warmup $WARMUP --iters $ITERS" \
        >"$OUT/torch-ref.cmd"
    timeout "$PROBE_TIMEOUT" "$TORCH_PYTHON" -m torch.distributed.run --standalone --nproc_per_node="$n" \
        scripts/gpu/torch_allreduce_ref.py --min-bytes "$MIN" --max-bytes "$MAX" --warmup "$WARMUP" \
        --iters "$ITERS" --out "$OUT/torch-ref.json" >"$OUT/torch-ref.log" 2>&1
    local rc=$?
    tail -30 "$OUT/torch-ref.log"
    return $rc
}
ratio_table() {
    "$TORCH_PYTHON" - "$OUT" <<'PY' | tee "$OUT/ratio.md"
import json, os, sys
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception as e:
        print(f"(cannot read {name}: {e})")
        return None
torch_ref = load("torch-ref.json")
if not torch_ref:
    sys.exit(1)
ref = {r["bytes"]: r for r in torch_ref["rows"]}
for name in ("probe-torch-nccl.json", "probe-default.json", "probe-system-nccl.json"):
    probe = load(name)
    if not probe or not probe.get("rows"):
        continue
    print(f"\n### all_reduce: {name} (NCCL {probe['nccl_version']}, {probe['world_size']} ranks) vs torch "
          f"(NCCL {torch_ref['nccl_version']}, {torch_ref['world_size']} ranks)\n")
    print("| bytes | probe p50 us | torch p50 us | probe algbw GB/s | torch algbw GB/s | probe busbw GB/s | torch busbw GB/s | algbw ratio probe/torch |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in probe["rows"]:
        if row["collective"] != "all_reduce" or row["bytes"] not in ref:
            continue
        t = ref[row["bytes"]]
        ratio = row["algbw_gbps"] / t["algbw_gbps"] if t["algbw_gbps"] else float("nan")
        print(f"| {row['bytes']} | {row['time_us_p50']:.1f} | {t['time_us_p50']:.1f} | {row['algbw_gbps']:.1f} | "
              f"{t['algbw_gbps']:.1f} | {row['busbw_gbps']:.1f} | {t['busbw_gbps']:.1f} | {ratio:.3f} |")
PY
}
if [[ "${SKIP_TORCH:-0}" != 1 ]]; then
    step torch-ref torch_ref
    step ratio-table ratio_table
fi

# ---------------------------------------------------------------- one readable report
report() {
    python3 - "$OUT" <<'PY' | tee "$OUT/report.md"
import glob, json, os, sys
out = sys.argv[1]
def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:
        return {"_error": f"{type(e).__name__}: {e}"}
print("## NCCL resolution and gate\n")
for path in sorted(glob.glob(os.path.join(out, "resolve-*.json"))):
    name = os.path.basename(path)[len("resolve-"):-len(".json")]
    cmd = open(path[:-5] + ".cmd").read().strip() if os.path.exists(path[:-5] + ".cmd") else ""
    data = read(path)
    print(f"- `{name}`: `{cmd}`")
    for lib in data.get("libraries", []):
        mark = "**selected**" if lib.get("selected") else ""
        what = lib.get("version") or ("error: " + lib.get("error", ""))
        print(f"  - {lib.get('source')} {lib.get('path')} {what} {mark}")
    gate = data.get("gate", {})
    print(f"  - gate >= {gate.get('min_version')}: {'PASS' if gate.get('pass') else 'FAIL'}: {gate.get('message')}")
print("\n## Probe runs\n")
for path in sorted(glob.glob(os.path.join(out, "probe-*.json"))):
    data = read(path)
    rows = data.get("rows", [])
    wrong = [f"{r['collective']}@{r['bytes']}" for r in rows if not r.get("correct")]
    gpus = ", ".join(g.get("name", "?") for g in data.get("gpus", []))
    print(f"- `{os.path.basename(path)}`: NCCL {data.get('nccl_version')} ({data.get('nccl_library')}), "
          f"mode {data.get('mode')}, world {data.get('world_size')}, local {data.get('local_ranks')} [{gpus}]; "
          f"{len(rows)} rows, {len(wrong)} wrong {wrong[:5]}; skipped {len(data.get('skipped', []))}; "
          f"verdict: {data.get('verdict')!r}; unavailable: {data.get('unavailable')!r}; error: {data.get('error') or data.get('_error')!r}")
    if rows:
        print("\n  | collective | bytes | p50 us | p95 us | algbw GB/s | busbw GB/s | correct |")
        print("  |---|---:|---:|---:|---:|---:|---|")
        for r in rows:
            print(f"  | {r['collective']} | {r['bytes']} | {r['time_us_p50']:.1f} | {r['time_us_p95']:.1f} | "
                  f"{r['algbw_gbps']:.1f} | {r['busbw_gbps']:.1f} | {r['correct']} |")
        print()
PY
}
step report report

echo "=== summary"
cat "$SUMMARY"
ls -la "$OUT"
