#pragma once
// ModelShape: the architecture of a model as Megatron flags describe it (layers, hidden size,
// experts, heads, hybrid linear-attention pattern, MLA dims). Parameter counts are derived from it
// (model_params.h), never typed in. Plain value type; safe to copy and share across threads.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace runplane::plan {

enum class AttentionKind { Gqa, Mla };
enum class LinearAttentionKind { None, Gdn, Kda };

/// Multi-head latent attention dimensions (DeepSeek-V3 family).
struct MlaDims {
    int qLoraRank = 0;  // 0 = no q compression
    int kvLoraRank = 512;
    int qkHeadDim = 128;
    int qkPosEmbHeadDim = 64;
    int vHeadDim = 128;
    bool operator==(const MlaDims&) const = default;
};

/// Hybrid layer pattern: layer n (1-based) uses full attention iff n % fullAttentionInterval == 0
/// or n is listed in extraFullAttentionLayers; every other layer is the linear mixer (GDN / KDA).
struct LinearAttention {
    LinearAttentionKind kind = LinearAttentionKind::None;
    int fullAttentionInterval = 0;
    std::vector<int> extraFullAttentionLayers;
    int numKeyHeads = 0;
    int numValueHeads = 0;
    int keyHeadDim = 128;
    int valueHeadDim = 128;
    int convKernel = 4;
    bool operator==(const LinearAttention&) const = default;
};

/// A named variant of a catalog model (e.g. Qwen3.8-2.4T-A95B `4layer` / `full`): overrides the
/// layer count and MTP depth and names the checkpoint suffix / megatron_model_type.
struct ModelVariant {
    std::string name;
    int numLayers = 0;      // 0 = the base shape's layer count
    int mtpNumLayers = -1;  // -1 = the base shape's MTP depth
    std::string megatronModelType;
    std::string checkpointSuffix;
    std::string description;
    bool operator==(const ModelVariant&) const = default;
};

struct ModelShape {
    std::string name;  // catalog key, e.g. "qwen3-30B-A3B"
    std::string displayName;
    std::string source;  // provenance (repo:path)
    int numLayers = 0;
    int hidden = 0;
    int ffnHidden = 0;     // dense MLP intermediate size
    bool gatedMlp = true;  // SwiGLU (3 matrices) vs plain 2-matrix MLP
    int moeFfnHidden = 0;  // routed expert intermediate size (0 = = ffnHidden when MoE)
    int numExperts = 0;    // 0 = dense model
    int topK = 0;
    int sharedExpertHidden = 0;
    bool sharedExpertGate = false;
    int firstKDense = 0;    // leading dense (non-MoE) layers of an MoE model
    int moeLatentSize = 0;  // experts work in a latent space of this size (Kimi-K3)
    int numAttentionHeads = 0;
    int numQueryGroups = 0;  // 0 = no GQA (MHA / MLA): = numAttentionHeads
    int kvChannels = 0;      // 0 = hidden / heads
    int vocabSize = 0;
    bool tiedEmbeddings = false;
    bool qkvBias = false;
    bool qkLayernorm = false;
    bool attentionOutputGate = false;
    AttentionKind attention = AttentionKind::Gqa;
    MlaDims mla;
    LinearAttention linear;
    int mtpNumLayers = 0;
    std::string defaultVariant;
    std::vector<ModelVariant> variants;

    bool isMoe() const { return numExperts > 0; }
    int queryGroups() const { return numQueryGroups > 0 ? numQueryGroups : numAttentionHeads; }
    int headDim() const {
        return kvChannels > 0 ? kvChannels
                              : (numAttentionHeads > 0 ? hidden / numAttentionHeads : 0);
    }
    int expertFfn() const { return moeFfnHidden > 0 ? moeFfnHidden : ffnHidden; }
    /// True when layer n (1-based) is a full-attention layer.
    bool isFullAttentionLayer(int n) const;
    /// True when layer n (1-based) carries routed experts.
    bool isMoeLayer(int n) const { return isMoe() && n > firstKDense; }
    int numFullAttentionLayers() const;
    int numLinearAttentionLayers() const { return numLayers - numFullAttentionLayers(); }
    int numMoeLayers() const { return isMoe() ? std::max(0, numLayers - firstKDense) : 0; }
    /// The variant with this name, or nullptr.
    const ModelVariant* findVariant(const std::string& variantName) const;
    /// A copy with the variant's overrides applied (variant "" = defaultVariant; unknown = as is).
    ModelShape withVariant(const std::string& variantName) const;

    bool operator==(const ModelShape&) const = default;
};

const char* toString(AttentionKind value);
const char* toString(LinearAttentionKind value);

}  // namespace runplane::plan
