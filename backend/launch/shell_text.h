#pragma once
// Internal: shell quoting and number spelling shared by the exporter and the importer. The quoting
// rule (docs/launch-scripts.md): a word made only of [A-Za-z0-9_@%+=:,./-] is written bare,
// anything else in single quotes with each ' written as '\''. Deterministic; thread-safe.

#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace runplane::plan::launch::detail {

/// The word as bash reads it back unchanged.
std::string shellQuote(std::string_view word);
/// Words quoted one by one and joined by single spaces (a command line).
std::string shellJoin(const std::vector<std::string>& words);
/// A word of an exported command: a splice (isSpliceWord: `${NAME[@]}`, `"${NAME}"`, ...) is
/// written as is; a word holding ${NAME} parameters is double-quoted with the parameters left to
/// expand and everything else escaped; any other word as shellQuote writes it.
std::string exportWord(std::string_view word);
/// exportWord for each word, joined by single spaces.
std::string exportJoin(const std::vector<std::string>& words);
/// True when text holds a ${NAME} parameter reference (NAME of bash name characters).
bool hasParameter(std::string_view text);
/// Adds the NAMEs of the ${NAME} parameter references in text.
void collectParameterNames(std::string_view text, std::set<std::string>& names);
/// Escapes text for the inside of a bash double-quoted string (\, ", $, `).
std::string doubleQuoteEscape(std::string_view text);
/// Splits a command-line string the way the shell would split it without expansions: blanks
/// separate words; '...', "..." and \ quote. `$` and backquotes are refused (would expand).
Result<std::vector<std::string>> shellSplit(std::string_view text);

/// Text safe to print on a terminal: control characters (and DEL) written as \r, \t, \n or \xHH.
/// keepNewlines leaves '\n' alone (multi-line messages).
std::string escapeControl(std::string_view text, bool keepNewlines = false);

/// Bash's name characters ([A-Za-z_][A-Za-z0-9_]*) and the blanks that separate words.
inline bool isNameStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
inline bool isNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
inline bool isBlank(char c) {
    return c == ' ' || c == '\t' || c == '\n';
}
/// The text with A-Z lowered (names compared without case: models, checkout folders).
inline std::string asciiLower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string formatInt(long long value);
/// Shortest text that reads back as the same double (1e-05, 0.7, 64).
std::string formatDouble(double value);
/// Whole-string integer / floating point parses; nullopt on anything else.
std::optional<long long> parseInt(std::string_view text);
std::optional<double> parseDouble(std::string_view text);

}  // namespace runplane::plan::launch::detail
