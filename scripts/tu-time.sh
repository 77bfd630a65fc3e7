#!/bin/bash
# Per-translation-unit CPU time of a build (issue 50; docs/results/2026-12-06-make-demo-cold-2.md).
# A compiler/linker launcher that appends "user_s sys_s wall_s output" for every invocation to
# $TU_LOG (default ./tu-time.log). On a shared machine wall time is noise; user + sys is not.
#   cmake -S . -B build-cold -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#     -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/scripts/tu-time.sh -DCMAKE_CXX_LINKER_LAUNCHER=$PWD/scripts/tu-time.sh
#   TU_LOG=$PWD/tu.log cmake --build build-cold --target demo-programs -j2
#   sort -g -r tu.log | head -30
LOG="${TU_LOG:-$PWD/tu-time.log}"
out="?"
prev=""
for arg in "$@"; do
    [[ "$prev" == "-o" ]] && out="$arg"
    prev="$arg"
done
exec /usr/bin/time -a -o "$LOG" -f "%U %S %e ${out//%/%%}" "$@"
