#pragma once
// The HF config.json cross-check (rule model.hf-config): the recipe's model shape against the
// checkpoint it points at, when that checkpoint is a directory readable from here. It reads a
// file, so it is not part of validate() (which stays pure and keystroke-fast): runplanectl
// validate and dispatch preflight call it after validate(). Bounded (config.json at most
// kMaxHfConfigBytes), never throws. docs/rules.md, "The checkpoint's config.json".

#include <cstddef>
#include <string>
#include <vector>

#include "backend/plan/catalog.h"
#include "backend/plan/model_shape.h"
#include "backend/plan/recipe.h"
#include "backend/plan/rules.h"

namespace runplane::plan {

inline constexpr std::size_t kMaxHfConfigBytes = 1024 * 1024;

/// The checkpoint directory the check reads: checkpoints.hf_checkpoint, else an --hf-checkpoint
/// in extra_args, else checkpoints.model_dir; "" when none is given. fieldOut (optional) gets
/// the field path to report at.
std::string hfCheckpointDir(const Recipe& recipe, std::string* fieldOut = nullptr);

/// Findings of the shape against <dir>/config.json: one model.hf-config error per differing
/// quantity (both values named), a model.hf-config-unreadable info when the directory exists but
/// its config.json is missing, too large or not a JSON object; nothing when no directory is
/// given or it is not readable from here (e.g. a path on the cluster's nodes).
std::vector<Finding> checkHfConfig(const Recipe& recipe, const ModelShape& shape);
/// As above, resolving the model first; nothing when the model does not resolve (validate()
/// reports that).
std::vector<Finding> checkHfConfig(const Recipe& recipe, const ModelCatalog& catalog);

}  // namespace runplane::plan
