#!/usr/bin/env bash
# Builds the node bundle: runplane-node-VERSION-linux-x86_64.tar.gz, one artifact that runs on any
# x86_64 GPU host with glibc >= the build machine's (Debian 12: 2.36), with nothing installed.
#
#   scripts/package-node.sh BUILD_DIR [OUT_DIR]     (make package calls it; OUT_DIR = BUILD_DIR/package)
#
# Contents: bin/ (runplaned, runplane-supervisor, runplanectl and the GPU helpers, stripped, with a
# DT_RPATH of $ORIGIN/../lib), lib/ (every shared library they load except glibc, libstdc++,
# libgcc_s and libm, stripped), share/runplane/runplaned.service, share/doc/runplane/,
# install.sh, README.md, VERSION. NVML, NCCL and the CUDA driver are never bundled: the daemon
# and the helpers load the host's copies at run time (dlopen).
#
# DT_RPATH (not RUNPATH) on purpose: it also applies to the libraries that libgrpc++ and friends
# load, so the bundle's copies win over whatever the host has.
set -euo pipefail

BUILD=${1:?usage: package-node.sh BUILD_DIR [OUT_DIR]}
BUILD=$(cd "$BUILD" && pwd)
OUT=${2:-$BUILD/package}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

for tool in patchelf strip ldd readelf tar; do
    command -v "$tool" >/dev/null || { echo "package-node: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

VERSION=$(sed -n 's/^#define RUNPLANE_BUILD_VERSION "\(.*\)"$/\1/p' "$BUILD/common/generated/runplane_build_values.h")
COMMIT=$(sed -n 's/^#define RUNPLANE_BUILD_COMMIT "\(.*\)"$/\1/p' "$BUILD/common/generated/runplane_build_values.h")
[ -n "$VERSION" ] || { echo "package-node: $BUILD has no build values; build first (make build)" >&2; exit 1; }
NAME=runplane-node-$VERSION-linux-$(uname -m)

# Executable -> where the build tree has it. The NCCL probe exists only where CUDA was found.
declare -A BINARIES=(
    [runplaned]=backend/daemon/runplaned
    [runplane-supervisor]=backend/daemon/runplane-supervisor
    [runplanectl]=backend/cli/runplanectl
    [runplane-gpu-info]=compute/gpu/runplane-gpu-info
    [runplane-nccl-resolve]=compute/gpu/runplane-nccl-resolve
    [runplane-nccl-version]=compute/gpu/runplane-nccl-version
    [runplane-nccl-probe]=compute/gpu/runplane-nccl-probe
)
OPTIONAL=" runplane-nccl-probe "

# Libraries that stay the host's: glibc's family, the C++ runtime, and the GPU stack (the driver's
# NVML and the host's NCCL are what the daemon must measure, never a copy of ours).
is_system_lib() {
    case "$1" in
        linux-vdso.so.*|ld-linux-*.so.*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*) return 0 ;;
        libstdc++.so.*|libgcc_s.so.*) return 0 ;;
        libnvidia-ml.so.*|libnccl.so.*|libcuda.so.*) return 0 ;;
    esac
    return 1
}

STAGE=$(mktemp -d "$OUT/.stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
ROOT=$STAGE/$NAME
mkdir -p "$ROOT/bin" "$ROOT/lib" "$ROOT/share/runplane" "$ROOT/share/doc/runplane"

for name in "${!BINARIES[@]}"; do
    path=$BUILD/${BINARIES[$name]}
    if [ ! -x "$path" ]; then
        if [[ $OPTIONAL == *" $name "* ]]; then
            echo "package-node: $name not built (no CUDA here); the bundle goes without it"
            continue
        fi
        echo "package-node: $path is missing; build first (make build)" >&2
        exit 1
    fi
    cp "$path" "$ROOT/bin/$name"
done

# Every non-system library any binary loads (ldd lists the whole closure).
for exe in "$ROOT"/bin/*; do
    if ldd "$exe" | grep -q 'not found'; then
        echo "package-node: $exe has unresolved libraries:" >&2
        ldd "$exe" | grep 'not found' >&2
        exit 1
    fi
    while read -r soname path; do
        is_system_lib "$soname" && continue
        [ -e "$ROOT/lib/$soname" ] || cp -L "$path" "$ROOT/lib/$soname"
    done < <(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
done

for f in "$ROOT"/bin/* "$ROOT"/lib/*; do
    chmod u+w "$f"
    strip --strip-unneeded "$f"
done
for exe in "$ROOT"/bin/*; do
    patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$exe"
done
for lib in "$ROOT"/lib/*; do
    # Each library finds its siblings by itself too (dlopen by soname from inside a library).
    patchelf --force-rpath --set-rpath '$ORIGIN' "$lib"
done

cp "$SRC/scripts/runplaned.service" "$ROOT/share/runplane/runplaned.service"
cp "$SRC/scripts/node-bundle/install.sh" "$ROOT/install.sh"
chmod 0755 "$ROOT/install.sh"
cp "$SRC/scripts/node-bundle/README.md" "$ROOT/README.md"
cp "$SRC/docs/daemon.md" "$SRC/docs/nccl-health.md" "$ROOT/share/doc/runplane/"
"$ROOT/bin/runplaned" --version >"$ROOT/VERSION"

TARBALL=$OUT/$NAME.tar.gz
# Reproducible order and owners; gzip -n leaves no timestamp in the header.
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$STAGE" -cf - "$NAME" | gzip -n -9 >"$TARBALL.tmp"
mv "$TARBALL.tmp" "$TARBALL"
size_kb=$(du -k "$TARBALL" | cut -f1)
unpacked_kb=$(du -sk "$ROOT" | cut -f1)
echo "package-node: $TARBALL ($((size_kb / 1024)) MiB packed, $((unpacked_kb / 1024)) MiB unpacked, $(ls "$ROOT/lib" | wc -l) libraries, commit $COMMIT)"
