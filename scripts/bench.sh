#!/usr/bin/env bash
# Runs every benchmark under bench/ that the build produced (`make bench`). Results are recorded
# by hand in docs/performance.md; this prints them and keeps a copy under BUILD/bench-results/.
set -euo pipefail
BUILD="${1:-build}"
out="$BUILD/bench-results"
mkdir -p "$out"
ran=0
for bench in bench/plan/plan_bench bench/db/history_bench bench/gui/gui_plot_bench \
             bench/daemon/daemon_footprint_bench bench/nccl/nccl_bench; do
  exe="$BUILD/$bench"
  name="$(basename "$bench")"
  if [ ! -x "$exe" ]; then
    echo "bench: $name not built (its optional dependency is missing), skipped"
    continue
  fi
  echo "== $name"
  RUNPLANE_SOURCE_DIR="$PWD" RUNPLANE_BINARY_DIR="$PWD/$BUILD" QT_QPA_PLATFORM=offscreen \
    "$exe" --benchmark_out="$out/$name.json" --benchmark_out_format=json | tee "$out/$name.txt"
  ran=$((ran + 1))
done
# Peers (issue 21): the history beside raw SQLite, MLflow and TensorBoard in one interleaved run.
if [ -x "$BUILD/bench/peers/history_peer" ] && [ -x "$BUILD/bench/peers/sqlite_peer" ]; then
  echo "== peers"
  bench/peers/setup.sh || echo "bench: the peers' venv could not be created; MLflow and TensorBoard skipped"
  python3 bench/peers/run.py --build "$BUILD" --rounds "${RUNPLANE_PEERS_ROUNDS:-3}" \
    --steps "${RUNPLANE_PEERS_STEPS:-31250}" --json "$out/peers.json" | tee "$out/peers.txt"
  ran=$((ran + 1))
else
  echo "bench: bench/peers not built, skipped"
fi
if [ -x "$BUILD/backend/daemon/runplaned" ] && [ -x "$BUILD/backend/cli/runplanectl" ]; then
  echo "== runplaned beside node_exporter (60 s)"
  python3 bench/peers/footprint.py --build "$BUILD" | tee "$out/footprint-peers.txt"
  ran=$((ran + 1))
fi
echo "bench: $ran benchmarks ran; JSON under $out/"
