// LaunchPlan -> script text: the job script (head node), and for multi-node the Ray head /
// worker scripts; ray-wait.sh polls `ray status` for the expected GPU total. Also the public
// entry points exportLaunch() / writeBundle() and the small enum helpers of launch.h.

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <sstream>

#include "backend/launch/export_plan.h"
#include "backend/launch/launch.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch {

using detail::LaunchPlan;
using detail::shellQuote;

namespace {

const char* kScriptDirLine =
    "SCRIPT_DIR=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")\" &>/dev/null && pwd)\"\n";

std::string safeFileStem(const std::string& text) {
    std::string out;
    for (char c : text) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        out += ok ? c : '-';
    }
    return out.empty() ? "run" : out;
}

// Text for a comment line: a newline in a recipe name must not end the comment.
std::string commentSafe(const std::string& text) {
    std::string out = text;
    for (char& c : out) {
        if (c == '\n' || c == '\r') {
            c = ' ';
        }
    }
    return out;
}

std::string header(const Recipe& r, const LaunchPlan& plan, const std::string& what) {
    std::string out = "#!/usr/bin/env bash\n";
    out += "# " + what + "\n";
    out += "# Recipe '" + commentSafe(r.name) + "' (" + toString(plan.flavour) +
           "), written by `runplanectl ";
    out += "export`.\n";
    return out;
}

std::string envBlock(const LaunchPlan& plan) {
    std::string out;
    for (const auto& e : plan.env) {
        out += "export " + e.name + "=" + e.valueText;
        if (e.derived) {
            out += std::string("  # ") + detail::kDerivedMark;
        }
        out += "\n";
    }
    return out;
}

std::string arrayBlock(const detail::ArgGroup& g) {
    std::string out = g.name + "=(\n";
    for (const auto& line : g.lines) {
        out += "   ";
        if (g.shellTextElements) {
            out += shellQuote(line.words.front());
        } else {
            out += detail::exportJoin(line.words);
        }
        if (!line.annotation.empty()) {
            out += "  # " + line.annotation;
        }
        out += "\n";
    }
    out += ")\n";
    return out;
}

// `: "${NAME:?...}"` for every ${NAME} parameter the flags read that the script does not set
// itself: the job stops with the variable's name instead of running with an empty value. A
// parameter only the environment reads (`"no_proxy": "${no_proxy}"`, `PYTHONPATH=...:$PYTHONPATH`,
// `"NCCL_NVLS_ENABLE": "${HAS_NVLINK}"` without the probe) was read unset by a script that ran
// without `set -u`, i.e. as empty: `: "${NAME=}"` gives it that value, so the job (which runs
// under `set -u`) hands on what the original did.
std::string parameterChecks(const LaunchPlan& plan) {
    std::set<std::string> names;
    for (const auto& g : plan.groups) {
        for (const auto& line : g.lines) {
            for (const auto& w : line.words) {
                if (!isSpliceWord(w) || w.find('[') == std::string::npos) {
                    detail::collectParameterNames(w, names);
                }
            }
        }
    }
    std::set<std::string> envNames;
    for (const auto& e : plan.env) {
        if (e.pinned) {
            std::set<std::string> read;
            detail::collectParameterNames(e.literal, read);
            for (const auto& n : read) {
                // an entry reading its own name passes the caller's value on: read unset
                if (n == e.name || std::none_of(plan.env.begin(), plan.env.end(),
                                                [&](const auto& o) { return o.name == n; })) {
                    envNames.insert(n);
                }
            }
        }
    }
    for (const auto& e : plan.env) {
        names.erase(e.name);
    }
    for (const auto& n : names) {
        envNames.erase(n);
    }
    // set by a pre-launch step (NAME=... at the start of a line or after ; & |)
    for (const auto& step : plan.preLaunch) {
        for (std::size_t i = 0; i < step.size(); ++i) {
            if (!detail::isNameStart(step[i]) ||
                (i > 0 &&
                 std::string_view(" \t\n;&|(").find(step[i - 1]) == std::string_view::npos)) {
                continue;
            }
            std::size_t j = i;
            while (j < step.size() && detail::isNameChar(step[j])) {
                ++j;
            }
            if (j < step.size() && step[j] == '=') {
                names.erase(step.substr(i, j - i));
                envNames.erase(step.substr(i, j - i));
            }
            i = j;
        }
    }
    // set by a pre-launch `printf -v NAME` / `read [-r] [-a] NAME...` / `mapfile NAME` line
    for (const auto& step : plan.preLaunch) {
        std::istringstream lines(step);
        std::string line;
        while (std::getline(lines, line)) {
            std::istringstream in(line);
            std::vector<std::string> w;
            for (std::string t; in >> t && t[0] != '<' && t[0] != '#';) {
                w.push_back(t);
            }
            const bool reads = !w.empty() && (w[0] == "read" || w[0] == "mapfile" ||
                                              w[0] == "readarray" || w[0] == "printf");
            for (std::size_t i = 1; reads && i < w.size(); ++i) {
                if (w[0] == "printf" ? w[i - 1] == "-v" : w[i][0] != '-') {
                    names.erase(w[i]);
                    envNames.erase(w[i]);
                }
            }
        }
    }
    names.erase("SCRIPT_DIR");
    envNames.erase("SCRIPT_DIR");
    std::string out;
    if (!names.empty()) {
        out += "# Parameters of the recipe (variables the original script read unset).\n";
        for (const auto& n : names) {
            out += ": \"${" + n + ":?set " + n + " (a parameter of this recipe)}\"\n";
        }
    }
    if (!envNames.empty()) {
        out += "# Read unset by the environment of the original script (without set -u: empty).\n";
        for (const auto& n : envNames) {
            out += ": \"${" + n + "=}\"\n";
        }
    }
    return out.empty() ? out : out + "\n";
}

// The head's port (`--port`, 6379) or dashboard port (`--dashboard-port`, 8265) the script
// chose (launcher.ray_start_args, issue 45): the workers join and the job is submitted there.
std::string rayPort(const LaunchPlan& plan, const std::string& option, const std::string& dflt) {
    for (const auto& w : plan.rayStartArgs) {
        if (w.rfind(option + "=", 0) == 0) {
            return w.substr(option.size() + 1);
        }
    }
    return dflt;
}

std::string headStart(const LaunchPlan& plan) {
    std::string out;
    if (plan.rayStop) {
        out += "ray stop";
        for (const auto& w : plan.rayStopArgs) {
            out += " " + detail::exportWord(w);
        }
        out += "\n";
    }
    out += "ray start --head --node-ip-address=\"${MASTER_ADDR}\" --num-gpus " +
           std::to_string(plan.gpusPerNode) + " --disable-usage-stats";
    if (rayPort(plan, "--dashboard-port", "").empty()) {
        out += " --dashboard-port=8265";
    }
    for (const auto& w : plan.rayStartArgs) {
        out += " " + detail::exportWord(w);
    }
    return out + "\n";
}

std::string preLaunchBlock(const LaunchPlan& plan) {
    if (plan.preLaunch.empty()) {
        return "";
    }
    std::string out =
        "# Pre-launch steps (launcher.pre_launch: auxiliary servers, the loops waiting for "
        "them, run-time probes), verbatim.\n"
        // the script's own text ran without nounset / pipefail: `$(nvidia-smi | grep -o NVLink
        // | wc -l)` finding nothing must not end the job
        "set +uo pipefail\n";
    for (const auto& step : plan.preLaunch) {
        out += step;
        if (!step.empty() && step.back() != '\n') {
            out += "\n";
        }
    }
    return out + "set -uo pipefail\n\n";
}

std::string jobScript(const Recipe& r, const LaunchPlan& plan) {
    std::string out =
        header(r, plan,
               plan.multiNode ? "Job script: run on the head node after ray-head.sh "
                                "and ray-worker.sh (see launch-steps.txt)."
                              : "Job script: run on the node (see launch-steps.txt).");
    if (!r.description.empty()) {
        out += "# " + commentSafe(r.description) + "\n";
    }
    out +=
        "# The runplane-meta lines carry the recipe fields no flag below carries; "
        "`runplanectl import` reads them back.\n";
    out += plan.metaBlock;
    out += "set -euo pipefail\n\n";
    out += parameterChecks(plan);
    const bool needDir = !plan.milesScript || plan.multiNode;
    if (needDir) {
        out += kScriptDirLine;
        out += "\n";
    }
    out += preLaunchBlock(plan);
    out += "# Environment";
    out += plan.milesScript ? ".\n" : " (also handed to every Ray worker via RUNTIME_ENV_JSON).\n";
    out += envBlock(plan);
    out += "\n";
    // a pre-launch step building MODEL_ARGS (miles' `read -ra MODEL_ARGS <<< "$(python3
    // .../model_args_utils.py NAME)"`) stands for the model file
    const bool stepsBuildModelArgs =
        std::any_of(plan.preLaunch.begin(), plan.preLaunch.end(), [](const std::string& step) {
            std::istringstream lines(step);
            for (std::string line; std::getline(lines, line);) {
                std::istringstream in(line);
                std::vector<std::string> w;
                for (std::string t; in >> t;) {
                    w.push_back(t);
                }
                if (!w.empty() && w[0] == "read" &&
                    std::find(w.begin(), w.end(), "MODEL_ARGS") != w.end()) {
                    return true;
                }
            }
            return false;
        });
    if (!plan.milesScript && !plan.modelFile.empty() && !stepsBuildModelArgs) {
        out +=
            "# MODEL_ARGS: the framework's model file (keep this script in its scripts/ "
            "folder).\n";
        out += "source \"${SCRIPT_DIR}/models/" + plan.modelFile + ".sh\"\n\n";
    }
    for (const auto& g : plan.groups) {
        if (g.name == "MODEL_ARGS" || g.lines.empty()) {
            continue;
        }
        out += arrayBlock(g) + "\n";
    }
    if (!plan.milesScript) {
        out += "RUNTIME_ENV_JSON=\"{\n  \\\"env_vars\\\": {\n";
        for (std::size_t i = 0; i < plan.runtimeEnv.size(); ++i) {
            const auto& [key, value] = plan.runtimeEnv[i];
            out += "    \\\"" + key + "\\\": " + value;
            out += i + 1 < plan.runtimeEnv.size() ? ",\n" : "\n";
        }
        out += "  }\n}\"\n\n";
    }
    if (!plan.milesScript && !plan.multiNode) {
        out += "# Ray: start the head here, then wait until it shows all its GPUs.\n";
        out += headStart(plan);
    }
    if (plan.multiNode) {
        out += "# Ray: ray-head.sh and ray-worker.sh have run on the nodes; wait for all " +
               std::to_string(plan.nodes * plan.gpusPerNode) + " GPUs.\n";
    }
    if (!plan.milesScript || plan.multiNode) {
        out += "bash \"${SCRIPT_DIR}/ray-wait.sh\"\n\n";
    }
    if (!plan.workdir.empty()) {
        out += "cd " + shellQuote(plan.workdir) + std::string("  # ") + detail::kDerivedMark + "\n";
    }
    if (plan.milesScript) {
        out += plan.python + " " + shellQuote(plan.program);
        if (!plan.subcommand.empty()) {
            out += " " + plan.subcommand;
        }
        for (const auto& g : plan.groups) {
            if (g.lines.empty()) {
                continue;
            }
            if (g.shellTextElements) {
                out += " \\\n   --extra-args \"${" + g.name + "[*]}\"";
            } else {
                out += " \\\n   \"${" + g.name + "[@]}\"";
            }
        }
        out += "\n";
        return out;
    }
    out +=
        "ray job submit --address=\"http://127.0.0.1:" + rayPort(plan, "--dashboard-port", "8265") +
        "\" \\\n";
    out += "   --runtime-env-json=\"${RUNTIME_ENV_JSON}\" \\\n";
    for (const auto& w : plan.raySubmitArgs) {
        out += "   " + detail::exportWord(w) + " \\\n";
    }
    out += "   -- " + plan.python + " " + shellQuote(plan.program);
    for (const auto& g : plan.groups) {
        if (g.name == "MODEL_ARGS" || !g.lines.empty()) {
            out += " \\\n   \"${" + g.name + "[@]}\"";
        }
    }
    out += "\n";
    return out;
}

std::string rayHead(const Recipe& r, const LaunchPlan& plan) {
    std::string out =
        header(r, plan, "Ray head: run first, on the head node (MASTER_ADDR = its LAN IP).");
    out += "set -euo pipefail\n\n" + envBlock(plan) + "\n" + headStart(plan);
    return out;
}

std::string rayWorker(const Recipe& r, const LaunchPlan& plan) {
    std::string out =
        header(r, plan,
               "Ray worker: run on every worker node (" + std::to_string(plan.nodes - 1) +
                   ") after ray-head.sh; NODE_IP = the LAN IP of that node.");
    out += "set -euo pipefail\n\n" + envBlock(plan);
    out += "NODE_IP=\"${NODE_IP:?set NODE_IP to the LAN IP of this worker}\"\n\n";
    out += "ray start --address=\"${MASTER_ADDR}:" + rayPort(plan, "--port", "6379") +
           "\" --node-ip-address=\"${NODE_IP}\" --num-gpus " + std::to_string(plan.gpusPerNode) +
           "\n";
    return out;
}

std::string rayWait(const Recipe& r, const LaunchPlan& plan) {
    std::string out = header(r, plan,
                             "Waits until `ray status` shows the expected GPU total (all nodes "
                             "joined).");
    out += "# Gives up after RUNPLANE_RAY_WAIT_TIMEOUT_S seconds (default 600).\n";
    out += "set -u\n";
    out += "EXPECTED_GPUS=" + std::to_string(plan.nodes * plan.gpusPerNode) + "\n";
    out += R"SH(timeout_s="${RUNPLANE_RAY_WAIT_TIMEOUT_S:-600}"
interval_s="${RUNPLANE_RAY_WAIT_INTERVAL_S:-5}"
waited=0
while true; do
    total="$(ray status 2>/dev/null | sed -n 's#^ *[0-9.]*/\([0-9.]*\) GPU$#\1#p' | head -n 1)"
    total="${total%%.*}"
    if [ -n "${total}" ] && [ "${total}" -ge "${EXPECTED_GPUS}" ]; then
        echo "ray-wait: ${total} of ${EXPECTED_GPUS} GPUs in the cluster"
        exit 0
    fi
    if [ "${waited}" -ge "${timeout_s}" ]; then
        echo "ray-wait: only ${total:-0} of ${EXPECTED_GPUS} GPUs joined after ${waited}s" >&2
        exit 1
    fi
    sleep "${interval_s}"
    waited=$((waited + interval_s))
done
)SH";
    return out;
}

std::vector<std::string> steps(const LaunchPlan& plan, const std::string& job) {
    const std::string total = std::to_string(plan.nodes * plan.gpusPerNode);
    if (!plan.multiNode) {
        if (plan.milesScript) {
            return {"1. on the node: bash " + job + "  (the miles launcher starts Ray itself)"};
        }
        return {"1. on the node: bash " + job +
                "  (starts the Ray head, waits for its GPUs, submits the job)"};
    }
    return {
        "1. head node: MASTER_ADDR=<head LAN IP> NCCL_SOCKET_IFNAME=<nic> bash ray-head.sh",
        "2. each of the " + std::to_string(plan.nodes - 1) +
            " worker nodes: MASTER_ADDR=<head LAN IP> NODE_IP=<its LAN IP> "
            "NCCL_SOCKET_IFNAME=<nic> bash ray-worker.sh",
        "3. head node: bash ray-wait.sh  (until `ray status` shows " + total + " GPUs)",
        "4. head node: MASTER_ADDR=<head LAN IP> NCCL_SOCKET_IFNAME=<nic> bash " + job +
            "  (waits again, then submits the job)",
    };
}

}  // namespace

const char* toString(Flavour flavour) {
    switch (flavour) {
        case Flavour::Slime:
            return "slime";
        case Flavour::Vime:
            return "vime";
        case Flavour::Miles:
            return "miles";
    }
    return "?";
}

std::optional<Flavour> flavourFromName(std::string_view name) {
    for (Flavour f : {Flavour::Slime, Flavour::Vime, Flavour::Miles}) {
        if (name == toString(f)) {
            return f;
        }
    }
    return std::nullopt;
}

Flavour flavourOf(Framework framework) {
    switch (framework) {
        case Framework::Slime:
            return Flavour::Slime;
        case Framework::Vime:
            return Flavour::Vime;
        case Framework::Miles:
            return Flavour::Miles;
    }
    return Flavour::Slime;
}

const char* toString(NoteLevel level) {
    switch (level) {
        case NoteLevel::Error:
            return "error";
        case NoteLevel::Warning:
            return "warning";
        case NoteLevel::Info:
            return "info";
    }
    return "?";
}

std::string LaunchNote::format() const {
    std::string out = detail::escapeControl(file);
    if (line > 0) {
        out += (out.empty() ? "line " : ":") + std::to_string(line);
        if (column > 0) {
            out += ":" + std::to_string(column);
        }
    }
    if (!out.empty()) {
        out += ": ";
    }
    out += toString(level);
    out += ": ";
    if (!field.empty() && file.empty()) {
        out += field + ": ";
    }
    out += detail::escapeControl(message);
    return out;
}

bool hasErrors(const std::vector<LaunchNote>& notes) {
    for (const auto& n : notes) {
        if (n.level == NoteLevel::Error) {
            return true;
        }
    }
    return false;
}

Result<LaunchBundle> exportLaunch(const Recipe& recipe, Flavour flavour,
                                  const ExportOptions& options) {
    if (recipe.model.name.empty() && !recipe.model.shape.has_value()) {
        return Error{"recipe '" + recipe.name + "' names no model (model.name)"};
    }
    if (recipe.batch.rolloutBatchSize <= 0) {
        return Error{"recipe '" + recipe.name +
                     "' has no batch.rollout_batch_size, which every framework requires"};
    }
    LaunchPlan plan = detail::buildPlan(recipe, flavour, options);
    LaunchBundle bundle;
    const std::string stem = safeFileStem(recipe.name.empty() ? recipe.model.name : recipe.name);
    bundle.jobScript = "run-" + stem + ".sh";
    bundle.files.push_back({bundle.jobScript, jobScript(recipe, plan), true});
    if (plan.multiNode) {
        bundle.files.push_back({"ray-head.sh", rayHead(recipe, plan), true});
        bundle.files.push_back({"ray-worker.sh", rayWorker(recipe, plan), true});
    }
    if (!plan.milesScript || plan.multiNode) {
        bundle.files.push_back({"ray-wait.sh", rayWait(recipe, plan), true});
    }
    bundle.steps = steps(plan, bundle.jobScript);
    std::string stepsText = "Launch order for recipe '" + commentSafe(recipe.name) + "' (" +
                            toString(flavour) + ", " + std::to_string(plan.nodes) + " node(s) x " +
                            std::to_string(plan.gpusPerNode) + " GPUs):\n";
    for (const auto& s : bundle.steps) {
        stepsText += s + "\n";
    }
    bundle.files.push_back({"launch-steps.txt", stepsText, false});
    bundle.notes = std::move(plan.notes);
    return bundle;
}

Status writeBundle(const LaunchBundle& bundle, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return Error{"cannot create '" + dir + "': " + ec.message()};
    }
    for (const auto& file : bundle.files) {
        const std::string path = (std::filesystem::path(dir) / file.name).string();
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << file.content;
        out.close();
        if (!out) {
            return Error{"cannot write '" + path + "'"};
        }
        if (::chmod(path.c_str(), file.executable ? 0755 : 0644) != 0) {
            return Error{"cannot set the mode of '" + path + "'"};
        }
    }
    return {};
}

}  // namespace runplane::plan::launch
