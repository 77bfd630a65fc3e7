// $(...) and $((...)) for the launch-script reader: the script-directory idioms, $(seq ...) and
// $(echo ... | sed ... | tr ...) on known words (bash_textfilter.h)
// (every other command substitution is "not understood"), and 64-bit integer arithmetic with every
// operation overflow-checked and nesting bounded (bash_limits.h).

#include <cctype>
#include <filesystem>
#include <functional>
#include <regex>

#include "backend/launch/bash_expand.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

std::string normalizeSpaces(const std::string& text) {
    std::string out;
    bool blank = false;
    for (char c : text) {
        if (isBlank(c)) {
            blank = true;
            continue;
        }
        if (blank && !out.empty()) {
            out += ' ';
        }
        blank = false;
        out += c;
    }
    return out;
}

// Integer arithmetic of $((...)) over already-expanded text. Every operation is checked: an
// overflow, a division by zero or a bad shift is an error, never undefined behaviour, and
// nesting is bounded (a recursive-descent parser uses the stack per level).
class Arith {
  public:
    using Num = std::optional<long long>;
    Arith(std::string text, std::function<Num(const std::string&)> var)
        : m_s(std::move(text)), m_var(std::move(var)) {}

    Num run(std::string& error) {
        auto v = ternary();
        skip();
        if (!m_error.empty() || !v || m_pos != m_s.size()) {
            error = m_error.empty() ? "cannot read '" + m_s + "'" : m_error;
            return std::nullopt;
        }
        return v;
    }
    bool tooDeep() const { return m_tooDeep; }

  private:
    std::string m_s;
    std::size_t m_pos = 0;
    std::function<Num(const std::string&)> m_var;
    std::string m_error;
    int m_depth = 0;
    bool m_tooDeep = false;

    struct Nest {
        int& depth;
        explicit Nest(int& d) : depth(d) { ++depth; }
        ~Nest() { --depth; }
    };

    void skip() {
        while (m_pos < m_s.size() && isBlank(m_s[m_pos])) {
            ++m_pos;
        }
    }
    bool eat(std::string_view op) {
        skip();
        if (m_s.compare(m_pos, op.size(), op) != 0) {
            return false;
        }
        // do not take "<" out of "<=" / "<<", "*" out of "**", "&" out of "&&", ...
        const char next = m_pos + op.size() < m_s.size() ? m_s[m_pos + op.size()] : '\0';
        if (op.size() == 1 &&
            ((std::string_view("<>!").find(op[0]) != std::string_view::npos && next == '=') ||
             (std::string_view("<>*&|").find(op[0]) != std::string_view::npos && next == op[0]))) {
            return false;
        }
        m_pos += op.size();
        return true;
    }
    Num fail(std::string message) {
        if (m_error.empty()) {
            m_error = std::move(message);
        }
        return std::nullopt;
    }
    // Each level of parentheses takes three steps (?:, ** and unary); chains of unary operators,
    // ** and ?: one each.
    static constexpr int kMaxArithDepth = 4 * kMaxNesting;
    Num tooDeepFail() {
        m_tooDeep = true;
        return fail("the expression nests more than " + std::to_string(kMaxArithDepth) +
                    " levels deep (parentheses, unary operators, ** or ?: chains)");
    }
    Num overflow(const std::string& what) {
        return fail(what + " out of the 64-bit range in '" + m_s + "'");
    }
    Num ternary() {
        Nest nest(m_depth);
        if (m_depth > kMaxArithDepth) {
            return tooDeepFail();
        }
        auto c = logicalOr();
        if (c && eat("?")) {
            auto a = ternary();
            if (!eat(":")) {
                return fail("expected ':' in '" + m_s + "'");
            }
            auto b = ternary();
            if (!a || !b) {
                return std::nullopt;
            }
            return *c != 0 ? a : b;
        }
        return c;
    }
    // left-associative binary operators of one precedence level
    template <typename Apply>
    Num binary(Num (Arith::*next)(), std::initializer_list<std::string_view> ops, Apply apply) {
        auto left = (this->*next)();
        while (left) {
            std::string_view matched;
            for (std::string_view op : ops) {
                if (eat(op)) {
                    matched = op;
                    break;
                }
            }
            if (matched.empty()) {
                break;
            }
            auto right = (this->*next)();
            if (!right) {
                return std::nullopt;
            }
            left = apply(matched, *left, *right);
        }
        return left;
    }
    Num logicalOr() {
        return binary(&Arith::logicalAnd, {"||"},
                      [](std::string_view, long long a, long long b) -> Num {
                          return (a != 0 || b != 0) ? 1 : 0;
                      });
    }
    Num logicalAnd() {
        return binary(&Arith::bitOr, {"&&"}, [](std::string_view, long long a, long long b) -> Num {
            return (a != 0 && b != 0) ? 1 : 0;
        });
    }
    Num bitOr() {
        return binary(&Arith::bitXor, {"|"},
                      [](std::string_view, long long a, long long b) -> Num { return a | b; });
    }
    Num bitXor() {
        return binary(&Arith::bitAnd, {"^"},
                      [](std::string_view, long long a, long long b) -> Num { return a ^ b; });
    }
    Num bitAnd() {
        return binary(&Arith::equality, {"&"},
                      [](std::string_view, long long a, long long b) -> Num { return a & b; });
    }
    Num equality() {
        return binary(&Arith::relational, {"==", "!="},
                      [](std::string_view op, long long a, long long b) -> Num {
                          return (op == "==") == (a == b) ? 1 : 0;
                      });
    }
    Num relational() {
        return binary(&Arith::shift, {"<=", ">=", "<", ">"},
                      [](std::string_view op, long long a, long long b) -> Num {
                          if (op == "<=")
                              return a <= b ? 1 : 0;
                          if (op == ">=")
                              return a >= b ? 1 : 0;
                          if (op == "<")
                              return a < b ? 1 : 0;
                          return a > b ? 1 : 0;
                      });
    }
    Num shift() {
        return binary(&Arith::additive, {"<<", ">>"},
                      [this](std::string_view op, long long a, long long b) -> Num {
                          auto r = op == "<<" ? checkedShl(a, b) : checkedShr(a, b);
                          if (!r) {
                              return b < 0 || b > 63 ? fail("shift count " + std::to_string(b) +
                                                            " outside 0..63 in '" + m_s + "'")
                                                     : overflow("the shift");
                          }
                          return r;
                      });
    }
    Num additive() {
        return binary(&Arith::multiplicative, {"+", "-"},
                      [this](std::string_view op, long long a, long long b) -> Num {
                          auto r = op == "+" ? checkedAdd(a, b) : checkedSub(a, b);
                          return r ? r : overflow(op == "+" ? "the sum" : "the difference");
                      });
    }
    Num multiplicative() {
        return binary(&Arith::power, {"*", "/", "%"},
                      [this](std::string_view op, long long a, long long b) -> Num {
                          if (op != "*" && b == 0) {
                              return fail("division by zero in '" + m_s + "'");
                          }
                          auto r = op == "*"   ? checkedMul(a, b)
                                   : op == "/" ? checkedDiv(a, b)
                                               : checkedMod(a, b);
                          return r ? r : overflow(op == "*" ? "the product" : "the quotient");
                      });
    }
    Num power() {
        Nest nest(m_depth);
        if (m_depth > kMaxArithDepth) {
            return tooDeepFail();
        }
        auto base = unary();
        if (base && eat("**")) {
            auto exp = power();
            if (!exp) {
                return std::nullopt;
            }
            if (*exp < 0) {
                return fail("negative exponent in '" + m_s + "'");
            }
            auto r = checkedPow(*base, *exp);
            return r ? r : overflow("the power");
        }
        return base;
    }
    Num unary() {
        Nest nest(m_depth);
        if (m_depth > kMaxArithDepth) {
            return tooDeepFail();
        }
        if (eat("-")) {
            auto v = unary();
            if (!v) {
                return std::nullopt;
            }
            auto r = checkedNeg(*v);
            return r ? r : overflow("the negation");
        }
        if (eat("+")) {
            return unary();
        }
        if (eat("!")) {
            auto v = unary();
            return v ? Num(*v == 0 ? 1 : 0) : std::nullopt;
        }
        if (eat("~")) {
            auto v = unary();
            return v ? Num(~*v) : std::nullopt;
        }
        return primary();
    }
    Num primary() {
        skip();
        if (eat("(")) {
            auto v = ternary();
            if (!eat(")")) {
                return fail("missing ')' in '" + m_s + "'");
            }
            return v;
        }
        if (m_pos < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_pos]))) {
            std::size_t j = m_pos;
            while (j < m_s.size() && std::isalnum(static_cast<unsigned char>(m_s[j]))) {
                ++j;
            }
            auto n = parseInt(std::string_view(m_s).substr(m_pos, j - m_pos));
            if (!n) {
                return fail("'" + m_s.substr(m_pos, j - m_pos) +
                            "' is not a decimal integer of 64 bits");
            }
            m_pos = j;
            return n;
        }
        if (m_pos < m_s.size() && isNameStart(m_s[m_pos])) {
            std::size_t j = m_pos;
            while (j < m_s.size() && isNameChar(m_s[j])) {
                ++j;
            }
            const std::string name = m_s.substr(m_pos, j - m_pos);
            m_pos = j;
            auto v = m_var(name);
            if (!v) {
                return fail("variable " + name + " is not an integer here");
            }
            return v;
        }
        return fail("cannot read '" + m_s + "'");
    }
};

}  // namespace

Value Expander::evalCommandSubst(const std::string& text, int line) {
    static const std::regex kScriptDir(
        R"re(^cd (-- )?"?\$\((dirname|realpath|readlink -f) (-- )?"?(\$0|\$\{0\}|\$\{BASH_SOURCE\[0\]\}|\$\{BASH_SOURCE\}|\$BASH_SOURCE)"?\)((/\.\.)*)/?"?( ?(&>|>|1>) ?/dev/null( 2>&1)?)? && pwd( -P)?$)re");
    static const std::regex kDirname(
        R"re(^dirname (-- )?"?(\$0|\$\{0\}|\$\{BASH_SOURCE\[0\]\}|\$\{BASH_SOURCE\}|\$BASH_SOURCE)"?$)re");
    if (!charge(text.size(), line)) {
        return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
    }
    const std::string norm = normalizeSpaces(text);
    Value v;
    v.file = m_file;
    v.line = line;
    // (std::regex recurses per character: only short texts can be the idiom anyway)
    std::smatch m;
    if (norm.size() < 512 &&
        (std::regex_match(norm, m, kScriptDir) || std::regex_match(norm, kDirname))) {
        std::error_code ec;
        auto dir = std::filesystem::absolute(std::filesystem::path(m_file), ec).parent_path();
        // `$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)`: the folder above, per `/..`
        const std::string ups = m.size() > 5 ? m[5].str() : std::string();
        for (std::size_t at = ups.find("/.."); at != std::string::npos;
             at = ups.find("/..", at + 3)) {
            dir = dir.parent_path();
        }
        v.text = dir.lexically_normal().string();
        return v;
    }
    // $(cd -- "${KNOWN}/../.." &>/dev/null && pwd): the idiom on a folder the reader knows
    static const std::regex kCdKnown(
        R"re(^cd (-- )?([^ ;&|<>`]+)( ?(&>|>|1>) ?/dev/null( 2>&1)?)? && pwd( -P)?$)re");
    if (std::smatch cd; norm.size() < 512 && std::regex_match(norm, cd, kCdKnown)) {
        Word target = parseWordText(cd[2].str(), false, line);
        target.column = 0;
        const Value dir = scalarOf(target);
        if (dir.known && !dir.symbolic && !dir.text.empty() && dir.text[0] == '/') {
            v.text = std::filesystem::path(dir.text).lexically_normal().string();
            while (v.text.size() > 1 && v.text.back() == '/') {
                v.text.pop_back();
            }
            return v;
        }
    }
    // $(seq LAST) / $(seq FIRST LAST) / $(seq FIRST INCREMENT LAST)
    ParsedScript parsed = parseBash(text);
    if (parsed.issues.empty() && parsed.nodes.size() == 1 &&
        parsed.nodes[0].kind == Node::Kind::Commands && parsed.nodes[0].commands.size() == 1) {
        const SimpleCommand& cmd = parsed.nodes[0].commands[0];
        if (cmd.assigns.empty() && cmd.redirects.empty() && !cmd.words.empty() &&
            cmd.words[0].literal() == "seq" && cmd.words.size() >= 2 && cmd.words.size() <= 4) {
            std::vector<long long> args;
            bool ok = true;
            for (std::size_t i = 1; i < cmd.words.size(); ++i) {
                Word w = cmd.words[i];
                w.line = line;
                w.column = 0;  // columns of the inner text would mislead
                Value a = scalarOf(w);
                auto n = a.known ? parseInt(a.text) : std::nullopt;
                if (!a.known) {
                    return unknownValue(line, a.why);
                }
                ok = ok && n.has_value();
                args.push_back(n.value_or(0));
            }
            if (ok) {
                return evalSeq(args, text, line);
            }
        }
    }
    // $(echo "$NAME" | sed 's/-Instruct//g' | tr '[:upper:]' '[:lower:]'): text filters
    if (parsed.issues.empty() && parsed.nodes.size() == 1 &&
        parsed.nodes[0].kind == Node::Kind::Commands && parsed.nodes[0].commands.size() >= 2) {
        if (std::optional<Value> piped = evalTextPipeline(parsed.nodes[0], norm, line)) {
            return *piped;
        }
    }
    // miles: $(python3 <...>/model_args_utils.py NAME) prints the model's Megatron flags
    if (parsed.issues.empty() && parsed.nodes.size() == 1 &&
        parsed.nodes[0].kind == Node::Kind::Commands && parsed.nodes[0].commands.size() == 1) {
        const SimpleCommand& cmd = parsed.nodes[0].commands[0];
        const auto endsWith = [](const std::string& t, std::string_view tail) {
            return t.size() >= tail.size() &&
                   t.compare(t.size() - tail.size(), tail.size(), tail) == 0;
        };
        Word script = cmd.words.size() == 3 ? cmd.words[1] : Word{};
        script.line = line;
        script.column = 0;
        if (cmd.words.size() == 3 && cmd.redirects.empty() &&
            cmd.words[0].literal().rfind("python", 0) == 0 &&
            endsWith(scalarOf(script).text, "model_args_utils.py")) {
            Word w = cmd.words[2];
            w.line = line;
            w.column = 0;
            const Value name = scalarOf(w);
            if (name.known && !name.symbolic && !name.text.empty()) {
                m_out.modelStems.push_back(name.text);
                m_out.milesHints.push_back("line " + std::to_string(line) +
                                           ": model arguments from miles' model_args_utils.py");
                note(NoteLevel::Info, line,
                     "model arguments of '" + name.text +
                         "' computed by miles' model_args_utils.py; the model is taken from that "
                         "name");
                return unknownValue(line, "line " + std::to_string(line) +
                                              ": the model arguments of " + name.text +
                                              std::string(kPythonModelArgsMark));
            }
        }
    }
    note(NoteLevel::Warning, line,
         "not understood: command substitution $(" + norm +
             ") (only $(seq ...), $(echo ... | sed ... | tr ...) and the script-directory idiom "
             "are read)");
    return unknownValue(line, "line " + std::to_string(line) + ": $(" + norm + ") not understood");
}

Value Expander::evalSeq(const std::vector<long long>& args, const std::string& text, int line) {
    const long long first = args.size() >= 2 ? args[0] : 1;
    const long long inc = args.size() == 3 ? args[1] : 1;
    const long long last = args.back();
    Value v;
    v.file = m_file;
    v.line = line;
    if (inc == 0) {
        note(NoteLevel::Warning, line, "not understood: $(" + text + "): an increment of 0");
        return unknownValue(line, "line " + std::to_string(line) + ": $(" + text + ")");
    }
    if (inc > 0 ? first > last : first < last) {
        return v;  // seq prints nothing
    }
    // how many numbers: |last - first| / |inc| + 1, in unsigned 64-bit arithmetic where both
    // magnitudes fit even for the full int64 range
    using U = unsigned long long;
    const U span = inc > 0 ? U(last) - U(first) : U(first) - U(last);
    const U step = inc > 0 ? U(inc) : U(0) - U(inc);
    const U steps = span / step;
    if (steps >= static_cast<U>(kMaxSeqCount)) {
        limitHit(line, "$(" + text + ") would print more than " + std::to_string(kMaxSeqCount) +
                           " numbers; its value is unknown");
        return unknownValue(line, "line " + std::to_string(line) + ": $(" + text + ") too long");
    }
    long long x = first;
    for (U i = 0; i <= steps; ++i) {
        v.text += (i ? "\n" : "") + std::to_string(x);
        if (i < steps) {
            x += inc;  // stays within [first, last]: no overflow
        }
    }
    if (!charge(v.text.size(), line)) {
        return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
    }
    if (v.text.size() > kMaxValueBytes) {
        limitHit(line, "$(" + text + ") prints more than " + std::to_string(kMaxValueBytes >> 20) +
                           " MiB; its value is unknown");
        return unknownValue(line, "line " + std::to_string(line) + ": $(" + text + ") too long");
    }
    return v;
}

Value Expander::evalArith(const std::string& text, int line) {
    if (!charge(text.size(), line)) {
        return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
    }
    Value expanded = scalarOf(parseWordText(text, true, line));
    if (!expanded.known) {
        return unknownValue(line, expanded.why);
    }
    if (expanded.symbolic) {
        return unknownValue(line, "line " + std::to_string(line) + ": $((" + text +
                                      ")) reads a parameter (a variable not set); not computed");
    }
    std::string unknownWhy;
    Arith arith(expanded.text, [&](const std::string& name) -> std::optional<long long> {
        bool isSet = false;
        auto v = lookup(name, line, &isSet);
        if (!v) {
            if (!std::isdigit(static_cast<unsigned char>(name[0]))) {
                parameterValue(name, line, false);
                unknownWhy = "line " + std::to_string(line) + ": " + name +
                             " is a parameter (not set): $((...)) cannot be computed";
                return std::nullopt;
            }
            return 0;
        }
        if (v->symbolic) {
            unknownWhy = "line " + std::to_string(line) + ": " + v->text +
                         " is a parameter: $((...)) cannot be computed";
            return std::nullopt;
        }
        if (!v->known) {
            unknownWhy = v->why;
            return std::nullopt;
        }
        if (v->text.empty()) {
            return 0;
        }
        return parseInt(v->text);
    });
    std::string error;
    auto result = arith.run(error);
    if (!result) {
        if (!unknownWhy.empty()) {
            return unknownValue(line, unknownWhy);
        }
        if (arith.tooDeep()) {
            limitHit(line, "$((...)): " + error);
        } else {
            note(NoteLevel::Warning, line, "not understood: $((" + text + ")): " + error);
        }
        return unknownValue(line, "line " + std::to_string(line) + ": $((" + text + "))");
    }
    Value v;
    v.text = std::to_string(*result);
    v.file = m_file;
    v.line = line;
    return v;
}

}  // namespace runplane::plan::launch::detail
