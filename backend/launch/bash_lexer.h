#pragma once
// Internal to bash_syntax.cpp: the character level of the launch-script parser -- positions with
// line and column, comments, here-document bodies, the scanning of $(...), ${...} and quotes
// (recursion bounded by kMaxNesting), and the reading of one word with its quoting and
// expansions. The Parser in bash_syntax.cpp builds commands and blocks on top of it.

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/launch/bash_limits.h"
#include "backend/launch/bash_syntax.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail::lexing {

// NAME= or NAME+= (the whole string)
inline bool isAssignPrefix(const std::string& s, std::string* name, bool* append) {
    if (s.empty() || !isNameStart(s[0]) || s.back() != '=') {
        return false;
    }
    std::size_t i = 1;
    while (i < s.size() && isNameChar(s[i])) {
        ++i;
    }
    const bool plus = i + 2 == s.size() && s[i] == '+';
    if (!(i + 1 == s.size() || plus)) {
        return false;
    }
    if (name != nullptr) {
        *name = s.substr(0, i);
    }
    if (append != nullptr) {
        *append = plus;
    }
    return true;
}

class Lexer {
  public:
    Lexer(std::string_view text, int firstLine) : m_s(text), m_line(firstLine) {}

    // Reads the whole text as one word (for ${VAR:-word} operands and arithmetic bodies).
    Word wholeWord(bool quoted) {
        Word w;
        w.line = m_line;
        m_columns = false;
        m_spacesLiteral = true;
        m_forceQuoted = quoted;
        bool arr = false;
        while (!eof()) {
            readWordInto(w, arr);
            if (!eof()) {  // an unbalanced ')' or similar: keep it literally
                pushLit(w, std::string(1, peek()), quoted);
                advance();
            }
        }
        w.raw = std::string(m_s);
        return w;
    }

  protected:
    std::string_view m_s;
    std::size_t m_pos = 0;
    int m_line = 1;
    std::size_t m_lineStart = 0;  // m_pos of the first character of m_line
    bool m_columns = true;        // false for text cut out of a word (columns would mislead)
    int m_nest = 0;               // parseList recursion
    int m_scanNest = 0;           // scanDouble/scanParen/scanBrace recursion
    bool m_aborted = false;       // a limit was hit: the rest of the text is skipped
    ParsedScript m_out;
    std::vector<std::shared_ptr<HereDoc>> m_heredocs;  // pending: their bodies follow the line
    bool m_spacesLiteral = false;
    bool m_forceQuoted = false;

    bool eof() const { return m_pos >= m_s.size(); }
    char peek(std::size_t k = 0) const { return m_pos + k < m_s.size() ? m_s[m_pos + k] : '\0'; }
    void advance() {
        if (m_s[m_pos] == '\n') {
            ++m_line;
            m_lineStart = m_pos + 1;
        }
        ++m_pos;
    }
    int column() const { return m_columns ? static_cast<int>(m_pos - m_lineStart) + 1 : 0; }
    void jumpTo(std::size_t pos) {
        while (m_pos < pos && !eof()) {
            advance();
        }
    }
    void issue(const std::string& message) {
        if (!m_aborted && m_out.issues.size() < kMaxNotes) {
            m_out.issues.push_back({m_line, message, column(), false});
        }
    }
    // A limit hit at pos (at or after m_pos): reported once with its place, and everything after
    // it is skipped so that the parse ends at once.
    void limitAt(std::size_t pos, const std::string& message) {
        if (m_aborted) {
            return;
        }
        int line = m_line;
        std::size_t lineStart = m_lineStart;
        for (std::size_t i = m_pos; i < pos && i < m_s.size(); ++i) {
            if (m_s[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        }
        const int col = m_columns ? static_cast<int>(pos - lineStart) + 1 : 0;
        m_out.issues.push_back({line, message + "; the rest of the text is not read", col, true});
        m_aborted = true;
    }
    // RAII depth counter; deeper than kMaxNesting is a limit hit.
    struct Nest {
        int& depth;
        explicit Nest(int& d) : depth(d) { ++depth; }
        ~Nest() { --depth; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
        bool tooDeep() const { return depth > kMaxNesting; }
    };
    std::string tooDeepMessage(const char* what) const {
        return std::string(what) + " nested more than " + std::to_string(kMaxNesting) +
               " levels deep";
    }

    void skipBlanks() {
        while (!eof()) {
            if (peek() == ' ' || peek() == '\t') {
                advance();
            } else if (peek() == '\\' && peek(1) == '\n') {
                advance();
                advance();
            } else {
                break;
            }
        }
    }

    void readComment() {
        std::size_t back = m_pos;
        bool full = true;
        while (back > 0 && m_s[back - 1] != '\n') {
            --back;
            if (m_s[back] != ' ' && m_s[back] != '\t') {
                full = false;
            }
        }
        const int line = m_line;
        advance();  // '#'
        std::string text;
        while (!eof() && peek() != '\n') {
            text += peek();
            advance();
        }
        m_out.comments.push_back({line, text, full});
    }

    void newline() {
        advance();
        for (const auto& doc : m_heredocs) {
            doc->firstLine = m_line;
            doc->lastLine = m_line;
            bool closed = false;
            while (!eof()) {
                doc->lastLine = m_line;
                std::string lineText;
                while (!eof() && peek() != '\n') {
                    lineText += peek();
                    advance();
                }
                if (!eof()) {
                    advance();
                }
                std::size_t start = 0;
                while (doc->stripTabs && start < lineText.size() && lineText[start] == '\t') {
                    ++start;
                }
                if (lineText.substr(start) == doc->delimiter) {
                    closed = true;
                    break;
                }
                if (doc->body.size() <= kMaxValueBytes) {
                    doc->body += lineText.substr(start) + "\n";
                }
            }
            if (!closed && !m_aborted && m_out.issues.size() < kMaxNotes) {
                // bash reads the rest of the file as the document's text (`bash -n` warns, and
                // the launch command below is never run): a script broken upstream, named here.
                m_out.issues.push_back({doc->firstLine - 1,
                                        unclosedHereDocMessage(doc->delimiter, doc->stripTabs, ""),
                                        1, false});
            }
        }
        m_heredocs.clear();
    }

    static std::string unclosedHereDocMessage(const std::string& delimiter, bool stripTabs,
                                              const std::string& inside) {
        return "the here-document opened on this line" + inside +
               " never ends: no later line is exactly `" + delimiter + "`" +
               (stripTabs ? " after its leading tabs" : " (an indented one does not close it)") +
               ", so bash reads the rest of the script as its text" +
               (inside.empty() ? ""
                               : " and never finds the `)` (bash: unexpected EOF while looking "
                                 "for matching `)'; nothing after this line runs)");
    }

    // --- scanning of $(...), ${...}, "..." without interpreting them -------------------------
    // A here-document inside $(...): `<<` or `<<-` and its delimiter word, seen by scanParen.
    struct ScannedHereDoc {
        std::string delimiter;
        bool stripTabs = false;
        std::size_t at = 0;  // the `<<`
    };
    // p at the first '<' of "<<" (not "<<<"): the delimiter word after it, quotes removed;
    // returns the position after the word.
    std::size_t scanHereDocOperator(std::size_t p, ScannedHereDoc& doc) const {
        doc.at = p;
        p += 2;
        if (p < m_s.size() && m_s[p] == '-') {
            doc.stripTabs = true;
            ++p;
        }
        while (p < m_s.size() && (m_s[p] == ' ' || m_s[p] == '\t')) {
            ++p;
        }
        while (p < m_s.size() &&
               std::string_view(" \t\n;&|<>()").find(m_s[p]) == std::string_view::npos) {
            const char c = m_s[p];
            if (c == '\'' || c == '"') {
                std::size_t q = p + 1;
                while (q < m_s.size() && m_s[q] != c) {
                    if (c == '"' && m_s[q] == '\\' && q + 1 < m_s.size()) {
                        ++q;
                    }
                    doc.delimiter += m_s[q];
                    ++q;
                }
                p = std::min(q + 1, m_s.size());
            } else if (c == '\\' && p + 1 < m_s.size()) {
                doc.delimiter += m_s[p + 1];
                p += 2;
            } else {
                doc.delimiter += c;
                ++p;
            }
        }
        return p;
    }
    // p after the '\n' that ends the line holding the operators: skips their bodies in order.
    // Returns the position after the last delimiter line, or the position of a `)` written right
    // after a delimiter (`EOF)`: bash ends the document there, with a warning, and the `)` closes
    // the substitution), or m_s.size() when one never ends (reported at the line of its `<<`).
    std::size_t skipHereDocBodies(std::size_t p, std::vector<ScannedHereDoc>& docs) {
        for (const auto& doc : docs) {
            bool closed = false;
            while (p < m_s.size() && !closed) {
                std::size_t end = m_s.find('\n', p);
                if (end == std::string_view::npos) {
                    end = m_s.size();
                }
                std::size_t start = p;
                while (doc.stripTabs && start < end && m_s[start] == '\t') {
                    ++start;
                }
                const std::string_view text = m_s.substr(start, end - start);
                if (text == doc.delimiter) {
                    closed = true;
                    p = std::min(end + 1, m_s.size());
                } else if (!doc.delimiter.empty() && text.size() > doc.delimiter.size() &&
                           text.substr(0, doc.delimiter.size()) == doc.delimiter &&
                           text[doc.delimiter.size()] == ')' && &doc == &docs.back()) {
                    docs.clear();
                    return start + doc.delimiter.size();
                } else {
                    p = std::min(end + 1, m_s.size());
                }
            }
            if (!closed) {
                hereDocNeverEnds(doc);
                docs.clear();
                return m_s.size();
            }
        }
        docs.clear();
        return p;
    }
    void hereDocNeverEnds(const ScannedHereDoc& doc) {
        if (m_aborted || m_out.issues.size() >= kMaxNotes) {
            return;
        }
        int line = m_line;
        for (std::size_t i = m_pos; i < doc.at && i < m_s.size(); ++i) {
            line += m_s[i] == '\n' ? 1 : 0;
        }
        const std::string message =
            unclosedHereDocMessage(doc.delimiter, doc.stripTabs, ", inside a `$(...)`,");
        for (const auto& seen : m_out.issues) {  // the same text scanned twice says it once
            if (seen.line == line && seen.message == message) {
                return;
            }
        }
        m_out.issues.push_back({line, message, 1, false});
    }

    std::size_t scanSingle(std::size_t p) const {  // p after the opening '
        while (p < m_s.size() && m_s[p] != '\'') {
            ++p;
        }
        return p;  // at the closing ' (or end)
    }
    std::size_t scanDouble(std::size_t p) {  // p after the opening "
        Nest nest(m_scanNest);
        if (nest.tooDeep() || m_aborted) {
            limitAt(p, tooDeepMessage("quotes and expansions"));
            return m_s.size();
        }
        while (p < m_s.size() && m_s[p] != '"') {
            if (m_s[p] == '\\') {
                p += 2;
                continue;
            }
            if (m_s[p] == '$' && p + 1 < m_s.size() && m_s[p + 1] == '(') {
                p = scanParen(p + 2) + 1;
                continue;
            }
            if (m_s[p] == '$' && p + 1 < m_s.size() && m_s[p + 1] == '{') {
                p = scanBrace(p + 2) + 1;
                continue;
            }
            if (m_s[p] == '`') {
                p = scanBacktick(p + 1) + 1;
                continue;
            }
            ++p;
        }
        return p;
    }
    std::size_t scanBacktick(std::size_t p) const {
        while (p < m_s.size() && m_s[p] != '`') {
            p += m_s[p] == '\\' ? 2 : 1;
        }
        return p;
    }
    std::size_t scanParen(std::size_t p) {  // p after "$(" or "(": returns the closing ')'
        Nest nest(m_scanNest);
        if (nest.tooDeep() || m_aborted) {
            limitAt(p, tooDeepMessage("quotes and expansions"));
            return m_s.size();
        }
        int depth = 1;
        std::vector<ScannedHereDoc> docs;  // opened on the current line: bodies follow it
        while (p < m_s.size()) {
            const char c = m_s[p];
            if (c == '\\') {
                p += 2;
                continue;
            }
            if (c == '\'') {
                p = scanSingle(p + 1) + 1;
                continue;
            }
            if (c == '"') {
                p = scanDouble(p + 1) + 1;
                continue;
            }
            if (c == '`') {
                p = scanBacktick(p + 1) + 1;
                continue;
            }
            if (c == '$' && p + 2 < m_s.size() && m_s[p + 1] == '(' && m_s[p + 2] != '(') {
                p = scanParen(p + 2) + 1;  // its here-documents are its own
                continue;
            }
            // a here-document of this level (inside a nested `(` or `$((` a `<<` is a shift or
            // is left to bash): its body is text, skipped when the line ends
            if (c == '<' && depth == 1 && p + 1 < m_s.size() && m_s[p + 1] == '<' &&
                (p + 2 >= m_s.size() || m_s[p + 2] != '<') && (p == 0 || m_s[p - 1] != '<')) {
                ScannedHereDoc doc;
                p = scanHereDocOperator(p, doc);
                docs.push_back(std::move(doc));
                continue;
            }
            if (c == '\n' && !docs.empty()) {
                p = skipHereDocBodies(p + 1, docs);
                continue;
            }
            if (c == '(') {
                ++depth;
            } else if (c == ')' && --depth == 0) {
                return p;
            }
            ++p;
        }
        return p;
    }
    std::size_t scanBrace(std::size_t p) {  // p after "${": returns the closing '}'
        Nest nest(m_scanNest);
        if (nest.tooDeep() || m_aborted) {
            limitAt(p, tooDeepMessage("quotes and expansions"));
            return m_s.size();
        }
        int depth = 1;
        while (p < m_s.size()) {
            const char c = m_s[p];
            if (c == '\\') {
                p += 2;
                continue;
            }
            if (c == '\'') {
                p = scanSingle(p + 1) + 1;
                continue;
            }
            if (c == '"') {
                p = scanDouble(p + 1) + 1;
                continue;
            }
            if (c == '$' && p + 1 < m_s.size() && m_s[p + 1] == '(') {
                p = scanParen(p + 2) + 1;
                continue;
            }
            if (c == '{') {
                ++depth;
            } else if (c == '}' && --depth == 0) {
                return p;
            }
            ++p;
        }
        return p;
    }

    // --- words -----------------------------------------------------------------------------
    static void pushLit(Word& w, const std::string& text, bool quoted) {
        if (!w.parts.empty() && w.parts.back().kind == WordPart::Kind::Literal &&
            w.parts.back().quoted == quoted && !text.empty() && !w.parts.back().text.empty()) {
            w.parts.back().text += text;
        } else {
            w.parts.push_back({WordPart::Kind::Literal, text, quoted});
        }
    }

    void readDollar(Word& w, bool quoted) {
        const char next = peek(1);
        if (next == '(' && peek(2) == '(') {
            // $(( ... )): find the "))" that closes it
            std::size_t p = m_pos + 3;
            int depth = 0;
            for (; p < m_s.size(); ++p) {
                if (m_s[p] == '(') {
                    ++depth;
                } else if (m_s[p] == ')') {
                    if (depth == 0 && p + 1 < m_s.size() && m_s[p + 1] == ')') {
                        break;
                    }
                    --depth;
                }
            }
            if (p >= m_s.size()) {
                issue("unterminated $((");
            }
            w.parts.push_back(
                {WordPart::Kind::Arith, std::string(m_s.substr(m_pos + 3, p - m_pos - 3)), quoted});
            jumpTo(std::min(p + 2, m_s.size()));
        } else if (next == '(') {
            const std::size_t end = scanParen(m_pos + 2);
            if (end >= m_s.size()) {
                issue("unterminated $(");
            }
            w.parts.push_back({WordPart::Kind::CommandSubst,
                               std::string(m_s.substr(m_pos + 2, end - m_pos - 2)), quoted});
            jumpTo(std::min(end + 1, m_s.size()));
        } else if (next == '{') {
            const std::size_t end = scanBrace(m_pos + 2);
            if (end >= m_s.size()) {
                issue("unterminated ${");
            }
            w.parts.push_back({WordPart::Kind::Param,
                               std::string(m_s.substr(m_pos + 2, end - m_pos - 2)), quoted});
            jumpTo(std::min(end + 1, m_s.size()));
        } else if (isNameStart(next)) {
            std::size_t p = m_pos + 1;
            while (p < m_s.size() && isNameChar(m_s[p])) {
                ++p;
            }
            w.parts.push_back(
                {WordPart::Kind::Param, std::string(m_s.substr(m_pos + 1, p - m_pos - 1)), quoted});
            jumpTo(p);
        } else if (std::isdigit(static_cast<unsigned char>(next)) ||
                   std::string_view("@*#?$!-").find(next) != std::string_view::npos) {
            if (next == '\0') {
                pushLit(w, "$", quoted);
                advance();
                return;
            }
            w.parts.push_back({WordPart::Kind::Param, std::string(1, next), quoted});
            jumpTo(m_pos + 2);
        } else if (next == '\'' && !quoted) {
            std::size_t p = m_pos + 2;
            while (p < m_s.size() && m_s[p] != '\'') {
                p += m_s[p] == '\\' ? 2 : 1;
            }
            w.parts.push_back({WordPart::Kind::Unsupported,
                               "$'" + std::string(m_s.substr(m_pos + 2, p - m_pos - 2)) + "'",
                               true});
            jumpTo(std::min(p + 1, m_s.size()));
        } else if (next == '"' && !quoted) {
            advance();  // $"..." reads as "..."
        } else {
            pushLit(w, "$", quoted);
            advance();
        }
    }

    void readBacktick(Word& w, bool quoted) {
        const std::size_t end = scanBacktick(m_pos + 1);
        w.parts.push_back({WordPart::Kind::CommandSubst,
                           std::string(m_s.substr(m_pos + 1, end - m_pos - 1)), quoted});
        if (end >= m_s.size()) {
            issue("unterminated backquote");
        }
        jumpTo(std::min(end + 1, m_s.size()));
    }

    void readDoubleQuoted(Word& w) {
        advance();  // "
        const std::size_t before = w.parts.size();
        while (!eof() && peek() != '"') {
            const char c = peek();
            if (c == '\\' && std::string_view("$`\"\\\n").find(peek(1)) != std::string_view::npos &&
                peek(1) != '\0') {
                if (peek(1) != '\n') {
                    pushLit(w, std::string(1, peek(1)), true);
                }
                advance();
                advance();
            } else if (c == '$') {
                readDollar(w, true);
            } else if (c == '`') {
                readBacktick(w, true);
            } else {
                pushLit(w, std::string(1, c), true);
                advance();
            }
        }
        if (eof()) {
            issue("unterminated double quote");
        } else {
            advance();
        }
        if (w.parts.size() == before) {
            w.parts.push_back({WordPart::Kind::Literal, "", true});
        }
    }

    bool breaksWord(char c) const {
        if (m_spacesLiteral) {
            return false;
        }
        return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
               c == '>' || c == ')' || c == '(';
    }

    // Reads one word; arrayStart = the word was NAME=( or NAME+=( (the '(' is consumed).
    void readWordInto(Word& w, bool& arrayStart) {
        const bool q = m_forceQuoted;
        while (!eof()) {
            const char c = peek();
            if (c == '(' && !m_spacesLiteral) {
                if (w.parts.size() == 1 && w.parts[0].kind == WordPart::Kind::Literal &&
                    !w.parts[0].quoted && isAssignPrefix(w.parts[0].text, nullptr, nullptr)) {
                    arrayStart = true;
                    advance();
                }
                break;
            }
            if (breaksWord(c)) {
                break;
            }
            if (c == '\\') {
                if (peek(1) == '\n') {
                    advance();
                    advance();
                } else if (peek(1) == '\0') {
                    pushLit(w, "\\", q);
                    advance();
                } else {
                    advance();
                    pushLit(w, std::string(1, peek()), true);
                    advance();
                }
            } else if (c == '\'') {
                const std::size_t end = scanSingle(m_pos + 1);
                if (end >= m_s.size()) {
                    issue("unterminated single quote");
                }
                w.parts.push_back({WordPart::Kind::Literal,
                                   std::string(m_s.substr(m_pos + 1, end - m_pos - 1)), true});
                jumpTo(std::min(end + 1, m_s.size()));
            } else if (c == '"') {
                readDoubleQuoted(w);
            } else if (c == '$') {
                readDollar(w, q);
            } else if (c == '`') {
                readBacktick(w, q);
            } else {
                pushLit(w, std::string(1, c), q);
                advance();
            }
        }
    }

    Word readWord(bool& arrayStart) {
        Word w;
        w.line = m_line;
        w.column = column();
        const std::size_t start = m_pos;
        readWordInto(w, arrayStart);
        w.raw = std::string(m_s.substr(start, m_pos - start));
        return w;
    }
};

}  // namespace runplane::plan::launch::detail::lexing
