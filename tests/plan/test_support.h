#pragma once
// Shared helpers of the planner tests: where the source tree is, and loading shipped recipes.

#include <string>

#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"

namespace runplane::plan::test {

/// $RUNPLANE_SOURCE_DIR (set by CTest), else the compiled-in source dir.
std::string sourceDir();
std::string recipesDir();
/// The shipped catalog; aborts the test binary if it cannot be read.
const ModelCatalog& catalog();
/// Loads recipes/<relative>; fails the calling test through ADD_FAILURE when it does not parse.
Recipe loadShipped(const std::string& relative);
/// A recipe with every field away from its default (round-trip and documentation tests).
Recipe everyFieldRecipe();

/// The smallest valid recipe text (slime, qwen3-4B, rollout batch 32; batch is its last section).
inline constexpr const char* kMinimalRecipe = R"(schema_version: 1
framework: slime
model: qwen3-4B
batch:
  rollout_batch_size: 32
)";

}  // namespace runplane::plan::test
