#pragma once
// What StartRun tells a daemon of its run's plan (issue 43; docs/daemon.md, "Planned roles"):
// node `node`'s host memory plan grouped by process role, for every phase (the planner's
// components mapped to roles by plan::roleComponents, as `runplanectl watch`'s alarms read them).
// Shared by `runplanectl submit` and `dispatch launch`. Pure; thread-safe.

#include <string>
#include <vector>

#include "backend/control/node_types.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/recipe.h"

namespace runplane::cli {

/// Rows for trainer, rollout, ray (object store) and page_cache, one per phase (4 x 4).
std::vector<control::StartRunSpec::PlannedRole> plannedRolesOf(const plan::NodeMemory& node);

/// The rows of node `node` of the recipe snapshot's plan; empty, with the reason in `why`, when
/// there is no snapshot, it does not plan (no catalog), or the plan has no such node.
std::vector<control::StartRunSpec::PlannedRole> plannedRolesOfSnapshot(
    const std::string& recipeYaml, const std::string& recipesDir, int node, std::string& why);

/// The role rows StartRun carries (docs/daemon.md, "Planned roles"): `rowsFile`'s text (the
/// user's `--role-rows FILE`, tried first), then the recipe's `analysis.role_rows` after a
/// comment line naming them, so that the daemon's `role_rows:LINE` error points into the right
/// part. Empty when neither gives a row.
std::string roleRowsOf(const std::string& rowsFile, const plan::Recipe* recipe);

}  // namespace runplane::cli
