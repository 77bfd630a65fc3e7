#!/usr/bin/env bash
# Creates the peers' venv (issue 21): MLflow (skinny, plus the SQLAlchemy and Alembic its SQLite
# tracking store needs) and TensorBoard, pinned, from PyPI. No torch, no TensorFlow: TensorBoard's
# own event writer and reader work without them. Usage: bench/peers/setup.sh [VENV]
# (default $RUNPLANE_PEERS_VENV, else build/peers-venv). Exits non-zero with a reason on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${1:-${RUNPLANE_PEERS_VENV:-build/peers-venv}}"
PINS=(mlflow-skinny==3.18.0 SQLAlchemy==2.1.9 alembic==1.20.1 tensorboard==2.21.0)
stamp="$VENV/.runplane-peers-pins"
if [[ -x "$VENV/bin/python" && "$(cat "$stamp" 2>/dev/null)" == "${PINS[*]}" ]]; then
    exit 0
fi
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    else
        echo "peers: python3-venv is missing (apt-get install python3-venv)" >&2
        exit 1
    fi
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"
echo "${PINS[*]}" >"$stamp"
