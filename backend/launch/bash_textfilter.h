#pragma once
// Internal: the two text filters the launch-script reader runs itself inside a command
// substitution `$(echo ... | sed '...' | tr ...)` when every input is known (slime's geo3k
// examples compute their model file's name that way). Only the forms below; anything else is
// "not understood" (nullopt with the reason), never a guess. Pure functions, bounded: the output
// is at most kMaxValueBytes (bash_limits.h).

#include <optional>
#include <string>
#include <vector>

namespace runplane::plan::launch::detail {

/// `sed SCRIPT` / `sed -e SCRIPT [-e SCRIPT]...` over `input`, line by line. SCRIPT: `s` commands
/// separated by `;` or newlines, any delimiter, flags `g` or none; the pattern is a basic regular
/// expression of literal characters, `.`, a leading `^` and a trailing `$` (an escaped character
/// is literal); the replacement is literal text with `&` for the match (`\&`, `\\` and an
/// escaped delimiter are literal). `args` are the words after `sed`.
std::optional<std::string> runSed(const std::vector<std::string>& args, const std::string& input,
                                  std::string& why);

/// `tr SET1 SET2` / `tr -d SET1` over `input`. A set: literal characters, ranges `a-z`, and the
/// classes `[:upper:]`, `[:lower:]`, `[:digit:]`; SET2 shorter than SET1 repeats its last
/// character (GNU tr). `args` are the words after `tr`.
std::optional<std::string> runTr(const std::vector<std::string>& args, const std::string& input,
                                 std::string& why);

}  // namespace runplane::plan::launch::detail
