#include "backend/plan/detail/text_checks.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/recipe_limits.h"

namespace runplane::plan::detail {
namespace {

/// Values a legitimate recipe of kMaxRecipeBytes can hold (two bytes per value at the least);
/// more means YAML aliases fan out, which the tree walk below would otherwise follow forever.
constexpr std::size_t kMaxVisitedNodes = kMaxRecipeBytes / 2;

ParseDiagnostic at(SourceLoc loc, std::string message) {
    return ParseDiagnostic{"", loc, std::move(message)};
}

std::string hexByte(unsigned char c) {
    char buffer[8];
    std::snprintf(buffer, sizeof(buffer), "0x%02X", c);
    return buffer;
}

/// Length of the UTF-8 sequence at text[i], or 0 if it is not valid UTF-8 (overlong forms,
/// surrogates and code points past U+10FFFF included).
std::size_t utf8Length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) {
        return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
    };
    const unsigned c = byte(0);
    const auto cont = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
    if (c < 0x80) {
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        return cont(1) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        const unsigned lo = c == 0xE0 ? 0xA0 : 0x80;
        const unsigned hi = c == 0xED ? 0x9F : 0xBF;
        return byte(1) >= lo && byte(1) <= hi && cont(2) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        const unsigned lo = c == 0xF0 ? 0x90 : 0x80;
        const unsigned hi = c == 0xF4 ? 0x8F : 0xBF;
        return byte(1) >= lo && byte(1) <= hi && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

/// Size, byte order marks, NUL bytes and UTF-8 validity. Removes a UTF-8 BOM from text.
std::optional<ParseDiagnostic> checkEncoding(std::string_view& text) {
    if (text.size() > kMaxRecipeBytes) {
        return at(SourceLoc{1, 1}, "the file is " + std::to_string(text.size()) +
                                       " bytes; at most " + std::to_string(kMaxRecipeBytes) +
                                       " (256 KiB) are read (a recipe is a few KB)");
    }
    const auto starts = [&](std::string_view prefix) { return text.starts_with(prefix); };
    using namespace std::string_view_literals;
    if (starts("\xFF\xFE\0\0"sv) || starts("\0\0\xFE\xFF"sv)) {
        return at(SourceLoc{1, 1}, "the file is UTF-32 (byte order mark); save it as UTF-8");
    }
    if (starts("\xFF\xFE"sv) || starts("\xFE\xFF"sv)) {
        return at(SourceLoc{1, 1}, "the file is UTF-16 (byte order mark " +
                                       hexByte(static_cast<unsigned char>(text[0])) + " " +
                                       hexByte(static_cast<unsigned char>(text[1])) +
                                       "); save it as UTF-8");
    }
    if (text.size() >= 2 && (text[0] == '\0' || text[1] == '\0')) {
        return at(SourceLoc{1, 1},
                  "the file starts with NUL bytes: it looks like UTF-16 or UTF-32 text; save it "
                  "as UTF-8");
    }
    if (starts("\xEF\xBB\xBF"sv)) {
        text.remove_prefix(3);  // a UTF-8 byte order mark is allowed and skipped
    }
    int line = 1;
    int column = 1;
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '\0') {
            return at(SourceLoc{line, column},
                      "NUL byte in the file; a recipe is UTF-8 text without NUL bytes");
        }
        const std::size_t n = utf8Length(text, i);
        if (n == 0) {
            return at(SourceLoc{line, column}, "invalid UTF-8 (byte " +
                                                   hexByte(static_cast<unsigned char>(c)) +
                                                   "); a recipe is UTF-8 text");
        }
        if (c == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
        i += n;
    }
    return std::nullopt;
}

/// A cheap structural pass over the text: flow ([ {) and block (indentation, "- ") nesting
/// depth, quoted scalars that never close, and where a second document would start. It errs
/// towards not seeing a quote or bracket (yaml-cpp's own depth guard backs it up).
struct Structure {
    std::optional<ParseDiagnostic> error;
    SourceLoc secondDocument;  // the first "---" / "..." after content, if any
};

Structure scanStructure(std::string_view text) {
    Structure out;
    int flowDepth = 0;
    std::vector<std::size_t> indents;
    bool sawContent = false;
    int line = 1;
    std::size_t lineStart = 0;
    bool atLineStart = true;
    char prevRaw = '\n';        // previous byte of this line ('\n' at its start)
    char prevSig = '\n';        // previous non-blank byte of this line
    bool prevSigFirst = false;  // prevSig was the first non-blank byte of the line
    std::size_t lineIndent = 0;
    bool blockHeader = false;    // this line ends with a block scalar indicator (| or >)
    bool inBlockScalar = false;  // lines indented past blockParent are literal text
    std::size_t blockParent = 0;
    const auto skipLine = [&](std::size_t& i) {
        while (i + 1 < text.size() && text[i + 1] != '\n') {
            ++i;
        }
    };
    char quote = 0;
    SourceLoc quoteStart;
    const auto col = [&](std::size_t i) { return int(i - lineStart) + 1; };
    const auto tooDeep = [&](std::size_t i, int depth) {
        out.error =
            at(SourceLoc{line, col(i)},
               "nesting " + std::to_string(depth) + " levels deep; at most " +
                   std::to_string(kMaxNestingDepth) + " levels of lists and mappings are read");
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            if (blockHeader) {
                inBlockScalar = true;
                blockParent = lineIndent;
                blockHeader = false;
            }
            ++line;
            lineStart = i + 1;
            atLineStart = true;
            prevRaw = prevSig = '\n';
            prevSigFirst = false;
            continue;
        }
        if (quote != 0) {
            atLineStart = false;  // a quoted scalar's continuation lines are not structure
            if (quote == '"' && c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
                ++i;
            } else if (c == quote) {
                if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
                    ++i;  // '' inside a single-quoted scalar
                } else {
                    quote = 0;
                    prevRaw = prevSig = c;
                }
            }
            continue;
        }
        if (atLineStart) {
            atLineStart = false;
            std::size_t p = i;
            while (p < text.size() && text[p] == ' ') {
                ++p;
            }
            const bool empty = p >= text.size() || text[p] == '\n' ||
                               (text[p] == '\r' && (p + 1 >= text.size() || text[p + 1] == '\n'));
            if (inBlockScalar && (empty || p - i > blockParent)) {
                skipLine(i);  // the content of a | or > scalar: text, not structure
                continue;
            }
            inBlockScalar = false;
            lineIndent = p - i;
            const bool blank = empty || text[p] == '#';
            const std::string_view rest = text.substr(i);
            const bool marker = p == i && (rest.starts_with("---") || rest.starts_with("...")) &&
                                (rest.size() == 3 || rest[3] == ' ' || rest[3] == '\n' ||
                                 rest[3] == '\r' || rest[3] == '\t');
            if (marker && flowDepth == 0) {
                if (sawContent && !out.secondDocument.known()) {
                    out.secondDocument = SourceLoc{line, 1};
                }
            } else if (!blank && flowDepth == 0 && text[p] != '%') {
                sawContent = true;
                const std::size_t indent = p - i;
                while (!indents.empty() && indents.back() > indent) {
                    indents.pop_back();
                }
                if (indents.empty() || indents.back() < indent) {
                    indents.push_back(indent);
                }
                // "- - - x" and "? ? x" nest without indentation.
                int indicators = 0;
                while (p + 1 < text.size() && (text[p] == '-' || text[p] == '?') &&
                       (text[p + 1] == ' ' || text[p + 1] == '\t')) {
                    ++indicators;
                    p += 2;
                    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) {
                        ++p;
                    }
                }
                const int depth = int(indents.size()) + indicators;
                if (depth > kMaxNestingDepth) {
                    tooDeep(p, depth);
                    return out;
                }
            } else if (!blank && flowDepth > 0) {
                sawContent = true;
            }
        }
        const bool tokenStart = prevRaw == '\n' || prevRaw == ' ' || prevRaw == '\t' ||
                                prevRaw == '[' || prevRaw == '{' || prevRaw == ',';
        if (c == '#' && (prevRaw == '\n' || prevRaw == ' ' || prevRaw == '\t')) {
            skipLine(i);  // a comment, to the end of the line
            continue;
        }
        if ((c == '|' || c == '>') && tokenStart && flowDepth == 0 &&
            (prevSig == ':' || (prevSig == '-' && prevSigFirst))) {
            // A block scalar header: the indicator, then only chomping / indentation digits.
            std::size_t q = i + 1;
            while (q < text.size() &&
                   (text[q] == '-' || text[q] == '+' || (text[q] >= '0' && text[q] <= '9'))) {
                ++q;
            }
            while (q < text.size() && (text[q] == ' ' || text[q] == '\t' || text[q] == '\r')) {
                ++q;
            }
            blockHeader = q >= text.size() || text[q] == '\n' || text[q] == '#';
        }
        if (c == ',' && flowDepth == 0 && prevSig == '\n' && col(i) == 1 && !inBlockScalar) {
            // Issue #20: yaml-cpp 0.7 allocates without end on a comma that starts a top-level
            // line outside any flow collection (", a" took the machine's memory).
            out.error = at(SourceLoc{line, col(i)},
                           "',' outside [...] or {...} at the start "
                           "of a line (not YAML)");
            return out;
        }
        if ((c == '"' || c == '\'') && tokenStart &&
            (prevSig == '\n' || prevSig == ':' || prevSig == '[' || prevSig == '{' ||
             prevSig == ',' || ((prevSig == '-' || prevSig == '?') && prevSigFirst))) {
            quote = c;
            quoteStart = SourceLoc{line, col(i)};
        } else if ((c == '[' || c == '{') && tokenStart) {
            if (++flowDepth + int(indents.size()) > kMaxNestingDepth) {
                tooDeep(i, flowDepth + int(indents.size()));
                return out;
            }
        } else if ((c == ']' || c == '}') && flowDepth > 0) {
            --flowDepth;
        }
        if (c != ' ' && c != '\t') {
            prevSigFirst = prevSig == '\n';
            prevSig = c;
        }
        prevRaw = c;
    }
    if (quote != 0) {
        out.error = at(quoteStart, std::string("unterminated quoted string: the ") +
                                       (quote == '"' ? "\"" : "'") + " here is never closed");
    }
    return out;
}

std::string displayTag(const std::string& tag) {
    constexpr std::string_view kCore = "tag:yaml.org,2002:";
    return tag.starts_with(kCore) ? "!!" + tag.substr(kCore.size()) : tag;
}

bool plainTag(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    if (tag.empty() || tag == "?" || tag == "!") {
        return true;
    }
    // The core schema's own tags for what the node already is change nothing.
    if (node.IsScalar()) {
        return tag == "tag:yaml.org,2002:str";
    }
    return tag == (node.IsMap() ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq");
}

/// Tags, collection sizes and the total value count, without recursion.
void checkTree(const YAML::Node& root, std::vector<ParseDiagnostic>& diagnostics) {
    std::vector<YAML::Node> stack{root};
    std::size_t visited = 0;
    while (!stack.empty()) {
        const YAML::Node node = stack.back();
        stack.pop_back();
        if (++visited > kMaxVisitedNodes) {
            diagnostics.push_back(
                at(locOf(node.Mark()), "the document holds more than " +
                                           std::to_string(kMaxVisitedNodes) +
                                           " values (YAML aliases repeating large lists?)"));
            return;
        }
        if (!plainTag(node)) {
            diagnostics.push_back(
                at(locOf(node.Mark()), "YAML tag '" + displayTag(node.Tag()) +
                                           "' is not allowed: a recipe holds plain values (remove "
                                           "the tag)"));
            continue;
        }
        if (!node.IsSequence() && !node.IsMap()) {
            continue;
        }
        if (node.size() > kMaxListEntries) {
            diagnostics.push_back(
                at(locOf(node.Mark()), std::string(node.IsMap() ? "a mapping" : "a list") + " of " +
                                           std::to_string(node.size()) + " entries; at most " +
                                           std::to_string(kMaxListEntries) +
                                           " entries per list or mapping are read"));
            continue;
        }
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (node.IsMap()) {
                stack.push_back(it->first);
                stack.push_back(it->second);
            } else {
                stack.push_back(*it);
            }
        }
    }
}

/// Where yaml-cpp's parser starts each document; nothing else is kept. yaml-cpp 0.7's LoadAll
/// never ends on a token that starts no node at the top level (' ,a', '"x" ,a', '[a]\n ,b': a
/// ',' outside any flow collection): each call returns an empty document without consuming it,
/// so the document list grows until memory runs out (issue #20). Two starts at one offset show it.
class DocumentStarts : public YAML::EventHandler {
  public:
    std::vector<YAML::Mark> starts;
    bool stuck() const {
        return starts.size() >= 2 && starts.back().pos == starts[starts.size() - 2].pos;
    }
    void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

}  // namespace

bool isEnvName(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (!alpha && (i == 0 || c < '0' || c > '9')) {
            return false;
        }
    }
    return true;
}

std::optional<YAML::Node> loadSingleDocument(std::string_view text,
                                             std::vector<ParseDiagnostic>& diagnostics) {
    if (auto error = checkEncoding(text)) {
        diagnostics.push_back(std::move(*error));
        return std::nullopt;
    }
    const Structure structure = scanStructure(text);
    if (structure.error.has_value()) {
        diagnostics.push_back(*structure.error);
        return std::nullopt;
    }
    DocumentStarts documents;
    YAML::Node document(YAML::NodeType::Null);
    try {
        // At most three documents are parsed (events only): enough to tell a second document
        // from a parser that no longer moves on. Then the one document is loaded into a tree.
        std::istringstream in{std::string(text)};
        YAML::Parser parser(in);
        while (documents.starts.size() < 3 && !documents.stuck() &&
               parser.HandleNextDocument(documents)) {
        }
        if (documents.starts.size() == 1) {
            document = YAML::Load(std::string(text));
        }
    } catch (const YAML::DeepRecursion& e) {
        diagnostics.push_back(at(locOf(e.mark), "nesting " + std::to_string(e.depth()) +
                                                    " levels deep; at most " +
                                                    std::to_string(kMaxNestingDepth) +
                                                    " levels of lists and mappings are read"));
        return std::nullopt;
    } catch (const YAML::Exception& e) {
        diagnostics.push_back(at(locOf(e.mark), "YAML syntax error: " + e.msg));
        return std::nullopt;
    }
    if (documents.stuck()) {
        const YAML::Mark& mark = documents.starts.back();
        const char c = mark.pos >= 0 && std::size_t(mark.pos) < text.size() ? text[mark.pos] : ' ';
        diagnostics.push_back(at(
            locOf(mark), std::string("YAML syntax error: '") + c + "' cannot start a value here" +
                             (c == ',' ? " (a ',' outside [...] or {...})" : "")));
        return std::nullopt;
    }
    if (documents.starts.size() > 1) {
        SourceLoc loc = structure.secondDocument;
        if (!loc.known()) {
            loc = locOf(documents.starts[1]);
        }
        diagnostics.push_back(at(loc,
                                 "a second YAML document starts here; a recipe is one document "
                                 "(remove the '---' line and what follows, or split the file)"));
        return std::nullopt;
    }
    if (documents.starts.empty()) {
        return document;  // empty or only comments: a null document
    }
    const std::size_t before = diagnostics.size();
    checkTree(document, diagnostics);
    if (diagnostics.size() != before) {
        return std::nullopt;
    }
    return document;
}

}  // namespace runplane::plan::detail
