// Conditions of if / elif blocks: test commands ([ ], [[ ]], test, true, false, !) joined by
// && / ||, decided from the variables known at that point; anything else leaves the block unknown.

#include <set>

#include <regex>

#include "backend/launch/bash_eval.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {

bool Evaluator::isGuardBody(const std::vector<Node>& body) {
    bool exits = false;
    for (const auto& n : body) {
        if (n.kind != Node::Kind::Commands) {
            return false;
        }
        for (const auto& cmd : n.commands) {
            if (cmd.words.empty() || !cmd.assigns.empty()) {
                return false;
            }
            const std::string name = cmd.words[0].literal();
            if (name == "exit" || name == "return") {
                exits = true;
            } else if (name != "echo" && name != "printf" && name != ":" && name != "usage") {
                return false;
            }
        }
    }
    return exits;
}

void Evaluator::evalIf(const Node& node) {
    for (std::size_t i = 0; i < node.branches.size(); ++i) {
        std::string why;
        m_conditionParams.clear();
        m_argCountRead = false;
        Truth t = evalCondition(node.branches[i].cond, &why);
        if (m_argCountRead) {  // `[ $# -lt 3 ]`: the script's arguments, not given here
            m_conditionParams.insert("$#");
        }
        for (const auto& name : m_conditionParams) {
            if (t != Truth::Unknown && m_probeVars.count(name)) {
                t = Truth::Unknown;  // a run-time probe's verdict, not an unset parameter
                why = "it decides on " + name + ", which a run-time probe sets";
            }
        }
        if (t == Truth::True && !m_conditionParams.empty() && isGuardBody(node.branches[i].body)) {
            // `if [ -z "${X}" ]; then echo ...; exit 1; fi` with X a parameter: the guard asks
            // for X, and the run it protects is the one the recipe describes.
            std::string names;
            for (const auto& name : m_conditionParams) {
                names += (names.empty() ? "" : ", ") + name;
                for (auto& p : m_out.parameters) {
                    p.required = p.required || p.name == name;
                }
            }
            note(NoteLevel::Info, node.branches[i].line,
                 "guard clause (lines " + std::to_string(node.line) + "-" +
                     std::to_string(node.endLine) + ") on the parameter(s) " + names +
                     ": read as passed; they are required variables of the recipe");
            continue;
        }
        // the launch runs only on one side of a condition on parameters (`if [ "$NODE_RANK"
        // -eq 0 ]; then ray job submit ...` with NODE_RANK=$2 not given): the recipe is the run,
        // so that side is read, with a warning naming the condition
        if (t != Truth::True && !m_conditionParams.empty() && !m_out.launch.has_value() &&
            containsLaunch(node.branches[i].body)) {
            bool elsewhere = containsLaunch(node.elseBody);
            for (std::size_t j = 0; j < node.branches.size(); ++j) {
                elsewhere = elsewhere || (j != i && containsLaunch(node.branches[j].body));
            }
            bool probe = false;
            std::string names;
            for (const auto& name : m_conditionParams) {
                probe = probe || m_probeVars.count(name) > 0;
                const bool arg = std::isdigit(static_cast<unsigned char>(name[0])) != 0;
                names += (names.empty() ? "" : ", ") + (arg ? "$" + name : name);
            }
            if (!elsewhere && !probe) {
                note(NoteLevel::Warning, node.branches[i].line,
                     "the launch command runs only when the condition on line " +
                         std::to_string(node.branches[i].line) + " holds; it reads " + names +
                         ", not given here: read as holding (the node that launches the run; "
                         "give them with --env to read it otherwise)");
                evalNodes(node.branches[i].body);
                return;
            }
        }
        if (t != Truth::Unknown && !m_conditionParams.empty()) {
            std::string names;
            for (const auto& name : m_conditionParams) {
                names += (names.empty() ? "" : ", ") + name;
            }
            note(NoteLevel::Info, node.branches[i].line,
                 "the condition reads the parameter(s) " + names +
                     ", decided as if unset (give them with --env to decide otherwise)");
        }
        if (t == Truth::Unknown) {
            note(NoteLevel::Warning, node.branches[i].line,
                 "not understood: the condition of the if block (lines " +
                     std::to_string(node.line) + "-" + std::to_string(node.endLine) + "): " + why +
                     "; none of its branches is read");
            // what the block assigns is set at run time: an export that splices one of those
            // names carries the block verbatim (import decides, as for a skipped loop)
            std::set<std::string> names;
            for (std::size_t j = i; j < node.branches.size(); ++j) {
                collectNames(node.branches[j].body, names);
            }
            collectNames(node.elseBody, names);
            if (m_depth == 0 && !m_out.launch.has_value() && !names.empty()) {
                recordDefinition(node, names);
            }
            // NAME+=(...) onto a known array, and nothing else in the block sets NAME: the
            // array keeps what it holds (the flags before the block are certain); only the
            // append is left out, with a warning. Everything else the block sets is unknown.
            std::set<std::string> appended;
            std::set<std::string> other;
            auto sortAssigns = [&](const std::vector<Node>& body) {
                for (const auto& n : body) {
                    for (const auto& cmd : n.commands) {
                        for (const auto& a : cmd.assigns) {
                            const auto it = m_vars.find(a.name);
                            const bool knownArray =
                                it != m_vars.end() && it->second.isArray && !it->second.unknown;
                            (a.append && a.isArray && knownArray && cmd.words.empty() ? appended
                                                                                      : other)
                                .insert(a.name);
                        }
                    }
                    if (n.kind != Node::Kind::Commands) {
                        std::set<std::string> nested;
                        collectNames({n}, nested);
                        other.insert(nested.begin(), nested.end());
                    }
                }
            };
            for (std::size_t j = i; j < node.branches.size(); ++j) {
                sortAssigns(node.branches[j].body);
            }
            sortAssigns(node.elseBody);
            for (const auto& name : names) {
                if (appended.count(name) && !other.count(name)) {
                    note(NoteLevel::Warning, node.line,
                         "the if block (lines " + std::to_string(node.line) + "-" +
                             std::to_string(node.endLine) + ") may append to " + name +
                             " at run time; " + name +
                             " keeps the values it had before it, without that append");
                    continue;
                }
                taintName(name, node.line, "the if block");
            }
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
            f.symbolic = v.symbolic;
            fields.push_back(f);
        } else {
            fields = expandWord(cmd.words[i], true);
        }
        for (const auto& f : fields) {
            if (f.known && f.symbolic) {
                // read as bash would with the variable unset; the caller says so
                std::set<std::string> names;
                collectParameterNames(f.text, names);
                std::string text = f.text;
                for (const auto& n : names) {
                    const std::string ref = "${" + n + "}";
                    for (auto at = text.find(ref); at != std::string::npos; at = text.find(ref)) {
                        text.erase(at, ref.size());
                    }
                }
                m_conditionParams.insert(names.begin(), names.end());
                args.push_back(text);
                continue;
            }
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

bool Evaluator::argumentLoopRunsZeroTimes(const Node& node) {
    // `while [[ $# -gt 0 ]]; do case "$1" in ...` parses the script's arguments: read as run
    // without any, the loop runs zero times and the defaults before it stand
    static const std::regex kArgsLoop(
        R"re(^\s*while\s+(\[\[?\s*"?\$#"?\s+-(gt|ne)\s+0\s*\]\]?|\(\(\s*\$#\s*(>\s*0\s*)?\)\))\s*(;\s*do\b.*)?$)re");
    if (node.what != "while loop" || m_file != m_mainPath || node.line < 1 ||
        node.line > static_cast<int>(m_lines.size())) {
        return false;
    }
    const std::string& first = m_lines[static_cast<std::size_t>(node.line - 1)];
    if (first.size() >= 256 || !std::regex_match(first, kArgsLoop)) {
        return false;
    }
    note(NoteLevel::Info, node.line,
         "a loop over the script's arguments (lines " + std::to_string(node.line) + "-" +
             std::to_string(node.endLine) +
             "): runs zero times, the script is read as run without arguments");
    return true;
}

}  // namespace runplane::plan::launch::detail
