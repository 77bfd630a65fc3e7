#pragma once
// Bounds on what a recipe may ask of the planner. Every numeric field has a documented range
// (docs/recipe.md, "Limits"): parseRecipe reports a value outside it at its line:column, and
// planRecipe / validate refuse the cost-bearing ones again for recipes built in code, so no table
// is ever sized from an unchecked number. Pure and thread-safe.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/plan/model_shape.h"
#include "backend/plan/recipe.h"

namespace runplane::plan {

/// Largest recipe file read (bytes); real recipes are a few KB, imported scripts a few tens.
/// yaml-cpp takes about a second per MB, so this also bounds the parse time.
inline constexpr std::size_t kMaxRecipeBytes = 256 * 1024;
/// Most entries in one list or mapping of a recipe (extra_args, env, argv, ...).
inline constexpr std::size_t kMaxListEntries = 10000;
/// Deepest nesting of YAML collections (the schema itself needs 4).
inline constexpr int kMaxNestingDepth = 64;
/// Most GPUs the planner lays out (cluster, trainer world, rollout): one row per GPU.
inline constexpr int kMaxPlannedGpus = 65536;

/// The allowed range of one numeric field.
struct FieldBound {
    const char* path;  // "cluster.nodes"; model-shape fields are relative ("num_layers")
    double min;
    double max;
    const char* reason;
    bool sizesPlan;  // the planner allocates or loops by it: checked again at plan entry
};

std::span<const FieldBound> recipeFieldBounds();
std::span<const FieldBound> modelShapeFieldBounds();
/// The bound of a recipe path ("cluster.nodes", "model.shape.num_layers"), or nullptr.
const FieldBound* findFieldBound(std::string_view path);
/// "'cluster.nodes' must be in 1..4096 (reason), got 2147483647"
std::string boundMessage(const FieldBound& bound, std::string_view path, std::string_view got);

/// One value outside its bound (path as written in the recipe).
struct LimitViolation {
    std::string path;
    std::string message;
};

/// Every field of the recipe (its inline model shape included) outside its bound, and the
/// products the planner sizes tables by (nodes x GPUs per node, ...). planOnly: only the bounds
/// that guard the planner's cost (the rest are left to the validation rules).
std::vector<LimitViolation> checkRecipeLimits(const Recipe& recipe, bool planOnly = false);
/// The same for a model shape; prefix is prepended to the paths ("model.shape." or "").
std::vector<LimitViolation> checkShapeLimits(const ModelShape& shape, std::string_view prefix,
                                             bool planOnly = false);

}  // namespace runplane::plan
