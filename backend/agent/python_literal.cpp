#include "backend/agent/python_literal.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace runplane::agent {

PyValue::PyValue() = default;
namespace {

constexpr int kMaxDepth = 64;

class Parser {
  public:
    explicit Parser(std::string_view text) : m_text(text) {}

    Result<PyValue> value(int depth) {
        if (depth > kMaxDepth) {
            return fail("nesting deeper than 64 levels");
        }
        skipSpace();
        if (atEnd()) {
            return fail("expected a value, found end of text");
        }
        const char c = m_text[m_pos];
        if (c == '{') {
            return dict(depth);
        }
        if (c == '[') {
            return sequence(depth, ']');
        }
        if (c == '(') {
            return sequence(depth, ')');
        }
        if (c == '\'' || c == '"') {
            return string();
        }
        if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) {
            return number(depth);
        }
        if (isIdentStart(c)) {
            return identifier(depth);
        }
        return fail(std::string("unexpected character '") + c + "'");
    }

    void skipSpace() {
        while (!atEnd() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                            m_text[m_pos] == '\n' || m_text[m_pos] == '\r')) {
            ++m_pos;
        }
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    std::size_t pos() const { return m_pos; }

    Error fail(const std::string& what) const {
        return Error{"column " + std::to_string(m_pos + 1) + ": " + what};
    }

  private:
    static bool isIdentStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }
    static bool isIdentChar(char c) {
        return isIdentStart(c) || (c >= '0' && c <= '9') || c == '.';
    }

    Result<PyValue> dict(int depth) {
        ++m_pos;  // '{'
        PyValue out;
        out.kind = PyValue::Kind::Dict;
        bool isSet = false;
        skipSpace();
        if (!atEnd() && m_text[m_pos] == '}') {
            ++m_pos;
            return out;
        }
        while (true) {
            auto key = value(depth + 1);
            if (!key) {
                return key;
            }
            skipSpace();
            if (!atEnd() && m_text[m_pos] == ':' && !isSet) {
                ++m_pos;
                auto val = value(depth + 1);
                if (!val) {
                    return val;
                }
                out.entries.emplace_back(std::move(*key), std::move(*val));
            } else if (out.entries.empty()) {
                isSet = true;  // {1, 2}: a set; kept as a list
                out.items.push_back(std::move(*key));
            } else {
                return fail("expected ':' after dict key");
            }
            skipSpace();
            if (atEnd()) {
                return fail("expected ',' or '}', found end of text");
            }
            if (m_text[m_pos] == ',') {
                ++m_pos;
                skipSpace();
                if (!atEnd() && m_text[m_pos] == '}') {
                    ++m_pos;
                    break;
                }
                continue;
            }
            if (m_text[m_pos] == '}') {
                ++m_pos;
                break;
            }
            return fail(std::string("expected ',' or '}', found '") + m_text[m_pos] + "'");
        }
        if (isSet) {
            out.kind = PyValue::Kind::List;
        }
        return out;
    }

    Result<PyValue> sequence(int depth, char close) {
        ++m_pos;
        PyValue out;
        out.kind = PyValue::Kind::List;
        skipSpace();
        if (!atEnd() && m_text[m_pos] == close) {
            ++m_pos;
            return out;
        }
        while (true) {
            auto item = value(depth + 1);
            if (!item) {
                return item;
            }
            out.items.push_back(std::move(*item));
            skipSpace();
            if (atEnd()) {
                return fail(std::string("expected ',' or '") + close + "', found end of text");
            }
            if (m_text[m_pos] == ',') {
                ++m_pos;
                skipSpace();
                if (!atEnd() && m_text[m_pos] == close) {
                    ++m_pos;
                    break;
                }
                continue;
            }
            if (m_text[m_pos] == close) {
                ++m_pos;
                break;
            }
            return fail(std::string("expected ',' or '") + close + "', found '" + m_text[m_pos] +
                        "'");
        }
        // (x) and (x,) are both kept as a one-element list; they flatten the same way.
        return out;
    }

    static void appendUtf8(std::string& out, unsigned long cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    Result<PyValue> string(bool raw = false) {
        PyValue out;
        out.kind = PyValue::Kind::String;
        // Adjacent literals concatenate: 'a' 'b' == 'ab'.
        while (true) {
            const char quote = m_text[m_pos];
            const std::size_t start = m_pos;
            ++m_pos;
            bool closed = false;
            while (!atEnd()) {
                const char c = m_text[m_pos++];
                if (c == quote) {
                    closed = true;
                    break;
                }
                if (c != '\\' || raw) {
                    if (c == '\\' && raw && !atEnd()) {
                        out.text += c;
                        out.text += m_text[m_pos++];
                        continue;
                    }
                    out.text += c;
                    continue;
                }
                if (atEnd()) {
                    break;
                }
                const char e = m_text[m_pos++];
                switch (e) {
                    case 'n':
                        out.text += '\n';
                        break;
                    case 't':
                        out.text += '\t';
                        break;
                    case 'r':
                        out.text += '\r';
                        break;
                    case '0':
                        out.text += '\0';
                        break;
                    case 'a':
                        out.text += '\a';
                        break;
                    case 'b':
                        out.text += '\b';
                        break;
                    case 'f':
                        out.text += '\f';
                        break;
                    case 'v':
                        out.text += '\v';
                        break;
                    case '\\':
                        out.text += '\\';
                        break;
                    case '\'':
                        out.text += '\'';
                        break;
                    case '"':
                        out.text += '"';
                        break;
                    case '\n':
                        break;
                    case 'x':
                    case 'u':
                    case 'U': {
                        const std::size_t digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
                        if (m_pos + digits > m_text.size()) {
                            m_pos = start;
                            return fail("truncated \\" + std::string(1, e) + " escape in string");
                        }
                        const std::string hex(m_text.substr(m_pos, digits));
                        char* end = nullptr;
                        const unsigned long cp = std::strtoul(hex.c_str(), &end, 16);
                        if (end != hex.c_str() + digits) {
                            return fail("bad \\" + std::string(1, e) + " escape in string");
                        }
                        m_pos += digits;
                        appendUtf8(out.text, cp);
                        break;
                    }
                    default:
                        out.text += '\\';
                        out.text += e;
                        break;
                }
            }
            if (!closed) {
                m_pos = start;
                return fail("unterminated string");
            }
            const std::size_t save = m_pos;
            skipSpace();
            if (!atEnd() && (m_text[m_pos] == '\'' || m_text[m_pos] == '"')) {
                continue;
            }
            m_pos = save;
            return out;
        }
    }

    Result<PyValue> number(int depth) {
        const std::size_t start = m_pos;
        std::string digits;
        bool isFloat = false;
        if (m_text[m_pos] == '-' || m_text[m_pos] == '+') {
            digits += m_text[m_pos++];
            skipSpace();
            if (!atEnd() && isIdentStart(m_text[m_pos])) {
                // -inf, -nan, -np.float64(1.0)
                auto v = identifier(depth);
                if (!v) {
                    return v;
                }
                if (!v->isNumeric()) {
                    m_pos = start;
                    return fail("a sign must be followed by a number");
                }
                if (digits == "-") {
                    v->number = -v->number;
                    v->integer = -v->integer;
                }
                return v;
            }
        }
        while (!atEnd()) {
            const char c = m_text[m_pos];
            if (c >= '0' && c <= '9') {
                digits += c;
            } else if (c == '_') {
                // 1_000
            } else if (c == '.') {
                isFloat = true;
                digits += c;
            } else if (c == 'e' || c == 'E') {
                isFloat = true;
                digits += c;
                if (m_pos + 1 < m_text.size() &&
                    (m_text[m_pos + 1] == '-' || m_text[m_pos + 1] == '+')) {
                    digits += m_text[++m_pos];
                }
            } else if (c == 'j' || c == 'J') {
                m_pos = start;
                return fail("complex numbers are not supported");
            } else {
                break;
            }
            ++m_pos;
        }
        PyValue out;
        const char* begin = digits.c_str();
        char* end = nullptr;
        if (!isFloat) {
            errno = 0;
            const long long v = std::strtoll(begin, &end, 10);
            if (end != begin + digits.size() || digits == "-" || digits == "+" || digits.empty()) {
                m_pos = start;
                return fail("malformed number '" + digits + "'");
            }
            if (errno == ERANGE) {
                isFloat = true;  // Python ints are unbounded; keep the magnitude as a float
            } else {
                out.kind = PyValue::Kind::Int;
                out.integer = v;
                out.number = static_cast<double>(v);
                return out;
            }
        }
        const double v = std::strtod(begin, &end);
        if (end != begin + digits.size()) {
            m_pos = start;
            return fail("malformed number '" + digits + "'");
        }
        out.kind = PyValue::Kind::Float;
        out.number = v;
        return out;
    }

    Result<PyValue> identifier(int depth) {
        const std::size_t start = m_pos;
        while (!atEnd() && isIdentChar(m_text[m_pos])) {
            ++m_pos;
        }
        const std::string_view name = m_text.substr(start, m_pos - start);
        // String prefixes: r'..', b'..', u'..', rb'..', f is not a literal.
        if (!atEnd() && (m_text[m_pos] == '\'' || m_text[m_pos] == '"') && name.size() <= 2) {
            bool raw = false, ok = true;
            for (char c : name) {
                if (c == 'r' || c == 'R') {
                    raw = true;
                } else if (c != 'b' && c != 'B' && c != 'u' && c != 'U') {
                    ok = false;
                }
            }
            if (ok) {
                return string(raw);
            }
        }
        PyValue out;
        if (name == "None" || name == "null") {
            return out;
        }
        if (name == "True" || name == "False" || name == "true" || name == "false") {
            // JSON's true/false/null are accepted too, so JSON lines share this parser.
            out.kind = PyValue::Kind::Bool;
            out.boolean = name == "True" || name == "true";
            out.integer = out.boolean ? 1 : 0;
            out.number = static_cast<double>(out.integer);
            return out;
        }
        if (name == "nan" || name == "inf" || name == "math.nan" || name == "math.inf" ||
            name == "np.nan" || name == "np.inf" || name == "numpy.nan" || name == "numpy.inf") {
            out.kind = PyValue::Kind::Float;
            out.number = name.ends_with("nan") ? std::numeric_limits<double>::quiet_NaN()
                                               : std::numeric_limits<double>::infinity();
            return out;
        }
        skipSpace();
        if (!atEnd() && m_text[m_pos] == '(') {
            // A call: float('nan'), np.float64(0.5), tensor(0.25, device='cuda:0'), ...
            // The first positional argument is the value.
            auto args = sequenceOfCall(depth);
            if (!args) {
                return args;
            }
            if (args->items.empty()) {
                m_pos = start;
                return fail("call " + std::string(name) + "() has no value");
            }
            PyValue first = std::move(args->items.front());
            if ((name == "float" || name == "int") && first.kind == PyValue::Kind::String) {
                const std::string& s = first.text;
                PyValue num;
                num.kind = PyValue::Kind::Float;
                if (s == "nan" || s == "NaN") {
                    num.number = std::numeric_limits<double>::quiet_NaN();
                } else if (s == "inf" || s == "+inf" || s == "Infinity") {
                    num.number = std::numeric_limits<double>::infinity();
                } else if (s == "-inf" || s == "-Infinity") {
                    num.number = -std::numeric_limits<double>::infinity();
                } else {
                    char* end = nullptr;
                    num.number = std::strtod(s.c_str(), &end);
                    if (end == s.c_str()) {
                        m_pos = start;
                        return fail("cannot convert '" + s + "' to a number");
                    }
                }
                return num;
            }
            return first;
        }
        m_pos = start;
        return fail("unknown name '" + std::string(name) + "'");
    }

    // Arguments of a call; keyword arguments (device='cuda:0') are parsed and dropped.
    Result<PyValue> sequenceOfCall(int depth) {
        ++m_pos;  // '('
        PyValue out;
        out.kind = PyValue::Kind::List;
        while (true) {
            skipSpace();
            if (atEnd()) {
                return fail("expected ')', found end of text");
            }
            if (m_text[m_pos] == ')') {
                ++m_pos;
                return out;
            }
            // keyword=value
            std::size_t probe = m_pos;
            while (probe < m_text.size() && isIdentChar(m_text[probe])) {
                ++probe;
            }
            const bool keyword = probe > m_pos && probe < m_text.size() && m_text[probe] == '=' &&
                                 (probe + 1 >= m_text.size() || m_text[probe + 1] != '=');
            if (keyword) {
                m_pos = probe + 1;
            }
            auto item = value(depth + 1);
            if (!item) {
                return item;
            }
            if (!keyword) {
                out.items.push_back(std::move(*item));
            }
            skipSpace();
            if (!atEnd() && m_text[m_pos] == ',') {
                ++m_pos;
            } else if (!atEnd() && m_text[m_pos] != ')') {
                return fail(std::string("expected ',' or ')', found '") + m_text[m_pos] + "'");
            }
        }
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
};

}  // namespace

double PyValue::asDouble() const {
    switch (kind) {
        case Kind::Bool:
            return boolean ? 1.0 : 0.0;
        case Kind::Int:
            return static_cast<double>(integer);
        case Kind::Float:
            return number;
        default:
            return std::numeric_limits<double>::quiet_NaN();
    }
}

std::string PyValue::keyText() const {
    switch (kind) {
        case Kind::String:
            return text;
        case Kind::Int:
            return std::to_string(integer);
        case Kind::Bool:
            return boolean ? "True" : "False";
        case Kind::Float: {
            char buf[64];
            std::snprintf(buf, sizeof(buf), "%g", number);
            return buf;
        }
        case Kind::None:
            return "None";
        default:
            return "?";
    }
}

Result<PyValue> parsePythonLiteralPrefix(std::string_view text, std::size_t* consumed) {
    Parser p(text);
    auto v = p.value(0);
    if (v && consumed != nullptr) {
        *consumed = p.pos();
    }
    return v;
}

Result<PyValue> parsePythonLiteral(std::string_view text) {
    Parser p(text);
    auto v = p.value(0);
    if (!v) {
        return v;
    }
    p.skipSpace();
    if (!p.atEnd()) {
        return p.fail("unexpected text after the value");
    }
    return v;
}

void flattenNumeric(const PyValue& value, const std::string& prefix,
                    std::vector<std::pair<std::string, double>>& out) {
    switch (value.kind) {
        case PyValue::Kind::Bool:
        case PyValue::Kind::Int:
        case PyValue::Kind::Float:
            out.emplace_back(prefix, value.asDouble());
            break;
        case PyValue::Kind::Dict:
            for (const auto& [k, v] : value.entries) {
                flattenNumeric(v, prefix.empty() ? k.keyText() : prefix + "/" + k.keyText(), out);
            }
            break;
        case PyValue::Kind::List:
            for (std::size_t i = 0; i < value.items.size(); ++i) {
                flattenNumeric(
                    value.items[i],
                    prefix.empty() ? std::to_string(i) : prefix + "/" + std::to_string(i), out);
            }
            break;
        default:
            break;
    }
}

}  // namespace runplane::agent
