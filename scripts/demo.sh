#!/usr/bin/env bash
# The local demo (`make demo`): a daemon on loopback, two runs of the embedded smoke workload with
# different LoRA ranks submitted from their recipes, live ingest into the SQLite history, then the
# GUI (when a display exists) or a headless report with PNG plots. Usage: scripts/demo.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
DEMO="$BUILD/demo"
CTL="$BUILD/backend/cli/runplanectl"
DAEMON="$BUILD/backend/daemon/runplaned"
SMOKE="$PWD/$BUILD/compute/smoke/runplane-smoke"
GUI="$BUILD/gui/app/runplane"
RECIPES=(recipes/smoke-local.yaml recipes/smoke-local-r4.yaml)
TIMEOUT_S="${DEMO_TIMEOUT_S:-900}"

for bin in "$CTL" "$DAEMON" "$SMOKE"; do
    [[ -x "$bin" ]] || { echo "demo: $bin was not built (see the configure summary)" >&2; exit 2; }
done
rm -rf "$DEMO"
mkdir -p "$DEMO"
export RUNPLANE_HISTORY="$PWD/$DEMO/history.sqlite"
# Qt wants a private (0700) runtime directory; an inherited XDG_RUNTIME_DIR=/tmp makes it warn.
export XDG_RUNTIME_DIR="$PWD/$DEMO/runtime"
mkdir -m 700 -p "$XDG_RUNTIME_DIR"

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

echo "== 1. validate and plan the recipes"
for recipe in "${RECIPES[@]}"; do
    "$CTL" validate "$recipe"
done
"$CTL" plan "${RECIPES[0]}" | sed -n '1,6p'

echo "== 2. start runplaned on loopback"
"$DAEMON" --listen 127.0.0.1:0 --state-dir "$PWD/$DEMO/state" --sample-hz 2 >"$DEMO/runplaned.out" \
    2>"$DEMO/runplaned.err" &
pids+=($!)
ADDR=""
for _ in $(seq 100); do
    ADDR="$(sed -n 's/^runplaned listening on //p' "$DEMO/runplaned.out" | head -1)"
    [[ -n "$ADDR" ]] && break
    sleep 0.1
done
[[ -n "$ADDR" ]] || { echo "demo: runplaned did not start:" >&2; cat "$DEMO/runplaned.err" >&2; exit 1; }
echo "runplaned at $ADDR"
"$CTL" nodes "$ADDR"

echo "== 3. ingest telemetry into $RUNPLANE_HISTORY"
"$CTL" watch "$ADDR" --seconds 0 >"$DEMO/watch.log" 2>&1 &
pids+=($!)

echo "== 4. submit the smoke runs"
stamp="$(date +%Y%m%d-%H%M%S)"
run_ids=()
for recipe in "${RECIPES[@]}"; do
    name="$(basename "$recipe" .yaml)"
    mapfile -d '' argv < <("$CTL" argv -0 "$recipe")
    argv[0]="$SMOKE"  # the recipe names the program; the demo runs the one just built
    run_id="$name-$stamp"
    "$CTL" submit "$ADDR" --recipe "$recipe" --name "$name" --run-id "$run_id" -- "${argv[@]}"
    run_ids+=("$run_id")
done

if [[ -n "${DISPLAY:-}" && -x "$GUI" ]]; then
    echo "== 5. opening the GUI (close it to end the demo)"
    "$GUI" --history "$RUNPLANE_HISTORY" --connect "$ADDR"
    exit 0
fi

echo "== 5. no display: following the runs headless (timeout ${TIMEOUT_S}s)"
start=$SECONDS
finished() {  # run id -> 0 when its log shows the final phase marker or it exited
    "$CTL" logs "$ADDR" "$1" 2>/dev/null | grep -q '^\[runplane-phase\] done' && return 0
    "$CTL" logs "$ADDR" "$1" --stderr 2>/dev/null | grep -qi 'error' && return 0
    return 1
}
while :; do
    all_done=1
    for run_id in "${run_ids[@]}"; do
        last_eval="$("$CTL" logs "$ADDR" "$run_id" 2>/dev/null | grep -E '^eval [0-9]+:' | tail -1 || true)"
        echo "[$((SECONDS - start))s] $run_id: ${last_eval:-starting}"
        finished "$run_id" || all_done=0
    done
    [[ $all_done -eq 1 ]] && break
    (( SECONDS - start < TIMEOUT_S )) || { echo "demo: runs did not finish in ${TIMEOUT_S}s" >&2; exit 1; }
    sleep 10
done
sleep 3  # let the last telemetry batch reach the history
"$CTL" runs
if [[ -x "$GUI" ]]; then
    for run_id in "${run_ids[@]}"; do
        QT_QPA_PLATFORM=offscreen "$GUI" --history "$RUNPLANE_HISTORY" --report "$DEMO/report/$run_id" --run "$run_id"
    done
    if (( ${#run_ids[@]} >= 2 )); then
        # The Compare view headless: eval score curves, memory peaks per run, recipe diff.
        ids="$(IFS=,; echo "${run_ids[*]}")"
        QT_QPA_PLATFORM=offscreen "$GUI" --history "$RUNPLANE_HISTORY" --report "$DEMO/report/compare" --runs "$ids"
    fi
    echo "report: $DEMO/report/ (comparison: $DEMO/report/compare/report.html)"
    ls -R "$DEMO/report"
else
    echo "demo: the GUI was not built, so no report was rendered (see the configure summary)"
fi
echo "history kept in $RUNPLANE_HISTORY"
