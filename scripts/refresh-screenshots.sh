#!/usr/bin/env bash
# Refreshes the GUI pictures in docs/screenshots/. Under ctest the GUI tests save their
# screenshots into BUILD/screenshots (RUNPLANE_SCREENSHOT_DIR), so a test run never edits the
# checkout; this script runs the same test binaries with that directory pointed at
# docs/screenshots. The demo's report plots come from scripts/demo-screenshots.sh.
# Usage: scripts/refresh-screenshots.sh [BUILD]   (BUILD defaults to build; run `make build` first)
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$PWD"
BUILD="$(cd "${1:-build}" && pwd)"
status=0
for t in gui_cluster_test gui_cluster_tls_test gui_design_test gui_runs_test gui_runs_live_test \
    gui_diagnosis_test gui_alerts_test gui_drop_import_test gui_afternoon_test; do
    bin="$BUILD/tests/gui/$t"
    [[ -x "$bin" ]] || { echo "refresh-screenshots: $bin is not built" >&2; exit 1; }
    (cd "$BUILD/tests/gui" &&
        RUNPLANE_SOURCE_DIR="$SRC" RUNPLANE_BINARY_DIR="$BUILD" QT_QPA_PLATFORM=offscreen \
            XDG_RUNTIME_DIR=/tmp RUNPLANE_SCREENSHOT_DIR="$SRC/docs/screenshots" \
            "$bin" --gtest_brief=1) || status=1
done
git status --short docs/screenshots
exit "$status"
