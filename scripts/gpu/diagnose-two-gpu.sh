#!/usr/bin/env bash
# A real multi-rank NCCL hang diagnosed through the node bundle's daemon (issue #44), in one call:
#   1. unpack the node bundle (make package), put py-spy beside runplaned (source "bundle"),
#      start runplaned (NVML on, --stall-seconds STALL_SECONDS) and `runplanectl watch` with its
#      diagnosis trigger on, into a history;
#   2. submit RANKS ranks of scripts/gpu/lag_job.py through the daemon: one NCCL communicator of
#      RANKS ranks, STEPS all_reduce each, then the last rank stops issuing collectives
#      (wait_for_rollout_data) while the others enter the next all_reduce and block;
#      one GPU per rank where the host has enough; else the ranks share the GPUs, each with its
#      own NCCL_HOSTID (NCCL's socket transport over loopback between them), which still makes a
#      real NCCL communicator of RANKS ranks;
#   3. the run's stall fires the watch's diagnosis (trigger "stall"); then `runplanectl diagnose
#      RUN ADDR` on demand; both are stored and read back with --stored --json;
#   4. NCCL's RAS report is also read raw (JSON and the text VERBOSE STATUS) on loopback 28028;
#   5. the figures (trigger -> stored, RAS counts per rank, the verdict) into timings.json.
# Usage (DIR holds runplane-node-*.tar.gz, py-spy or py-spy.gz, lag_job.py):
#   RANKS=2 OUT=/tmp/out bash diagnose-two-gpu.sh DIR
set -uo pipefail
step() { echo "== [$(date +%H:%M:%S)] $*"; }
DIR=$(cd "${1:?usage: diagnose-two-gpu.sh DIR}" && pwd)
OUT=${OUT:-$PWD/out-diagnose-two-gpu}
RANKS=${RANKS:-2}
STEPS=${STEPS:-8}
STALL_SECONDS=${STALL_SECONDS:-12}
LAG_RANK=$((RANKS - 1))
mkdir -p "$OUT"
WORK=/tmp/runplane-diagnose-two-gpu
rm -rf "$WORK"; mkdir -p "$WORK/ready" "$WORK/res"
RES=$WORK/res  # small files, packed into $OUT/logs.tar.gz at the end (8 files come back)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
pids=()
cleanup() {
    touch "$WORK/ready/stop"
    sleep 2
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap cleanup EXIT
now_ns() { date +%s%N; }

step "environment"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
{ date -Is; nvidia-smi -L; nvidia-smi topo -m 2>/dev/null | head -8
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'; } 2>&1 | tee "$RES/env.txt"
if [ "$NGPU" -ge "$RANKS" ]; then MODE=gpu-per-rank; else MODE=shared-gpu; fi
echo "ranks $RANKS, GPUs $NGPU, mode $MODE, lagging rank $LAG_RANK, stall after ${STALL_SECONDS}s" | tee -a "$RES/env.txt"
[ "$NGPU" -ge 1 ] || { echo "no GPU"; exit 1; }

step "1. bundle + daemon + watch"
tar -C "$WORK" -xzf "$DIR"/runplane-node-*.tar.gz
BUNDLE=$(echo "$WORK"/runplane-node-*)
if [ -f "$DIR/py-spy.gz" ]; then gzip -dc "$DIR/py-spy.gz" >"$BUNDLE/bin/py-spy"; else cp "$DIR/py-spy" "$BUNDLE/bin/py-spy"; fi
chmod +x "$BUNDLE/bin/py-spy"
CTL=$BUNDLE/bin/runplanectl
"$BUNDLE/bin/runplaned" --listen 127.0.0.1:0 --state-dir "$WORK/state" --sample-hz 2 --node-id gpu-host \
    --stall-seconds "$STALL_SECONDS" >"$WORK/runplaned.out" 2>"$WORK/runplaned.err" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$WORK/runplaned.out" && break; sleep 0.1; done
ADDR=$(sed -n 's/^runplaned listening on //p' "$WORK/runplaned.out" | head -1)
echo "daemon at $ADDR"
export RUNPLANE_HISTORY=$WORK/history.sqlite
# The watch's lines carry the time they were read (the stall diagnosis's "stored" moment).
"$CTL" watch "$ADDR" --seconds 0 > >(while IFS= read -r l; do printf '%s %s\n' "$(date +%s%N)" "$l"; done >"$WORK/watch.log") 2>&1 &
pids+=($!)

step "2. the job, submitted through the daemon ($RANKS ranks)"
cp "$DIR/lag_job.py" "$WORK/"
{
    echo '#!/usr/bin/env bash'
    echo "export MASTER_ADDR=127.0.0.1 MASTER_PORT=29571 WORLD_SIZE=$RANKS STEPS=$STEPS LAG_RANK=$LAG_RANK"
    echo "export NCCL_RAS_ENABLE=1 READY_DIR=$WORK/ready PYTHONUNBUFFERED=1"
    echo "export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1"
    echo "export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,RAS NCCL_DEBUG_FILE=$WORK/nccl.%h.%p.log"
    if [ "$MODE" = shared-gpu ]; then
        echo "export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_MNNVL_ENABLE=0"
    fi
    for r in $(seq $((RANKS - 1)) -1 0); do
        env="RANK=$r GPU_INDEX=$((r % NGPU))"
        [ "$MODE" = shared-gpu ] && env="$env NCCL_HOSTID=runplane-rank-$r"
        amp=" &"; [ "$r" -eq 0 ] && amp=""
        echo "$env \"$PYTHON\" $WORK/lag_job.py$amp"
    done
    echo "wait"
} >"$WORK/launch.sh"
chmod +x "$WORK/launch.sh"
cat "$WORK/launch.sh" | tee "$RES/launch.sh"
RUN_ID=gpu-lag-$(date +%Y%m%d-%H%M%S)
T_SUBMIT=$(now_ns)
"$CTL" submit "$ADDR" --name "$RUN_ID" --run-id "$RUN_ID" -- bash "$WORK/launch.sh" 2>&1 | tee "$RES/submit.txt"
all_ready() { for r in $(seq 0 $((RANKS - 1))); do [ -f "$WORK/ready/rank$r" ] || return 1; done; }
for _ in $(seq 1800); do all_ready && break; sleep 0.1; done
T_HANG=$(now_ns)
if all_ready; then
    echo "every rank at the hang after $(( (T_HANG - T_SUBMIT) / 1000000 )) ms"
else
    echo "NOT every rank reached the hang in 180 s: ready files: $(ls "$WORK/ready")"
    "$CTL" logs "$ADDR" "$RUN_ID" 2>&1 | tail -40
    tail -n 30 "$WORK"/nccl.*.log 2>/dev/null
fi
sleep 1
ps -eo pid,ppid,args | grep -E "lag_job|launch.sh" | grep -v grep | tee "$RES/processes.txt"

step "3a. the stall trigger: watch diagnoses the run when it goes quiet"
T_STORED_STALL=""
for _ in $(seq $(( (STALL_SECONDS + 45) * 10 ))); do
    line=$(grep -m1 "diagnosis of run $RUN_ID (stall)" "$WORK/watch.log" 2>/dev/null)
    [ -n "$line" ] && { T_STORED_STALL=${line%% *}; echo "${line#* }"; break; }
    sleep 0.1
done
[ -n "$T_STORED_STALL" ] || { echo "no stall diagnosis in $((STALL_SECONDS + 45)) s; watch log:"; tail -20 "$WORK/watch.log"; }

step "3b. on demand: runplanectl diagnose RUN ADDR (ask the daemon, judge, store)"
D0=$(now_ns)
"$CTL" diagnose "$RUN_ID" "$ADDR" --history "$WORK/history.sqlite" 2>&1 | tee "$RES/diagnose.txt"
D1=$(now_ns)
echo "runplanectl diagnose: $(( (D1 - D0) / 1000000 )) ms" | tee -a "$RES/diagnose.txt"
"$CTL" diagnose "$RUN_ID" --list --history "$WORK/history.sqlite" 2>&1 | tee "$RES/list.txt"
"$CTL" diagnose "$RUN_ID" --stored --json --history "$WORK/history.sqlite" >"$OUT/diagnosis.json" 2>&1
STALL_ID=$(awk '$3 == "stall" {print $1; exit}' "$RES/list.txt")
[ -n "$STALL_ID" ] && "$CTL" diagnose "$RUN_ID" --stored --json --id "$STALL_ID" --history "$WORK/history.sqlite" >"$OUT/diagnosis_stall.json" 2>&1

step "4. NCCL's RAS report read raw on loopback (JSON, then the text VERBOSE STATUS)"
"$PYTHON" - "$OUT/ras_raw.json" "$OUT/ras_verbose_status.txt" <<'EOP'
import socket, sys, time
def ras(as_json):
    t0 = time.time()
    s = socket.create_connection(("127.0.0.1", 28028), timeout=15)
    f = s.makefile("rb")
    s.sendall(b"CLIENT PROTOCOL 2\n"); hello = f.readline().decode().strip()
    if as_json:
        s.sendall(b"SET FORMAT json\n"); ok = f.readline().decode().strip()
        assert ok == "OK", ok
    s.sendall(b"VERBOSE STATUS\n")
    data = f.read().decode()
    s.close()
    return hello, data, time.time() - t0
for path, as_json in ((sys.argv[1], True), (sys.argv[2], False)):
    try:
        hello, data, took = ras(as_json)
        open(path, "w").write(data)
        print(f"{path}: {hello}, {len(data)} bytes in {took*1000:.0f} ms")
    except Exception as e:
        print(f"{path}: RAS read failed: {e!r}")
EOP

step "5. figures"
"$PYTHON" - "$WORK/history.sqlite" "$RUN_ID" "$OUT" "$T_SUBMIT" "$T_HANG" "${T_STORED_STALL:-0}" "$D0" "$D1" "$MODE" "$RANKS" "$NGPU" <<'EOP' | tee "$RES/summary.txt"
import json, sqlite3, sys
hist, run, out, t_submit, t_hang, t_stall_stored, d0, d1, mode, ranks, ngpu = sys.argv[1:]
t_submit, t_hang, t_stall_stored, d0, d1 = map(int, (t_submit, t_hang, t_stall_stored, d0, d1))
db = sqlite3.connect(hist)
stall = db.execute("SELECT t_ns, message FROM events WHERE run_id=? AND kind='stall' ORDER BY t_ns LIMIT 1", (run,)).fetchone()
diags = db.execute("SELECT id, t_ns, trigger, headline FROM run_diagnoses WHERE run_id=? ORDER BY id", (run,)).fetchall()
fig = {"run": run, "mode": mode, "ranks": int(ranks), "gpus": int(ngpu),
       "submit_to_hang_ms": (t_hang - t_submit) // 1000000,
       "on_demand_diagnose_ms": (d1 - d0) // 1000000,
       "stored": [{"id": i, "t_ns": t, "trigger": tr, "headline": h} for i, t, tr, h in diags]}
if stall:
    fig["stall_event"] = {"t_ns": stall[0], "message": stall[1], "after_hang_ms": (stall[0] - t_hang) // 1000000}
    if t_stall_stored:
        fig["stall_event_to_stored_ms"] = (t_stall_stored - stall[0]) // 1000000
for name in ("diagnosis.json", "diagnosis_stall.json"):
    try:
        d = json.load(open(f"{out}/{name}"))
    except Exception as e:
        print(name, "unreadable:", e); continue
    v = d["verdict"]
    print(f"{name}: trigger {d.get('trigger')}, headline: {v['headline']}")
    for f in v["findings"]:
        print(f"  finding [{f['kind']}] {f['text']}")
    entry = {"trigger": d.get("trigger"), "headline": v["headline"], "findings": v["findings"], "nodes": []}
    for n in d["nodes"]:
        r = n["ras"]; rep = r.get("report") or {}
        node = {"ras_available": r.get("available"), "ras_took_ms": r.get("took_ms"), "ras_missing": r.get("missing"),
                "nccl_version": rep.get("nccl_version"), "collection_ms": n.get("collection_ms"),
                "stacks_source": n["stacks"].get("tool_source"), "communicators": []}
        for c in rep.get("communicators", []):
            node["communicators"].append({"hash": c.get("hash"), "size": c.get("size"),
                "ranks": [{"rank": x.get("rank"), "pid": x.get("pid"), "host": x.get("host"), "cuda_dev": x.get("cuda_dev"),
                           "collective_counts": x.get("collective_counts")} for x in c.get("ranks", [])],
                "missing_ranks": c.get("missing_ranks")})
            for x in c.get("ranks", []):
                print(f"  RAS comm {c.get('hash')} size {c.get('size')}: rank {x.get('rank')} pid {x.get('pid')} cuda {x.get('cuda_dev')} counts {x.get('collective_counts')}")
        for p in n["stacks"].get("processes", []):
            th = p.get("threads") or []
            top = th[0]["frames"][0] if th and th[0].get("frames") else None
            print(f"  stack pid {p['pid']} err {p.get('error')} top {top}")
        entry["nodes"].append(node)
    fig[name.replace(".json", "")] = entry
print(json.dumps({k: fig[k] for k in fig if k not in ("diagnosis", "diagnosis_stall")}, indent=1))
json.dump(fig, open(f"{out}/timings.json", "w"), indent=1)
EOP

step "6. release the job and collect"
touch "$WORK/ready/stop"
for _ in $(seq 150); do pgrep -f "$WORK/lag_job.py" >/dev/null || break; sleep 0.2; done
pgrep -f "$WORK/lag_job.py" >/dev/null && echo "job still running after the release" || echo "job finished after the release"
"$CTL" logs "$ADDR" "$RUN_ID" >"$RES/run-output.txt" 2>&1
tail -12 "$RES/run-output.txt"
cp "$WORK/history.sqlite" "$WORK/runplaned.out" "$WORK/runplaned.err" "$WORK/watch.log" "$RES/" 2>/dev/null
cp "$WORK"/nccl.*.log "$RES/" 2>/dev/null
tar -C "$WORK" -czf "$OUT/logs.tar.gz" res 2>/dev/null || true
echo "done"
