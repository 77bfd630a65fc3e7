#!/usr/bin/env bash
# Refreshes the docs' demo images from a real demo history: runs `make demo`'s script headless
# (two smoke runs through a loopback runplaned into build/demo/history.sqlite) and copies the
# rendered report plots into docs/screenshots/demo-*.png.
# Usage: scripts/demo-screenshots.sh [BUILD]   (BUILD defaults to build; run `make build` first)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
env -u DISPLAY ./scripts/demo.sh "$BUILD"
REPORT="$BUILD/demo/report"
[[ -f "$REPORT/compare/compare_eval_arith.png" ]] || {
    echo "demo-screenshots: no comparison was rendered (was the GUI built?)" >&2
    exit 1
}
run="$(ls -d "$REPORT"/smoke-local-2* | head -1)"
cp "$REPORT/compare/compare_eval_arith.png" docs/screenshots/demo-compare-eval.png
cp "$run/host_memory.png" docs/screenshots/demo-host-memory.png
cp "$run/eval.png" docs/screenshots/demo-eval.png
echo "demo-screenshots: docs/screenshots/demo-{compare-eval,host-memory,eval}.png from $(basename "$run")"
