#include "backend/launch/shell_text.h"

#include "backend/plan/recipe.h"

#include <charconv>
#include <cmath>

namespace runplane::plan::launch::detail {

namespace {
bool safeBare(char c) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
        return true;
    }
    switch (c) {
        case '_':
        case '@':
        case '%':
        case '+':
        case '=':
        case ':':
        case ',':
        case '.':
        case '/':
        case '-':
            return true;
        default:
            return false;
    }
}
}  // namespace

std::string shellQuote(std::string_view word) {
    bool bare = !word.empty();
    for (char c : word) {
        bare = bare && safeBare(c);
    }
    if (bare) {
        return std::string(word);
    }
    std::string out = "'";
    for (char c : word) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    out += '\'';
    return out;
}

namespace {
// ${NAME} or a script argument ${1}..${9} starting at `at` (at the '$'): the position of its
// '}', or npos.
std::size_t parameterEnd(std::string_view text, std::size_t at) {
    if (text.compare(at, 2, "${") != 0 || at + 2 >= text.size()) {
        return std::string_view::npos;
    }
    std::size_t end = at + 2;
    if (text[end] >= '1' && text[end] <= '9') {
        ++end;
    } else if (isNameStart(text[end])) {
        while (end < text.size() && isNameChar(text[end])) {
            ++end;
        }
    } else {
        return std::string_view::npos;
    }
    return end < text.size() && text[end] == '}' ? end : std::string_view::npos;
}
}  // namespace

bool hasParameter(std::string_view text) {
    for (std::size_t at = text.find("${"); at != std::string_view::npos;
         at = text.find("${", at + 2)) {
        if (parameterEnd(text, at) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

void collectParameterNames(std::string_view text, std::set<std::string>& names) {
    for (std::size_t at = text.find("${"); at != std::string_view::npos;
         at = text.find("${", at + 2)) {
        const std::size_t end = parameterEnd(text, at);
        if (end != std::string_view::npos) {
            names.insert(std::string(text.substr(at + 2, end - at - 2)));
        }
    }
}

std::string exportWord(std::string_view word) {
    if (isSpliceWord(word)) {
        return std::string(word);
    }
    if (!hasParameter(word)) {
        return shellQuote(word);
    }
    std::string out = "\"";
    std::size_t i = 0;
    while (i < word.size()) {
        if (const std::size_t end = parameterEnd(word, i); end != std::string_view::npos) {
            out += word.substr(i, end + 1 - i);
            i = end + 1;
            continue;
        }
        out += doubleQuoteEscape(word.substr(i, 1));
        ++i;
    }
    out += '"';
    return out;
}

std::string exportJoin(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) {
            out += ' ';
        }
        out += exportWord(w);
    }
    return out;
}

std::string shellJoin(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) {
            out += ' ';
        }
        out += shellQuote(w);
    }
    return out;
}

std::string doubleQuoteEscape(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\\' || c == '"' || c == '$' || c == '`') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

Result<std::vector<std::string>> shellSplit(std::string_view text) {
    std::vector<std::string> words;
    std::string current;
    bool inWord = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (inWord) {
                words.push_back(std::move(current));
                current.clear();
                inWord = false;
            }
            continue;
        }
        inWord = true;
        if (c == '$' || c == '`') {
            return Error{"'" + std::string(text) + "': contains '" + std::string(1, c) +
                         "', which would expand when the shell reads it"};
        }
        if (c == '\\') {
            if (i + 1 >= text.size()) {
                return Error{"'" + std::string(text) + "': ends in a lone backslash"};
            }
            current += text[++i];
        } else if (c == '\'') {
            const auto end = text.find('\'', i + 1);
            if (end == std::string_view::npos) {
                return Error{"'" + std::string(text) + "': unclosed single quote"};
            }
            current.append(text.substr(i + 1, end - i - 1));
            i = end;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < text.size() && text[j] != '"'; ++j) {
                if (text[j] == '$' || text[j] == '`') {
                    return Error{"'" + std::string(text) + "': contains '" +
                                 std::string(1, text[j]) + "', which would expand"};
                }
                if (text[j] == '\\' && j + 1 < text.size() &&
                    (text[j + 1] == '"' || text[j + 1] == '\\')) {
                    ++j;
                }
                current += text[j];
            }
            if (j >= text.size()) {
                return Error{"'" + std::string(text) + "': unclosed double quote"};
            }
            i = j;
        } else {
            current += c;
        }
    }
    if (inWord) {
        words.push_back(std::move(current));
    }
    return words;
}

std::string formatInt(long long value) {
    return std::to_string(value);
}

std::string formatDouble(double value) {
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
        return std::to_string(static_cast<long long>(value));
    }
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, res.ptr);
}

std::string escapeControl(std::string_view text, bool keepNewlines) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 0x20 && u != 0x7f) || (c == '\n' && keepNewlines)) {
            out += c;
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            static const char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[u >> 4];
            out += kHex[u & 0xf];
        }
    }
    return out;
}

std::optional<long long> parseInt(std::string_view text) {
    long long v = 0;
    if (text.empty()) {
        return std::nullopt;
    }
    auto res = std::from_chars(text.data(), text.data() + text.size(), v);
    if (res.ec != std::errc() || res.ptr != text.data() + text.size()) {
        return std::nullopt;
    }
    return v;
}

std::optional<double> parseDouble(std::string_view text) {
    double v = 0;
    if (text.empty() || text.front() == '+') {
        return std::nullopt;
    }
    auto res = std::from_chars(text.data(), text.data() + text.size(), v);
    if (res.ec != std::errc() || res.ptr != text.data() + text.size() || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

}  // namespace runplane::plan::launch::detail
