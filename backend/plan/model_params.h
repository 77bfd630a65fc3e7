#pragma once
// Parameter counts derived from a ModelShape (formulas in docs/memory-model.md). Counts are split
// into the classes that shard differently: dense (over TP x PP, replicated over DP) and routed
// experts (over ETP x EP x PP). Pure functions; thread-safe.

#include <cstdint>
#include <vector>

#include "backend/plan/model_shape.h"

namespace runplane::plan {

/// Per-layer and whole-model parameter counts.
struct ModelParams {
    std::int64_t embedding = 0;    // input embedding V x H
    std::int64_t outputLayer = 0;  // untied output projection V x H (0 when tied)
    std::int64_t finalNorm = 0;
    std::int64_t attentionFull = 0;    // one full-attention (GQA or MLA) mixer incl. its norm
    std::int64_t attentionLinear = 0;  // one GDN / KDA mixer incl. its norm
    std::int64_t denseMlp = 0;         // one dense SwiGLU MLP incl. its norm
    std::int64_t moeShared = 0;        // one MoE layer's router + shared expert + norm
    std::int64_t moeExperts = 0;       // one MoE layer's routed experts
    std::int64_t oneExpert = 0;        // one routed expert
    std::int64_t mtpDense = 0;         // all MTP layers, non-expert part
    std::int64_t mtpExperts = 0;       // all MTP layers, routed experts
    std::int64_t totalDense = 0;       // every non-expert parameter (incl. embeddings, MTP)
    std::int64_t totalExperts = 0;     // every routed-expert parameter (incl. MTP)
    std::int64_t total = 0;
    std::int64_t active = 0;  // per token: dense + top-k experts
};

ModelParams computeParams(const ModelShape& shape);

/// The parameters one pipeline stage holds (before TP / EP sharding).
struct StageParams {
    int firstLayer = 0;  // 1-based
    int numLayers = 0;
    std::int64_t dense = 0;  // incl. embedding on the first stage, output layer on the last
    std::int64_t experts = 0;
    std::int64_t embedding = 0;  // the vocabulary part of dense (first / last stage)
};

/// Layers per stage: uneven first/last stages take their given counts, the rest split evenly
/// (the remainder, if any, goes to the earliest middle stages). pp >= 1.
std::vector<int> stageLayerCounts(int numLayers, int pp, int firstStageLayers, int lastStageLayers);
std::vector<StageParams> splitStages(const ModelShape& shape, const ModelParams& params, int pp,
                                     int firstStageLayers, int lastStageLayers);

/// Parameters of one LoRA adapter set (A: in x r, B: r x out) on the named modules of every
/// full-attention layer (q_proj/k_proj/v_proj/o_proj) and dense MLPs (gate/up/down_proj).
std::int64_t loraParams(const ModelShape& shape, int rank,
                        const std::vector<std::string>& targetModules);

}  // namespace runplane::plan
