#!/usr/bin/env bash
# Measures import + export of a set of public launch scripts (docs/launch-scripts.md, "The public
# scripts"): for each SCRIPT, scripts/launch-roundtrip.sh (the argv the framework receives from the
# original and from the export of its import, under stub commands), then `runplanectl import` and
# `runplanectl validate` of the imported recipe. Nothing is fetched: the scripts are copies in a
# scratch folder outside this repository, laid out as in their repository (<root>/<owner>__<repo>/
# scripts/..., so that ../../scripts/models resolves inside the copy).
#
#   scripts/launch-measure.sh OUT.tsv SCRIPT...
#
# Writes one TSV row per script: script, import exit status, flags, kept, equal, added, validate
# errors (and their rule ids), first import error; then prints the totals per repository folder
# (<owner>__<repo>). Site variables the public scripts read without defaults are given to both runs
# (-e below); `/root` is a private bind mount of an empty folder holding `slime`/`miles`/`vime`
# links to the copies (scripts that `source /root/slime/scripts/models/...`): run as root, or set
# NO_ROOT_MOUNT=1. RUNPLANECTL names the binary; TIMEOUT_S bounds each roundtrip (default 60).
set -uo pipefail

out="${1:?usage: launch-measure.sh OUT.tsv SCRIPT...}"
shift
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
ctl="${RUNPLANECTL:-${here}/../build/backend/cli/runplanectl}"
ctl="$(cd "$(dirname "${ctl}")" && pwd)/$(basename "${ctl}")"
timeout_s="${TIMEOUT_S:-60}"
site="$(mktemp -d)"
trap 'rm -rf "${site}"' EXIT
mkdir -p "${site}/root" "${site}/m" "${site}/d" "${site}/save"
envs=(-e BASE_DIR=/data -e BASE_FOLDER=/data -e WANDB_API_KEY=k -e WANDB_KEY=k
    -e MLP_WORKER_0_HOST=10.0.0.1 -e MLP_SOCKET_IFNAME=eth0 -e "HF_CHECKPOINT=${site}/m"
    -e "REF_LOAD=${site}/m" -e "PROMPT_DATA=${site}/d/train.parquet"
    -e "EVAL_DATA=${site}/d/test.parquet" -e "MEGATRON_ROOT=${site}/m" -e "SAVE_DIR=${site}/save")
ienv=()
for ((i = 1; i < ${#envs[@]}; i += 2)); do ienv+=(--env "${envs[i]}"); done

printf 'script\timport_rc\tflags\tkept\tequal\tadded\tvalidate_errors\terror_ids\tfirst_error\n' > "${out}"
for s in "$@"; do
    s="$(cd "$(dirname "${s}")" && pwd)/$(basename "${s}")"
    # the checkout root: the folder holding scripts/ (or examples/) above the script
    repo="${s%/scripts/*}"
    [ "${repo}" = "${s}" ] && repo="${s%/examples/*}"
    for fw in slime miles vime; do
        [[ "$(basename "${repo}")" == *"${fw}" ]] && ln -sfn "${repo}" "${site}/root/${fw}"
    done
    wrap=(bash -c '"$@"' _)
    # (not for a Python launcher: its Python may live under /root, e.g. pyenv)
    [ -z "${NO_ROOT_MOUNT:-}" ] && [[ "${s}" != *.py ]] &&
        wrap=(unshare -m bash -c 'mount --bind "$0" /root && exec "$@"' "${site}/root")
    args=()
    grep -q 'ROLE=\${1:?' "${s}" && args=(-a head -a 10.0.0.1)
    # a Python launcher with subcommands (typer.Typer: train, prepare, full-train, ...) is run
    # with `train`, the command that only trains
    # (and with MASTER_ADDR given: some launchers assert it is set, as a run on a cluster has it)
    pyargs=()
    [[ "${s}" == *.py ]] && pyargs=(--env MASTER_ADDR=10.0.0.1)
    [[ "${s}" == *.py ]] && grep -q '^def train(' "${s}" && grep -q 'typer.Typer' "${s}" &&
        pyargs+=(--launcher-arg train)
    line="$(RUNPLANECTL="${ctl}" timeout "${timeout_s}" "${wrap[@]}" "${here}/launch-roundtrip.sh" \
        "${envs[@]}" ${args[@]+"${args[@]}"} "${s}" -- ${pyargs[@]+"${pyargs[@]}"} 2>/dev/null |
        head -n 1)"
    read -r flags kept equal added _ <<< "${line:-0 0 0 0 x}"
    [[ "${flags}" =~ ^[0-9]+$ ]] || { flags=0; kept=0; equal=0; added=0; }
    rc=0
    py=()
    [[ "${s}" == *.py ]] && py=(--run-launcher --python "${PYTHON:-python3}" ${pyargs[@]+"${pyargs[@]}"})
    "${wrap[@]}" "${ctl}" import "${s}" ${py[@]+"${py[@]}"} "${ienv[@]}" -o "${site}/r.yaml" --force > "${site}/import.log" 2>&1 || rc=$?
    err="$(grep -m1 ': error: ' "${site}/import.log" | tr '\t' ' ' | cut -c1-200)"
    verrs=0
    ids=""
    if [ "${rc}" = 0 ]; then
        "${ctl}" validate "${site}/r.yaml" > "${site}/validate.log" 2>&1 || true
        verrs="$(grep -c -E ': error: ' "${site}/validate.log" || true)"
        ids="$(grep -E ': error: ' "${site}/validate.log" | grep -o -E '\[[A-Za-z0-9_.-]+\]$' | sort -u | tr '\n' ' ')"
        [ "${verrs}" = 0 ] && ids=""
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${s}" "${rc}" "${flags}" "${kept}" "${equal}" \
        "${added}" "${verrs}" "${ids}" "${err}" >> "${out}"
done

awk -F '\t' 'NR > 1 {
        split($1, p, "/"); repo = ""
        for (i = 1; i <= length(p); ++i) if (p[i] ~ /__/) { repo = p[i]; break }
        n[repo]++; if ($2 != 0) bad[repo]++; f[repo] += $3; k[repo] += $4; e[repo] += $5
        if ($2 == 0 && $7 > 0) v[repo]++
    }
    END {
        for (r in n) printf "%s: %d scripts, %d do not import, %d distinct flags, %d kept (%.1f %%), %d equal (%.1f %%), %d with validate errors\n",
            r, n[r], bad[r], f[r], k[r], f[r] ? 100 * k[r] / f[r] : 0, e[r], f[r] ? 100 * e[r] / f[r] : 0, v[r]
    }' "${out}"
