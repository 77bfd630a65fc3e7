// Pre-launch steps of a launch script (docs/launch-scripts.md, "Pre-launch steps"): what the main
// script runs before its launch command that the run needs but no recipe field describes -- a
// background server (an on-policy-distillation teacher), the loop that waits for it, and
// run-time probes (`X=$(nvidia-smi ...)` and the if blocks that decide on such variables). They
// are kept verbatim, with the script's own scalar variables they read bound in front, and the
// variables a probe sets stay symbolic (${NAME}) so that what depends on them is written back as
// a reference, not as a guess. Also the script's own `ray start` / `ray stop` words.

#include <algorithm>
#include <set>
#include <sstream>

#include "backend/launch/bash_eval.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

bool contains(const std::string& text, std::string_view what) {
    return text.find(what) != std::string::npos;
}

// NAMEs read as $NAME / ${NAME...} in text.
std::set<std::string> namesRead(const std::string& text) {
    std::set<std::string> out;
    for (std::size_t i = 0; i + 1 < text.size(); ++i) {
        if (text[i] != '$') {
            continue;
        }
        std::size_t j = i + 1;
        if (text[j] == '{') {
            ++j;
        }
        const std::size_t start = j;
        while (j < text.size() && isNameChar(text[j])) {
            ++j;
        }
        if (j > start && isNameStart(text[start])) {
            out.insert(text.substr(start, j - start));
        }
    }
    // bare names inside `(( ... ))` and `$(( ... ))`: `$((8 * NUM_GPUS))` reads NUM_GPUS (issue 45)
    for (std::size_t at = text.find("(("); at != std::string::npos; at = text.find("((", at + 2)) {
        const std::size_t end = text.find("))", at + 2);
        const std::string expr =
            text.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
        for (std::size_t i = 0; i < expr.size(); ++i) {
            if (!isNameStart(expr[i]) ||
                (i > 0 && (isNameChar(expr[i - 1]) || expr[i - 1] == '$'))) {
                continue;
            }
            std::size_t j = i;
            while (j < expr.size() && isNameChar(expr[j])) {
                ++j;
            }
            out.insert(expr.substr(i, j - i));
            i = j;
        }
    }
    return out;
}

// A C-style `for ((...))` loop whose body only assigns (`NAME=word`, `NAME+=(word)`) under
// arithmetic tests (`if (( ... )); then ... else ... fi`), with no command substitution.
bool computesOnly(const std::string& body) {
    if (body.find("$(") != std::string::npos || body.find('`') != std::string::npos) {
        return false;
    }
    std::istringstream in(body);
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        const std::size_t a = line.find_first_not_of(" \t");
        if (a == std::string::npos || line[a] == '#') {
            continue;
        }
        std::string t = line.substr(a);
        while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == ';')) {
            t.pop_back();
        }
        if (first) {
            if (t.rfind("for ((", 0) != 0) {
                return false;
            }
            first = false;
            continue;
        }
        if (t == "do" || t == "done" || t == "else" || t == "fi" || t == "then" ||
            (t.rfind("if ((", 0) == 0 && t.find("))") != std::string::npos) ||
            (t.rfind("elif ((", 0) == 0 && t.find("))") != std::string::npos)) {
            continue;
        }
        std::size_t n = 0;
        while (n < t.size() && isNameChar(t[n])) {
            ++n;
        }
        const bool assign = n > 0 && isNameStart(t[0]) && n < t.size() &&
                            (t[n] == '=' || t.compare(n, 2, "+=") == 0) &&
                            t.find_first_of(";&|<>", n) == std::string::npos;
        if (!assign) {
            return false;
        }
    }
    return !first;
}

// X=(...$(cmd)...) builds an array: not a scalar probe
bool assignsArray(const Node& node) {
    for (const auto& a : node.commands[0].assigns) {
        if (a.isArray) {
            return true;
        }
    }
    return false;
}

bool firstWordIs(const SimpleCommand& cmd, std::string_view word) {
    return !cmd.words.empty() && cmd.words[0].literal() == word;
}

// Every branch of the if block only assigns scalars or runs echo / printf / exit / `:`.
bool onlyScalarsOrMessages(const Node& node) {
    auto plain = [](const std::vector<Node>& body) {
        for (const auto& n : body) {
            if (n.kind != Node::Kind::Commands) {
                return false;
            }
            for (const auto& cmd : n.commands) {
                for (const auto& a : cmd.assigns) {
                    if (a.isArray || !cmd.words.empty()) {
                        return false;
                    }
                }
                if (!cmd.words.empty() && !firstWordIs(cmd, "echo") &&
                    !firstWordIs(cmd, "printf") && !firstWordIs(cmd, "exit") &&
                    !firstWordIs(cmd, ":")) {
                    return false;
                }
            }
        }
        return true;
    };
    for (const auto& b : node.branches) {
        if (!plain(b.body)) {
            return false;
        }
    }
    return plain(node.elseBody);
}

}  // namespace

void collectNames(const std::vector<Node>& nodes, std::set<std::string>& names) {
    for (const auto& n : nodes) {
        for (const auto& cmd : n.commands) {
            for (const auto& a : cmd.assigns) {
                names.insert(a.name);
            }
            if (!cmd.words.empty() && cmd.words[0].literal() == "export") {
                for (std::size_t i = 1; i < cmd.words.size(); ++i) {
                    Assignment a;
                    if (splitAssignment(cmd.words[i], a)) {
                        names.insert(a.name);
                    }
                }
            }
            if (!cmd.words.empty() && cmd.words[0].literal() == "printf" && cmd.words.size() > 2 &&
                cmd.words[1].literal() == "-v") {
                names.insert(cmd.words[2].literal());
            }
            if (!cmd.words.empty() &&
                (cmd.words[0].literal() == "read" || cmd.words[0].literal() == "declare" ||
                 cmd.words[0].literal() == "local" || cmd.words[0].literal() == "mapfile" ||
                 cmd.words[0].literal() == "readarray")) {
                for (std::size_t i = 1; i < cmd.words.size(); ++i) {
                    const std::string w = cmd.words[i].literal();
                    if (!w.empty() && w[0] != '-') {
                        names.insert(w);
                    }
                }
            }
        }
        for (const auto& b : n.branches) {
            collectNames(b.cond, names);
            collectNames(b.body, names);
        }
        collectNames(n.elseBody, names);
        collectNames(n.inner, names);
        names.insert(n.assignedNames.begin(), n.assignedNames.end());
    }
}

void Evaluator::recordRay(const std::vector<Field>& fields) {
    if (m_depth != 0 || m_out.launch.has_value() || fields.size() < 2 || fields[0].text != "ray") {
        return;
    }
    if (fields[1].text == "start" || fields[1].text == "stop") {
        m_out.rayCommands.push_back(fields);
    }
}

void Evaluator::setProbeVar(const std::string& name, int line) {
    Var v;
    Value val;
    val.text = "${" + name + "}";
    val.symbolic = true;
    val.file = m_file;
    val.line = line;
    v.values = {val};
    m_vars[name] = v;
    m_probeVars.insert(name);
}

ScriptReading::PreLaunchStep Evaluator::verbatimStep(const Node& node, bool bindOnce) {
    std::string body;
    for (int l = node.line; l <= node.endLine && l >= 1 && l <= static_cast<int>(m_lines.size());
         ++l) {
        body += m_lines[static_cast<std::size_t>(l - 1)] + "\n";
    }
    // the script's own scalars it reads, bound in front (the export does not set them)
    std::string binds;
    for (const auto& name : namesRead(body)) {
        const auto it = m_vars.find(name);
        if (it == m_vars.end() || it->second.isArray || it->second.unknown ||
            it->second.values.empty() || !it->second.values[0].known ||
            it->second.values[0].symbolic || (bindOnce && m_bound.count(name)) ||
            name == "SCRIPT_DIR" || name == "BASH_SOURCE" || name == "0") {
            continue;
        }
        if (bindOnce) {
            m_bound.insert(name);
        }
        binds += name + "=" + shellQuote(it->second.values[0].text) + "\n";
    }
    // The export runs its steps under `set -e`; one the original ran without it keeps that.
    if (!m_errexit) {
        body = "set +e\n" + body + "set -e\n";
    }
    return {m_file, node.line, node.endLine, binds + body};
}

void Evaluator::recordDefinition(const Node& node, const std::set<std::string>& names) {
    ScriptReading::PreLaunchStep step = verbatimStep(node, false);
    std::string arrays;
    for (const auto& name : names) {
        const auto it = m_vars.find(name);
        if (it == m_vars.end() || !it->second.isArray || it->second.unknown) {
            continue;
        }
        std::string words;
        bool known = true;
        for (const auto& v : it->second.values) {
            known = known && v.known && !v.symbolic;
            words += (words.empty() ? "" : " ") + shellQuote(v.text);
        }
        if (known) {
            arrays += name + "=(" + words + ")\n";
        }
    }
    step.text = arrays + step.text;
    for (const auto& name : names) {
        m_out.definitions[name] = step;
    }
}

void Evaluator::addPreLaunch(const Node& node, const std::string& what) {
    m_out.preLaunch.push_back(verbatimStep(node, true));
    note(NoteLevel::Info, node.line,
         what + " (lines " + std::to_string(node.line) + "-" + std::to_string(node.endLine) +
             "): kept verbatim as a pre-launch step (launcher.pre_launch)");
}

bool Evaluator::capturePreLaunch(const Node& node) {
    if (node.kind == Node::Kind::Commands && !node.commands.empty() &&
        node.ops.size() == node.commands.size() && node.ops.back() == "&") {
        const SimpleCommand& first = node.commands.front();
        if (firstWordIs(first, "ray")) {
            return false;
        }
        addPreLaunch(node, "a command run in the background");
        return true;
    }
    // `TEACHER_PID=$!` right after a background server: the export needs the PID its wait loop
    // (`kill -0 "${TEACHER_PID}"`) and its cleanup read; carried, the name stays ${TEACHER_PID}
    if (node.kind == Node::Kind::Commands && node.commands.size() == 1 &&
        node.commands[0].words.empty() && node.commands[0].assigns.size() == 1 &&
        !node.commands[0].assigns[0].isArray && !m_out.preLaunch.empty()) {
        std::string raw = node.commands[0].assigns[0].value.raw;
        if (raw.size() > 1 && raw.front() == '"' && raw.back() == '"') {
            raw = raw.substr(1, raw.size() - 2);
        }
        if (raw == "$!" || raw == "${!}") {
            addPreLaunch(node, "the PID of the command run in the background");
            setProbeVar(node.commands[0].assigns[0].name, node.line);
            return true;
        }
    }
    // a wait for the server: while / until, or vime's OPD form `for i in $(seq 1 120); do ...
    // curl ... /health ...; sleep 5; done`
    if (node.kind == Node::Kind::Unsupported &&
        (node.what == "while loop" || node.what == "until loop" || node.what == "for loop")) {
        std::string body;
        for (int l = node.line; l <= node.endLine && l <= static_cast<int>(m_lines.size()); ++l) {
            body += m_lines[static_cast<std::size_t>(l - 1)] + "\n";
        }
        const bool waits = (contains(body, "curl") || contains(body, "wget") ||
                            contains(body, "nc ") || contains(body, "health")) &&
                           !contains(body, "ray status");
        if (!waits) {
            // `for ((i=0; i<NLAYERS; i++)); do if (( i < K )); then arr+=(0); else arr+=(1); fi;
            // done` (vime's coding_agent_rl MoE layer pattern): a loop that only computes values
            // from the script's scalars. Carried, so that a step reading what it builds (`printf
            // -v MOE_LAYER_FREQ "[%s]" "$(IFS=', '; echo "${arr[*]}")"`) finds it (issue 45)
            if (!computesOnly(body)) {
                return false;
            }
            addPreLaunch(node, "a loop computing values from the script's own scalars");
            for (const auto& name : node.assignedNames) {
                setProbeVar(name, node.line);
            }
            return true;
        }
        addPreLaunch(node, "a loop waiting for a server");
        for (const auto& name : node.assignedNames) {
            taintName(name, node.line, node.what);
        }
        taint(node.inner, node.line, node.what);
        return true;
    }
    // X=$(nvidia-smi ...): a value only the machine knows; so is any other X=$(cmd) the reader
    // does not evaluate (`$(date +%Y%m%d)`, `$(echo "$DEVICES" | tr ',' '\n' | wc -l)`,
    // `$(basename "$DATASET")`): the export computes it the same way, X stays ${X}
    if (node.kind == Node::Kind::Commands && node.commands.size() == 1 &&
        node.commands[0].words.empty() && !node.commands[0].assigns.empty()) {
        bool probe = false;
        bool gpus = false;
        for (const auto& a : node.commands[0].assigns) {
            for (const auto& part : a.value.parts) {
                if (part.kind != WordPart::Kind::CommandSubst) {
                    continue;
                }
                const std::string& t = part.text;
                bool read = t.rfind("seq ", 0) == 0 || t.rfind("cd ", 0) == 0 ||
                            t.rfind("dirname ", 0) == 0 || t.rfind("realpath ", 0) == 0 ||
                            t.rfind("readlink ", 0) == 0 || contains(t, "model_args_utils.py");
                if (!read && t.rfind("echo ", 0) == 0 && contains(t, "|")) {
                    // `$(echo "$NAME" | sed ... | tr ...)` on known words is read
                    // (bash_textfilter.h); a form it cannot read stays a step, with no warning
                    const std::size_t notesBefore = m_out.notes.size();
                    const Value v = evalCommandSubst(t, node.line);
                    if (m_out.notes.size() > notesBefore) {
                        m_out.notes.resize(notesBefore);
                    }
                    read = v.known && !v.symbolic;
                }
                // a command of the machine, not a function of the script (which the export
                // would not have): `$(start_teacher ...)` stays not understood
                static const std::set<std::string, std::less<>> kCommands = {
                    "date",     "echo",       "printf", "hostname", "basename", "ps",    "python",
                    "python3",  "nvidia-smi", "awk",    "grep",     "cat",      "ls",    "tr",
                    "wc",       "head",       "tail",   "sed",      "cut",      "ip",    "uname",
                    "nproc",    "whoami",     "id",     "git",      "pip",      "pip3",  "hostname",
                    "expr",     "sort",       "find",   "jq",       "free",     "lscpu", "rocm-smi",
                    "mktemp",   "uuidgen",    "pwd",    "stat",     "getent",   "curl",  "nvcc",
                    "rocminfo", "lspci",      "numactl"};
                const std::string first = t.substr(0, t.find_first_of(" \t\n|;&)"));
                const bool command =
                    kCommands.count(first) > 0 || first.find('/') != std::string::npos;
                probe = probe || (!read && command);
                gpus = gpus || t.rfind("nvidia-smi", 0) == 0;
            }
        }
        if (!probe && !assignsArray(node) && !m_probeVars.empty()) {
            // `NUM_GPUS=${NUM_GPUS:-${DETECTED_GPUS}}` after a probe set DETECTED_GPUS (slime's
            // run-qwen3-4B.sh, the GPU count from `nvidia-smi -L | wc -l`): a value only the run
            // knows, carried like the probe, so that the count stays ${NUM_GPUS} (issue 45)
            for (const auto& a : node.commands[0].assigns) {
                std::string raw = a.value.raw;
                if (raw.size() > 1 && raw.front() == '"' && raw.back() == '"') {
                    raw = raw.substr(1, raw.size() - 2);
                }
                // the self-default form NAME=${NAME:-${PROBE}} (NAME is the site's to give), or a
                // value computed by arithmetic from probes and the script's own scalars only:
                // `ROLLOUT_BATCH_SIZE=$((8 * NUM_GPUS))`, `ACTOR_GPUS=${ACTOR_GPUS:-$((NUM_GPUS /
                // 2))}` (vime's run-qwen2.5-3B-ai21-async.sh); the scalars are bound in front
                const bool selfDefault = raw.rfind("${" + a.name + ":-", 0) == 0 ||
                                         raw.rfind("${" + a.name + "-", 0) == 0;
                bool readsProbe = false;
                bool derived = true;
                for (const auto& name : namesRead(raw)) {
                    probe = probe || (selfDefault && m_probeVars.count(name) > 0);
                    readsProbe = readsProbe || m_probeVars.count(name) > 0;
                    const auto it = m_vars.find(name);
                    const bool scalar = it != m_vars.end() && !it->second.isArray &&
                                        !it->second.unknown && !it->second.values.empty() &&
                                        it->second.values[0].known &&
                                        !it->second.values[0].symbolic;
                    derived = derived && (m_probeVars.count(name) > 0 || scalar || name == a.name);
                }
                // (arithmetic only: a probe read in a plain string stays a ${PROBE} splice)
                probe = probe || (readsProbe && derived && contains(raw, "$(("));
            }
        }
        if (!probe || assignsArray(node)) {
            return false;
        }
        addPreLaunch(
            node, gpus ? "a run-time probe of the GPUs" : "a value computed when the script runs");
        for (const auto& a : node.commands[0].assigns) {
            setProbeVar(a.name, node.line);
        }
        return true;
    }
    // `[ "$NVLINK_COUNT" -gt 0 ] && HAS_NVLINK=1 || HAS_NVLINK=0`: the if block below written
    // as a command list, on probe variables only
    if (node.kind == Node::Kind::Commands && node.commands.size() >= 2 && !m_probeVars.empty()) {
        // (and `[ -z "$N" ] || [ "$N" -le 0 ] && N=4`: several tests before the assignments)
        auto isTest = [](const SimpleCommand& c) {
            return !c.words.empty() && c.assigns.empty() &&
                   (firstWordIs(c, "[") || firstWordIs(c, "[[") || firstWordIs(c, "test"));
        };
        std::size_t tests = 0;
        while (tests + 1 < node.commands.size() && isTest(node.commands[tests])) {
            ++tests;
        }
        bool ok = tests > 0;
        std::set<std::string> read;
        for (std::size_t t = 0; ok && t < tests; ++t) {
            const SimpleCommand& test = node.commands[t];
            for (std::size_t i = 1; i < test.words.size(); ++i) {
                const auto names = namesRead(test.words[i].raw);
                read.insert(names.begin(), names.end());
            }
        }
        for (const auto& name : read) {
            ok = ok && m_probeVars.count(name) > 0;
        }
        for (std::size_t i = tests; ok && i < node.commands.size(); ++i) {
            const SimpleCommand& c = node.commands[i];
            ok = c.words.empty() && !c.assigns.empty() &&
                 std::none_of(c.assigns.begin(), c.assigns.end(),
                              [](const auto& a) { return a.isArray; });
        }
        if (ok && !read.empty()) {
            addPreLaunch(node, "a command list deciding on a run-time probe");
            for (std::size_t i = tests; i < node.commands.size(); ++i) {
                for (const auto& a : node.commands[i].assigns) {
                    setProbeVar(a.name, node.line);
                }
            }
            return true;
        }
    }
    // an if block on the machine itself (a file test, `command -v nvidia-smi`, `python3 -c
    // ...`) whose branches only set scalars, echo or exit: a run-time probe as well
    if (node.kind == Node::Kind::If && !node.branches.empty() && onlyScalarsOrMessages(node)) {
        std::string why;
        const auto saved = m_conditionParams;
        const Truth t = evalCondition(node.branches[0].cond, &why);
        m_conditionParams = saved;
        if (t == Truth::Unknown &&
            (contains(why, "runs a command") || contains(why, "tests the file system"))) {
            addPreLaunch(node, "an if block testing the machine");
            std::set<std::string> names;
            collectNames({node}, names);
            for (const auto& name : names) {
                setProbeVar(name, node.line);
            }
            return true;
        }
    }
    // if blocks that decide on probe variables only
    if (node.kind == Node::Kind::If && !m_probeVars.empty()) {
        std::set<std::string> read;
        for (const auto& b : node.branches) {
            for (const auto& n : b.cond) {
                for (const auto& cmd : n.commands) {
                    for (const auto& w : cmd.words) {
                        const auto names = namesRead(w.raw);
                        read.insert(names.begin(), names.end());
                    }
                }
            }
        }
        if (read.empty()) {
            return false;
        }
        for (const auto& name : read) {
            if (!m_probeVars.count(name)) {
                return false;
            }
        }
        // an array appended on a probe's verdict (`X+=(--flag)` on an AMD node) stays an array
        // of the reader (evalIf keeps its values and says the append is left out)
        for (const auto& b : node.branches) {
            for (const auto& n : b.body) {
                for (const auto& cmd : n.commands) {
                    for (const auto& a : cmd.assigns) {
                        if (a.isArray) {
                            return false;
                        }
                    }
                }
            }
        }
        addPreLaunch(node, "an if block deciding on a run-time probe");
        std::set<std::string> assigned;
        for (const auto& b : node.branches) {
            for (const auto& n : b.body) {
                for (const auto& cmd : n.commands) {
                    for (const auto& a : cmd.assigns) {
                        assigned.insert(a.name);
                    }
                }
            }
        }
        for (const auto& n : node.elseBody) {
            for (const auto& cmd : n.commands) {
                for (const auto& a : cmd.assigns) {
                    assigned.insert(a.name);
                }
            }
        }
        for (const auto& name : assigned) {
            setProbeVar(name, node.line);
        }
        return true;
    }
    return false;
}

void Evaluator::carryPythonModelArgs(int readLine, const std::string& name) {
    // the two lines (`X="$(python3 .../model_args_utils.py NAME)"`, the read), carried verbatim
    // so that an export builds MODEL_ARGS the same way (miles has no models/NAME.sh for every
    // name model_args_utils.py knows)
    if (m_depth != 0 || m_file != m_mainPath || readLine < 2 ||
        readLine > static_cast<int>(m_lines.size()) ||
        m_lines[static_cast<std::size_t>(readLine - 2)].find("model_args_utils.py") ==
            std::string::npos) {
        return;
    }
    Node lines;
    lines.line = readLine - 1;
    lines.endLine = readLine;
    m_out.definitions[name] = verbatimStep(lines, false);
}

}  // namespace runplane::plan::launch::detail
