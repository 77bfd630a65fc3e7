#include "compute/gpu/json_text.h"

#include <cstdio>
#include <cstdlib>

namespace runplane::compute::json {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
std::size_t utf8SequenceLength(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    std::size_t length = 0;
    if (c < 0x80) {
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        length = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4;
    } else {
        return 0;
    }
    if (i + length > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            return 0;
        }
    }
    // Reject overlong and surrogate encodings.
    if (c == 0xE0 && byte(i + 1) < 0xA0)
        return 0;
    if (c == 0xED && byte(i + 1) > 0x9F)
        return 0;
    if (c == 0xF0 && byte(i + 1) < 0x90)
        return 0;
    if (c == 0xF4 && byte(i + 1) > 0x8F)
        return 0;
    return length;
}

void appendUtf8(std::string& out, unsigned codepoint) {
    if (codepoint < 0x80) {
        out += static_cast<char>(codepoint);
    } else if (codepoint < 0x800) {
        out += static_cast<char>(0xC0 | (codepoint >> 6));
        out += static_cast<char>(0x80 | (codepoint & 0x3F));
    } else if (codepoint < 0x10000) {
        out += static_cast<char>(0xE0 | (codepoint >> 12));
        out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codepoint & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (codepoint >> 18));
        out += static_cast<char>(0x80 | ((codepoint >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codepoint & 0x3F));
    }
}

class FlatReader {
  public:
    explicit FlatReader(std::string_view text) : m_text(text) {}

    bool read(std::map<std::string, FlatValue>& out, std::string& error) {
        skipSpace();
        if (!expect('{'))
            return fail(error, "expected '{'");
        skipSpace();
        if (peek() == '}') {
            ++m_pos;
            return finish(error);
        }
        while (true) {
            skipSpace();
            std::string key;
            if (peek() != '"' || !readString(key))
                return fail(error, "expected a string key");
            skipSpace();
            if (!expect(':'))
                return fail(error, "expected ':'");
            skipSpace();
            FlatValue value;
            if (!readScalar(value))
                return fail(error, "expected a string, number, true, false or null");
            out[key] = std::move(value);
            skipSpace();
            if (peek() == ',') {
                ++m_pos;
                continue;
            }
            if (!expect('}'))
                return fail(error, "expected ',' or '}'");
            return finish(error);
        }
    }

  private:
    char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
    bool expect(char c) {
        if (peek() != c)
            return false;
        ++m_pos;
        return true;
    }
    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' ||
                                         m_text[m_pos] == '\r' || m_text[m_pos] == '\t')) {
            ++m_pos;
        }
    }
    bool fail(std::string& error, const char* what) {
        error = "offset " + std::to_string(m_pos) + ": " + what;
        return false;
    }
    bool finish(std::string& error) {
        skipSpace();
        if (m_pos != m_text.size())
            return fail(error, "trailing characters after the object");
        return true;
    }
    bool readHex4(unsigned& value) {
        if (m_pos + 4 > m_text.size())
            return false;
        value = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = m_text[m_pos++];
            value <<= 4;
            if (c >= '0' && c <= '9') {
                value |= static_cast<unsigned>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                value |= static_cast<unsigned>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                value |= static_cast<unsigned>(c - 'A' + 10);
            } else {
                return false;
            }
        }
        return true;
    }
    bool readString(std::string& out) {
        ++m_pos;  // opening quote
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos++];
            if (c == '"')
                return true;
            if (static_cast<unsigned char>(c) < 0x20)
                return false;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (m_pos >= m_text.size())
                return false;
            const char e = m_text[m_pos++];
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    unsigned cp = 0;
                    if (!readHex4(cp))
                        return false;
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        unsigned low = 0;
                        if (!expect('\\') || !expect('u') || !readHex4(low) || low < 0xDC00 ||
                            low > 0xDFFF) {
                            return false;
                        }
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        return false;
                    }
                    appendUtf8(out, cp);
                    break;
                }
                default:
                    return false;
            }
        }
        return false;
    }
    bool readScalar(FlatValue& value) {
        const char c = peek();
        if (c == '"') {
            value.kind = FlatValue::Kind::String;
            return readString(value.text);
        }
        for (const auto& [word, kind, flag] :
             {std::tuple{std::string_view("true"), FlatValue::Kind::Bool, true},
              std::tuple{std::string_view("false"), FlatValue::Kind::Bool, false},
              std::tuple{std::string_view("null"), FlatValue::Kind::Null, false}}) {
            if (m_text.substr(m_pos, word.size()) == word) {
                m_pos += word.size();
                value.kind = kind;
                value.boolean = flag;
                value.text = std::string(word);
                return true;
            }
        }
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() &&
               std::string_view("+-0123456789.eE").find(m_text[m_pos]) != std::string_view::npos) {
            ++m_pos;
        }
        if (m_pos == start)
            return false;
        value.kind = FlatValue::Kind::Number;
        value.text = std::string(m_text.substr(start, m_pos - start));
        char* end = nullptr;
        value.number = std::strtod(value.text.c_str(), &end);
        return end == value.text.c_str() + value.text.size();
    }

    std::string_view m_text;
    std::size_t m_pos = 0;
};

}  // namespace

std::string quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
            ++i;
        } else if (c == '\n') {
            out += "\\n";
            ++i;
        } else if (c == '\t') {
            out += "\\t";
            ++i;
        } else if (c == '\r') {
            out += "\\r";
            ++i;
        } else if (u < 0x20 || u == 0x7F) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(u));
            out += buffer;
            ++i;
        } else {
            const std::size_t length = utf8SequenceLength(s, i);
            if (length == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(s.substr(i, length));
                i += length;
            }
        }
    }
    out += '"';
    return out;
}

bool parseFlatObject(std::string_view text, std::map<std::string, FlatValue>& out,
                     std::string& error) {
    out.clear();
    return FlatReader(text).read(out, error);
}

}  // namespace runplane::compute::json
