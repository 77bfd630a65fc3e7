# Sourced by scripts/fuzz.sh and scripts/fuzz-parallel.sh (fuzz-bundle.sh ships it beside the
# latter): the sanitizer options of every fuzz run, and the LeakSanitizer canary check.
#
# ASan's speed options (docs/fuzzing.md, "Sanitizer options"): 2 frames of allocation stack
# instead of 30 (replay an artifact with FUZZ_ASAN_SPEED= for whole stacks; 0 or 1 frame would
# silence LeakSanitizer, whose canary then goes unreported), no 4 KB fill of new blocks, a 16 MB
# quarantine instead of 256 MB. Leak checking stays on (detect_leaks=1 is ASan's default on Linux).
ASAN_SPEED="${FUZZ_ASAN_SPEED-malloc_context_size=2:max_malloc_fill_size=0:quarantine_size_mb=16}"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0${ASAN_SPEED:+:$ASAN_SPEED}"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# leak_canary_reports CANARY LOG: runs tests/fuzz/lsan_canary.c's program, which leaks 4,242
# bytes, with the runs' options plus use_stacks=0:use_registers=0 (as LLVM's own LeakSanitizer
# tests do: a stale copy of its pointer left on the stack by the host's libc must not hide the
# leak), its whole output in LOG. Succeeds when LeakSanitizer reported the leak; where it does not
# (a sandbox that forbids the ptrace it stops threads with, options that silence it), "0 leaks"
# from a fuzz run means nothing.
leak_canary_reports() {
  { echo "ASAN_OPTIONS=$ASAN_OPTIONS LSAN_OPTIONS=${LSAN_OPTIONS:-}"
    LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}use_stacks=0:use_registers=0:verbosity=1:log_threads=1" \
      "$1"
    echo "lsan-canary exit status: $?"
  } >"$2" 2>&1
  grep -q 'detected memory leaks' "$2"
}
