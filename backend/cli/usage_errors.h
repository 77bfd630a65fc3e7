// Usage errors of runplanectl: exit status 2 (the Unix convention for "bad usage"), the parser's
// message, and a "did you mean" for a misspelt subcommand or flag.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace runplane::cli {

/// The closest of the candidates to word (edit distance at most 2, or a prefix of it), or "".
std::string closestName(const std::string& word, const std::vector<std::string>& candidates);

/// Prints a failed parse the way users expect and returns the exit status: 0 for --help and
/// --version, 2 for every usage error.
int reportParseError(CLI::App& app, const CLI::ParseError& error, std::ostream& out,
                     std::ostream& err);

}  // namespace runplane::cli
