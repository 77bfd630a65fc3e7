#include "backend/control/recipe_preflight.h"

#include <algorithm>
#include <cstdio>

#include "backend/control/preflight_master_rank0.h"
#include "backend/plan/hf_config.h"
#include "backend/plan/planner.h"
#include "backend/plan/topology.h"

namespace runplane::control {

int ncclVersionCodeOf(const std::string& dotted) {
    int major = 0, minor = 0, patch = 0;
    if (std::sscanf(dotted.c_str(), "%d.%d.%d", &major, &minor, &patch) < 2) {
        return 0;
    }
    // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9 (major*1000 + ... before).
    return major * 10000 + minor * 100 + patch;
}

Result<RecipePreflight> recipePreflight(const plan::Recipe& recipe, const std::string& recipeYaml,
                                        std::size_t nodeCount,
                                        const RecipePreflightOptions& options) {
    PreflightSpec base;
    base.recipeYaml = recipeYaml;
    for (const auto& [k, v] : recipe.environment.env) {
        base.env[k] = v;
    }
    for (const auto& kv : options.envOverrides) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
            return Error{"--env " + kv + ": expected KEY=VALUE"};
        }
        base.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    base.expectedGpus = static_cast<std::uint32_t>(recipe.hardware.gpusPerNode);
    // A recipe without GPUs (hardware.gpus_per_node 0, gpu "cpu") expects no GPU model: asking
    // for "cpu GPUs" failed every node of a CPU run.
    base.expectedGpuModel = recipe.hardware.gpusPerNode > 0 ? recipe.hardware.gpu : "";
    // The gate the run needs (>= 2.30.7 for cross-node CUDA-graph engines), and never below the
    // version the recipe says it was planned with.
    base.minNcclVersionCode =
        std::max(plan::requiredNcclVersionCode(recipe, plan::computeLayout(recipe)),
                 ncclVersionCodeOf(recipe.environment.ncclVersion));
    base.masterAddr = recipe.cluster.masterAddr;
    base.multiNode = nodeCount > 1 || recipe.cluster.nodes > 1;
    const auto& ck = recipe.checkpoints;
    for (const auto* p : {&ck.hfCheckpoint, &ck.modelDir}) {
        if (!p->empty()) {
            base.requiredPaths.push_back(*p);
        }
    }
    for (const auto& d : recipe.eval.datasets) {
        if (!d.path.empty()) {
            base.requiredPaths.push_back(d.path);
        }
    }
    if (!ck.refLoad.empty()) {
        base.checkpointDirs.push_back(ck.refLoad);  // torch_dist needs its tracker file
    }
    if (!ck.opdTeacherLoad.empty()) {
        base.checkpointDirs.push_back(ck.opdTeacherLoad);  // slime checks it exists, as ref_load
    }
    base.minFreeDiskBytes = static_cast<std::uint64_t>(options.minFreeDiskGb * 1e9);
    base.diskPath = ck.save;

    RecipePreflight out;
    out.specs.assign(nodeCount, base);
    if (options.catalog == nullptr) {
        out.notes.push_back("host-memory check skipped: " + (options.catalogError.empty()
                                                                 ? std::string("no model catalog")
                                                                 : options.catalogError));
        return out;
    }
    // Host-memory peak per node from the planner; nodes past the plan's are not checked.
    const auto plan = plan::planRecipe(recipe, *options.catalog);
    if (!plan.model) {
        out.notes.push_back("host-memory check skipped: the model " + recipe.model.name +
                            " is not in the catalog");
        return out;
    }
    out.hfFindings = plan::checkHfConfig(recipe, *plan.model);
    for (std::size_t i = 0; i < nodeCount && i < plan.memory.nodes.size(); ++i) {
        out.specs[i].plannedPeakHostBytes =
            static_cast<std::uint64_t>(plan.memory.nodes[i].peakBytes);
    }
    return out;
}

void defaultRank0(std::vector<PreflightSpec>& specs, const std::vector<std::string>& nodes) {
    if (nodes.empty()) {
        return;
    }
    const std::string& rank0 = nodes.front();
    std::string host = rank0.substr(0, rank0.rfind(':'));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);  // [v6]:port
    }
    for (auto& s : specs) {
        if (s.masterAddr.empty()) {
            s.masterAddr = host;  // the first node acts as head
        }
        if (s.masterProbePort == 0) {
            s.masterProbePort = daemonPortOf(rank0);
        }
    }
}

}  // namespace runplane::control
