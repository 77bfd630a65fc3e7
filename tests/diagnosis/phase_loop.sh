#!/usr/bin/env bash
# A run whose phase markers stop (issue #44, the phase-overrun test): four quick rollout/train
# rounds, then train stays silent for $1 seconds (a hang), once more, then the run ends. Each
# stuck train is one episode. Runplane's own marker format ([runplane-phase] NAME, docs/daemon.md).
set -u
stuck=${1:-8}
round() {
  echo "[runplane-phase] rollout"
  sleep 0.5
  echo "[runplane-phase] train"
  sleep "$1"
}
for _ in 1 2 3 4; do round 1; done
round "$stuck"
round "$stuck"
echo "[runplane-phase] done"
