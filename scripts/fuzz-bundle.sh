#!/usr/bin/env bash
# Packs the fuzz targets of a RUNPLANE_FUZZ build into one self-contained archive, to fuzz on a
# machine with more cores but without the build's packages (docs/fuzzing.md, "Bigger machines"):
#   scripts/fuzz-bundle.sh [BUILD_DIR=build-fuzz] [OUT=BUILD_DIR/fuzz-bundle.tar.gz]
# Inside: bin/fuzz_* (debug info stripped, symbols kept, RUNPATH $ORIGIN/../lib), lib/ (every
# shared library they load except glibc's own), seeds/<target> (the committed corpus, plus
# recipes/ and tests/launch/data for recipe and import), recipes/models (the catalog; run with
# RUNPLANE_FUZZ_RECIPES_DIR=DIR/recipes), fuzz-parallel.sh and bin/lsan-canary (a 4242-byte leak).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-fuzz}"
OUT="${2:-$BUILD/fuzz-bundle.tar.gz}"
stage="$BUILD/fuzz-bundle"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/seeds" "$stage/recipes"
for exe in "$BUILD"/tests/fuzz/fuzz_*; do
  [ -x "$exe" ] || continue
  t="$(basename "$exe")"
  objcopy --strip-debug "$exe" "$stage/bin/$t"
  patchelf --set-rpath '$ORIGIN/../lib' "$stage/bin/$t"
  ldd "$exe" | awk '$3 ~ /^\// {print $3}' |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    xargs -r cp -L -n -t "$stage/lib/"
  name="${t#fuzz_}"
  cp -r "tests/fuzz/corpus/$name" "$stage/seeds/$name"
  if [ -d "tests/fuzz/corpus-grown/$name" ]; then
    cp -r "tests/fuzz/corpus-grown/$name" "$stage/seeds/$name/grown"
  fi
done
# libFuzzer reads seed folders recursively.
[ -d "$stage/seeds/recipe" ] && cp -r recipes "$stage/seeds/recipe/shipped"
[ -d "$stage/seeds/import" ] && cp -r tests/launch/data "$stage/seeds/import/launch-data"
cp -r recipes/models "$stage/recipes/models"
# A leak LeakSanitizer must report (fuzz-parallel.sh runs it first; see there). The block is
# allocated in a function of its own and its only pointer cleared, so that no live frame or
# register keeps it (the first canary kept it in main's frame, which the host's libc could leave
# on the stack, unreported by a working LeakSanitizer).
clang-14 -x c -O1 -fsanitize=address -o "$stage/bin/lsan-canary" - <<'EOF'
#include <stdlib.h>
#include <string.h>
void* volatile sink;
__attribute__((noinline)) static void leak(void) {
  sink = malloc(4242);
  memset(sink, 1, 4242);
  sink = 0;
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
EOF
cp scripts/fuzz-parallel.sh "$stage/"
tar -C "$stage" -czf "$OUT" .
echo "fuzz-bundle: $OUT ($(du -h "$OUT" | cut -f1))"
