// Shell functions and here-documents of a launch script (docs/launch-scripts.md, "Functions and
// here-documents"). A function definition runs nothing; a call is read where it is made:
// - a function holding the launch command (`run_mode() { ... ray job submit ... }`) is read
//   in place, with the call's words as $1, $2, ..., $#, $@;
// - a function that starts something at run time (a server in the background, a loop waiting for
//   it, a here-document, a python program) and is called before the launch is a pre-launch step:
//   its definition and the call are carried verbatim, so the export starts the same teacher;
// - any other function (one that sets variables) is read in place as well.
// A here-document fed to a shell (`bash -s <<'EOF'`, `docker run ... IMAGE bash -s <<'EOF'`) is
// the script that shell runs: its body is read as script text with its own line numbers; any
// other command with a here-document before the launch (`python3 - <<'PY'` writing the
// --prompt-data file) is a pre-launch step, kept verbatim with its body.

#include <algorithm>
#include <set>

#include "backend/launch/bash_eval.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

std::string baseOf(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool isPythonName(const std::string& base) {
    return base == "python" || base == "python3" ||
           (base.rfind("python3.", 0) == 0 && base.size() > 8);
}

// The entry point of a launch: train*.py or run_*.py (as the classifier reads it).
bool isEntryWord(const std::string& word) {
    const std::string base = baseOf(word);
    return (base.rfind("train", 0) == 0 || base.rfind("run_", 0) == 0) && base.ends_with(".py");
}

// The literal words of a command as written (unquoted), for a syntactic look.
std::vector<std::string> literalWords(const SimpleCommand& cmd) {
    std::vector<std::string> out;
    for (const auto& w : cmd.words) {
        out.push_back(w.isLiteral() ? w.literal() : w.raw);
    }
    if (!out.empty() && out[0] == "exec") {
        out.erase(out.begin());
    }
    return out;
}

// Something a function does at run time that the reader cannot stand in for: a background
// command, a while / until loop, a here-document, a python program, a server or a wait.
bool startsSomething(const std::vector<Node>& nodes) {
    for (const auto& n : nodes) {
        if (n.kind == Node::Kind::Unsupported &&
            (n.what == "while loop" || n.what == "until loop")) {
            return true;
        }
        if (!n.ops.empty() && n.ops.back() == "&") {
            return true;
        }
        for (const auto& cmd : n.commands) {
            if (!cmd.heredocs.empty()) {
                return true;
            }
            const auto words = literalWords(cmd);
            if (!words.empty()) {
                const std::string base = baseOf(words[0]);
                if (isPythonName(base) || base == "curl" || base == "wget" || base == "docker" ||
                    base == "vllm" || base == "sglang" || base == "nohup" || base == "torchrun") {
                    return true;
                }
            }
        }
        for (const auto& b : n.branches) {
            if (startsSomething(b.body)) {
                return true;
            }
        }
        if (startsSomething(n.elseBody) || (n.funcName.empty() && startsSomething(n.inner))) {
            return true;
        }
    }
    return false;
}

// The shell of `bash -s`, `sh`, `bash -ex` (not `bash -c`, not `bash FILE`) at fields[k].
bool isStdinShellAt(const std::vector<Field>& fields, std::size_t k) {
    if (k >= fields.size() || !fields[k].known) {
        return false;
    }
    const std::string base = baseOf(fields[k].text);
    if (base != "bash" && base != "sh") {
        return false;
    }
    for (std::size_t i = k + 1; i < fields.size(); ++i) {
        if (!fields[i].known || fields[i].text.empty() || fields[i].text[0] != '-' ||
            fields[i].text.find('c') != std::string::npos) {
            return false;
        }
    }
    return true;
}

}  // namespace

ScriptReading::PreLaunchStep Evaluator::verbatimRanges(
    const std::vector<std::pair<int, int>>& ranges) {
    ScriptReading::PreLaunchStep out;
    std::string text;
    for (const auto& [from, to] : ranges) {
        Node part;
        part.line = from;
        part.endLine = to;
        ScriptReading::PreLaunchStep step = verbatimStep(part, true);
        text += step.text;
        if (out.line == 0) {
            out = step;
        }
        out.endLine = std::max(out.endLine, to);
    }
    out.text = text;
    return out;
}

void Evaluator::defineFunction(const Node& node) {
    m_functions[node.funcName] = std::make_shared<const Node>(node);
    note(NoteLevel::Info, node.line,
         "function " + node.funcName + " defined (lines " + std::to_string(node.line) + "-" +
             std::to_string(node.endLine) + "); read where it is called");
}

bool Evaluator::containsLaunch(const std::vector<Node>& nodes) const {
    std::set<std::string> followed;
    return containsLaunch(nodes, 0, followed);
}

bool Evaluator::containsLaunch(const std::vector<Node>& nodes, int depth,
                               std::set<std::string>& followed) const {
    if (depth > kMaxNesting) {
        return false;
    }
    for (const auto& n : nodes) {
        for (const auto& cmd : n.commands) {
            const auto words = literalWords(cmd);
            if (words.empty()) {
                continue;
            }
            if (words.size() >= 3 && words[0] == "ray" && words[1] == "job" &&
                words[2] == "submit") {
                return true;
            }
            if (isPythonName(baseOf(words[0]))) {
                for (std::size_t i = 1; i < words.size(); ++i) {
                    if (words[i].empty() || words[i][0] != '-') {
                        if (isEntryWord(words[i])) {
                            return true;
                        }
                        break;
                    }
                }
            }
            // each function is looked into once (a recursive one cannot make this explode)
            const auto fn = m_functions.find(words[0]);
            if (fn != m_functions.end() && followed.insert(words[0]).second &&
                containsLaunch(fn->second->inner, depth + 1, followed)) {
                return true;
            }
        }
        for (const auto& b : n.branches) {
            if (containsLaunch(b.body, depth + 1, followed)) {
                return true;
            }
        }
        if (containsLaunch(n.elseBody, depth + 1, followed) ||
            (n.funcName.empty() && containsLaunch(n.inner, depth + 1, followed))) {
            return true;
        }
    }
    return false;
}

bool Evaluator::evalFunctionOrHereDoc(const Node& node) {
    if (node.kind == Node::Kind::Unsupported && !node.funcName.empty()) {
        defineFunction(node);
        return true;
    }
    if (node.kind != Node::Kind::Commands || node.commands.size() != 1) {
        return false;
    }
    const SimpleCommand& cmd = node.commands[0];
    if (cmd.words.empty()) {
        return carryFunctionSubst(node);
    }
    const std::string first = cmd.words[0].literal();
    if (first == "local" && m_callDepth > 0 && cmd.assigns.empty()) {
        // local NAME=VALUE ... inside a function read in place: plain assignments (the reader
        // does not scope them; the launch reads them inside the same call)
        bool plain = true;
        std::vector<Assignment> assigns;
        for (std::size_t i = 1; i < cmd.words.size() && plain; ++i) {
            Assignment a;
            if (splitAssignment(cmd.words[i], a)) {
                assigns.push_back(a);
            } else {
                const std::string w = cmd.words[i].literal();
                plain = !w.empty() && isNameStart(w[0]);
            }
        }
        if (plain) {
            for (const auto& a : assigns) {
                assign(a);
            }
            return true;
        }
        return false;
    }
    if (m_functions.count(first) && cmd.assigns.empty()) {
        std::vector<Field> fields;
        for (const auto& w : cmd.words) {
            auto f = expandWord(w, true);
            fields.insert(fields.end(), f.begin(), f.end());
        }
        callFunction(node, cmd, fields);
        return true;
    }
    if (cmd.heredocs.empty()) {
        return false;
    }
    std::vector<Field> fields;
    for (const auto& w : cmd.words) {
        auto f = expandWord(w, true);
        fields.insert(fields.end(), f.begin(), f.end());
    }
    if (readHereDocScript(node, fields)) {
        return true;
    }
    if (m_depth == 0 && !m_out.launch.has_value() && m_file == m_mainPath) {
        addPreLaunch(node, "a command fed a here-document (" + commandText(cmd) + ")");
        // `read -r -d '' X <<EOF`: what it sets is computed when the step runs
        std::set<std::string> names;
        collectNames({node}, names);
        for (const auto& name : names) {
            setProbeVar(name, node.line);
        }
        return true;
    }
    return false;
}

void Evaluator::callFunction(const Node& node, const SimpleCommand& cmd,
                             const std::vector<Field>& fields) {
    const std::string name = fields.empty() ? std::string() : fields[0].text;
    const auto fn = m_functions.at(cmd.words[0].literal());
    const Node& def = *fn;
    if (m_callDepth >= kMaxCallDepth || m_totalCalls >= kMaxFunctionCalls) {
        m_column = 1;
        limitHit(node.line, "function calls nested more than " + std::to_string(kMaxCallDepth) +
                                " deep or more than " + std::to_string(kMaxFunctionCalls) +
                                " in all; the call of " + name + " is skipped");
        return;
    }
    ++m_totalCalls;
    const bool launches = containsLaunch(def.inner);
    if (!launches && startsSomething(def.inner) && m_depth == 0 && m_callDepth == 0 &&
        !m_out.launch.has_value() && m_file == m_mainPath) {
        std::vector<std::pair<int, int>> ranges;
        if (m_carriedFunctions.insert(def.funcName).second) {
            ranges.emplace_back(def.line, def.endLine);
        }
        ranges.emplace_back(node.line, node.endLine);
        m_out.preLaunch.push_back(verbatimRanges(ranges));
        note(NoteLevel::Info, node.line,
             "the call of the function " + def.funcName + " (defined on lines " +
                 std::to_string(def.line) + "-" + std::to_string(def.endLine) +
                 ") starts something at run time: the definition and the call are kept verbatim "
                 "as a pre-launch step (launcher.pre_launch)");
        std::set<std::string> names;
        collectNames(def.inner, names);
        for (const auto& n : names) {
            setProbeVar(n, node.line);
        }
        return;
    }
    note(NoteLevel::Info, node.line,
         "the function " + def.funcName + " (lines " + std::to_string(def.line) + "-" +
             std::to_string(def.endLine) + ") is read in place with the call's arguments" +
             (launches ? " (it holds the launch command)" : ""));
    std::vector<Value> args;
    for (std::size_t i = 1; i < fields.size(); ++i) {
        Value v;
        v.text = fields[i].text;
        v.known = fields[i].known;
        v.why = fields[i].why;
        v.file = fields[i].file;
        v.line = fields[i].line;
        v.symbolic = fields[i].symbolic;
        args.push_back(v);
    }
    auto saved = std::move(m_args);
    m_args = std::move(args);
    ++m_callDepth;
    evalNodes(def.inner);
    --m_callDepth;
    m_args = std::move(saved);
    // `return` / `exit` inside: the function's end (an exit ends the script, as bash would)
}

bool Evaluator::carryFunctionSubst(const Node& node) {
    // LOG=$(start_teacher 6 /root/Qwen3-32B "$PORT"): a script function run in a command
    // substitution before the launch (a server it starts keeps running)
    const SimpleCommand& cmd = node.commands[0];
    if (m_depth != 0 || m_callDepth != 0 || m_out.launch.has_value() || m_file != m_mainPath) {
        return false;
    }
    std::vector<std::string> called;
    for (const auto& a : cmd.assigns) {
        for (const auto& part : a.value.parts) {
            if (part.kind != WordPart::Kind::CommandSubst) {
                continue;
            }
            std::string t = part.text;
            t.erase(0, t.find_first_not_of(" \t\n"));
            const std::string first = t.substr(0, t.find_first_of(" \t\n|;&)"));
            if (m_functions.count(first)) {
                called.push_back(first);
            }
        }
    }
    if (called.empty()) {
        return false;
    }
    std::vector<std::pair<int, int>> ranges;
    for (const auto& name : called) {
        const Node& def = *m_functions.at(name);
        if (m_carriedFunctions.insert(name).second) {
            ranges.emplace_back(def.line, def.endLine);
        }
    }
    ranges.emplace_back(node.line, node.endLine);
    m_out.preLaunch.push_back(verbatimRanges(ranges));
    note(NoteLevel::Info, node.line,
         "a value computed by the script's function " + called.front() +
             ": the definition and the line are kept verbatim as a pre-launch step "
             "(launcher.pre_launch)");
    for (const auto& a : cmd.assigns) {
        setProbeVar(a.name, node.line);
    }
    return true;
}

bool Evaluator::readHereDocScript(const Node& node, const std::vector<Field>& fields) {
    const SimpleCommand& cmd = node.commands[0];
    if (fields.empty() || !fields[0].known || cmd.heredocs.size() != 1) {
        return false;
    }
    // the shell reading the here-document: the command itself, or the command a container runs
    std::size_t shellAt = fields.size();
    const std::string base0 = baseOf(fields[0].text);
    const bool container = (base0 == "docker" || base0 == "podman") && fields.size() > 2 &&
                           (fields[1].text == "run" || fields[1].text == "exec");
    if (isStdinShellAt(fields, 0)) {
        shellAt = 0;
    } else if (container) {
        for (std::size_t k = 2; k < fields.size(); ++k) {
            if (isStdinShellAt(fields, k)) {
                shellAt = k;
                break;
            }
        }
    }
    if (shellAt == fields.size()) {
        return false;
    }
    const HereDoc& doc = *cmd.heredocs[0];
    const std::string range =
        "lines " + std::to_string(doc.firstLine) + "-" + std::to_string(doc.lastLine);
    const bool expands = doc.body.find_first_of("$`\\") != std::string::npos;
    if (!doc.quoted && expands) {
        note(NoteLevel::Warning, node.line,
             "not understood: the here-document (" + range + ") fed to '" + commandText(cmd) +
                 "' has an unquoted delimiter (<<" + doc.delimiter +
                 "): this shell expands its $... and `...` before the inner shell reads it; not "
                 "read (quote the delimiter, <<'" +
                 doc.delimiter + "', to have it read as the script it is)");
        return true;
    }
    if (container) {
        std::string image;
        for (std::size_t k = shellAt; k-- > 2;) {  // the word before the shell: the image
            image = fields[k].text;
            break;
        }
        note(NoteLevel::Warning, node.line,
             "the run is the script in the here-document (" + range + ") that '" +
                 commandText(cmd) + "' runs in the container " + image +
                 ": read as that script. The container (its image, mounts and options, and "
                 "the docker commands around it) is not part of the recipe: run the export "
                 "inside the same container");
    } else {
        note(NoteLevel::Info, node.line,
             "the here-document (" + range + ") fed to '" + commandText(cmd) +
                 "' is read as the script it runs");
    }
    ParsedScript parsed = parseBashAt(doc.body, doc.firstLine);
    noteSyntaxIssues(parsed.issues);
    for (const auto& c : parsed.comments) {
        if (!c.fullLine) {
            const auto from = c.text.find_first_not_of(" \t");
            const auto to = c.text.find_last_not_of(" \t");
            m_out.annotations[{m_file, c.line}] =
                from == std::string::npos ? std::string() : c.text.substr(from, to - from + 1);
        }
    }
    // a container starts with its own environment: the outer script's variables are not there
    // (only what --env gives); the outer ones come back after it
    std::map<std::string, Var> outer;
    if (container) {
        outer = m_vars;
        std::erase_if(m_vars, [](const auto& kv) {
            return kv.second.values.empty() || kv.second.values.front().file != "--env";
        });
    }
    evalNodes(parsed.nodes);
    if (!m_budgetHit) {
        m_stopped = false;  // an exit inside ends the inner shell only
    }
    for (auto& [name, var] : outer) {
        m_vars.try_emplace(name, std::move(var));
    }
    return true;
}

}  // namespace runplane::plan::launch::detail
