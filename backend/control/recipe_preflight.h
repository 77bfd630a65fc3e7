#pragma once
// A recipe as the per-node preflight requests (issue 47, docs/dispatch.md "What preflight
// checks"): GPUs and model from hardware, the host-memory peak per node from the memory plan, the
// NCCL requirement from the layout and environment.nccl_version, MASTER_ADDR and the environment
// from the recipe, paths from checkpoints and eval. One place for `runplanectl dispatch
// preflight / launch` and the Cluster page's Preflight box, so both ask every daemon the same
// questions. Plain values, no gRPC, no Qt.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/control/node_types.h"
#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"
#include "backend/plan/rules.h"
#include "common/result.h"

namespace runplane::control {

struct RecipePreflightOptions {
    /// KEY=VALUE pairs over the recipe's environment (runplanectl's --env).
    std::vector<std::string> envOverrides;
    double minFreeDiskGb = 0;
    /// The model catalog for the memory plan and the config.json cross-check; nullptr: the
    /// host-memory check is skipped (RecipePreflight::notes says so).
    const plan::ModelCatalog* catalog = nullptr;
    /// Why there is no catalog (said in the note).
    std::string catalogError;
};

struct RecipePreflight {
    /// One request per node, rank 0 first.
    std::vector<PreflightSpec> specs;
    /// The checkpoint config.json cross-check (rule model.hf-config), when readable from here.
    std::vector<plan::Finding> hfFindings;
    /// What was not asked and why ("host-memory check skipped: …").
    std::vector<std::string> notes;
};

/// The preflight requests of `recipe` (whose YAML text is `recipeYaml`) for `nodeCount` nodes.
/// An --env entry that is not KEY=VALUE is the only error.
Result<RecipePreflight> recipePreflight(const plan::Recipe& recipe, const std::string& recipeYaml,
                                        std::size_t nodeCount,
                                        const RecipePreflightOptions& options = {});

/// Rank 0 for requests that do not name it: MASTER_ADDR defaults to the first node's host, and
/// every node probes the first node's daemon port at MASTER_ADDR (net.master_addr.reachable).
/// `nodes` are daemon addresses HOST:PORT, rank 0 first.
void defaultRank0(std::vector<PreflightSpec>& specs, const std::vector<std::string>& nodes);

/// "2.28.9" -> 22809 (NCCL_VERSION_CODE since 2.9); 0 when not a version.
int ncclVersionCodeOf(const std::string& dotted);

}  // namespace runplane::control
