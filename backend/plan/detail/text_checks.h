#pragma once
// Internal: the checks a recipe (or catalog) file passes before and right after yaml-cpp reads
// it: size, encoding (UTF-8 only; a UTF-8 BOM is skipped, UTF-16/32 and NUL bytes are named),
// nesting depth (yaml-cpp recurses per level), unterminated quotes (yaml-cpp accepts them at end
// of file), one document only, no tags, and at most kMaxListEntries entries per collection.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string_view>
#include <vector>

#include "backend/plan/recipe.h"

namespace runplane::plan::detail {

/// Parses text as exactly one YAML document of plain values. On any problem appends diagnostics
/// (with line:column) and returns nullopt; an empty document is a Null node.
std::optional<YAML::Node> loadSingleDocument(std::string_view text,
                                             std::vector<ParseDiagnostic>& diagnostics);

/// True for an environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool isEnvName(std::string_view name);

}  // namespace runplane::plan::detail
