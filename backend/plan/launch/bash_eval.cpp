// Command-level evaluation of a launch script: assignments, export, source, if/elif/else decided
// from the given environment, and the launch command. Side-effect commands that cannot change the
// recipe (ray start, pkill, sleep, echo, ...) are recognised and skipped; everything else is
// reported as not understood, and what it might have assigned becomes unknown.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "backend/plan/launch/bash_eval.h"
#include "backend/plan/launch/bash_limits.h"
#include "backend/plan/launch/export_plan.h"
#include "backend/plan/launch/shell_text.h"

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

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

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

}  // namespace

Evaluator::Evaluator(std::string mainPath,
                     const std::vector<std::pair<std::string, std::string>>& env,
                     const std::vector<std::string>& sourceRoots)
    : m_mainPath(std::move(mainPath)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<fs::path> roots = {fs::absolute(fs::path(m_mainPath), ec).parent_path()};
    roots.insert(roots.end(), sourceRoots.begin(), sourceRoots.end());
    for (const auto& root : roots) {
        // (weakly: the folder of an in-memory script need not exist)
        const fs::path real = fs::weakly_canonical(fs::absolute(root, ec), ec);
        if (!ec && !real.empty()) {
            m_roots.push_back(real.string());
        }
    }
    for (const auto& [key, value] : env) {
        Var v;
        Value val;
        val.text = value;
        val.file = "--env";
        v.values = {val};
        v.exported = true;
        m_vars[key] = v;
    }
}

void Evaluator::note(NoteLevel level, int line, std::string message, int column) {
    // messages quote script text: no raw control characters, and a bounded length
    message = escapeControl(message);
    if (message.size() > kMaxMessageChars) {
        message = message.substr(0, kMaxMessageChars - 3) + "...";
    }
    if (!m_noteKeys.emplace(m_file, line, message).second) {
        return;  // the same construct read twice (e.g. classified, then run)
    }
    if (level != NoteLevel::Error && m_out.notes.size() >= kMaxNotes) {
        if (!m_notesClipped) {
            m_notesClipped = true;
            m_out.notes.push_back(
                {NoteLevel::Warning, m_file, line, "",
                 "more than " + std::to_string(kMaxNotes) + " notes; the rest are not listed"});
        }
        return;
    }
    LaunchNote n;
    n.level = level;
    n.file = m_file;
    n.line = line;
    n.message = std::move(message);
    n.column = column;
    m_out.notes.push_back(std::move(n));
}

void Evaluator::limitHit(int line, const std::string& message) {
    note(NoteLevel::Error, line, "limit: " + message, m_column > 0 ? m_column : 1);
}

bool Evaluator::charge(std::uint64_t units, int line) {
    m_work += units;
    if (m_work > kMaxExpansionWork && !m_budgetHit) {
        m_budgetHit = true;
        m_stopped = true;
        limitHit(line, "the script's expansions produce more than " +
                           std::to_string(kMaxExpansionWork >> 20) +
                           " MiB of text; the rest of the script is not read");
    }
    return !m_budgetHit;
}

bool Evaluator::insideRoots(const std::string& canonicalPath) const {
    const std::filesystem::path p(canonicalPath);
    for (const auto& root : m_roots) {
        const std::filesystem::path r(root);
        auto [rootEnd, pathIt] = std::mismatch(r.begin(), r.end(), p.begin(), p.end());
        (void)pathIt;
        if (rootEnd == r.end()) {
            return true;
        }
    }
    return false;
}

void Evaluator::runFile(std::string_view text, const std::string& path, int depth) {
    const std::string savedFile = m_file;
    const int savedDepth = m_depth;
    m_file = path;
    m_depth = depth;
    // CRLF line endings read as LF (a Windows editor's save); a lone CR stays (and is escaped in
    // messages)
    std::string unixText;
    if (const auto crlf = text.find("\r\n"); crlf != std::string_view::npos) {
        unixText.reserve(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
                unixText += text[i];
            }
        }
        const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + crlf, '\n'));
        note(NoteLevel::Info, line, "the file has CRLF (Windows) line endings; read as LF");
        text = unixText;
    }
    ParsedScript parsed = parseBash(text);
    for (const auto& issue : parsed.issues) {
        if (issue.limit) {
            note(NoteLevel::Error, issue.line, "limit: " + issue.message,
                 issue.column > 0 ? issue.column : 1);
        } else {
            note(NoteLevel::Warning, issue.line, "syntax not understood: " + issue.message);
        }
    }
    for (const auto& c : parsed.comments) {
        if (!c.fullLine) {
            m_out.annotations[{path, c.line}] = trim(c.text);
            continue;
        }
        if (depth != 0) {
            continue;
        }
        const std::string t = !c.text.empty() && c.text[0] == ' ' ? c.text.substr(1) : c.text;
        if (t.rfind(kMetaPrefix, 0) == 0) {
            m_out.metaLines.push_back(t.substr(std::string(kMetaPrefix).size()));
        } else if (t.rfind(kFlavourPrefix, 0) == 0) {
            m_out.flavourMark = trim(t.substr(std::string(kFlavourPrefix).size()));
        }
    }
    evalNodes(parsed.nodes);
    m_file = savedFile;
    m_depth = savedDepth;
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
    switch (node.kind) {
        case Node::Kind::If:
            evalIf(node);
            return;
        case Node::Kind::Unsupported: {
            note(NoteLevel::Warning, node.line,
                 "not understood: " + node.what +
                     (node.endLine > node.line ? " (lines " + std::to_string(node.line) + "-" +
                                                     std::to_string(node.endLine) + ")"
                                               : "") +
                     "; skipped");
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
        evalCommand(node.commands[0]);
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
    bool harmless = true;
    for (auto k : kinds) {
        harmless = harmless && (k == CmdKind::Ignorable || k == CmdKind::Exit);
    }
    if (harmless) {
        note(NoteLevel::Info, node.line, "ignored (does not change the recipe): " + text);
        return;
    }
    note(NoteLevel::Warning, node.line, "not understood: the command list '" + text + "'; skipped");
    for (const auto& cmd : node.commands) {
        taintCommand(cmd, node.line, "the command list on line " + std::to_string(node.line));
    }
}

void Evaluator::evalIf(const Node& node) {
    for (std::size_t i = 0; i < node.branches.size(); ++i) {
        std::string why;
        const Truth t = evalCondition(node.branches[i].cond, &why);
        if (t == Truth::Unknown) {
            note(NoteLevel::Warning, node.branches[i].line,
                 "not understood: the condition of the if block (lines " +
                     std::to_string(node.line) + "-" + std::to_string(node.endLine) + "): " + why +
                     "; none of its branches is read");
            for (std::size_t j = i; j < node.branches.size(); ++j) {
                taint(node.branches[j].body, node.line, "the if block");
            }
            taint(node.elseBody, node.line, "the if block");
            return;
        }
        if (t == Truth::True) {
            evalNodes(node.branches[i].body);
            return;
        }
    }
    evalNodes(node.elseBody);
}

Evaluator::Truth Evaluator::evalCondition(const std::vector<Node>& cond, std::string* why) {
    if (cond.size() != 1 || cond[0].kind != Node::Kind::Commands) {
        *why = "only test commands ([ ], [[ ]], test) joined by && / || are read";
        return Truth::Unknown;
    }
    const Node& n = cond[0];
    Truth result = evalTestCommand(n.commands[0], why);
    for (std::size_t i = 1; i < n.commands.size(); ++i) {
        const std::string& op = n.ops[i - 1];
        if (op != "&&" && op != "||") {
            *why = "'" + op + "' in a condition";
            return Truth::Unknown;
        }
        if ((op == "&&" && result == Truth::False) || (op == "||" && result == Truth::True)) {
            continue;  // short-circuit: the right side is not run
        }
        std::string w2;
        const Truth right = evalTestCommand(n.commands[i], &w2);
        if (right == Truth::Unknown) {
            *why = w2;
            return Truth::Unknown;
        }
        result = right;
    }
    return result;
}

namespace {

using Truth3 = int;  // 0 false, 1 true, 2 unknown

class TestExpr {
  public:
    explicit TestExpr(std::vector<std::string> args) : m_a(std::move(args)) {}
    Truth3 run(std::string& why) {
        Truth3 r = orExpr();
        if (m_pos != m_a.size() && r != 2) {
            m_why = "unexpected '" + m_a[m_pos] + "'";
            r = 2;
        }
        why = m_why;
        return r;
    }

  private:
    std::vector<std::string> m_a;
    std::size_t m_pos = 0;
    std::string m_why;
    int m_depth = 0;  // '!' and '(' recursion

    struct Nest {
        int& depth;
        explicit Nest(int& d) : depth(d) { ++depth; }
        ~Nest() { --depth; }
    };

    bool at(const char* s) const { return m_pos < m_a.size() && m_a[m_pos] == s; }
    Truth3 unknown(std::string why) {
        if (m_why.empty()) {
            m_why = std::move(why);
        }
        return 2;
    }
    Truth3 orExpr() {
        Truth3 a = andExpr();
        while (at("-o") || at("||")) {
            ++m_pos;
            Truth3 b = andExpr();
            a = (a == 1 || b == 1) ? 1 : ((a == 2 || b == 2) ? 2 : 0);
        }
        return a;
    }
    Truth3 andExpr() {
        Truth3 a = notExpr();
        while (at("-a") || at("&&")) {
            ++m_pos;
            Truth3 b = notExpr();
            a = (a == 0 || b == 0) ? 0 : ((a == 2 || b == 2) ? 2 : 1);
        }
        return a;
    }
    Truth3 notExpr() {
        Nest nest(m_depth);
        if (m_depth > kMaxNesting) {
            m_pos = m_a.size();
            return unknown("'!' and '(' nested more than " + std::to_string(kMaxNesting) +
                           " levels deep");
        }
        if (at("!")) {
            ++m_pos;
            Truth3 v = notExpr();
            return v == 2 ? 2 : 1 - v;
        }
        return primary();
    }
    Truth3 primary() {
        if (m_pos >= m_a.size()) {
            return unknown("missing operand");
        }
        if (at("(")) {
            ++m_pos;
            Truth3 v = orExpr();
            if (!at(")")) {
                return unknown("missing ')'");
            }
            ++m_pos;
            return v;
        }
        static const std::set<std::string> kBinary = {"=",   "==",  "!=",  "<",   ">",   "-eq",
                                                      "-ne", "-lt", "-le", "-gt", "-ge", "=~"};
        if (m_pos + 2 < m_a.size() + 0 && kBinary.count(m_a[m_pos + 1])) {
            const std::string& l = m_a[m_pos];
            const std::string& op = m_a[m_pos + 1];
            const std::string& r = m_a[m_pos + 2];
            m_pos += 3;
            if (op == "=~") {
                return unknown("regular-expression match =~");
            }
            if (op == "=" || op == "==" || op == "!=") {
                if ((op != "=") && r.find_first_of("*?[") != std::string::npos) {
                    return unknown("pattern match against '" + r + "'");
                }
                return ((l == r) == (op != "!=")) ? 1 : 0;
            }
            if (op == "<" || op == ">") {
                return ((op == "<") ? l < r : l > r) ? 1 : 0;
            }
            auto a = parseInt(l);
            auto b = parseInt(r);
            if (!a || !b) {
                return unknown("'" + l + " " + op + " " + r + "' compares non-integers");
            }
            if (op == "-eq")
                return *a == *b;
            if (op == "-ne")
                return *a != *b;
            if (op == "-lt")
                return *a < *b;
            if (op == "-le")
                return *a <= *b;
            if (op == "-gt")
                return *a > *b;
            return *a >= *b;
        }
        const std::string& t = m_a[m_pos];
        if (t.size() == 2 && t[0] == '-' && m_pos + 1 < m_a.size()) {
            const std::string& v = m_a[m_pos + 1];
            m_pos += 2;
            if (t == "-z")
                return v.empty() ? 1 : 0;
            if (t == "-n")
                return v.empty() ? 0 : 1;
            return unknown("'" + t + " " + v + "' tests the file system or the shell");
        }
        ++m_pos;
        return t.empty() ? 0 : 1;
    }
};

}  // namespace

Evaluator::Truth Evaluator::evalTestCommand(const SimpleCommand& cmd, std::string* why) {
    if (cmd.unsupported || !cmd.assigns.empty() || cmd.words.empty()) {
        *why = "'" + commandText(cmd) + "' is not a test";
        return Truth::Unknown;
    }
    std::size_t first = 0;
    bool negate = false;
    if (cmd.words[0].isLiteral() && cmd.words[0].literal() == "!") {
        negate = true;
        first = 1;
    }
    if (first >= cmd.words.size()) {
        *why = "empty condition";
        return Truth::Unknown;
    }
    const std::string name = cmd.words[first].isLiteral() ? cmd.words[first].literal() : "";
    std::size_t end = cmd.words.size();
    if (name == "true" || name == "false") {
        const bool v = (name == "true") != negate;
        return v ? Truth::True : Truth::False;
    }
    if (name == "[" || name == "[[") {
        const std::string close = name == "[" ? "]" : "]]";
        if (cmd.words.back().literal() != close) {
            *why = "'" + name + "' without '" + close + "'";
            return Truth::Unknown;
        }
        --end;
    } else if (name != "test") {
        *why = "the condition runs a command ('" + commandText(cmd) + "')";
        return Truth::Unknown;
    }
    std::vector<std::string> args;
    for (std::size_t i = first + 1; i < end; ++i) {
        std::vector<Field> fields;
        if (name == "[[") {
            const Value v = scalarOf(cmd.words[i]);
            Field f;
            f.text = v.text;
            f.known = v.known;
            f.why = v.why;
            fields.push_back(f);
        } else {
            fields = expandWord(cmd.words[i], true);
        }
        for (const auto& f : fields) {
            if (!f.known) {
                *why = f.why;
                return Truth::Unknown;
            }
            args.push_back(f.text);
        }
    }
    TestExpr expr(args);
    const int r = expr.run(*why);
    if (r == 2) {
        return Truth::Unknown;
    }
    return ((r == 1) != negate) ? Truth::True : Truth::False;
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
    if (isIgnorable(base)) {
        return CmdKind::Ignorable;
    }
    *what = "the command '" + name + "'";
    return CmdKind::Unknown;
}

void Evaluator::evalCommand(const SimpleCommand& cmd) {
    std::vector<Field> fields;
    std::string what;
    const CmdKind kind = classify(cmd, &fields, &what);
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
            doSource(cmd, fields);
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
            note(NoteLevel::Info, cmd.line,
                 "ignored (does not change the recipe): " + commandText(cmd) +
                     (what.empty() ? "" : " [" + what + "]"));
            return;
        case CmdKind::Unknown:
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
                values.push_back(Value{f.text, f.known, f.why, f.file, f.line});
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

void Evaluator::doSource(const SimpleCommand& cmd, const std::vector<Field>& fields) {
    if (fields.size() < 2) {
        note(NoteLevel::Warning, cmd.line, "not understood: source without a file");
        return;
    }
    const Field& f = fields[1];
    if (!f.known) {
        note(NoteLevel::Warning, cmd.line,
             "not understood: source of a path that is not known (" + f.why + ")");
        return;
    }
    namespace fs = std::filesystem;
    const fs::path p(f.text);
    const bool isModel = p.parent_path().filename() == "models";
    if (isModel) {
        m_out.modelStems.push_back(p.stem().string());
    }
    std::vector<fs::path> candidates;
    const fs::path here = fs::path(m_file).parent_path();
    if (p.is_absolute()) {
        candidates.push_back(p);
    } else {
        fs::path dir = here;
        for (int up = 0; up < 4; ++up) {
            candidates.push_back(dir / p);
            if (!dir.has_parent_path() || dir.parent_path() == dir || dir.empty()) {
                break;
            }
            dir = dir.parent_path();
        }
    }
    fs::path found;
    std::size_t foundAt = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        std::error_code ec;
        if (fs::is_regular_file(candidates[i], ec)) {
            found = candidates[i].lexically_normal();
            foundAt = i;
            break;
        }
    }
    if (found.empty()) {
        note(NoteLevel::Warning, cmd.line,
             "source " + f.text + ": no such file" +
                 (isModel ? "; MODEL_ARGS stays empty (model '" + p.stem().string() +
                                "' is still taken from the file name)"
                          : ""));
        return;
    }
    // The script is untrusted: it may only pull in files from the allowed folders (symlinks
    // resolved), and a refused file is never opened, so none of its text can reach a message.
    std::error_code ec;
    const fs::path real = fs::canonical(found, ec);
    if (ec || !insideRoots(real.string())) {
        std::string roots;
        for (const auto& r : m_roots) {
            roots += (roots.empty() ? "" : ", ") + r;
        }
        note(NoteLevel::Warning, cmd.line,
             "source " + f.text + ": refused: " + found.string() +
                 (!ec && real != found ? " (-> " + real.string() + ")" : "") +
                 " is outside the folders a script may source (" + roots +
                 "); not read. Allow a folder with --source-root DIR");
        return;
    }
    if (foundAt > 0) {
        note(NoteLevel::Info, cmd.line,
             "source " + f.text + ": read " + found.string() +
                 " (the path is relative; resolved against the script's folders)");
    }
    if (m_depth >= kMaxSourceDepth) {
        note(NoteLevel::Warning, cmd.line, "source " + f.text + ": sourced too deeply; skipped");
        return;
    }
    const auto size = fs::file_size(real, ec);
    if (ec || size > kMaxScriptBytes) {
        m_column = 1;
        limitHit(cmd.line, "source " + f.text + ": " + found.string() + " is larger than " +
                               std::to_string(kMaxScriptBytes >> 20) + " MiB; not read");
        return;
    }
    std::ifstream in(real, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    if (!in) {
        note(NoteLevel::Warning, cmd.line, "source " + f.text + ": cannot read " + found.string());
        return;
    }
    const std::string content = buf.str();
    if (content.find('\0') != std::string::npos) {
        note(NoteLevel::Warning, cmd.line,
             "source " + f.text + ": " + found.string() + " is not a text file; not read");
        return;
    }
    if (isModel) {
        m_out.modelFiles.insert(found.string());
    }
    runFile(content, found.string(), m_depth + 1);
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
                         const std::vector<std::string>& sourceRoots) {
    Evaluator ev(path, env, sourceRoots);
    ev.runFile(text, path, 0);
    return ev.take();
}

}  // namespace runplane::plan::launch::detail
