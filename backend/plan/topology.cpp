#include "backend/plan/topology.h"

#include <algorithm>

#include "backend/plan/detail/plan_steps.h"
#include "backend/plan/recipe_limits.h"

namespace runplane::plan {
namespace {
int positive(int v) {
    return v > 0 ? v : 1;
}
}  // namespace

int requiredNcclVersionCode(const Recipe& recipe, const Layout& layout) {
    return layout.engineCrossNode && recipe.rollout.cudaGraph && layout.rolloutGpus > 0 ? 23007 : 0;
}

Layout computeLayout(const Recipe& r) {
    Layout l;
    l.nodes = std::max(0, r.cluster.nodes);
    l.gpusPerNode = std::max(0, r.hardware.gpusPerNode);
    l.clusterGpus = l.nodes * l.gpusPerNode;
    l.trainerNodes = std::max(0, trainerNodes(r));
    l.trainerGpusPerNode = std::max(0, trainerGpusPerNode(r));
    l.worldSize = l.trainerNodes * l.trainerGpusPerNode;
    l.tp = positive(r.trainer.tp);
    l.pp = positive(r.trainer.pp);
    l.cp = positive(r.trainer.cp);
    l.ep = positive(r.trainer.ep);
    l.etp = positive(effectiveEtp(r));
    const int dense = l.tp * l.pp * l.cp;
    const int expert = l.etp * l.ep * l.pp;
    l.denseGridOk = l.worldSize > 0 && l.worldSize % dense == 0;
    l.expertGridOk = l.worldSize > 0 && l.worldSize % expert == 0;
    l.dp = l.denseGridOk ? l.worldSize / dense : 0;
    l.expertDp = l.expertGridOk ? l.worldSize / expert : 0;
    l.colocate = r.placement == Placement::Colocate;
    l.rolloutGpus = std::max(0, rolloutGpus(r));
    l.rolloutFirstGpu = l.colocate ? 0 : l.worldSize;
    l.gpusPerEngine = positive(r.rollout.gpusPerEngine);
    l.engines = l.rolloutGpus % l.gpusPerEngine == 0 ? l.rolloutGpus / l.gpusPerEngine : 0;
    l.engine = effectiveEngine(r);
    l.enginePp = positive(r.rollout.ppSize);
    l.engineDp = positive(r.rollout.dpSize);
    if (l.engine == RolloutEngine::Vllm) {
        // vime: TP x DP x PP = GPUs per engine; with expert parallel, EP = TP x DP.
        l.engineTp = positive(l.gpusPerEngine / (l.enginePp * l.engineDp));
        l.engineEp = r.rollout.expertParallel ? l.engineTp * l.engineDp : 1;
    } else {
        // SGLang: TP = GPUs per engine / PP; attention DP and EP subdivide the TP group.
        l.engineTp = positive(l.gpusPerEngine / l.enginePp);
        l.engineEp = positive(r.rollout.epSize);
    }
    l.engineCrossNode = l.gpusPerNode > 0 && l.gpusPerEngine > l.gpusPerNode;
    return l;
}

Topology planTopology(const Recipe& r) {
    if (!checkRecipeLimits(r, true).empty()) {
        // Too large to lay out (planRecipe reports recipe.limits). The layout stays empty too, so
        // that no view sizes a grid from its node and GPU counts.
        return Topology{};
    }
    return detail::planTopologyWithin(computeLayout(r));
}

Topology detail::planTopologyWithin(const Layout& layout) {
    Topology t;
    t.layout = layout;
    const Layout& l = t.layout;
    const int gpn = positive(l.gpusPerNode);
    const int tgpn = std::min(positive(l.trainerGpusPerNode), gpn);
    // Trainer rank r: node r / trainer GPUs per node, the first GPUs of that node (Ray's
    // placement group, sorted by node); rollout GPUs are the trainer's own GPUs under colocate
    // (then any extra ones) and the remaining GPUs in node order when disaggregated.
    auto trainerGpu = [&](int rank) { return (rank / tgpn) * gpn + rank % tgpn; };
    int total = l.clusterGpus;
    if (l.worldSize > 0) {
        total = std::max(total, trainerGpu(l.worldSize - 1) + 1);
    }
    std::vector<char> used(static_cast<std::size_t>(std::max(total, 0)), 0);
    for (int rank = 0; rank < l.worldSize; ++rank) {
        used[static_cast<std::size_t>(trainerGpu(rank))] = 1;
    }
    std::vector<int> rolloutOrder;
    rolloutOrder.reserve(static_cast<std::size_t>(l.rolloutGpus));
    if (l.colocate) {
        for (int rank = 0; rank < l.worldSize && int(rolloutOrder.size()) < l.rolloutGpus; ++rank) {
            rolloutOrder.push_back(trainerGpu(rank));
        }
    }
    for (int g = 0; int(rolloutOrder.size()) < l.rolloutGpus; ++g) {
        if (g >= total) {
            ++total;  // more GPUs asked for than the cluster has: show them past its end
            used.push_back(0);
        }
        if (!used[static_cast<std::size_t>(g)]) {
            used[static_cast<std::size_t>(g)] = 1;
            rolloutOrder.push_back(g);
        }
    }
    t.gpus.resize(static_cast<std::size_t>(total));
    for (int g = 0; g < total; ++g) {
        GpuSlot& slot = t.gpus[static_cast<std::size_t>(g)];
        slot.globalGpu = g;
        slot.node = g / gpn;
        slot.localGpu = g % gpn;
    }
    for (int rank = 0; rank < l.worldSize; ++rank) {
        TrainerCoord& c = t.gpus[static_cast<std::size_t>(trainerGpu(rank))].trainer;
        c.rank = rank;
        if (l.denseGridOk) {
            c.tp = rank % l.tp;
            c.cp = (rank / l.tp) % l.cp;
            c.dp = (rank / (l.tp * l.cp)) % l.dp;
            c.pp = rank / (l.tp * l.cp * l.dp);
        }
        if (l.expertGridOk) {
            c.etp = rank % l.etp;
            c.ep = (rank / l.etp) % l.ep;
            c.expertDp = (rank / (l.etp * l.ep)) % l.expertDp;
        }
    }
    if (l.engines > 0) {
        const int perStage = positive(l.gpusPerEngine / l.enginePp);
        for (int e = 0; e < l.engines; ++e) {
            EngineSpan span;
            span.engine = e;
            span.numGpus = l.gpusPerEngine;
            span.firstGpu = rolloutOrder[static_cast<std::size_t>(e * l.gpusPerEngine)];
            span.firstNode = span.firstGpu / gpn;
            span.lastNode = span.firstNode;
            for (int k = 0; k < l.gpusPerEngine; ++k) {
                const int g = rolloutOrder[static_cast<std::size_t>(e * l.gpusPerEngine + k)];
                span.firstNode = std::min(span.firstNode, g / gpn);
                span.lastNode = std::max(span.lastNode, g / gpn);
                EngineCoord& c = t.gpus[static_cast<std::size_t>(g)].engine;
                c.engine = e;
                c.rank = k;
                c.pp = k / perStage;
                if (l.engine == RolloutEngine::Vllm) {
                    c.tp = k % l.engineTp;
                    c.dp = (k / l.engineTp) % l.engineDp;
                } else {
                    const int inStage = k % perStage;
                    c.tp = inStage;
                    c.dp = inStage / positive(perStage / l.engineDp);
                }
                c.ep = l.engineEp > 1 ? (k % perStage) % l.engineEp : 0;
            }
            t.engines.push_back(span);
        }
    }
    return t;
}

std::vector<std::string> Topology::summaryLines() const {
    std::vector<std::string> lines;
    int node = -1;
    for (const auto& slot : gpus) {
        if (slot.node != node) {
            node = slot.node;
            lines.push_back("node " + std::to_string(node) + ":");
        }
        std::string& line = lines.back();
        line += " gpu" + std::to_string(slot.localGpu);
        if (slot.trainer.rank >= 0) {
            const auto& c = slot.trainer;
            line += " T[r" + std::to_string(c.rank) + " tp" + std::to_string(c.tp) + " pp" +
                    std::to_string(c.pp) + " cp" + std::to_string(c.cp) + " dp" +
                    std::to_string(c.dp) + " ep" + std::to_string(c.ep) + "]";
        }
        if (slot.engine.engine >= 0) {
            line +=
                " E" + std::to_string(slot.engine.engine) + "." + std::to_string(slot.engine.rank);
        }
        if (slot.trainer.rank < 0 && slot.engine.engine < 0) {
            line += " idle";
        }
        line += " |";
    }
    for (auto& line : lines) {
        if (!line.empty() && line.back() == '|') {
            line.pop_back();
            if (!line.empty() && line.back() == ' ') {
                line.pop_back();
            }
        }
    }
    return lines;
}

}  // namespace runplane::plan
