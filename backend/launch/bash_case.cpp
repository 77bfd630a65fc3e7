// `case WORD in PATTERN) LIST ;; ... esac` (issue 45): decided like an if block when WORD is known
// (a literal, a variable the script sets, a value given with --env); the first item whose pattern
// matches is read in place. A subject that is a parameter, a run-time value or unknown leaves the
// statement to the caller, which carries it verbatim when a splice reads what it sets.

#include <fnmatch.h>

#include "backend/launch/bash_eval.h"

namespace runplane::plan::launch::detail {
namespace {

// A pattern word as fnmatch reads it: glob characters quoted in the script are escaped.
bool patternText(const Word& word, std::string* out) {
    for (const auto& part : word.parts) {
        if (part.kind != WordPart::Kind::Literal) {
            return false;  // a pattern built from an expansion: not decided here
        }
        for (const char c : part.text) {
            if (part.quoted && (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')) {
                *out += '\\';
            }
            *out += c;
        }
    }
    return true;
}

}  // namespace

bool Evaluator::evalCase(const Node& node) {
    if (node.caseSubject.size() != 1) {
        return false;
    }
    const Value subject = scalarOf(node.caseSubject[0]);
    if (!subject.known || subject.symbolic) {
        return false;  // a parameter or a run-time value: bash decides when the script runs
    }
    for (const auto& item : node.caseItems) {
        for (const auto& p : item.patterns) {
            std::string pattern;
            if (!patternText(p, &pattern)) {
                return false;
            }
            if (::fnmatch(pattern.c_str(), subject.text.c_str(), 0) == 0) {
                note(NoteLevel::Info, item.line,
                     "case on line " + std::to_string(node.line) + ": \"" + subject.text +
                         "\" matches the pattern " + p.raw + "; that item is read");
                evalNodes(item.body);
                return true;
            }
        }
    }
    note(NoteLevel::Info, node.line,
         "case on lines " + std::to_string(node.line) + "-" + std::to_string(node.endLine) +
             ": \"" + subject.text + "\" matches no pattern; nothing is read");
    return true;
}

}  // namespace runplane::plan::launch::detail
