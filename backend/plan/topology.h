#pragma once
// Layout and Topology: the derived parallel layout of a recipe (world size, DP, expert-DP, engine
// TP/DP/EP, ...) and which GPU holds which trainer TP/PP/CP/DP/EP coordinate and which rollout
// engine shard. Plain data for the CLI and the GUI's topology view; pure functions, thread-safe.

#include <string>
#include <vector>

#include "backend/plan/recipe.h"

namespace runplane::plan {

/// Every derived size the rules, the memory model and the topology share. Sizes that cannot be
/// derived (e.g. DP when the dense grid does not divide) are 0.
struct Layout {
    int nodes = 0;        // cluster nodes
    int gpusPerNode = 0;  // hardware GPUs per node
    int clusterGpus = 0;  // nodes x GPUs per node
    int trainerNodes = 0;
    int trainerGpusPerNode = 0;
    int worldSize = 0;  // trainer ranks
    int tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;
    int dp = 0;        // world / (TP x PP x CP)
    int expertDp = 0;  // world / (ETP x EP x PP)
    bool denseGridOk = false;
    bool expertGridOk = false;
    int rolloutGpus = 0;
    int rolloutFirstGpu =
        0;  // global GPU index of rollout GPU 0 (after the actor when disaggregated)
    int gpusPerEngine = 1;
    int engines = 0;  // rollout GPUs / GPUs per engine (0 if it does not divide)
    RolloutEngine engine = RolloutEngine::Sglang;
    int engineTp = 1, engineDp = 1, engineEp = 1, enginePp = 1;
    bool engineCrossNode = false;  // one engine spans more than one node
    bool colocate = false;
};

/// The recipe's layout. Only for a recipe within its bounds (checkRecipeLimits finds nothing, as
/// for every parsed recipe): its products of counts are taken in int.
Layout computeLayout(const Recipe& recipe);

/// NCCL version code (major*10000 + minor*100 + patch) this run needs at run time: 23007
/// (2.30.7) when rollout engines span nodes with CUDA graphs, because 2.28.x deadlocks
/// CUDA-graph-captured cross-node collectives (domain.md seed 000); 0 when no gate applies.
int requiredNcclVersionCode(const Recipe& recipe, const Layout& layout);

/// Megatron's rank coordinates (default order tp-cp-ep-dp-pp: TP fastest, PP slowest).
struct TrainerCoord {
    int rank = -1;  // -1: this GPU runs no trainer rank
    int tp = 0, cp = 0, dp = 0, pp = 0;
    int etp = 0, ep = 0, expertDp = 0;
};

struct EngineCoord {
    int engine = -1;  // -1: this GPU hosts no rollout engine
    int rank = 0;     // rank inside the engine
    int tp = 0, dp = 0, ep = 0, pp = 0;
};

struct GpuSlot {
    int node = 0;
    int localGpu = 0;
    int globalGpu = 0;
    TrainerCoord trainer;
    EngineCoord engine;
};

struct EngineSpan {
    int engine = 0;
    int firstGpu = 0;  // global GPU index
    int numGpus = 0;
    int firstNode = 0;
    int lastNode = 0;
};

/// Every GPU of the cluster in node-major order, plus the engines' extents.
struct Topology {
    Layout layout;
    std::vector<GpuSlot> gpus;
    std::vector<EngineSpan> engines;
    /// One line per node, e.g. "node 0: gpu0 T[r0 tp0 pp0 dp0 ep0] E0.0 | gpu1 ...".
    std::vector<std::string> summaryLines() const;
};

/// Every GPU's trainer and engine coordinates. A recipe outside the planner's bounds
/// (recipe_limits.h) gets an empty Topology (no GPUs, zero layout).
Topology planTopology(const Recipe& recipe);

}  // namespace runplane::plan
