#pragma once
// Validation rules: a table of rules (id, severity, field, what it checks, where the rule comes
// from) and validate(), which turns a recipe into findings bound to the field they concern.
// Pure functions over value types; thread-safe; no parsing (fast enough for every keystroke).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/plan/catalog.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/model_shape.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_paths.h"

namespace runplane::plan {

enum class Severity { Error, Warning, Info };

/// One problem (or note) about a recipe.
struct Finding {
    Severity severity = Severity::Error;
    std::string ruleId;     // e.g. "trainer.expert-grid"
    std::string fieldPath;  // e.g. "trainer.ep"
    std::string message;    // names the numbers
    std::string fixHint;
    SourceLoc loc;  // where fieldPath (or its section) was written; unknown if not
};

/// A row of the rule table. `severity` is the rule's usual severity; a few rules report a milder
/// one in some cases (e.g. an unknown NCCL version is info, an old one an error).
struct RuleInfo {
    const char* id;
    Severity severity;
    FieldPath field;  // a recipe_paths.h constant
    const char* checks;
    const char* source;
};

std::span<const RuleInfo> ruleTable();
const RuleInfo* findRule(std::string_view id);

/// Every finding of the recipe against the catalog (model resolution errors included).
std::vector<Finding> validate(const Recipe& recipe, const ModelCatalog& catalog);
/// As validate(), with the model already resolved and the memory plan already computed.
std::vector<Finding> validateResolved(const Recipe& recipe, const ModelShape& shape,
                                      const MemoryPlan& memory);

const char* toString(Severity severity);
/// "file:line:col: severity: message [rule-id]" (file:line:col when the location is known).
std::string formatFinding(const Finding& finding, std::string_view file);
bool hasErrors(const std::vector<Finding>& findings);

}  // namespace runplane::plan
