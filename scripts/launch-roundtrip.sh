#!/usr/bin/env bash
# Value-level round trip of one launch script (docs/launch-scripts.md, "Value-level check"):
# runs SCRIPT under bash with stub ray / python / python3 / vllm / ssh / nvidia-smi / curl / pkill / pip / hf /
# docker first on PATH (they only record their argv; nothing real runs; a model server started in
# the background stays up until killed or the script ends, and curl's -w "%{http_code}" answers 200; the node they fake is an NVIDIA
# one: `python3 -c` probes fail, `pip list` shows megatron-core), imports it, exports the recipe, runs
# the export the same way, and compares the argv the framework's entry point receives flag by
# flag (the last occurrence of a flag counts; numbers compare as values, 0.00 = 0).
#
#   scripts/launch-roundtrip.sh [-e K=V]... [-m MODELS-DIR] [-a ARG]... SCRIPT [-- IMPORT-OPTIONS...]
#
# A SCRIPT ending in .py is a miles Python launcher: the import runs it with its commands recorded
# (`runplanectl import --run-launcher`, with $PYTHON, default python3) and the original's argv is
# what those recorded commands hand train.py under the same stubs.
#
# -a ARG: a positional argument of the original script (`bash run-x.sh head 10.0.0.1` for a script
# that reads ROLE=${1:?...}); the import reads the script as run without arguments (a script
# argument it reads is the parameter ${1}, ${2}, ...), and the export's job script, which reads
# those parameters from its own arguments, is run with the same ones.
#
# Prints one line "FLAGS KEPT EQUAL ADDED SCRIPT" and the differing flags. The export sources
# models/<name>.sh next to its job script: -m MODELS-DIR, the script's own models/ folder,
# ../models and ../../scripts/models are copied there. RUNPLANECTL names the binary (default
# build/backend/cli/runplanectl); KEEP=1 keeps the work folder and prints its path.
set -euo pipefail

ctl="${RUNPLANECTL:-build/backend/cli/runplanectl}"
envs=()
models=""
args=()
while [ $# -gt 0 ] && { [ "$1" = "-e" ] || [ "$1" = "-m" ] || [ "$1" = "-a" ]; }; do
    case "$1" in
        -e) envs+=("$2") ;;
        -m) models="$2" ;;
        -a) args+=("$2") ;;
    esac
    shift 2
done
script="${1:?usage: launch-roundtrip.sh [-e K=V]... [-m MODELS-DIR] [-a ARG]... SCRIPT [-- IMPORT-OPTIONS...]}"
shift
[ "${1:-}" = "--" ] && shift
work="$(mktemp -d)"
[ -n "${KEEP:-}" ] || trap 'rm -rf "${work}"' EXIT; [ -n "${KEEP:-}" ] && echo "work: ${work}" >&2

mkdir -p "${work}/stub" "${work}/a" "${work}/b"
cat > "${work}/stub/rec" <<'SH'
#!/bin/bash
tool="$(basename "$0")"
serve() {  # a server in the background: up while the script runs (at most 60 s)
  exec < /dev/null > /dev/null 2>&1
  local parent=$PPID
  for _ in $(seq 1 300); do kill -0 "${parent}" 2>/dev/null || exit 0; sleep 0.2; done
  exit 0
}
case "${tool}" in
  ray)
    [ "${1:-}" = status ] && { echo " 0.0/1024.0 GPU"; exit 0; }
    if [ "${1:-}" = job ]; then
      while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
      shift
      exec "$@"
    fi ;;
  nvidia-smi) echo "GPU0 X NV18" ;;
  docker)
    # `docker run [OPTIONS] IMAGE bash -s <<'EOF'`: the shell runs here, on the stubs; pull/rm: nothing
    case "${1:-}" in
      run|exec)
        while [ $# -gt 0 ] && [ "$1" != bash ] && [ "$1" != sh ]; do shift; done
        [ $# -gt 0 ] && exec "$@" ;;
    esac ;;
  pip) [ "${1:-}" = list ] && echo "megatron-core 0.14.0 /root/Megatron-LM" ;;
  python|python3)
    # `python3 -c CODE` probes (torch.version.hip, import megatron): an NVIDIA node without them
    [ "${1:-}" = -c ] && exit 1
    printf '%s\n' "$@" > "${CALLS}/$(date +%s%N).$$"
    # a model server started in the background (an OPD teacher, `python3 -m
    # vllm.entrypoints.openai.api_server ... &`) stays up as the real one does, so that a wait
    # loop's `kill -0 "$TEACHER_PID"` sees it, until the script kills it or ends (at most 60 s)
    case " $* " in
      *" -m vllm.entrypoints."*|*" -m sglang.launch_server "*) serve ;;
    esac ;;
  vllm) [ "${1:-}" = serve ] && serve ;;
  curl)
    # `curl -s -o /dev/null -w "%{http_code}" URL`: the server answers 200
    for a in "$@"; do case "${a}" in *'%{http_code}'*) printf '200' ;; esac; done ;;
esac
exit 0
SH
chmod +x "${work}/stub/rec"
for t in ray python python3 vllm ssh nvidia-smi curl pkill pip docker hf huggingface-cli; do
    ln -s rec "${work}/stub/${t}"
done

run() {  # run CALLS-DIR SCRIPT [ARG...]
    local calls="$1" file="$2"
    shift 2
    env "${envs[@]}" CALLS="${calls}" PATH="${work}/stub:${PATH}" RUNPLANE_RAY_WAIT_TIMEOUT_S=0 \
        MASTER_ADDR="${MASTER_ADDR:-10.0.0.1}" NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-eth0}" \
        NODE_IP=10.0.0.2 bash "${file}" "$@" > "${calls}.log" 2>&1 || true
}

# the framework's argv: one "flag<TAB>values" line per flag, after the entry point (*train*.py, run_*.py)
flags() {
    local call
    call="$(grep -l -E '(^|/)([A-Za-z0-9_]*train[A-Za-z0-9_]*|run_[A-Za-z0-9_.-]*)\.py$' "$1"/* 2>/dev/null | tail -n 1 || true)"
    if [ -z "${call}" ]; then
        echo "$1: the framework was never started; the run's output:" >&2
        tail -n 20 "$1.log" >&2
        return 0
    fi
    # a miles launcher's --extra-args string (train.py flags it appends last) is split on blanks
    # into flags of their own, marked "--extra-args:" (its shell quoting is not read)
    awk '
        function store(   n, w, i, f, fv) {
            if (flag == "") return
            if (flag != "--extra-args") { v[flag] = vals; return }
            n = split(vals, w, /[ \t]+/); f = ""; fv = ""
            for (i = 1; i <= n; ++i) {
                if (w[i] == "") continue
                if (w[i] ~ /^--/) { if (f != "") v[f] = fv; f = "--extra-args:" w[i]; fv = "" }
                else fv = fv (fv == "" ? "" : " ") w[i]
            }
            if (f != "") v[f] = fv
        }
        started == 0 { if ($0 ~ /(^|\/)([A-Za-z0-9_]*train[A-Za-z0-9_]*|run_[A-Za-z0-9_.-]*)\.py$/) started = 1; next }
        flag == "--extra-args" && vals == "" && taken == 0 { vals = $0; taken = 1; next }
        /^--/ { store(); flag = $0; vals = ""; taken = 0; next }
        { vals = vals (vals == "" ? "" : " ") $0 }
        END { store(); for (f in v) printf "%s\t%s\n", f, v[f] }
    ' "${call}" | sort
}

if [[ "${script}" == *.py ]]; then
    # a miles Python launcher: the import runs it with its commands recorded instead of run
    # (docs/launch-scripts.md, "miles' Python launchers"); the original's argv is what the recorded
    # commands hand train.py. PYTHON names the Python (typer installed).
    "${ctl}" import "${script}" --run-launcher --python "${PYTHON:-python3}" \
        --recorded "${work}/recorded.sh" "${envs[@]/#/--env=}" "$@" -o "${work}/recipe.yaml" \
        --force > "${work}/import.log" 2>&1 || true
    [ -f "${work}/recorded.sh" ] || { cat "${work}/import.log" >&2; exit 1; }
    run "${work}/a" "${work}/recorded.sh"
else
    run "${work}/a" "${script}" ${args[@]+"${args[@]}"}
    "${ctl}" import "${script}" "${envs[@]/#/--env=}" "$@" -o "${work}/recipe.yaml" --force \
        > "${work}/import.log" 2>&1 || true
fi
framework="$(sed -n 's/^framework: //p' "${work}/recipe.yaml")"
"${ctl}" export "${work}/recipe.yaml" --flavour "${framework:-slime}" --out "${work}/export" \
    > "${work}/export.log" 2>&1 || { cat "${work}/import.log" "${work}/export.log" >&2; exit 1; }
dir="$(cd "$(dirname "${script}")" && pwd)"
for m in ${models:+"${models}"} "${dir}/models" "${dir}/../models" "${dir}/../../scripts/models"; do
    if [ -d "${m}" ]; then
        mkdir -p "${work}/export/models"
        cp "${m}"/*.sh "${work}/export/models/" 2>/dev/null || true
    fi
done
job="$(ls "${work}"/export/run-*.sh)"
if [ -f "${work}/export/ray-head.sh" ]; then
    run "${work}/b" "${work}/export/ray-head.sh"
    run "${work}/b" "${work}/export/ray-worker.sh"
fi
run "${work}/b" "${job}" ${args[@]+"${args[@]}"}

flags "${work}/a" > "${work}/a.flags"
flags "${work}/b" > "${work}/b.flags"
awk -F '\t' -v name="${script}" -v exported="${work}/b.flags" '
    function same(x, y,   n, m, i, p, q) {
        if (x == y) return 1
        n = split(x, p, " "); m = split(y, q, " ")
        if (n != m) return 0
        for (i = 1; i <= n; ++i) {
            if (p[i] == q[i]) continue
            if (p[i] !~ /^[-+0-9.eE]+$/ || q[i] !~ /^[-+0-9.eE]+$/ || p[i] + 0 != q[i] + 0) return 0
        }
        return 1
    }
    FILENAME == exported { b[$1] = $2; next }
    { a[$1] = $2; ++flags; if ($1 in b) { ++kept; if (same($2, b[$1])) ++equal; else diff = diff "  changed: " $1 " " $2 "  ->  " b[$1] "\n" } else diff = diff "  missing: " $1 " " $2 "\n" }
    END {
        for (f in b) if (!(f in a)) { ++added; diff = diff "  added: " f " " b[f] "\n" }
        printf "%d %d %d %d %s\n%s", flags, kept, equal, added, name, diff
    }
' "${work}/b.flags" "${work}/a.flags"
