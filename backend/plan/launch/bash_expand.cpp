// Word expansion for the launch-script reader: ${...} forms, $((...)), the $(seq ...) and
// script-directory command substitutions, quoting and field splitting as bash does them.

#include <cctype>
#include <filesystem>
#include <functional>
#include <regex>

#include "backend/plan/launch/bash_eval.h"
#include "backend/plan/launch/bash_limits.h"
#include "backend/plan/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

bool isNameStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isBlank(char c) {
    return c == ' ' || c == '\t' || c == '\n';
}

// Builds the fields of one word.
class FieldBuilder {
  public:
    FieldBuilder(std::string file, int line) : m_file(std::move(file)), m_line(line) { reset(); }

    void append(const Value& v, bool fromElement) {
        if (m_cur.text.size() + v.text.size() > kMaxValueBytes) {
            m_overflow = true;  // the caller reports it; the value is not built
            return;
        }
        m_bytes += v.text.size();
        m_cur.text += v.text;
        if (!v.known && m_cur.known) {
            m_cur.known = false;
            m_cur.why = v.why;
        }
        if (fromElement && !m_hasElementProv && v.line > 0) {
            m_cur.file = v.file;
            m_cur.line = v.line;
            m_hasElementProv = true;
        }
        m_active = m_active || !v.text.empty() || !v.known;
    }
    void force() { m_active = true; }
    void finish() {
        if (m_active) {
            m_fields.push_back(std::move(m_cur));
        }
        reset();
    }
    // Unquoted expansion result: split on blanks.
    void appendSplit(const Value& v, bool fromElement) {
        if (!v.known) {
            append(v, fromElement);
            return;
        }
        const std::string& s = v.text;
        std::size_t i = 0;
        if (!s.empty() && isBlank(s[0])) {
            finish();
        }
        bool first = true;
        while (i < s.size()) {
            while (i < s.size() && isBlank(s[i])) {
                ++i;
            }
            if (i >= s.size()) {
                break;
            }
            std::size_t j = i;
            while (j < s.size() && !isBlank(s[j])) {
                ++j;
            }
            if (!first) {
                finish();
            }
            Value piece = v;
            piece.text = s.substr(i, j - i);
            append(piece, fromElement);
            first = false;
            i = j;
        }
        if (!s.empty() && isBlank(s.back())) {
            finish();
        }
    }
    Field& current() { return m_cur; }
    bool overflowed() const { return m_overflow; }
    std::uint64_t bytes() const { return m_bytes; }
    std::vector<Field> take() {
        finish();
        return std::move(m_fields);
    }

  private:
    std::string m_file;
    int m_line;
    Field m_cur;
    bool m_active = false;
    bool m_hasElementProv = false;
    bool m_overflow = false;
    std::uint64_t m_bytes = 0;
    std::vector<Field> m_fields;

    void reset() {
        m_cur = Field{};
        m_cur.file = m_file;
        m_cur.line = m_line;
        m_active = false;
        m_hasElementProv = false;
    }
};

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

bool isSelfParameter(const Word& word, const std::string& name) {
    if (word.parts.size() != 1 || word.parts[0].kind != WordPart::Kind::Param) {
        return false;
    }
    const std::string& t = word.parts[0].text;
    return t.compare(0, name.size(), name) == 0 &&
           (t.size() == name.size() || !isNameChar(t[name.size()]));
}

Value Evaluator::unknownValue(int line, std::string why) const {
    if (why.size() > kMaxMessageChars) {  // it is copied into every value derived from this one
        why = why.substr(0, kMaxMessageChars - 3) + "...";
    }
    Value v;
    v.known = false;
    v.why = std::move(why);
    v.file = m_file;
    v.line = line;
    return v;
}

std::optional<Value> Evaluator::lookup(const std::string& name, int line, bool* isSet) {
    auto it = m_vars.find(name);
    if (it == m_vars.end() || (it->second.values.empty() && !it->second.unknown)) {
        *isSet = false;
        return std::nullopt;
    }
    *isSet = true;
    if (it->second.unknown) {
        return unknownValue(line, it->second.why);
    }
    return it->second.values.front();
}

Evaluator::ParamResult Evaluator::evalParam(const std::string& expr, bool quoted, int line) {
    ParamResult res;
    res.scalar.file = m_file;
    res.scalar.line = line;
    if (expr.empty()) {
        res.scalar = unknownValue(line, "line " + std::to_string(line) + ": empty ${}");
        return res;
    }
    // ${#NAME} / ${#NAME[@]}
    if (expr.size() > 1 && expr[0] == '#') {
        std::string name = expr.substr(1);
        const bool all = name.size() > 3 && (name.ends_with("[@]") || name.ends_with("[*]"));
        if (all) {
            name.resize(name.size() - 3);
        }
        auto it = m_vars.find(name);
        if (it != m_vars.end() && it->second.unknown) {
            res.scalar = unknownValue(line, it->second.why);
        } else if (it == m_vars.end()) {
            res.scalar.text = "0";
        } else if (all) {
            res.scalar.text = std::to_string(it->second.values.size());
        } else {
            res.scalar.text = std::to_string(
                it->second.values.empty() ? 0 : it->second.values.front().text.size());
        }
        return res;
    }
    // the parameter's name
    std::size_t i = 0;
    std::string name;
    if (isNameStart(expr[0])) {
        while (i < expr.size() && isNameChar(expr[i])) {
            ++i;
        }
        name = expr.substr(0, i);
    } else if (std::isdigit(static_cast<unsigned char>(expr[0]))) {
        while (i < expr.size() && std::isdigit(static_cast<unsigned char>(expr[i]))) {
            ++i;
        }
        name = expr.substr(0, i);
    } else {
        name = expr.substr(0, 1);
        i = 1;
    }
    std::string rest = expr.substr(i);
    std::string subscript;
    if (!rest.empty() && rest[0] == '[') {
        const auto close = rest.find(']');
        if (close == std::string::npos) {
            res.scalar =
                unknownValue(line, "line " + std::to_string(line) + ": bad ${" + expr + "}");
            return res;
        }
        subscript = rest.substr(1, close - 1);
        rest = rest.substr(close + 1);
    }
    // special parameters
    if (name == "0" || (name == "BASH_SOURCE" && (subscript.empty() || subscript == "0"))) {
        Value v;
        v.text = name == "0" ? m_mainPath : m_file;
        v.file = m_file;
        v.line = line;
        m_vars[name == "0" ? "0" : "BASH_SOURCE"] = Var{{v}, false, false, false, "", false};
    } else if (name == "@" || name == "*") {
        res.list = true;
        res.star = name == "*" && quoted;
        return res;  // the script is read as if run without arguments
    } else if (name == "#" || name == "?") {
        res.scalar.text = "0";
        return res;
    } else if (name == "$" || name == "!" || name == "-") {
        res.scalar = unknownValue(line, "line " + std::to_string(line) + ": $" + name +
                                            " is only known when the script runs");
        return res;
    } else if (std::isdigit(static_cast<unsigned char>(name[0])) &&
               !m_reportedUnset.count("$" + name)) {
        m_reportedUnset.insert("$" + name);
        note(NoteLevel::Info, line,
             "$" + name +
                 " (a script argument) is taken as unset: the script is read as if run "
                 "without arguments");
    }
    const auto it = m_vars.find(name);
    const bool exists = it != m_vars.end();
    if (!subscript.empty() && subscript != "@" && subscript != "*") {
        auto idx = parseInt(subscript);
        if (!idx || *idx < 0) {
            res.scalar = unknownValue(line, "line " + std::to_string(line) + ": subscript '" +
                                                subscript + "' is not understood");
            return res;
        }
        if (exists && it->second.unknown) {
            res.scalar = unknownValue(line, it->second.why);
        } else if (exists && static_cast<std::size_t>(*idx) < it->second.values.size()) {
            res.scalar = it->second.values[static_cast<std::size_t>(*idx)];
        }
        if (!rest.empty()) {
            res.scalar = unknownValue(
                line, "line " + std::to_string(line) + ": ${" + expr + "} is not understood");
        }
        return res;
    }
    if (subscript == "@" || subscript == "*") {
        if (!rest.empty()) {
            res.scalar = unknownValue(
                line, "line " + std::to_string(line) + ": ${" + expr + "} is not understood");
            return res;
        }
        res.list = true;
        res.star = subscript == "*" && quoted;
        if (exists && it->second.unknown) {
            res.items.push_back(unknownValue(line, it->second.why));
        } else if (exists) {
            res.items = it->second.values;
        } else if (!m_reportedUnset.count(name)) {
            m_reportedUnset.insert(name);
            note(NoteLevel::Info, line, "array " + name + " is not set; it expands to nothing");
        }
        return res;
    }
    bool isSet = false;
    std::optional<Value> current = lookup(name, line, &isSet);
    const bool nonEmpty = isSet && current && (!current->known || !current->text.empty());
    if (rest.empty()) {
        if (current) {
            res.scalar = *current;
            res.scalar.line = line;
            res.scalar.file = m_file;
        } else if (!m_reportedUnset.count(name) &&
                   !std::isdigit(static_cast<unsigned char>(name[0]))) {
            m_reportedUnset.insert(name);
            note(NoteLevel::Info, line,
                 name + " is not set in the script and not given with --env; taken as empty");
        }
        return res;
    }
    std::string op;
    std::size_t opLen = 0;
    if (rest.size() >= 2 && rest[0] == ':' &&
        std::string_view("-=?+").find(rest[1]) != std::string_view::npos) {
        op = rest.substr(0, 2);
        opLen = 2;
    } else if (std::string_view("-=?+").find(rest[0]) != std::string_view::npos) {
        op = rest.substr(0, 1);
        opLen = 1;
    } else {
        res.scalar = unknownValue(line, "line " + std::to_string(line) + ": ${" + expr +
                                            "} is not understood (only :- - := = :? ? :+ + forms)");
        note(NoteLevel::Warning, line, "not understood: ${" + expr + "}");
        return res;
    }
    const bool colon = op.size() == 2;
    const bool unsetLike = colon ? !nonEmpty : !isSet;
    const std::string operand = rest.substr(opLen);
    auto operandValue = [&]() {
        if (!charge(operand.size(), line)) {
            return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
        }
        return scalarOf(parseWordText(operand, quoted, line));
    };
    switch (op.back()) {
        case '-':
            res.scalar = unsetLike ? operandValue() : *current;
            break;
        case '=':
            if (unsetLike) {
                res.scalar = operandValue();
                m_vars[name].values = {res.scalar};
                m_vars[name].isArray = false;
            } else {
                res.scalar = *current;
            }
            break;
        case '?':
            if (unsetLike) {
                const std::string msg = operand.empty() ? "parameter null or not set" : operand;
                res.scalar = unknownValue(line, "line " + std::to_string(line) + ": " + name +
                                                    " must be set (" + msg + ")");
                note(NoteLevel::Warning, line,
                     name + " must be set (" + msg + "); give it with --env " + name + "=...");
            } else {
                res.scalar = *current;
            }
            break;
        case '+':
            res.scalar = unsetLike ? Value{} : operandValue();
            break;
        default:
            break;
    }
    res.scalar.file = m_file;
    res.scalar.line = line;
    return res;
}

Value Evaluator::evalCommandSubst(const std::string& text, int line) {
    static const std::regex kScriptDir(
        R"re(^cd (-- )?"?\$\((dirname|realpath|readlink -f) (-- )?"?(\$0|\$\{0\}|\$\{BASH_SOURCE\[0\]\}|\$\{BASH_SOURCE\}|\$BASH_SOURCE)"?\)"?( ?(&>|>|1>) ?/dev/null( 2>&1)?)? && pwd( -P)?$)re");
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
    if (norm.size() < 512 &&
        (std::regex_match(norm, kScriptDir) || std::regex_match(norm, kDirname))) {
        std::error_code ec;
        auto dir = std::filesystem::absolute(std::filesystem::path(m_file), ec).parent_path();
        v.text = dir.lexically_normal().string();
        return v;
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
    note(NoteLevel::Warning, line,
         "not understood: command substitution $(" + norm +
             ") (only $(seq ...) and the script-directory idiom are read)");
    return unknownValue(line, "line " + std::to_string(line) + ": $(" + norm + ") not understood");
}

Value Evaluator::evalSeq(const std::vector<long long>& args, const std::string& text, int line) {
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

Value Evaluator::evalArith(const std::string& text, int line) {
    if (!charge(text.size(), line)) {
        return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
    }
    Value expanded = scalarOf(parseWordText(text, true, line));
    if (!expanded.known) {
        return unknownValue(line, expanded.why);
    }
    std::string unknownWhy;
    Arith arith(expanded.text, [&](const std::string& name) -> std::optional<long long> {
        bool isSet = false;
        auto v = lookup(name, line, &isSet);
        if (!v) {
            return 0;
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

std::vector<Field> Evaluator::expandWord(const Word& word, bool split) {
    // an unknown field standing for the word as written (after a limit hit)
    auto asWritten = [&](const std::string& why) {
        Field f;
        f.text = word.raw;
        f.known = false;
        f.why = "line " + std::to_string(word.line) + ": " + why;
        f.file = m_file;
        f.line = word.line;
        return std::vector<Field>{f};
    };
    if (m_budgetHit) {
        return asWritten("not read (the expansion limit was hit)");
    }
    struct Nest {
        int& depth;
        explicit Nest(int& d) : depth(d) { ++depth; }
        ~Nest() { --depth; }
    } nest(m_exprNest);
    if (m_exprNest == 1 && word.column > 0) {
        m_column = word.column;  // limit notes inside this word point here
    }
    if (m_exprNest > kMaxNesting) {
        limitHit(word.line, "expansions (${...}, $(...), $((...))) nested more than " +
                                std::to_string(kMaxNesting) + " levels deep; the value is unknown");
        return asWritten("expansions nested too deeply");
    }
    FieldBuilder b(m_file, word.line);
    for (const auto& part : word.parts) {
        switch (part.kind) {
            case WordPart::Kind::Literal: {
                Value v;
                v.text = part.text;
                b.append(v, false);
                if (part.quoted) {
                    b.force();
                }
                break;
            }
            case WordPart::Kind::Param: {
                ParamResult r = evalParam(part.text, part.quoted, word.line);
                if (!r.list) {
                    if (part.quoted || !split) {
                        b.append(r.scalar, false);
                        if (part.quoted) {
                            b.force();
                        }
                    } else {
                        b.appendSplit(r.scalar, false);
                    }
                    break;
                }
                if (r.star || !split) {
                    Value joined;
                    joined.file = m_file;
                    joined.line = word.line;
                    for (std::size_t i = 0; i < r.items.size(); ++i) {
                        if (joined.text.size() + r.items[i].text.size() + 1 > kMaxValueBytes) {
                            limitHit(word.line, "${...[*]} joins to more than " +
                                                    std::to_string(kMaxValueBytes >> 20) +
                                                    " MiB; the value is unknown");
                            return asWritten("the value is longer than the reader's limit");
                        }
                        joined.text += (i ? " " : "") + r.items[i].text;
                        if (!r.items[i].known && joined.known) {
                            joined.known = false;
                            joined.why = r.items[i].why;
                        }
                    }
                    if (part.quoted || !split) {
                        b.append(joined, false);
                        if (part.quoted) {
                            b.force();
                        }
                        if (word.parts.size() == 1 && charge(64 * r.items.size(), word.line)) {
                            b.current().segments = r.items;
                        }
                    } else {
                        b.appendSplit(joined, false);
                    }
                    break;
                }
                for (std::size_t i = 0; i < r.items.size(); ++i) {
                    if (i > 0) {
                        b.finish();
                    }
                    if (part.quoted) {
                        b.append(r.items[i], true);
                        b.force();
                    } else {
                        b.appendSplit(r.items[i], true);
                    }
                }
                break;
            }
            case WordPart::Kind::CommandSubst:
            case WordPart::Kind::Arith: {
                Value v = part.kind == WordPart::Kind::Arith
                              ? evalArith(part.text, word.line)
                              : evalCommandSubst(part.text, word.line);
                if (part.kind == WordPart::Kind::CommandSubst) {
                    while (!v.text.empty() && v.text.back() == '\n') {
                        v.text.pop_back();
                    }
                }
                if (part.quoted || !split) {
                    b.append(v, false);
                    if (part.quoted) {
                        b.force();
                    }
                } else {
                    b.appendSplit(v, false);
                }
                break;
            }
            case WordPart::Kind::Unsupported: {
                note(NoteLevel::Warning, word.line, "not understood: " + part.text);
                Value v = unknownValue(word.line, "line " + std::to_string(word.line) + ": " +
                                                      part.text + " not understood");
                v.text = part.text;
                b.append(v, false);
                break;
            }
        }
    }
    std::vector<Field> fields = b.take();
    if (b.overflowed()) {
        limitHit(word.line, "the word " + word.raw.substr(0, 60) +
                                (word.raw.size() > 60 ? "..." : "") + " expands to more than " +
                                std::to_string(kMaxValueBytes >> 20) +
                                " MiB; the value is unknown");
        return asWritten("the value is longer than the reader's limit");
    }
    // a word costs what it weighs in memory: its bytes, and about 64 per field and part
    if (!charge(b.bytes() + 64 * (fields.size() + word.parts.size()), word.line)) {
        return asWritten("not read (the expansion limit was hit)");
    }
    for (auto& f : fields) {
        if (!f.known && f.text.empty()) {
            f.text = word.raw;
        }
    }
    return fields;
}

Value Evaluator::scalarOf(const Word& word) {
    Value out;
    out.file = m_file;
    out.line = word.line;
    const std::vector<Field> fields = expandWord(word, false);
    for (std::size_t i = 0; i < fields.size(); ++i) {
        out.text += (i ? " " : "") + fields[i].text;
        if (!fields[i].known && out.known) {
            out.known = false;
            out.why = fields[i].why;
        }
    }
    return out;
}

}  // namespace runplane::plan::launch::detail
