#!/usr/bin/env bash
# Installs every Debian package Runplane's build, demo and tests need. Idempotent:
# runs `apt-get update` once and installs only what is missing, printing what it installs.
set -euo pipefail
PKGS=(
  cmake g++ make ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite libqcustomplot-dev libqcustomplot2.1-qt6
  libgl-dev qt6-svg-dev ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libtorch-dev libopenblas0-pthread
  libsqlite3-dev sqlite3 libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libcpp-httplib-dev
  libarchive-dev
  xvfb xauth fonts-dejavu-core python3 python3-venv openssl patchelf curl iproute2
  clang-14 libclang-rt-14-dev universal-ctags
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
