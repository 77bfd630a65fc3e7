#!/usr/bin/env bash
# Creates (once) the Python venv the import tests write their real files with (issue 49,
# docs/imports.md): TensorBoard's own event writer and the `wandb` package (offline mode), pinned,
# from PyPI. No torch, no TensorFlow: TensorBoard's writer and protos work without them.
# Usage: scripts/setup-imports-venv.sh DIR. Idempotent: a venv with these pins is kept.
set -euo pipefail
PINS=(tensorboard==2.21.0 wandb==0.31.0)
dir="${1:?usage: setup-imports-venv.sh DIR}"
stamp="$dir/.runplane-imports-pins"
if [[ -x "$dir/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "${PINS[*]}" ]]; then
  echo "setup-imports-venv: $dir has ${PINS[*]}"
  exit 0
fi
PY="${PYTHON:-python3}"
echo "setup-imports-venv: creating $dir with $($PY --version 2>&1), ${PINS[*]}"
rm -rf "$dir"
"$PY" -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "${PINS[@]}"
"$dir/bin/python" -c 'import tensorboard, wandb; print("tensorboard", tensorboard.__version__, "wandb", wandb.__version__)'
echo "${PINS[*]}" >"$stamp"
