#pragma once
// planRecipe: resolve the model, compute layout, memory plan, topology and findings in one pass.
// The GUI calls this on every edit; the CLI's `plan` prints it. Pure; thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "backend/plan/catalog.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/model_params.h"
#include "backend/plan/recipe.h"
#include "backend/plan/rules.h"
#include "backend/plan/topology.h"

namespace runplane::plan {

struct Plan {
    std::optional<ModelShape> model;  // empty when the model could not be resolved
    ModelParams params;
    Layout layout;
    std::vector<Finding> findings;
    MemoryPlan memory;
    Topology topology;
};

Plan planRecipe(const Recipe& recipe, const ModelCatalog& catalog);

/// JSON documents for --json output (nlohmann_json stays inside the library).
std::string findingsToJson(const std::vector<Finding>& findings, std::string_view file);
std::string planToJson(const Plan& plan, std::string_view file);
/// The recipe could not be read: {"file", "errors": true, "parse_errors": [{"field", "line",
/// "column", "message", "text"}], "findings": []} (line/column absent when unknown).
std::string parseErrorsToJson(const std::vector<ParseDiagnostic>& diagnostics,
                              std::string_view file);

}  // namespace runplane::plan
