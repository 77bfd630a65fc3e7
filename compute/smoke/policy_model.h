#pragma once
// INTERNAL to runplane-smoke's LibTorch translation units (it includes <torch/torch.h>); the
// library's public, torch-free entry point is compute/smoke/smoke_workload.h.
//
// PolicyModel: a small decoder-only pre-LayerNorm transformer with LoRA adapters on the
// attention projections q, k, v and o only (the MLP, embeddings and head carry none), plus the
// generation and log-probability helpers GRPO needs. Written against the subset of the LibTorch
// C++ API that is the same in 1.13 (Debian) and 2.x (the GPU host). Not thread-safe.

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace runplane::smoke {

struct PolicyShape {
    int vocab = 14;
    int maxLen = 16;
    int dModel = 128;
    int heads = 4;
    int layers = 4;
    int ffn = 512;
    int loraRank = 8;
    double loraAlpha = 16.0;
};

/// Keys and values of the positions already seen, per layer ([B, H, T, dh] each), so that
/// generation feeds one new token per step instead of recomputing the whole prefix.
struct KvCache {
    std::vector<torch::Tensor> keys;
    std::vector<torch::Tensor> values;
    std::int64_t length() const { return keys.empty() ? 0 : keys.front().size(2); }
};

class PolicyModel : public torch::nn::Module {
  public:
    /// Initialises on the CPU from the global CPU generator (so the same seed gives the same
    /// weights on every device), then moves to `device`.
    PolicyModel(const PolicyShape& shape, torch::Device device);

    /// tokens [B, T] int64 -> logits [B, T, vocab].
    torch::Tensor forward(const torch::Tensor& tokens);
    /// The same network over `tokens` [B, t] placed after the cache.length() positions already in
    /// `cache` (attending to them), which it extends: logits [B, t, vocab]. With an empty cache
    /// this is forward(tokens).
    torch::Tensor forward(const torch::Tensor& tokens, KvCache* cache);

    const PolicyShape& shape() const { return m_shape; }
    double loraScale() const { return m_shape.loraAlpha / m_shape.loraRank; }
    /// Base (non-LoRA) parameters in a fixed order.
    const std::vector<torch::Tensor>& baseParameters() const { return m_base; }
    /// LoRA A/B matrices of q, k, v, o in every layer, in a fixed order.
    const std::vector<torch::Tensor>& loraParameters() const { return m_lora; }
    /// Base trainable (warm start) or frozen with trainable adapters (RL).
    void setRlMode(bool rl);
    std::int64_t parameterCount(bool lora) const;

  private:
    struct Lora {
        torch::Tensor a;  // [rank, in]
        torch::Tensor b;  // [out, rank], zero-initialised so a fresh adapter changes nothing
    };
    struct Layer {
        torch::Tensor ln1W, ln1B, wq, bq, wk, bk, wv, bv, wo, bo, ln2W, ln2B, w1, b1, w2, b2;
        Lora q, k, v, o;
    };

    torch::Tensor base(const std::string& name, torch::Tensor init);
    torch::Tensor lora(const std::string& name, torch::Tensor init);
    torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                          const Lora& adapter) const;

    PolicyShape m_shape;
    torch::Tensor m_tokEmb, m_posEmb, m_lnfW, m_lnfB, m_head;
    std::vector<Layer> m_layers;
    std::vector<torch::Tensor> m_base;
    std::vector<torch::Tensor> m_lora;
};

/// Sampled (or greedy) continuations of fixed-length prompts.
struct Generation {
    torch::Tensor tokens;    ///< [M, P + L] prompt followed by the L generated tokens
    torch::Tensor logProbs;  ///< [M, L] log-probabilities of the generated tokens (at temperature)
    torch::Tensor mask;      ///< [M, L] float, 1 up to and including the first EOS
};

/// Autoregressive generation of `length` tokens: the prompt in one pass, then one token per step
/// against the KV cache.
Generation generate(PolicyModel& model, const torch::Tensor& prompts, int length,
                    double temperature, bool greedy, int eosToken);

/// Teacher-forced log-probabilities of the last `length` tokens of `tokens` ([M, P + L]) under
/// softmax(logits / temperature); optionally the per-token entropy of that distribution.
torch::Tensor responseLogProbs(PolicyModel& model, const torch::Tensor& tokens, int length,
                               double temperature, torch::Tensor* entropy);

}  // namespace runplane::smoke
