#!/usr/bin/env bash
# The node bundle, checked as an operator would meet it (tests/package/CMakeLists.txt runs this):
#   1. scripts/package-node.sh builds the tarball from this build tree;
#   2. unpacked in a temp dir, every binary's --version runs with an empty LD_LIBRARY_PATH and
#      prints version, commit and date;
#   3. ldd: every library of every binary resolves inside the bundle, except glibc, libstdc++,
#      libgcc_s and libm; readelf: binaries carry DT_RPATH $ORIGIN/../lib; files are stripped;
#   4. install.sh --root stages /opt/runplane, the state dir (0700) and the unit with paths;
#   5. the bundled runplaned serves on loopback: the bundled runplanectl sees its build commit
#      in GetNode, /metrics has runplane_build_info.
set -euo pipefail
BUILD=${1:?build dir}
SRC=${2:?source dir}
TMP=$(mktemp -d)
DAEMON_PID=
cleanup() {
    [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$SRC/scripts/package-node.sh" "$BUILD" "$TMP/out" | tee "$TMP/package.log"
tarball=$(ls "$TMP"/out/runplane-node-*-linux-*.tar.gz)
[[ $(basename "$tarball") =~ ^runplane-node-[0-9]+\.[0-9]+\.[0-9]+-linux-x86_64\.tar\.gz$ ]] ||
    fail "tarball name $(basename "$tarball")"
mkdir "$TMP/unpacked"
tar -C "$TMP/unpacked" -xzf "$tarball"
bundle=$(echo "$TMP"/unpacked/runplane-node-*)
for f in bin/runplaned bin/runplane-supervisor bin/runplanectl bin/runplane-gpu-info \
    bin/runplane-nccl-resolve bin/runplane-nccl-version install.sh README.md VERSION \
    share/runplane/runplaned.service share/doc/runplane/daemon.md; do
    [ -e "$bundle/$f" ] || fail "missing $f"
done
commit=$(git -C "$SRC" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

# 2. --version with nothing from the environment's library path.
for exe in "$bundle"/bin/*; do
    name=$(basename "$exe")
    if ! out=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$exe" --version 2>&1); then
        fail "$name --version exited non-zero: $out"
        continue
    fi
    [[ $out =~ ^$name\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]{12}(-dirty)?,\ built\ [0-9]{4}-[0-9]{2}-[0-9]{2}\)$ ]] ||
        fail "$name --version printed '$out'"
    [[ $commit == unknown || $out == *"commit $commit"* ]] || fail "$name: commit is not HEAD ($commit): $out"
    echo "ok: $out"
done

# 3. Only glibc, libstdc++, libgcc_s and libm come from the system.
system_ok='^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(c|m|dl|pthread|rt|stdc\+\+|gcc_s)\.so\.[0-9.]+)$'
for elf in "$bundle"/bin/* "$bundle"/lib/*; do
    name=$(basename "$elf")
    while read -r soname arrow path _; do
        if [ "$arrow" = "=>" ]; then
            [ "$path" = "not" ] || path=$(realpath -m "$path")
            if [ "$path" = "not" ]; then
                fail "$name: $soname not found"
            elif [[ $path == "$bundle/lib/"* ]]; then
                :
            elif [[ $soname =~ $system_ok ]]; then
                :
            else
                fail "$name: $soname comes from the system ($path)"
            fi
        elif ! [[ $soname =~ $system_ok ]] && ! [[ $soname == statically ]]; then
            fail "$name: unexpected ldd line '$soname $arrow'"
        fi
    done < <(env -i LD_LIBRARY_PATH= ldd "$elf" 2>&1 | sed 's/([^)]*)//')
    if readelf -S "$elf" | grep -qE '\.(symtab|debug_info)'; then
        fail "$name is not stripped"
    fi
done
for exe in "$bundle"/bin/*; do
    readelf -d "$exe" | grep -q '(RPATH).*\[\$ORIGIN/\.\./lib\]' || fail "$(basename "$exe") has no DT_RPATH \$ORIGIN/../lib"
done
nlibs=$(ls "$bundle/lib" | wc -l)
[ "$nlibs" -ge 10 ] || fail "only $nlibs bundled libraries (expected gRPC, protobuf, abseil, SQLite, OpenSSL…)"
for lib in libgrpc++.so libprotobuf.so libsqlite3.so libssl.so libcrypto.so; do
    ls "$bundle/lib/$lib".* >/dev/null 2>&1 || fail "$lib is not bundled"
done
ls "$bundle"/lib/libnvidia-ml.so* "$bundle"/lib/libnccl.so* >/dev/null 2>&1 && fail "NVML or NCCL bundled"

# 4. install.sh into a staging root.
"$bundle/install.sh" --root "$TMP/root" --no-user --no-systemd --prefix /opt/rp --state-dir /var/lib/rp >"$TMP/install.log"
cat "$TMP/install.log"
[ -x "$TMP/root/opt/rp/bin/runplaned" ] || fail "install.sh did not install bin/runplaned"
[ -e "$TMP/root/opt/rp/lib/$(ls "$bundle/lib" | head -1)" ] || fail "install.sh did not install lib/"
[ "$(stat -c %a "$TMP/root/var/lib/rp")" = 700 ] || fail "state dir mode $(stat -c %a "$TMP/root/var/lib/rp")"
grep -q '^ExecStart=/opt/rp/bin/runplaned .*--state-dir /var/lib/rp' "$TMP/root/etc/systemd/system/runplaned.service" ||
    fail "unit ExecStart does not use the prefix and state dir"
grep -q 'Next:' "$TMP/install.log" || fail "install.sh printed no next step"
env -i LD_LIBRARY_PATH= "$TMP/root/opt/rp/bin/runplanectl" --version >/dev/null || fail "installed runplanectl does not run"
if "$bundle/install.sh" --bogus >/dev/null 2>&1; then fail "install.sh accepted --bogus"; fi

# 5. The bundled daemon, from the installed tree, with an empty library path.
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= HOME="$TMP" "$TMP/root/opt/rp/bin/runplaned" \
    --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --state-dir "$TMP/state" --no-gpu \
    >"$TMP/daemon.out" 2>"$TMP/daemon.err" &
DAEMON_PID=$!
for _ in $(seq 100); do
    grep -q 'metrics on' "$TMP/daemon.out" 2>/dev/null && break
    sleep 0.1
done
addr=$(sed -n 's/^runplaned listening on //p' "$TMP/daemon.out")
metrics=$(sed -n 's/^runplaned metrics on //p' "$TMP/daemon.out")
if [ -z "$addr" ] || [ -z "$metrics" ]; then
    fail "bundled runplaned did not start: $(cat "$TMP/daemon.err")"
else
    nodes=$(env -i LD_LIBRARY_PATH= HOME="$TMP" "$TMP/root/opt/rp/bin/runplanectl" nodes "$addr" --json)
    echo "$nodes" | grep -q "\"build_commit\": \"$commit" || fail "GetNode build_commit: $nodes"
    echo "$nodes" | grep -q '"build_date": "[0-9]' || fail "GetNode build_date: $nodes"
    scrape=$(curl -fsS "$metrics")
    echo "$scrape" | grep -q "^runplane_build_info{version=\"[0-9.]*\",commit=\"$commit[^\"]*\",build_date=\"[0-9-]*\"} 1$" ||
        fail "/metrics has no runplane_build_info: $(echo "$scrape" | grep build_info)"
fi

echo "bundle: $(du -h "$tarball" | cut -f1) packed, $(du -sh "$bundle" | cut -f1) unpacked, $nlibs libraries"
if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all bundle checks passed"
