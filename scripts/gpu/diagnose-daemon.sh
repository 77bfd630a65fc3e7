#!/usr/bin/env bash
# The diagnosis through the node bundle's daemon on a GPU host (issue #44), in one call:
#   1. unpack the node bundle (make package) and start its runplaned (NVML on, --stall-seconds);
#      py-spy (PyPI binary) is put beside runplaned in the bundle's bin/ ("bundle" source);
#   2. submit a real two-rank PyTorch job through the daemon (scripts/gpu/hang_job.py): rank 0
#      uses a real NCCL communicator on GPU 0 with NCCL_RAS_ENABLE=1, then waits in an all_reduce
#      that rank 1 skips;
#   3. `runplanectl diagnose RUN ADDR` — the DAEMON reads NCCL's RAS report (loopback 28028),
#      py-spy's stacks, NVML (clocks, throttle reasons) — the diagnosis is judged and stored in a
#      history; read back with --stored; nvidia-smi's view of the clocks beside it;
#   4. copy the history, the diagnosis JSON/text and logs to $OUT.
# Run from a directory holding the bundle tarball, py-spy, hang_job.py and this script:
#   OUT=/tmp/out bash diagnose-daemon.sh DIR
set -uo pipefail
step() { echo "== [$(date +%H:%M:%S)] $*"; }
DIR=$(cd "${1:?usage: diagnose-daemon.sh DIR}" && pwd)
OUT=${OUT:-$PWD/out-diagnose}
mkdir -p "$OUT"
WORK=/tmp/runplane-diagnose-daemon
rm -rf "$WORK"; mkdir -p "$WORK/ready" "$WORK/res"
RES=$WORK/res  # small files, packed into $OUT/logs.tar.gz at the end (8 files come back)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
pids=()
cleanup() { touch "$WORK/ready/stop"; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

step "environment"
{ date -Is; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks_event_reasons.active,temperature.gpu --format=csv; "$PYTHON" -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } 2>&1 | tee "$RES/env.txt"

step "1. bundle + daemon"
tar -C "$WORK" -xzf "$DIR"/runplane-node-*.tar.gz
BUNDLE=$(echo "$WORK"/runplane-node-*)
cp "$DIR/py-spy" "$BUNDLE/bin/py-spy"; chmod +x "$BUNDLE/bin/py-spy"
CTL=$BUNDLE/bin/runplanectl
"$BUNDLE/bin/runplaned" --listen 127.0.0.1:0 --state-dir "$WORK/state" --sample-hz 2 --node-id gpu-host \
    >"$WORK/runplaned.out" 2>"$WORK/runplaned.err" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$WORK/runplaned.out" && break; sleep 0.1; done
ADDR=$(sed -n 's/^runplaned listening on //p' "$WORK/runplaned.out" | head -1)
echo "daemon at $ADDR"
export RUNPLANE_HISTORY=$WORK/history.sqlite
"$CTL" watch "$ADDR" --seconds 0 --no-diagnose >"$WORK/watch.log" 2>&1 &
pids+=($!)

step "2. the hanging job, submitted through the daemon"
cp "$DIR/hang_job.py" "$WORK/"
cat >"$WORK/launch.sh" <<EOS
#!/usr/bin/env bash
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29561 NCCL_RAS_ENABLE=1 READY_DIR=$WORK/ready PYTHONUNBUFFERED=1
RANK=1 "$PYTHON" $WORK/hang_job.py &
RANK=0 "$PYTHON" $WORK/hang_job.py
wait
EOS
chmod +x "$WORK/launch.sh"
RUN_ID=gpu-hang-$(date +%Y%m%d-%H%M%S)
T0=$(date +%s.%N)
"$CTL" submit "$ADDR" --name "$RUN_ID" --run-id "$RUN_ID" -- bash "$WORK/launch.sh" 2>&1 | tee "$RES/submit.txt"
for _ in $(seq 1200); do [ -f "$WORK/ready/rank0" ] && [ -f "$WORK/ready/rank1" ] && break; sleep 0.1; done
T1=$(date +%s.%N)
awk -v a="$T0" -v b="$T1" 'BEGIN {printf "both ranks at the hang after %.1f s\n", b - a}'
sleep 2
ps -eo pid,ppid,args | grep -E "hang_job|launch.sh" | grep -v grep | tee "$RES/processes.txt"
sleep 3  # the burn thread's matmuls run
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks_event_reasons.active,temperature.gpu,power.draw,utilization.gpu --format=csv | tee "$RES/nvidia-smi-clocks.txt"
nvidia-smi -q -d PERFORMANCE,CLOCK >"$RES/nvidia-smi-q.txt" 2>&1

step "3. diagnose through the daemon (stored), then read it back"
D0=$(date +%s%N)
"$CTL" diagnose "$RUN_ID" "$ADDR" --history "$WORK/history.sqlite" 2>&1 | tee "$RES/diagnose.txt"
D1=$(date +%s%N)
echo "runplanectl diagnose (ask the daemon, judge, store): $(( (D1 - D0) / 1000000 )) ms" | tee -a "$RES/diagnose.txt"
"$CTL" diagnose "$RUN_ID" --stored --json --history "$WORK/history.sqlite" >"$OUT/diagnosis.json" 2>&1
"$CTL" diagnose "$RUN_ID" --list --history "$WORK/history.sqlite" 2>&1 | tee "$RES/list.txt"
"$PYTHON" - "$OUT/diagnosis.json" <<'EOP' | tee "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
print("headline:", d["verdict"]["headline"])
for f in d["verdict"]["findings"]: print("finding:", f["kind"], "|", f["text"])
for n in d["nodes"]:
    r = n["ras"]; print("ras available:", r.get("available"), "endpoint:", r.get("endpoint"), "missing:", r.get("missing"), "took_ms:", r.get("took_ms"))
    rep = r.get("report") or {}
    print("nccl_version:", rep.get("nccl_version"), "communicators:", rep.get("communicators_count"))
    for c in rep.get("communicators", []):
        print(" comm", c.get("hash"), "size", c.get("size"), "ranks", [(x.get("rank"), x.get("pid"), x.get("collective_counts")) for x in c.get("ranks", [])])
    s = n["stacks"]; print("stacks:", s.get("tool"), s.get("tool_source"), "missing:", s.get("missing"))
    for p in s.get("processes", []):
        th = p.get("threads") or []
        top = th[0]["frames"][0] if th and th[0].get("frames") else None
        print(" pid", p["pid"], "err", p.get("error"), "top", top)
    for g in n["gpus"]["devices"]:
        print("gpu", {k: g.get(k) for k in ("index","name","sm_clock_mhz","sm_clock_max_mhz","clock_event_reasons","clock_event_reason_names","temperature_c","utilization_percent","run_processes")})
    print("gpus missing:", n["gpus"].get("missing"))
    print("collection_ms:", n.get("collection_ms"))
EOP
nvidia-smi --query-gpu=clocks.sm,clocks_event_reasons.active,temperature.gpu,power.draw --format=csv,noheader | tee -a "$RES/nvidia-smi-clocks.txt"

step "4. collect"
touch "$WORK/ready/stop"
sleep 1
cp "$WORK/history.sqlite" "$OUT/" 2>/dev/null
cp "$WORK/runplaned.out" "$WORK/runplaned.err" "$WORK/watch.log" "$RES/" 2>/dev/null
cp -r "$WORK/state/runs.d" "$RES/" 2>/dev/null
tar -C "$WORK" -czf "$OUT/logs.tar.gz" res 2>/dev/null || true
echo "done"
