#include "backend/plan/pinned_rounding.h"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace runplane::plan {

namespace {

/// Exact and rounded bytes of a set of bf16 tensors (the ratio is the same for fp32 copies).
struct Sum {
    double exact = 0;
    double rounded = 0;
    void add(double count, std::int64_t rows, std::int64_t cols) {
        if (count <= 0 || rows <= 0 || cols <= 0) {
            return;
        }
        const auto bytes = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * 2;
        exact += count * double(bytes);
        rounded += count * double(std::bit_ceil(bytes));
    }
};

}  // namespace

PinnedRounding pinnedRounding(const ModelShape& s, const StageParams& stage, bool lastStage, int tp,
                              int ep, int etp) {
    tp = std::max(1, tp);
    ep = std::max(1, ep);
    etp = std::max(1, etp);
    const std::int64_t h = s.hidden;
    Sum dense;
    Sum experts;
    int full = 0;
    int linear = 0;
    int denseMlp = 0;
    int moe = 0;
    for (int n = stage.firstLayer; n < stage.firstLayer + stage.numLayers; ++n) {
        ++(s.isFullAttentionLayer(n) ? full : linear);
        ++(s.isMoeLayer(n) ? moe : denseMlp);
    }
    if (s.attention == AttentionKind::Gqa) {
        const std::int64_t d = s.headDim();
        const std::int64_t q = std::int64_t(s.numAttentionHeads) * d;
        // linear_qkv (query, optional output gate, keys, values) and linear_proj
        dense.add(full, (q * (s.attentionOutputGate ? 2 : 1) + 2 * s.queryGroups() * d) / tp, h);
        dense.add(full, h, q / tp);
    }
    if (s.linear.kind == LinearAttentionKind::Gdn) {
        const LinearAttention& g = s.linear;
        const std::int64_t k = std::int64_t(g.numKeyHeads) * g.keyHeadDim;
        const std::int64_t v = std::int64_t(g.numValueHeads) * g.valueHeadDim;
        dense.add(linear, (2 * k + 2 * v + 2 * g.numValueHeads) / tp, h);  // in_proj (q,k,v,z,b,a)
        dense.add(linear, h, v / tp);                                      // out_proj
    }
    const std::int64_t mlps = s.gatedMlp ? 2 : 1;
    dense.add(denseMlp, mlps * s.ffnHidden / tp, h);
    dense.add(denseMlp, h, s.ffnHidden / tp);
    if (s.isMoe() && s.moeLatentSize == 0) {
        const std::int64_t f = s.expertFfn();
        experts.add(double(moe) * s.numExperts / ep, mlps * f / etp, h);  // one expert's fc1
        experts.add(double(moe) * s.numExperts / ep, h, f / etp);         // and fc2
        dense.add(moe, s.numExperts, h);                                  // router
        dense.add(moe, mlps * s.sharedExpertHidden / tp, h);
        dense.add(moe, h, s.sharedExpertHidden / tp);
    }
    if (stage.firstLayer == 1) {
        dense.add(1, s.vocabSize / tp, h);  // embedding
    }
    if (lastStage && (!s.tiedEmbeddings || stage.firstLayer != 1)) {
        dense.add(1, s.vocabSize / tp, h);  // output layer
    }
    PinnedRounding out;
    const double denseBytes = 2.0 * double(stage.dense) / tp;
    if (denseBytes > 0 && dense.exact <= denseBytes) {
        out.dense = (dense.rounded + (denseBytes - dense.exact)) / denseBytes;
    }
    if (experts.exact > 0) {
        out.experts = experts.rounded / experts.exact;
    }
    return out;
}

}  // namespace runplane::plan
