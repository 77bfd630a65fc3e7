#pragma once
// Internal: a parser for the bash subset launch scripts are written in (docs/launch-scripts.md).
// It builds a small tree (simple commands with their words and assignments, if/elif/else blocks)
// and marks every other compound construct (loops, case, functions, groups, subshells) as
// unsupported with its line range; here-document bodies and function bodies are kept for the
// evaluator. Nothing is executed. Pure; thread-safe.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace runplane::plan::launch::detail {

struct WordPart {
    enum class Kind { Literal, Param, CommandSubst, Arith, Unsupported };
    Kind kind = Kind::Literal;
    std::string text;  // literal text / inside of ${...} or the name / command / arithmetic
    bool quoted = false;
};

struct Word {
    std::vector<WordPart> parts;
    int line = 0;
    int column = 0;   // 1-based where the word starts in its file; 0 inside an expansion
    std::string raw;  // as written
    bool empty() const { return parts.empty(); }
    /// The text when the word is plain literal text (quoted or not), else "".
    std::string literal() const;
    bool isLiteral() const;
};

struct Assignment {
    std::string name;
    bool append = false;  // NAME+=
    bool isArray = false;
    Word value;                  // scalar value (may be empty)
    std::vector<Word> elements;  // array elements, each with its own line
    int line = 0;
};

/// A here-document (`<<EOF` ... `EOF`): its delimiter and body, read when the line ends.
struct HereDoc {
    std::string delimiter;
    bool quoted = false;  // any quoting in the delimiter word: the body is not expanded
    bool stripTabs = false;
    std::string body;   // the lines between the command and the delimiter line, each with '\n'
    int firstLine = 0;  // the body's first line (the line after the command)
    int lastLine = 0;   // the delimiter line
};

struct SimpleCommand {
    int line = 0;
    int endLine = 0;
    std::vector<Assignment> assigns;  // leading NAME=value words
    std::vector<Word> words;
    std::vector<std::string> redirects;
    bool unsupported = false;  // e.g. an array in argument position
    std::string unsupportedWhat;
    /// here-documents, filled in when the parser reaches the end of the command's line
    std::vector<std::shared_ptr<HereDoc>> heredocs;
};

struct Node;

struct IfBranch {
    int line = 0;
    std::vector<Node> cond;
    std::vector<Node> body;
};

struct Node {
    enum class Kind { Commands, If, Unsupported };
    Kind kind = Kind::Commands;
    int line = 0;
    int endLine = 0;
    // Commands: simple commands joined by ops ("&&", "||", "|", "&").
    std::vector<SimpleCommand> commands;
    std::vector<std::string> ops;
    // If
    std::vector<IfBranch> branches;
    std::vector<Node> elseBody;
    bool hasElse = false;
    // Unsupported: what it is, and the nodes inside when they could be parsed (to know which
    // variables it may have assigned).
    std::string what;
    std::vector<Node> inner;
    std::vector<std::string> assignedNames;  // found by a text scan when inner is not parsed
    /// Unsupported "function definition": the function's name (inner holds its body).
    std::string funcName;
    /// Unsupported "case statement" whose items parsed (`case WORD in PATTERN|...) LIST ;; esac`):
    /// the subject and the items; each item's body is also in inner (the names it may set).
    struct CaseItem {
        std::vector<Word> patterns;
        std::vector<Node> body;
        int line = 0;
    };
    std::vector<Word> caseSubject;  // one word when the case parsed, else empty
    std::vector<CaseItem> caseItems;
};

struct Comment {
    int line = 0;
    std::string text;  // after '#'
    bool fullLine = false;
};

struct SyntaxIssue {
    int line = 0;
    std::string message;
    int column = 0;
    bool limit = false;  // a reader limit was hit (bash_limits.h): the rest of the text is skipped
};

struct ParsedScript {
    std::vector<Node> nodes;
    std::vector<Comment> comments;
    std::vector<SyntaxIssue> issues;
};

ParsedScript parseBash(std::string_view text);
/// parseBash for text that starts on line firstLine of its file (a here-document's body).
ParsedScript parseBashAt(std::string_view text, int firstLine);

/// Parses the text of a ${VAR:-word} operand or an arithmetic body as one word; quoted = inside
/// double quotes.
Word parseWordText(std::string_view text, bool quoted, int line);

/// NAME=... / NAME+=... at the start of a word: splits it. Returns false otherwise.
bool splitAssignment(const Word& word, Assignment& out);

}  // namespace runplane::plan::launch::detail
