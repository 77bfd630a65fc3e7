/* A leak LeakSanitizer must report: scripts/fuzz.sh and fuzz-parallel.sh run this first, with the
 * fuzz targets' ASAN_OPTIONS plus LSAN_OPTIONS=use_stacks=0:use_registers=0 (as LLVM's own
 * LeakSanitizer tests do), and stop when the leak goes unreported: then "0 leaks" from a fuzz run
 * would mean nothing (a sandbox that forbids the ptrace LeakSanitizer stops threads with, or
 * options that silence it, such as malloc_context_size=0 or 1; docs/fuzzing.md).
 * The block is allocated in a function of its own and its only pointer cleared, and the stack
 * below is scrubbed, so that no live frame or register keeps it. */
#include <stdlib.h>
#include <string.h>

enum { kLeakBytes = 4242 };
void* volatile lsan_canary_sink;

__attribute__((noinline)) static void leak(void) {
    lsan_canary_sink = malloc(kLeakBytes);
    memset(lsan_canary_sink, 1, kLeakBytes);
    lsan_canary_sink = 0;
}

__attribute__((noinline)) static void scrub(void) {
    volatile char pad[8192];
    memset((char*)pad, 0, sizeof pad);
}

int main(void) {
    leak();
    scrub();
    return 0;
}
