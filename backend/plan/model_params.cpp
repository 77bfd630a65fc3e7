#include "backend/plan/model_params.h"

#include <algorithm>
#include <string>

namespace runplane::plan {
namespace {

using I = std::int64_t;

I fullAttentionParams(const ModelShape& s) {
    const I h = s.hidden;
    const I heads = s.numAttentionHeads;
    I p = h;  // input layernorm
    if (s.attention == AttentionKind::Mla) {
        const I qk = s.mla.qkHeadDim + s.mla.qkPosEmbHeadDim;
        if (s.mla.qLoraRank > 0) {
            p += h * s.mla.qLoraRank + s.mla.qLoraRank + I(s.mla.qLoraRank) * heads * qk;
        } else {
            p += h * heads * qk;
        }
        p += h * (s.mla.kvLoraRank + s.mla.qkPosEmbHeadDim) + s.mla.kvLoraRank;
        p += I(s.mla.kvLoraRank) * heads * (s.mla.qkHeadDim + s.mla.vHeadDim);
        p += heads * I(s.mla.vHeadDim) * h;
        return p;
    }
    const I d = s.headDim();
    const I g = s.queryGroups();
    const I q = heads * d * (s.attentionOutputGate ? 2 : 1);
    p += h * q + h * 2 * g * d + heads * d * h;
    if (s.qkvBias) {
        p += heads * d + 2 * g * d;
    }
    if (s.qkLayernorm) {
        p += 2 * d;
    }
    return p;
}

I linearAttentionParams(const ModelShape& s) {
    const auto& la = s.linear;
    const I h = s.hidden;
    const I keyDim = I(la.numKeyHeads) * la.keyHeadDim;
    const I valueDim = I(la.numValueHeads) * la.valueHeadDim;
    I p = h;  // input layernorm
    if (la.kind == LinearAttentionKind::Gdn) {
        p += h * (2 * keyDim + 2 * valueDim);          // in_proj q, k, v, z (output gate)
        p += h * 2 * la.numValueHeads;                 // in_proj b (beta), a (decay)
        p += (2 * keyDim + valueDim) * la.convKernel;  // depthwise causal conv on q, k, v
        p += 2 * I(la.numValueHeads);                  // A_log, dt_bias
        p += la.valueHeadDim;                          // gated RMSNorm
        p += valueDim * h;                             // out_proj
    } else if (la.kind == LinearAttentionKind::Kda) {
        p += h * (2 * keyDim + valueDim);                          // q, k, v
        p += (2 * keyDim + valueDim) * la.convKernel;              // short conv on q, k, v
        p += 2 * (h * la.keyHeadDim + I(la.keyHeadDim) * keyDim);  // low-rank decay gate f_a/f_b
        p += 2 * (h * la.valueHeadDim + I(la.valueHeadDim) * valueDim);  // output gate g_a/g_b
        p += h * la.numValueHeads;                                       // beta
        p += la.valueHeadDim + valueDim * h;                             // norm, o_proj
    } else {
        return fullAttentionParams(s);
    }
    return p;
}

}  // namespace

ModelParams computeParams(const ModelShape& s) {
    ModelParams p;
    const I h = s.hidden;
    p.embedding = I(s.vocabSize) * h;
    p.outputLayer = s.tiedEmbeddings ? 0 : I(s.vocabSize) * h;
    p.finalNorm = h;
    p.attentionFull = fullAttentionParams(s);
    p.attentionLinear = linearAttentionParams(s);
    p.denseMlp = h + (s.gatedMlp ? 3 : 2) * h * I(s.ffnHidden);
    if (s.isMoe()) {
        const I e = s.numExperts;
        const I f = s.expertFfn();
        p.moeShared = h + h * e;  // pre-MLP norm, router
        if (s.sharedExpertHidden > 0) {
            p.moeShared += 3 * h * I(s.sharedExpertHidden) + (s.sharedExpertGate ? h : 0);
        }
        if (s.moeLatentSize > 0) {
            p.moeShared += 2 * h * I(s.moeLatentSize);  // down to / up from the latent space
            p.oneExpert = 3 * I(s.moeLatentSize) * f;
        } else {
            p.oneExpert = 3 * h * f;
        }
        p.moeExperts = e * p.oneExpert;
    }
    const int full = s.numFullAttentionLayers();
    const int linear = s.numLayers - full;
    const int moe = s.numMoeLayers();
    const int dense = s.numLayers - moe;
    const I layerDense = I(full) * p.attentionFull + I(linear) * p.attentionLinear +
                         I(dense) * p.denseMlp + I(moe) * p.moeShared;
    const I layerExperts = I(moe) * p.moeExperts;
    if (s.mtpNumLayers > 0) {
        // Each MTP layer: two norms + a 2H -> H projection + one full transformer layer.
        const I mtpLayer =
            2 * h + 2 * h * h + p.attentionFull + (s.isMoe() ? p.moeShared : p.denseMlp);
        p.mtpDense = I(s.mtpNumLayers) * mtpLayer;
        p.mtpExperts = s.isMoe() ? I(s.mtpNumLayers) * p.moeExperts : 0;
    }
    p.totalDense = p.embedding + p.outputLayer + p.finalNorm + layerDense + p.mtpDense;
    p.totalExperts = layerExperts + p.mtpExperts;
    p.total = p.totalDense + p.totalExperts;
    const I activeExperts = s.isMoe() ? I(moe) * I(s.topK) * p.oneExpert : 0;
    p.active = p.embedding + p.outputLayer + p.finalNorm + layerDense + activeExperts;
    return p;
}

std::vector<int> stageLayerCounts(int numLayers, int pp, int firstStageLayers,
                                  int lastStageLayers) {
    pp = std::max(pp, 1);
    std::vector<int> counts(static_cast<std::size_t>(pp), 0);
    if (pp == 1) {
        counts[0] = numLayers;
        return counts;
    }
    int remaining = numLayers;
    int middleBegin = 0;
    int middleEnd = pp;
    if (firstStageLayers > 0) {
        counts[0] = firstStageLayers;
        remaining -= firstStageLayers;
        middleBegin = 1;
    }
    if (lastStageLayers > 0) {
        counts[static_cast<std::size_t>(pp - 1)] = lastStageLayers;
        remaining -= lastStageLayers;
        middleEnd = pp - 1;
    }
    const int middle = middleEnd - middleBegin;
    if (middle > 0 && remaining > 0) {
        const int base = remaining / middle;
        int extra = remaining % middle;
        for (int i = middleBegin; i < middleEnd; ++i) {
            counts[static_cast<std::size_t>(i)] = base + (extra > 0 ? 1 : 0);
            extra = std::max(0, extra - 1);
        }
    }
    return counts;
}

std::vector<StageParams> splitStages(const ModelShape& s, const ModelParams& p, int pp,
                                     int firstStageLayers, int lastStageLayers) {
    const std::vector<int> counts =
        stageLayerCounts(s.numLayers, pp, firstStageLayers, lastStageLayers);
    std::vector<StageParams> stages(counts.size());
    int layer = 1;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        StageParams& st = stages[i];
        st.firstLayer = layer;
        st.numLayers = counts[i];
        for (int n = layer; n < layer + counts[i]; ++n) {
            st.dense += s.isFullAttentionLayer(n) ? p.attentionFull : p.attentionLinear;
            if (s.isMoeLayer(n)) {
                st.dense += p.moeShared;
                st.experts += p.moeExperts;
            } else {
                st.dense += p.denseMlp;
            }
        }
        layer += counts[i];
    }
    StageParams& first = stages.front();
    StageParams& last = stages.back();
    // With tied embeddings, a separate last stage keeps its own copy for the output projection.
    const I lastVocab = p.outputLayer > 0 ? p.outputLayer : (stages.size() > 1 ? p.embedding : 0);
    first.embedding += p.embedding;
    first.dense += p.embedding;
    last.embedding += lastVocab;
    last.dense += lastVocab + p.finalNorm + p.mtpDense;
    last.experts += p.mtpExperts;
    return stages;
}

std::int64_t loraParams(const ModelShape& s, int rank, const std::vector<std::string>& modules) {
    if (rank <= 0) {
        return 0;
    }
    const I r = rank;
    const I h = s.hidden;
    const I d = s.headDim();
    const I heads = s.numAttentionHeads;
    const I g = s.queryGroups();
    auto has = [&](const char* name) {
        for (const auto& m : modules) {
            if (m == name || m == "all-linear") {
                return true;
            }
        }
        return false;
    };
    I perAttention = 0;
    if (has("q_proj")) {
        perAttention += r * (h + heads * d * (s.attentionOutputGate ? 2 : 1));
    }
    if (has("k_proj")) {
        perAttention += r * (h + g * d);
    }
    if (has("v_proj")) {
        perAttention += r * (h + g * d);
    }
    if (has("o_proj")) {
        perAttention += r * (heads * d + h);
    }
    I perMlp = 0;
    for (const char* name : {"gate_proj", "up_proj"}) {
        if (has(name)) {
            perMlp += r * (h + I(s.ffnHidden));
        }
    }
    if (has("down_proj")) {
        perMlp += r * (I(s.ffnHidden) + h);
    }
    const int denseLayers = s.numLayers - s.numMoeLayers();
    return I(s.numFullAttentionLayers()) * perAttention + I(denseLayers) * perMlp;
}

}  // namespace runplane::plan
