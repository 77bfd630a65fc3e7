// Recursive-descent parser for the launch-script subset of bash. Quoting, expansions and line
// continuations follow bash; constructs outside the subset are kept as Unsupported nodes so the
// evaluator can report them with their lines instead of guessing.

#include "backend/launch/bash_syntax.h"

#include <cctype>
#include <set>

#include "backend/launch/bash_lexer.h"
#include "backend/launch/bash_limits.h"

namespace runplane::plan::launch::detail {

std::string Word::literal() const {
    std::string out;
    for (const auto& p : parts) {
        if (p.kind != WordPart::Kind::Literal) {
            return "";
        }
        out += p.text;
    }
    return out;
}

bool Word::isLiteral() const {
    for (const auto& p : parts) {
        if (p.kind != WordPart::Kind::Literal) {
            return false;
        }
    }
    return true;
}

namespace {

using namespace lexing;

class Parser : public Lexer {
  public:
    explicit Parser(std::string_view text, int firstLine = 1) : Lexer(text, firstLine) {}

    ParsedScript run() {
        m_out.nodes = parseList({}, nullptr);
        return std::move(m_out);
    }

  private:
    bool atRedirect() const {
        std::size_t p = m_pos;
        if (peek() == '&' && peek(1) == '>') {
            return true;
        }
        while (p < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[p]))) {
            ++p;
        }
        return p < m_s.size() && (m_s[p] == '<' || m_s[p] == '>');
    }

    void readRedirect(SimpleCommand& cmd) {
        std::string op;
        while (!eof() && (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '&') &&
               op.size() < 4 && peek() != '>' && peek() != '<') {
            op += peek();
            advance();
        }
        while (
            !eof() &&
            (peek() == '<' || peek() == '>' || peek() == '&' || peek() == '|' || peek() == '-') &&
            op.size() < 8) {
            if (peek() == '-' && op.find("<<") == std::string::npos) {
                break;
            }
            op += peek();
            advance();
        }
        skipBlanks();
        bool arr = false;
        Word target = readWord(arr);
        const bool heredoc =
            op.find("<<") != std::string::npos && op.find("<<<") == std::string::npos;
        if (heredoc) {
            auto doc = std::make_shared<HereDoc>();
            doc->delimiter = target.literal();
            doc->stripTabs = op.find("<<-") != std::string::npos;
            for (const auto& part : target.parts) {
                doc->quoted = doc->quoted || part.quoted;
            }
            doc->quoted = doc->quoted || target.raw.find('\\') != std::string::npos;
            cmd.heredocs.push_back(doc);
            m_heredocs.push_back(std::move(doc));
        }
        cmd.redirects.push_back(op + target.raw);
    }

    void readArrayElements(Assignment& a) {
        a.isArray = true;
        while (true) {
            while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                              (peek() == '\\' && peek(1) == '\n'))) {
                advance();
            }
            if (eof()) {
                issue("unterminated array " + a.name + "=( opened on line " +
                      std::to_string(a.line));
                return;
            }
            const char c = peek();
            if (c == '#') {
                readComment();
                continue;
            }
            if (c == ')') {
                advance();
                return;
            }
            if (c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(') {
                issue(std::string("unexpected '") + c + "' inside the array " + a.name);
                advance();
                continue;
            }
            bool arr = false;
            a.elements.push_back(readWord(arr));
        }
    }

    void readDoubleBracket(SimpleCommand& cmd) {
        while (true) {
            skipBlanks();
            if (eof() || peek() == '\n') {
                issue("[[ without ]]");
                return;
            }
            Word w;
            w.line = m_line;
            std::string op;
            if ((peek() == '&' && peek(1) == '&') || (peek() == '|' && peek(1) == '|')) {
                op = std::string(m_s.substr(m_pos, 2));
            } else if (peek() == '<' || peek() == '>' || peek() == '(' || peek() == ')') {
                op = std::string(1, peek());
            }
            if (!op.empty()) {
                jumpTo(m_pos + op.size());
                w.parts.push_back({WordPart::Kind::Literal, op, false});
                w.raw = op;
            } else {
                // A lone ';', '&' or '|' starts no word: stop there, as bash does ("syntax error
                // in conditional expression"). Going on read an empty word at the same place for
                // ever, until memory ran out ("[[ a ; ]]"; found by fuzz_import).
                const std::size_t before = m_pos;
                bool arr = false;
                w = readWord(arr);
                if (m_pos == before) {
                    const char c = peek();
                    issue(c > ' ' && c < 0x7f
                              ? std::string("unexpected '") + c + "' inside [[ ... ]]"
                              : std::string("unexpected character inside [[ ... ]]"));
                    return;
                }
            }
            cmd.words.push_back(w);
            if (w.isLiteral() && w.literal() == "]]") {
                return;
            }
        }
    }

    SimpleCommand parseSimple() {
        SimpleCommand cmd;
        cmd.line = m_line;
        while (true) {
            skipBlanks();
            if (eof()) {
                break;
            }
            const char c = peek();
            if (c == '\n' || c == ';' || c == '|' || c == ')' || c == '#') {
                break;
            }
            if (c == '&' && peek(1) != '>') {
                break;
            }
            if (atRedirect()) {
                readRedirect(cmd);
                continue;
            }
            if (c == '(') {
                cmd.unsupported = true;
                cmd.unsupportedWhat = "'(' inside a command";
                jumpTo(std::min(scanParen(m_pos + 1) + 1, m_s.size()));
                continue;
            }
            bool arr = false;
            const int line = m_line;
            Word w = readWord(arr);
            if (arr) {
                Assignment a;
                isAssignPrefix(w.parts[0].text, &a.name, &a.append);
                a.line = line;
                readArrayElements(a);
                if (cmd.words.empty()) {
                    cmd.assigns.push_back(std::move(a));
                } else {
                    cmd.unsupported = true;
                    cmd.unsupportedWhat = "array assignment as a command argument";
                }
                continue;
            }
            Assignment a;
            if (cmd.words.empty() && splitAssignment(w, a)) {
                cmd.assigns.push_back(std::move(a));
                continue;
            }
            if (w.parts.empty() && w.raw.empty()) {
                // nothing readable here (stray character): skip it
                issue(std::string("unexpected '") + c + "'");
                advance();
                continue;
            }
            cmd.words.push_back(w);
            if (cmd.words.size() == 1 && w.isLiteral() && w.literal() == "[[" &&
                !w.parts[0].quoted) {
                readDoubleBracket(cmd);
            }
        }
        cmd.endLine = m_line;
        return cmd;
    }

    // Names assigned somewhere in text (NAME= / NAME+= after a blank, ';' or '('). A plain scan:
    // std::regex recurses per character and would overflow the stack on a long identifier.
    static std::vector<std::string> assignedInText(std::string_view text) {
        std::vector<std::string> names;
        std::size_t i = 0;
        while (i < text.size()) {
            const bool boundary = i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])) ||
                                  text[i - 1] == ';' || text[i - 1] == '(';
            if (!boundary || !isNameStart(text[i])) {
                ++i;
                continue;
            }
            std::size_t j = i;
            while (j < text.size() && isNameChar(text[j])) {
                ++j;
            }
            const std::size_t eq = j < text.size() && text[j] == '+' ? j + 1 : j;
            if (eq < text.size() && text[eq] == '=') {
                names.emplace_back(text.substr(i, j - i));
                j = eq + 1;
            }
            i = j;
        }
        return names;
    }

    Node unsupported(int line, std::string what) {
        Node n;
        n.kind = Node::Kind::Unsupported;
        n.line = line;
        n.what = std::move(what);
        return n;
    }

    void consumeWord() {
        skipBlanks();
        bool arr = false;
        (void)readWord(arr);
    }

    Node parseIf() {
        Node n;
        n.kind = Node::Kind::If;
        n.line = m_line;
        consumeWord();  // if
        std::string stop;
        while (true) {
            IfBranch b;
            b.line = m_line;
            b.cond = parseList({"then"}, &stop);
            if (stop != "then") {
                issue("'if' on line " + std::to_string(n.line) + " has no 'then'");
                break;
            }
            b.body = parseList({"elif", "else", "fi"}, &stop);
            n.branches.push_back(std::move(b));
            if (stop == "elif") {
                continue;
            }
            if (stop == "else") {
                n.hasElse = true;
                n.elseBody = parseList({"fi"}, &stop);
            }
            if (stop != "fi") {
                issue("'if' on line " + std::to_string(n.line) + " has no 'fi'");
            }
            break;
        }
        n.endLine = m_line;
        return n;
    }

    Node parseLoop(const std::string& keyword) {
        Node n = unsupported(m_line, keyword + " loop");
        std::string stop;
        consumeWord();
        if (keyword == "for") {
            n.inner.push_back(Node{});
            n.inner.back().commands.push_back(parseSimple());
        }
        auto cond = parseList({"do"}, &stop);
        auto body = parseList({"done"}, &stop);
        if (stop != "done") {
            issue("'" + keyword + "' on line " + std::to_string(n.line) + " has no 'done'");
        }
        for (auto* part : {&cond, &body}) {
            for (auto& node : *part) {
                n.inner.push_back(std::move(node));
            }
        }
        n.endLine = m_line;
        return n;
    }

    Node parseCase() {
        Node n = unsupported(m_line, "case statement");
        // the matching esac: case / esac words (after a blank or ';') counted from here
        auto isBreak = [](char c) {
            return c == ';' || std::isspace(static_cast<unsigned char>(c));
        };
        int depth = 0;
        std::size_t endPos = m_s.size();
        for (std::size_t p = m_pos; p + 4 <= m_s.size(); ++p) {
            const std::string_view word = m_s.substr(p, 4);
            if ((word != "case" && word != "esac") || (p > m_pos && !isBreak(m_s[p - 1])) ||
                (p + 4 < m_s.size() && !isBreak(m_s[p + 4]))) {
                continue;
            }
            depth += word == "case" ? 1 : -1;
            if (depth == 0) {
                endPos = p + 4;
                break;
            }
        }
        n.assignedNames = assignedInText(m_s.substr(m_pos, endPos - m_pos));
        // the items, when they parse as `case WORD in [(]PATTERN[|PATTERN]...) LIST ;; ... esac`;
        // anything else (`;&`, `;;&`, a stray character) leaves the statement unsupported
        const std::size_t savePos = m_pos;
        const int saveLine = m_line;
        const std::size_t saveLineStart = m_lineStart;
        const std::size_t saveIssues = m_out.issues.size();
        const std::size_t saveComments = m_out.comments.size();
        if (!parseCaseItems(n, endPos)) {
            n.caseSubject.clear();
            n.caseItems.clear();
            n.inner.clear();
            m_pos = savePos;
            m_line = saveLine;
            m_lineStart = saveLineStart;
            m_out.issues.resize(std::min(m_out.issues.size(), saveIssues));
            m_out.comments.resize(std::min(m_out.comments.size(), saveComments));
            jumpTo(endPos);
        }
        n.endLine = m_line;
        return n;
    }

    bool parseCaseItems(Node& n, std::size_t endPos) {
        consumeWord();  // case
        skipBlanks();
        bool arr = false;
        Word subject = readWord(arr);
        skipBlanks();
        const Word in = readWord(arr);
        if (subject.parts.empty() || arr || in.literal() != "in") {
            return false;
        }
        n.caseSubject.push_back(std::move(subject));
        while (true) {
            while (!eof() && m_pos < endPos) {
                skipBlanks();
                if (peek() == '\n') {
                    newline();
                } else if (peek() == '#') {
                    readComment();
                } else {
                    break;
                }
            }
            if (m_pos + 4 == endPos && m_s.substr(m_pos, 4) == "esac") {
                jumpTo(endPos);
                return true;
            }
            if (m_pos >= endPos || m_aborted) {
                return false;
            }
            Node::CaseItem item;
            item.line = m_line;
            if (peek() == '(') {
                advance();
            }
            while (true) {
                skipBlanks();
                Word p = readWord(arr);
                if (p.parts.empty() || arr) {
                    return false;
                }
                item.patterns.push_back(std::move(p));
                skipBlanks();
                if (peek() == '|') {
                    advance();
                    continue;
                }
                if (peek() == ')') {
                    advance();
                    break;
                }
                return false;
            }
            std::string stop;
            item.body = parseList({";;", "esac"}, &stop);
            for (const auto& b : item.body) {
                n.inner.push_back(b);
            }
            n.caseItems.push_back(std::move(item));
            if (stop == "esac") {
                return m_pos == endPos;
            }
            if (stop != ";;" || m_pos > endPos) {
                return false;
            }
        }
    }

    Node parseBraced(int line, std::string what) {
        Node n = unsupported(line, std::move(what));
        std::string stop;
        n.inner = parseList({"}"}, &stop);
        if (stop != "}") {
            issue("'{' on line " + std::to_string(line) + " has no '}'");
        }
        n.endLine = m_line;
        return n;
    }

    Node parseFunction(bool keyword) {
        const int line = m_line;
        skipBlanks();
        bool arr = false;
        std::string name = readWord(arr).literal();  // 'function' or the name
        if (keyword) {
            skipBlanks();
            name = readWord(arr).literal();  // the name
        }
        skipBlanks();
        if (peek() == '(') {
            advance();
            skipBlanks();
            if (peek() == ')') {
                advance();
            }
        }
        while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\n')) {
            advance();
        }
        if (peek() == '{') {
            advance();
        }
        Node n = parseBraced(line, "function definition");
        n.funcName = name;  // inner: the body, run only where the function is called
        return n;
    }

    std::vector<Node> parseList(const std::set<std::string>& stops, std::string* stoppedAt) {
        std::vector<Node> nodes;
        if (stoppedAt != nullptr) {
            stoppedAt->clear();
        }
        Nest nest(m_nest);
        if (nest.tooDeep()) {
            limitAt(m_pos, tooDeepMessage("blocks (if, loops, groups, subshells)"));
            m_pos = m_s.size();
            return nodes;
        }
        while (true) {
            skipBlanks();
            if (eof() || m_aborted) {
                break;
            }
            const char c = peek();
            if (c == '#') {
                readComment();
                continue;
            }
            if (c == '\n') {
                newline();
                if (!nodes.empty()) {  // a command's here-documents end on their delimiter line
                    for (const auto& cmd : nodes.back().commands) {
                        for (const auto& doc : cmd.heredocs) {
                            nodes.back().endLine = std::max(nodes.back().endLine, doc->lastLine);
                        }
                    }
                }
                continue;
            }
            if (c == ';' && peek(1) == '&' && stops.count(";;")) {
                return nodes;  // `;&` (fall through): stoppedAt stays empty, the case is not read
            }
            if (c == ';' && peek(1) == ';' && stops.count(";;")) {  // the end of a case item
                jumpTo(m_pos + 2);
                if (peek() == '&') {
                    return nodes;  // `;;&`: stoppedAt stays empty, the case is not read
                }
                if (stoppedAt != nullptr) {
                    *stoppedAt = ";;";
                }
                return nodes;
            }
            if (c == ';' || c == '&') {
                advance();
                continue;
            }
            if (c == ')') {
                advance();
                if (stops.count(")")) {
                    if (stoppedAt != nullptr) {
                        *stoppedAt = ")";
                    }
                    return nodes;
                }
                issue("unexpected ')'");
                continue;
            }
            if (c == '(') {
                const int line = m_line;
                advance();
                std::string stop;
                Node n = unsupported(line, "subshell ( ... )");
                n.inner = parseList({")"}, &stop);
                n.inner.clear();  // a subshell cannot change this shell's variables
                n.endLine = m_line;
                nodes.push_back(std::move(n));
                continue;
            }
            // keyword or function definition?
            const std::size_t savePos = m_pos;
            const int saveLine = m_line;
            const std::size_t saveLineStart = m_lineStart;
            bool arr = false;
            Word w = readWord(arr);
            const std::string kw = (!arr && w.isLiteral() && !w.parts.empty() && !w.parts[0].quoted)
                                       ? w.literal()
                                       : std::string();
            if (!kw.empty() && stops.count(kw)) {
                if (stoppedAt != nullptr) {
                    *stoppedAt = kw;
                }
                return nodes;
            }
            bool isFunc = false;
            if (!kw.empty() && !arr) {
                skipBlanks();
                if (peek() == '(') {
                    std::size_t p = m_pos + 1;
                    while (p < m_s.size() && (m_s[p] == ' ' || m_s[p] == '\t')) {
                        ++p;
                    }
                    isFunc = p < m_s.size() && m_s[p] == ')';
                }
            }
            m_pos = savePos;
            m_line = saveLine;
            m_lineStart = saveLineStart;
            if (kw == "if") {
                nodes.push_back(parseIf());
            } else if (kw == "while" || kw == "until" || kw == "for") {
                nodes.push_back(parseLoop(kw));
            } else if (kw == "case") {
                nodes.push_back(parseCase());
            } else if (kw == "function") {
                nodes.push_back(parseFunction(true));
            } else if (isFunc) {
                nodes.push_back(parseFunction(false));
            } else if (kw == "{") {
                const int line = m_line;
                consumeWord();
                nodes.push_back(parseBraced(line, "{ ... } group"));
            } else if (kw == "then" || kw == "fi" || kw == "do" || kw == "done" || kw == "else" ||
                       kw == "elif" || kw == "}" || kw == "esac") {
                issue("unexpected '" + kw + "'");
                consumeWord();
            } else {
                nodes.push_back(parseCommandLine());
            }
        }
        return nodes;
    }

    Node parseCommandLine() {
        Node n;
        n.kind = Node::Kind::Commands;
        n.line = m_line;
        while (true) {
            n.commands.push_back(parseSimple());
            skipBlanks();
            std::string op;
            if (peek() == '&' && peek(1) == '&') {
                op = "&&";
            } else if (peek() == '|' && peek(1) == '|') {
                op = "||";
            } else if (peek() == '|') {
                op = peek(1) == '&' ? "|&" : "|";
            } else if (peek() == '&' && peek(1) != '>') {
                op = "&";
            }
            if (op.empty()) {
                break;
            }
            jumpTo(m_pos + op.size());
            n.ops.push_back(op);
            // after &&, || and | the list may continue on the next line
            while (!eof()) {
                skipBlanks();
                if (peek() == '\n') {
                    if (op == "&") {
                        break;
                    }
                    newline();
                } else if (peek() == '#') {
                    readComment();
                } else {
                    break;
                }
            }
            if (eof() || peek() == '\n' || peek() == ';') {
                break;
            }
            skipBlanks();
            if (peek() == '{' || peek() == '(') {
                const int line = m_line;
                Node u = unsupported(n.line, "compound command after " + op);
                if (peek() == '{') {
                    advance();
                    u.inner = parseBraced(line, "group").inner;
                } else {
                    advance();
                    std::string stop;
                    (void)parseList({")"}, &stop);
                }
                u.endLine = m_line;
                return u;
            }
        }
        n.endLine = n.commands.back().endLine;
        return n;
    }
};

}  // namespace

bool splitAssignment(const Word& word, Assignment& out) {
    if (word.parts.empty() || word.parts[0].kind != WordPart::Kind::Literal ||
        word.parts[0].quoted) {
        return false;
    }
    const std::string& first = word.parts[0].text;
    const auto eq = first.find('=');
    if (eq == std::string::npos ||
        !isAssignPrefix(first.substr(0, eq + 1), &out.name, &out.append)) {
        return false;
    }
    out.isArray = false;
    out.line = word.line;
    out.value = Word{};
    out.value.line = word.line;
    out.value.column = word.column > 0 ? word.column + static_cast<int>(eq) + 1 : 0;
    out.value.raw = word.raw.substr(std::min(word.raw.size(), word.raw.find('=') + 1));
    if (eq + 1 < first.size()) {
        out.value.parts.push_back({WordPart::Kind::Literal, first.substr(eq + 1), false});
    }
    out.value.parts.insert(out.value.parts.end(), word.parts.begin() + 1, word.parts.end());
    return true;
}

ParsedScript parseBash(std::string_view text) {
    return Parser(text).run();
}

ParsedScript parseBashAt(std::string_view text, int firstLine) {
    return Parser(text, firstLine).run();
}

Word parseWordText(std::string_view text, bool quoted, int line) {
    return Parser(text, line).wholeWord(quoted);
}

}  // namespace runplane::plan::launch::detail
