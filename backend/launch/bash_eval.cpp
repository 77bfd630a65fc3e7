// Command-level evaluation of a launch script: assignments, export, source, if/elif/else decided
// from the given environment, and the launch command. Side-effect commands that cannot change the
// recipe (ray start, pkill, sleep, echo, ...) are recognised and skipped; everything else is
// reported as not understood, and what it might have assigned becomes unknown.

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "backend/launch/bash_eval.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/export_plan.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

const char* const kIgnorable[] = {
    "pkill",
    "kill",
    "killall",
    "sleep",
    "set",
    "cd",
    "pushd",
    "popd",
    "echo",
    "printf",
    "mkdir",
    "rm",
    "cp",
    "mv",
    "ln",
    "touch",
    "true",
    "false",
    ":",
    "nvidia-smi",
    "pip",
    "pip3",
    "wait",
    "trap",
    "ulimit",
    "umask",
    "date",
    "tee",
    "hostname",
    "sync",
    "chmod",
    "ls",
    "cat",
    "which",
    "shopt",
    "ssh",
    "bash",
    "sh",
    "torchrun",
    "wandb",
    "huggingface-cli",
    "git",
    "nvcc",
    "env",
    "export_env",
};

bool isIgnorable(const std::string& base) {
    for (const char* name : kIgnorable) {
        if (base == name) {
            return true;
        }
    }
    return false;
}

std::string baseName(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The regexes below run only on short words: std::regex recurses per character.
constexpr std::size_t kMaxRegexInput = 1024;

bool isPython(const std::string& base) {
    if (base.size() > kMaxRegexInput) {
        return false;
    }
    static const std::regex kPython(R"(python(3(\.[0-9]+)?)?)");
    return std::regex_match(base, kPython);
}

bool isLaunchProgram(const std::string& program) {
    if (program.size() > kMaxRegexInput) {
        return false;
    }
    static const std::regex kTrain(R"(train[A-Za-z0-9_]*\.py)");
    static const std::regex kRun(R"((.*/)?run_[A-Za-z0-9_.\-]*\.py)");
    return std::regex_match(baseName(program), kTrain) || std::regex_match(program, kRun);
}

}  // namespace

std::string commandText(const SimpleCommand& cmd) {
    std::string out;
    for (const auto& a : cmd.assigns) {
        out += (out.empty() ? "" : " ") + a.name + (a.isArray ? "=(...)" : "=" + a.value.raw);
    }
    for (const auto& w : cmd.words) {
        out += (out.empty() ? "" : " ") + w.raw;
    }
    if (out.size() > 90) {
        out = out.substr(0, 87) + "...";
    }
    return out;
}

ScriptReading Evaluator::take() {
    for (const auto& [name, var] : m_vars) {
        if (!var.isArray && !var.unknown && !var.values.empty() && var.values[0].known) {
            m_out.scalars[name] = var.values[0].text;
        }
    }
    return std::move(m_out);
}

void Evaluator::evalNodes(const std::vector<Node>& nodes) {
    struct Nest {
        int& depth;
        explicit Nest(int& d) : depth(d) { ++depth; }
        ~Nest() { --depth; }
    } nest(m_nodeNest);
    if (m_nodeNest > kMaxNesting * 2) {  // parsing already bounds one file; this bounds source
        if (!nodes.empty()) {
            m_column = 1;
            limitHit(nodes.front().line, "blocks and sourced files nested more than " +
                                             std::to_string(kMaxNesting * 2) +
                                             " levels deep; skipped");
        }
        return;
    }
    for (const auto& n : nodes) {
        if (m_stopped) {
            return;
        }
        evalNode(n);
    }
}

void Evaluator::evalNode(const Node& node) {
    if (evalFunctionOrHereDoc(node)) {
        return;
    }
    if (m_depth == 0 && !m_out.launch.has_value() && capturePreLaunch(node)) {
        return;
    }
    switch (node.kind) {
        case Node::Kind::If:
            evalIf(node);
            return;
        case Node::Kind::Unsupported: {
            if (argumentLoopRunsZeroTimes(node)) {
                return;
            }
            if (!node.caseSubject.empty() && evalCase(node)) {
                return;
            }
            note(NoteLevel::Warning, node.line,
                 "not understood: " + node.what +
                     (node.endLine > node.line ? " (lines " + std::to_string(node.line) + "-" +
                                                     std::to_string(node.endLine) + ")"
                                               : "") +
                     "; skipped");
            std::set<std::string> names(node.assignedNames.begin(), node.assignedNames.end());
            collectNames(node.inner, names);
            if (m_depth == 0 && !names.empty()) {
                recordDefinition(node, names);  // import decides whether an export needs it
            }
            taint(node.inner, node.line, node.what);
            for (const auto& name : node.assignedNames) {
                taintName(name, node.line, node.what);
            }
            return;
        }
        case Node::Kind::Commands:
            break;
    }
    if (node.commands.size() == 1) {
        // printf -v / read / mapfile the reader does not follow: the line is carried verbatim
        // when an export splices what it sets (import decides, as for a skipped loop)
        const SimpleCommand& cmd = node.commands[0];
        const std::string first = cmd.words.empty() ? std::string() : cmd.words[0].literal();
        const bool readHere = first == "read" && cmd.redirects.size() == 1 &&
                              cmd.redirects[0].rfind("<<<", 0) == 0;  // evalRead's own form
        std::set<std::string> names;
        collectNames({node}, names);
        if (m_depth == 0 && !m_out.launch.has_value() && !names.empty() && cmd.assigns.empty() &&
            (first == "printf" || first == "mapfile" || first == "readarray" ||
             (first == "read" && !readHere))) {
            recordDefinition(node, names);
        }
        evalCommand(node.commands[0]);
        // read -a NAME <<< "$(cmd)" with a command the reader does not run (miles' model-args
        // idiom aside): carried verbatim like the rest when an export splices NAME
        if (readHere && m_depth == 0 && !m_out.launch.has_value()) {
            for (const auto& name : names) {
                const auto it = m_vars.find(name);
                if (it != m_vars.end() && it->second.unknown &&
                    !m_out.pythonModelArgArrays.count(name)) {
                    recordDefinition(node, {name});
                }
            }
        }
        return;
    }
    std::vector<CmdKind> kinds;
    std::vector<std::vector<Field>> fields(node.commands.size());
    std::vector<std::string> whats(node.commands.size());
    for (std::size_t i = 0; i < node.commands.size(); ++i) {
        kinds.push_back(classify(node.commands[i], &fields[i], &whats[i]));
    }
    bool allPipes = true;
    for (const auto& op : node.ops) {
        allPipes = allPipes && (op == "|" || op == "|&");
    }
    bool restIgnorable = true;
    for (std::size_t i = 1; i < kinds.size(); ++i) {
        restIgnorable = restIgnorable && kinds[i] == CmdKind::Ignorable;
    }
    std::string text;
    for (std::size_t i = 0; i < node.commands.size(); ++i) {
        text += (i ? " " + node.ops[i - 1] + " " : "") + commandText(node.commands[i]);
    }
    if (kinds[0] == CmdKind::Launch && allPipes && restIgnorable) {
        evalCommand(node.commands[0]);
        return;
    }
    // X="$(...)" || exit 1: the assignment is what the run goes on with
    bool orExit = kinds[0] == CmdKind::Assign && kinds.size() > 1;
    for (std::size_t i = 1; i < kinds.size(); ++i) {
        orExit = orExit && node.ops[i - 1] == "||" &&
                 (kinds[i] == CmdKind::Exit || kinds[i] == CmdKind::Ignorable);
    }
    if (orExit) {
        evalCommand(node.commands[0]);
        return;
    }
    if (evalAndOrList(node, kinds)) {
        return;
    }
    bool harmless = true;
    for (auto k : kinds) {
        harmless = harmless && (k == CmdKind::Ignorable || k == CmdKind::Exit);
    }
    if (harmless) {
        for (std::size_t i = 0; i < kinds.size(); ++i) {
            recordRay(fields[i]);
        }
        note(NoteLevel::Info, node.line, "ignored (does not change the recipe): " + text);
        return;
    }
    note(NoteLevel::Warning, node.line, "not understood: the command list '" + text + "'; skipped");
    for (const auto& cmd : node.commands) {
        taintCommand(cmd, node.line, "the command list on line " + std::to_string(node.line));
    }
}

Evaluator::CmdKind Evaluator::classify(const SimpleCommand& cmd, std::vector<Field>* fields,
                                       std::string* what) {
    if (cmd.unsupported) {
        *what = cmd.unsupportedWhat;
        return CmdKind::Unknown;
    }
    if (cmd.words.empty()) {
        return CmdKind::Assign;
    }
    for (const auto& w : cmd.words) {
        auto f = expandWord(w, true);
        fields->insert(fields->end(), f.begin(), f.end());
        if (!fields->empty() && fields->front().known && fields->front().text == "export") {
            return CmdKind::Export;  // its NAME=value words are read by doExport, once
        }
    }
    if (fields->empty()) {
        return CmdKind::Assign;
    }
    // `exec CMD` runs CMD in place of the shell: the same command (issue 15: miles
    // examples/nccl_m2n/run-qwen3-0.6b.sh ends in `exec ray job submit ...`)
    if (fields->size() > 1 && (*fields)[0].known && (*fields)[0].text == "exec" &&
        (*fields)[1].known && (*fields)[1].text.rfind('-', 0) != 0) {
        fields->erase(fields->begin());
    }
    const Field& f0 = (*fields)[0];
    if (!f0.known) {
        *what = "the command name is not known (" + f0.why + ")";
        return CmdKind::Unknown;
    }
    const std::string& name = f0.text;
    const std::string base = baseName(name);
    if (name == "export")
        return CmdKind::Export;
    if (name == "source" || name == ".")
        return CmdKind::Source;
    if (name == "unset")
        return CmdKind::Unset;
    if (name == "exit")
        return CmdKind::Exit;
    if (name == "ray") {
        if (fields->size() >= 3 && (*fields)[1].text == "job" && (*fields)[2].text == "submit") {
            return CmdKind::Launch;
        }
        return CmdKind::Ignorable;
    }
    // the container housekeeping around a `docker run ... bash -s <<'EOF'` run
    if ((base == "docker" || base == "podman") && fields->size() >= 2) {
        static const std::set<std::string, std::less<>> kHousekeeping = {
            "pull", "rm", "stop", "kill", "login", "ps", "images", "inspect", "logs", "wait"};
        if (kHousekeeping.count((*fields)[1].text)) {
            return CmdKind::Ignorable;
        }
    }
    if (isPython(base)) {
        std::size_t i = 1;
        while (i < fields->size() && !(*fields)[i].text.empty() && (*fields)[i].text[0] == '-') {
            if ((*fields)[i].text == "-m" || (*fields)[i].text == "-c") {
                *what = "python " + (*fields)[i].text;
                return CmdKind::Ignorable;
            }
            ++i;
        }
        if (i < fields->size() && isLaunchProgram((*fields)[i].text)) {
            return CmdKind::Launch;
        }
        return CmdKind::Ignorable;
    }
    if ((base == "printf" && fields->size() > 1 && (*fields)[1].text == "-v") || base == "read" ||
        base == "declare" || base == "local" || base == "readonly" || base == "typeset" ||
        base == "mapfile" || base == "readarray" || base == "eval") {
        *what = "'" + base + "' assigns variables in ways the reader does not follow";
        return CmdKind::Unknown;
    }
    if (base == "set") {
        // errexit on or off: -e, -ex, -euo pipefail, -o errexit (and + to turn it off)
        for (std::size_t i = 1; i < fields->size(); ++i) {
            const std::string& w = (*fields)[i].text;
            if (w.size() < 2 || (w[0] != '-' && w[0] != '+') || w == "--") {
                continue;
            }
            const bool on = w[0] == '-';
            if ((w == "-o" || w == "+o") && i + 1 < fields->size()) {
                if ((*fields)[i + 1].text == "errexit") {
                    m_errexit = on;
                }
                ++i;
            } else if (w.find('e') != std::string::npos && w[1] != '-') {
                m_errexit = on;
            }
        }
    }
    if (isIgnorable(base)) {
        return CmdKind::Ignorable;
    }
    *what = "the command '" + name + "'";
    return CmdKind::Unknown;
}

bool Evaluator::evalRead(const SimpleCommand& cmd) {
    // read [-r] -a NAME <<< WORD  (also -ra / -ar): WORD split on blanks into the array NAME;
    // `IFS=',' read -r -a NAME <<< WORD` splits on the IFS given on the line instead
    // (vime's ROCm scripts count the GPUs of HIP_VISIBLE_DEVICES=6,7 this way)
    if (cmd.words.empty() || cmd.words[0].literal() != "read" || cmd.assigns.size() > 1 ||
        cmd.redirects.size() != 1 || cmd.redirects[0].rfind("<<<", 0) != 0) {
        return false;
    }
    std::string ifs = " \t\n";
    if (!cmd.assigns.empty()) {
        const Assignment& a = cmd.assigns[0];
        if (a.name != "IFS" || a.isArray || a.append) {
            return false;
        }
        const std::vector<Field> f = expandWord(a.value, false);
        if (f.size() > 1 || (f.size() == 1 && !f[0].known)) {
            return false;
        }
        ifs = f.empty() ? std::string() : f[0].text;
    }
    std::string name;
    bool array = false;
    for (std::size_t i = 1; i < cmd.words.size(); ++i) {
        const std::string w = cmd.words[i].literal();
        if (w == "-r") {
            continue;
        }
        if (w == "-a" || w == "-ra" || w == "-ar") {
            array = true;
            continue;
        }
        if (w.empty() || w[0] == '-' || !name.empty()) {
            return false;
        }
        name = w;
    }
    if (!array || name.empty() || !isNameStart(name[0])) {
        return false;
    }
    const Value v = scalarOf(parseWordText(cmd.redirects[0].substr(3), false, cmd.line));
    Var& var = m_vars[name];
    var = Var{};
    var.isArray = true;
    if (!v.known && v.why.ends_with(kPythonModelArgsMark)) {
        var.unknown = true;
        var.why = v.why;
        var.values = {unknownValue(cmd.line, v.why)};
        m_out.pythonModelArgArrays.insert(name);
        carryPythonModelArgs(cmd.line, name);
        return true;
    }
    if (!v.known) {
        var.unknown = true;
        var.why = v.why;
        var.values = {unknownValue(cmd.line, v.why)};
        return true;
    }
    // Each element gets v's provenance and a slice of its text; copying v whole per element was
    // quadratic in the word (found by fuzz_import).
    Value shell = v;
    shell.text.clear();
    // bash's field splitting: IFS white space (blank, tab, newline) runs separate fields and are
    // trimmed at both ends; every other IFS character ends a field (an empty one between two
    // of them is kept, a trailing one is not)
    const auto inIfs = [&ifs](char c) { return ifs.find(c) != std::string::npos; };
    const auto ifsWhite = [&inIfs](char c) { return isBlank(c) && inIfs(c); };
    std::size_t i = 0;
    while (i < v.text.size() && ifsWhite(v.text[i])) {
        ++i;
    }
    while (i < v.text.size()) {
        std::size_t j = i;
        while (j < v.text.size() && !inIfs(v.text[j])) {
            ++j;
        }
        Value item = shell;
        item.text.assign(v.text, i, j - i);
        var.values.push_back(std::move(item));
        while (j < v.text.size() && ifsWhite(v.text[j])) {
            ++j;
        }
        if (j < v.text.size() && inIfs(v.text[j])) {  // one non-white delimiter (and its blanks)
            ++j;
            while (j < v.text.size() && ifsWhite(v.text[j])) {
                ++j;
            }
        }
        i = j;
    }
    return true;
}

void Evaluator::evalCommand(const SimpleCommand& cmd) {
    if (evalRead(cmd)) {
        return;
    }
    std::vector<Field> fields;
    std::string what;
    const CmdKind kind = classify(cmd, &fields, &what);
    if ((kind == CmdKind::Ignorable || kind == CmdKind::Unknown) && runChildScript(cmd, fields)) {
        return;
    }
    switch (kind) {
        case CmdKind::Assign:
            for (const auto& a : cmd.assigns) {
                assign(a);
            }
            return;
        case CmdKind::Export:
            doExport(cmd, fields);
            return;
        case CmdKind::Source:
            if (cmd.assigns.empty()) {
                doSource(cmd, fields);
            } else {
                sourceWithAssignments(cmd, fields);
            }
            return;
        case CmdKind::Unset:
            for (std::size_t i = 1; i < fields.size(); ++i) {
                m_vars.erase(fields[i].text);
                std::erase_if(m_out.exports,
                              [&](const ExportRecord& r) { return r.name == fields[i].text; });
            }
            return;
        case CmdKind::Exit:
            note(NoteLevel::Info, cmd.line, "the script exits here; the rest is not read");
            m_out.exitAt = {m_file, cmd.line};
            m_stopped = true;
            return;
        case CmdKind::Launch: {
            if (m_out.launch.has_value()) {
                note(NoteLevel::Warning, cmd.line,
                     "a second launch command; it replaces the one on line " +
                         std::to_string(m_out.launch->line));
            }
            LaunchRead launch;
            launch.argv = std::move(fields);
            launch.file = m_file;
            launch.line = cmd.line;
            for (const auto& a : cmd.assigns) {
                ExportRecord rec;
                rec.name = a.name;
                const Value v = scalarOf(a.value);
                rec.value = v.text;
                rec.known = v.known;
                rec.pinned = !isSelfParameter(a.value, a.name);
                rec.file = m_file;
                rec.line = cmd.line;
                launch.prefixEnv.push_back(rec);
            }
            m_out.launch = std::move(launch);
            return;
        }
        case CmdKind::Ignorable:
            recordRay(fields);
            note(NoteLevel::Info, cmd.line,
                 "ignored (does not change the recipe): " + commandText(cmd) +
                     (what.empty() ? "" : " [" + what + "]"));
            return;
        case CmdKind::Unknown:
            if (m_out.launch.has_value() && !fields.empty() && fields[0].known &&
                fields[0].text.rfind("--", 0) == 0 && m_out.launch->file == m_file) {
                // `--flag value \` as a command of its own after the launch: the line before
                // lacks its `\`, so bash ends the launch there and then fails on this line (slime's
                // run-kimi-k2-*.sh); the script cannot start as published (issue 45)
                note(NoteLevel::Error, cmd.line,
                     "this command starts with the flag " + fields[0].text +
                         ": the launch command of line " + std::to_string(m_out.launch->line) +
                         " ends before it (a line continuation \\ is missing), so the script "
                         "as published hands the framework only the flags before it and then "
                         "fails here");
                return;
            }
            note(NoteLevel::Warning, cmd.line,
                 "not understood: '" + commandText(cmd) + "' (" + what + "); skipped");
            taintCommand(cmd, cmd.line, "line " + std::to_string(cmd.line));
            return;
    }
}

void Evaluator::assign(const Assignment& a) {
    Var& v = m_vars[a.name];
    if (a.isArray) {
        std::vector<Value> values;
        for (const auto& e : a.elements) {
            for (const auto& f : expandWord(e, true)) {
                Value item;
                item.text = f.text;
                item.known = f.known;
                item.why = f.why;
                item.file = f.file;
                item.line = f.line;
                item.symbolic = f.symbolic;
                item.raw = f.raw;
                values.push_back(std::move(item));
            }
        }
        if (a.append && !v.unknown) {
            v.values.insert(v.values.end(), values.begin(), values.end());
        } else if (!a.append) {
            v.values = std::move(values);
            v.unknown = false;
        }
        v.isArray = true;
        v.selfParam = false;
    } else {
        Value val = scalarOf(a.value);
        if (!val.known) {
            val.text.clear();  // a later use is kept as written there, not as written here
        }
        if (a.append && !v.values.empty() &&
            v.values[0].text.size() + val.text.size() > kMaxValueBytes) {
            m_column = a.value.column;
            limitHit(a.line, a.name + "+= makes a value longer than " +
                                 std::to_string(kMaxValueBytes >> 20) +
                                 " MiB; the variable becomes unknown");
            v.values = {unknownValue(a.line, "line " + std::to_string(a.line) + ": " + a.name +
                                                 " is longer than the reader's limit")};
            v.unknown = false;
        } else if (a.append && !v.values.empty()) {
            v.values[0].text += val.text;
            v.values[0].known = v.values[0].known && val.known;
        } else if (!a.append || !v.unknown) {
            v.values = {val};
            v.unknown = false;
        }
        v.isArray = false;
        v.selfParam = isSelfParameter(a.value, a.name);
    }
    if (v.exported) {
        recordExport(a.name, a.isArray ? nullptr : &a.value, a.line);
    }
}

void Evaluator::recordExport(const std::string& name, const Word* valueWord, int line) {
    auto it = m_vars.find(name);
    if (it == m_vars.end()) {
        return;  // `export NAME` of an unset variable exports nothing yet
    }
    Var& v = it->second;
    v.exported = true;
    ExportRecord* rec = nullptr;
    for (auto& r : m_out.exports) {
        if (r.name == name) {
            rec = &r;
        }
    }
    if (rec == nullptr) {
        m_out.exports.push_back({});
        rec = &m_out.exports.back();
        rec->name = name;
    }
    rec->value = v.values.empty() ? "" : v.values[0].text;
    rec->known = !v.unknown && (v.values.empty() || v.values[0].known);
    rec->pinned = valueWord != nullptr ? !isSelfParameter(*valueWord, name) : !v.selfParam;
    const auto ann = m_out.annotations.find({m_file, line});
    rec->derived = ann != m_out.annotations.end() && ann->second == kDerivedMark;
    rec->file = m_file;
    rec->line = line;
}

void Evaluator::doExport(const SimpleCommand& cmd, const std::vector<Field>& fields) {
    (void)fields;
    for (std::size_t i = 1; i < cmd.words.size(); ++i) {
        const Word& w = cmd.words[i];
        Assignment a;
        if (splitAssignment(w, a)) {
            assign(a);
            recordExport(a.name, &a.value, w.line);
            continue;
        }
        const Value name = scalarOf(w);
        if (!name.known || name.text.empty() || name.text[0] == '-') {
            note(NoteLevel::Warning, w.line, "not understood: export " + w.raw);
            continue;
        }
        recordExport(name.text, nullptr, w.line);
    }
}

void Evaluator::taintName(const std::string& name, int line, const std::string& what) {
    Var& v = m_vars[name];
    v.unknown = true;
    v.why = "line " + std::to_string(line) + ": " + name + " may be set by " + what +
            ", which was not understood";
    v.values = {unknownValue(line, v.why)};
    for (auto& r : m_out.exports) {
        if (r.name == name) {
            r.known = false;
        }
    }
}

void Evaluator::taint(const std::vector<Node>& nodes, int line, const std::string& what) {
    std::set<std::string> names;
    collectNames(nodes, names);
    for (const auto& n : names) {
        taintName(n, line, what);
    }
}

void Evaluator::taintCommand(const SimpleCommand& cmd, int line, const std::string& what) {
    Node n;
    n.commands.push_back(cmd);
    taint({n}, line, what);
}

ScriptReading readScript(std::string_view text, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         const std::vector<std::string>& sourceRoots,
                         std::uint64_t expansionBudget) {
    Evaluator ev(path, env, sourceRoots);
    if (expansionBudget > 0) {
        ev.setExpansionBudget(expansionBudget);
    }
    ev.runFile(text, path, 0);
    return ev.take();
}

}  // namespace runplane::plan::launch::detail
