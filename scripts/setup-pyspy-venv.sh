#!/usr/bin/env bash
# Creates (once) a Python virtual environment with a pinned py-spy for the diagnosis tests and
# bench (issue #44, docs/diagnosis.md). Usage: scripts/setup-pyspy-venv.sh DIR. Idempotent: a venv
# whose py-spy reports the pinned version is kept as it is.
set -euo pipefail
PYSPY_VERSION="0.4.3"  # pinned; the JSON layout of `py-spy dump --json` was checked with it
dir="${1:?usage: setup-pyspy-venv.sh DIR}"
if [ -x "$dir/bin/py-spy" ] && "$dir/bin/py-spy" --version 2>/dev/null | grep -q "^py-spy $PYSPY_VERSION\$"; then
  echo "setup-pyspy-venv: $dir has py-spy $PYSPY_VERSION"
  exit 0
fi
PY="${PYTHON:-python3}"
echo "setup-pyspy-venv: creating $dir with $($PY --version 2>&1), py-spy==$PYSPY_VERSION"
rm -rf "$dir"
"$PY" -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "py-spy==$PYSPY_VERSION"
"$dir/bin/py-spy" --version
