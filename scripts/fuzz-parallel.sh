#!/usr/bin/env bash
# Many libFuzzer workers per target at once, for a machine with more cores (docs/fuzzing.md):
#   scripts/fuzz-parallel.sh BIN_DIR SEED_ROOT WORK_DIR SECONDS TARGET:WORKERS...
# BIN_DIR holds fuzz_<target>; SEED_ROOT/<target> its seeds (read only). The WORKERS processes of
# one target share WORK_DIR/corpus/<target> (libFuzzer reloads it, so each sees what the others
# found) and run SECONDS each with the limits of scripts/fuzz.sh (10 s per input, 2 GiB RSS, leak
# checking on). Crashes, leaks and timeouts land in WORK_DIR/artifacts/<target>/, logs in
# WORK_DIR/logs/<target>.<i>.log. Prints per target: executions summed over its workers (from
# libFuzzer's final stats), workers that failed, artifacts. Exit 1 when any worker failed or the
# canary showed that LeakSanitizer does not work here.
set -uo pipefail
BIN="$1" SEEDS="$2" WORK="$3" SECS="$4"
shift 4
mkdir -p "$WORK/logs"
# The options and the canary check: fuzz-env.sh beside this script. fuzz-bundle.sh puts the
# canary in BIN; without it the run says "leaks checked: unknown".
# shellcheck source=scripts/fuzz-env.sh
. "$(dirname "$0")/fuzz-env.sh"
leaks_checked=unknown
if [ -x "$BIN/lsan-canary" ]; then
  canary_log="$WORK/logs/lsan-canary.log"
  if leak_canary_reports "$BIN/lsan-canary" "$canary_log"; then
    echo "fuzz-parallel: LeakSanitizer works here (the canary's 4242-byte leak was reported)"
    leaks_checked=yes
  else
    echo "fuzz-parallel: LeakSanitizer does NOT work here (the canary's leak went unreported):"
    leaks_checked=no
    tail -5 "$canary_log" | sed 's/^/  /'
  fi
fi
pids=()
for spec in "$@"; do
  t="${spec%%:*}" n="${spec##*:}"
  mkdir -p "$WORK/corpus/$t" "$WORK/artifacts/$t"
  for i in $(seq 1 "$n"); do
    "$BIN/fuzz_$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -seed="$((i * 7919 + ${#t}))" -artifact_prefix="$WORK/artifacts/$t/" \
      "$WORK/corpus/$t" "$SEEDS/$t" >"$WORK/logs/$t.$i.log" 2>&1 &
    pids+=("$!")
  done
done
failed=0
for p in "${pids[@]}"; do
  wait "$p" || failed=$((failed + 1))
done
for spec in "$@"; do
  t="${spec%%:*}"
  execs=$(cat "$WORK"/logs/"$t".*.log | grep -o 'stat::number_of_executed_units: *[0-9]*' |
    grep -o '[0-9]*$' | awk '{s += $1} END {print s + 0}')
  bad=$(grep -L 'stat::number_of_executed_units' "$WORK"/logs/"$t".*.log | wc -l)
  # Not "LeakSanitizer" alone: libFuzzer's notice that it checks leaks only at exit names it too.
  # "encountered a fatal error": LeakSanitizer itself failed (e.g. could not stop the threads).
  errs=$(grep -l -E 'ERROR: |runtime error|Timeout|out-of-memory|encountered a fatal error' \
    "$WORK"/logs/"$t".*.log | wc -l)
  arts=$(find "$WORK/artifacts/$t" -type f | wc -l)
  echo "fuzz-parallel: $t: $execs execs in ${SECS}s, workers without final stats: $bad," \
    "logs with a report: $errs, artifacts: $arts, corpus: $(find "$WORK/corpus/$t" -type f | wc -l)"
done
echo "fuzz-parallel: failed workers: $failed; leaks checked: $leaks_checked"
# The workers still ran where LeakSanitizer does not (crashes and UB are still found), but such a
# run cannot say "0 leaks": it fails too.
[ "$failed" -eq 0 ] && [ "$leaks_checked" != no ]
