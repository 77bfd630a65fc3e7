#!/usr/bin/env bash
# Packs the fuzz targets of a RUNPLANE_FUZZ build into one self-contained archive, to fuzz on a
# machine with more cores but without the build's packages (docs/fuzzing.md, "Bigger machines"):
#   scripts/fuzz-bundle.sh [BUILD_DIR=build-fuzz] [OUT=BUILD_DIR/fuzz-bundle.tar.gz]
# Inside: bin/fuzz_* (debug info stripped, symbols kept, RUNPATH $ORIGIN/../lib), lib/ (every
# shared library they load except glibc's own), seeds/<target> (the committed corpus, plus
# recipes/ and tests/launch/data for recipe and import), recipes/models (the catalog; run with
# RUNPLANE_FUZZ_RECIPES_DIR=DIR/recipes), fuzz-parallel.sh with its fuzz-env.sh, and bin/lsan-canary
# (a 4242-byte leak).
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
# The leak fuzz-parallel.sh checks LeakSanitizer with (tests/fuzz/lsan_canary.c).
cp "$BUILD/tests/fuzz/lsan_canary" "$stage/bin/lsan-canary"
cp scripts/fuzz-parallel.sh scripts/fuzz-env.sh "$stage/"
tar -C "$stage" -czf "$OUT" .
echo "fuzz-bundle: $OUT ($(du -h "$OUT" | cut -f1))"
