#!/usr/bin/env bash
# Runs every libFuzzer target of a RUNPLANE_FUZZ build (docs/fuzzing.md) for SECONDS each:
#   scripts/fuzz.sh [BUILD_DIR=build-fuzz] [SECONDS=600] [TARGET...]
# Each target starts from its committed seeds (tests/fuzz/corpus/<target> and, where there is
# one, tests/fuzz/corpus-grown/<target>; read only) plus the inputs earlier runs found
# (BUILD_DIR/fuzz-corpus/<target>, where new ones are written); recipe and import also start from
# recipes/ and tests/launch/data. A crash,
# leak, sanitizer report, timeout (> 10 s) or out-of-memory (> 2 GiB) fails the run; the input
# is left as BUILD_DIR/fuzz-artifacts/<target>/crash-* (replay: BUILD_DIR/tests/fuzz/fuzz_<target>
# FILE). Prints one "target: N execs, M/s" line per target at the end. FUZZ_TIMEOUT (seconds,
# default 10) is the per-input limit; `make fuzz-smoke` (CI) passes a wider one, so that a slow
# or loaded machine cannot fail it on an input that merely runs long under ASan there.
# FUZZ_SEED and FUZZ_RUNS (optional) fix libFuzzer's seed and cap its executions: with both, a
# run from a fresh BUILD_DIR/fuzz-corpus explores the same inputs on every machine (or the first
# part of them, when SECONDS ends it sooner), so CI's short run replays a sequence that was run
# to the end before the commit instead of finding new inputs at random.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-fuzz}"
SECONDS_EACH="${2:-600}"
PER_INPUT="${FUZZ_TIMEOUT:-10}"
shift $(( $# > 2 ? 2 : $# ))
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(recipe import python_literal log_line spool history_ingest agent_rpc credentials
    prometheus_text)
fi
# The sanitizer options, and LeakSanitizer must report tests/fuzz/lsan_canary.c's leak with them
# before a run's "no leak" means anything (scripts/fuzz-env.sh; output in BUILD_DIR/lsan-canary.log).
# shellcheck source=scripts/fuzz-env.sh
. scripts/fuzz-env.sh
canary="$BUILD/tests/fuzz/lsan_canary"
[ -x "$canary" ] || { echo "fuzz: $canary missing (make fuzz-build)"; exit 2; }
if ! leak_canary_reports "$canary" "$BUILD/lsan-canary.log"; then
  echo "fuzz: LeakSanitizer did not report the canary's leak with ASAN_OPTIONS=$ASAN_OPTIONS" \
    "(see $BUILD/lsan-canary.log): leak checking does not work here, so no run is trusted"
  exit 2
fi
summary=()
status=0
for t in "${TARGETS[@]}"; do
  exe="$BUILD/tests/fuzz/fuzz_$t"
  [ -x "$exe" ] || { echo "fuzz: $exe missing (make fuzz-build)"; exit 2; }
  work="$BUILD/fuzz-corpus/$t"
  art="$BUILD/fuzz-artifacts/$t"
  mkdir -p "$work" "$art"
  log="$BUILD/fuzz-$t.log"
  # The shipped recipes and the importer's test scripts are seeds too (read only).
  extra=()
  case "$t" in
    recipe) extra=(recipes/known-good recipes) ;;
    import) extra=(tests/launch/data) ;;
  esac
  # What earlier long runs found (tests/fuzz/corpus-grown, read only), where the target has one.
  grown=()
  [ -d "tests/fuzz/corpus-grown/$t" ] && grown=("tests/fuzz/corpus-grown/$t")
  echo "fuzz: $t for ${SECONDS_EACH}s (log $log)"
  if "$exe" -max_total_time="$SECONDS_EACH" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
       ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} -timeout="$PER_INPUT" -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$art/" "$work" "tests/fuzz/corpus/$t" "${grown[@]}" "${extra[@]}" >"$log" 2>&1; then
    result="ok"
  else
    result="FAILED"
    status=1
    tail -40 "$log"
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  summary+=("$t: $result, ${execs:-0} execs, ${rate:-0}/s")
done
printf 'fuzz: %s\n' "${summary[@]}"
exit $status
