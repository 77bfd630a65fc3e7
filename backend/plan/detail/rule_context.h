#pragma once
// Internal: what every rule function sees, and how it reports.

#include <string>
#include <vector>

#include "backend/plan/memory_model.h"
#include "backend/plan/model_params.h"
#include "backend/plan/rules.h"
#include "backend/plan/topology.h"

namespace runplane::plan::detail {

struct RuleContext {
    const Recipe& recipe;
    const ModelShape& shape;
    const ModelParams& params;
    const Layout& layout;
    const MemoryPlan& memory;
    std::vector<Finding>& findings;

    /// Reports rule `id` at `field` with the rule's table severity (or `severity` if given).
    /// `field` is a recipe_paths.h constant, so a rule cannot name a path the table lacks.
    void emit(const char* id, FieldPath field, std::string message, std::string fixHint) const;
    void emit(const char* id, Severity severity, FieldPath field, std::string message,
              std::string fixHint) const;
    /// As emit(), but the location comes from `locField` when `field` was never written.
    void emitAt(const char* id, Severity severity, FieldPath field, FieldPath locField,
                std::string message, std::string fixHint) const;
    /// As emit() with the table severity, for a field path built at run time (e.g.
    /// "extra_args[3]" when the flag came from extra_args).
    void emitField(const char* id, const std::string& field, std::string message,
                   std::string fixHint) const;
    /// As emitField(), for a rule that exists in the recipe's framework only: on a recipe whose
    /// framework the importer assumed (framework_assumed) an error becomes a warning that names
    /// both readings, since the script may be the other framework's, where the rule does not
    /// apply.
    void emitOneFramework(const char* id, const std::string& field, std::string message,
                          std::string fixHint) const;
};

void checkModelAndCluster(const RuleContext& ctx);
void checkTrainer(const RuleContext& ctx);
void checkBatch(const RuleContext& ctx);
void checkRollout(const RuleContext& ctx);
void checkAlgorithmAndLora(const RuleContext& ctx);
void checkEnvironmentAndMemory(const RuleContext& ctx);
void checkLauncher(const RuleContext& ctx);
// The checks of slime's / miles' argument validation not covered above (rules_framework.cpp,
// rules_weight_update.cpp; inventory in docs/rules.md).
void checkFrameworkArgs(const RuleContext& ctx);
void checkPlacementAndWeightUpdate(const RuleContext& ctx);
class RecipeFlags;
// slime's validate_score_centering_args and its trainer fault-tolerance path check
// (rules_framework_more.cpp), called by checkFrameworkArgs.
void checkScoreCentering(const RuleContext& ctx, const RecipeFlags& flags);
void checkTrainerRecovery(const RuleContext& ctx, const RecipeFlags& flags);
// The checks miles adds to slime's (rules_miles.cpp; framework miles only), called by
// checkFrameworkArgs.
void checkMilesArgs(const RuleContext& ctx, const RecipeFlags& flags);

std::string num(double value);  // "0.8", "16", "1e-05"
std::string gb(double bytes);   // "375.3 GB"

}  // namespace runplane::plan::detail
