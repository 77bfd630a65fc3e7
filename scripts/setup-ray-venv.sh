#!/usr/bin/env bash
# Creates (once) a Python virtual environment with a pinned Ray for the `ray`-labelled tests.
# Usage: scripts/setup-ray-venv.sh DIR. Idempotent: a venv whose ray reports the pinned version is
# kept as it is.
set -euo pipefail
RAY_VERSION="2.60.0"  # pinned; docs/dispatch.md says why this one
dir="${1:?usage: setup-ray-venv.sh DIR}"
if [ -x "$dir/bin/ray" ] && "$dir/bin/ray" --version 2>/dev/null | grep -q "version $RAY_VERSION\$"; then
  echo "setup-ray-venv: $dir has ray $RAY_VERSION"
  exit 0
fi
PY="${PYTHON:-python3}"
echo "setup-ray-venv: creating $dir with $($PY --version 2>&1), ray==$RAY_VERSION"
rm -rf "$dir"
"$PY" -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "ray==$RAY_VERSION"
"$dir/bin/ray" --version
