#include "compute/smoke/policy_model.h"

#include <cmath>
#include <limits>

namespace runplane::smoke {
namespace {

torch::Tensor normalInit(std::vector<std::int64_t> sizes, double stddev) {
    return torch::randn(sizes, torch::kFloat32) * stddev;
}

}  // namespace

PolicyModel::PolicyModel(const PolicyShape& shape, torch::Device device) : m_shape(shape) {
    const std::int64_t d = shape.dModel;
    const std::int64_t f = shape.ffn;
    const std::int64_t r = shape.loraRank;
    constexpr double kStd = 0.02;
    // Residual-branch output projections are scaled down with depth (GPT-2 style).
    const double outStd = kStd / std::sqrt(2.0 * shape.layers);
    auto onDevice = [device](torch::Tensor t) { return t.to(device); };
    m_tokEmb = base("tok_emb", onDevice(normalInit({shape.vocab, d}, kStd)));
    m_posEmb = base("pos_emb", onDevice(normalInit({shape.maxLen, d}, kStd)));
    for (int i = 0; i < shape.layers; ++i) {
        const std::string p = "layer" + std::to_string(i) + "_";
        Layer L;
        L.ln1W = base(p + "ln1_w", onDevice(torch::ones({d})));
        L.ln1B = base(p + "ln1_b", onDevice(torch::zeros({d})));
        L.wq = base(p + "wq", onDevice(normalInit({d, d}, kStd)));
        L.bq = base(p + "bq", onDevice(torch::zeros({d})));
        L.wk = base(p + "wk", onDevice(normalInit({d, d}, kStd)));
        L.bk = base(p + "bk", onDevice(torch::zeros({d})));
        L.wv = base(p + "wv", onDevice(normalInit({d, d}, kStd)));
        L.bv = base(p + "bv", onDevice(torch::zeros({d})));
        L.wo = base(p + "wo", onDevice(normalInit({d, d}, outStd)));
        L.bo = base(p + "bo", onDevice(torch::zeros({d})));
        L.ln2W = base(p + "ln2_w", onDevice(torch::ones({d})));
        L.ln2B = base(p + "ln2_b", onDevice(torch::zeros({d})));
        L.w1 = base(p + "w1", onDevice(normalInit({f, d}, kStd)));
        L.b1 = base(p + "b1", onDevice(torch::zeros({f})));
        L.w2 = base(p + "w2", onDevice(normalInit({d, f}, outStd)));
        L.b2 = base(p + "b2", onDevice(torch::zeros({d})));
        // LoRA A ~ U(-1/sqrt(in), 1/sqrt(in)) (PEFT's kaiming-uniform bound), B = 0.
        const double bound = 1.0 / std::sqrt(static_cast<double>(d));
        auto adapter = [&](const std::string& name) {
            Lora a;
            a.a = lora(p + name + "_lora_a",
                       onDevice(torch::rand({r, d}, torch::kFloat32) * (2 * bound) - bound));
            a.b = lora(p + name + "_lora_b", onDevice(torch::zeros({d, r})));
            return a;
        };
        L.q = adapter("q");
        L.k = adapter("k");
        L.v = adapter("v");
        L.o = adapter("o");
        m_layers.push_back(std::move(L));
    }
    m_lnfW = base("lnf_w", onDevice(torch::ones({d})));
    m_lnfB = base("lnf_b", onDevice(torch::zeros({d})));
    m_head = base("head", onDevice(normalInit({shape.vocab, d}, kStd)));
    setRlMode(false);
}

torch::Tensor PolicyModel::base(const std::string& name, torch::Tensor init) {
    torch::Tensor t = register_parameter(name, std::move(init));
    m_base.push_back(t);
    return t;
}

torch::Tensor PolicyModel::lora(const std::string& name, torch::Tensor init) {
    torch::Tensor t = register_parameter(name, std::move(init));
    m_lora.push_back(t);
    return t;
}

void PolicyModel::setRlMode(bool rl) {
    for (auto& t : m_base) {
        t.set_requires_grad(!rl);
    }
    for (auto& t : m_lora) {
        t.set_requires_grad(rl);
    }
}

std::int64_t PolicyModel::parameterCount(bool loraOnly) const {
    std::int64_t n = 0;
    for (const auto& t : loraOnly ? m_lora : m_base) {
        n += t.numel();
    }
    return n;
}

torch::Tensor PolicyModel::project(const torch::Tensor& x, const torch::Tensor& w,
                                   const torch::Tensor& b, const Lora& adapter) const {
    // y = x W^T + b + (alpha / r) * (x A^T) B^T
    torch::Tensor y = torch::linear(x, w, b);
    return y + torch::linear(torch::linear(x, adapter.a), adapter.b) * loraScale();
}

torch::Tensor PolicyModel::forward(const torch::Tensor& tokens) {
    return forward(tokens, nullptr);
}

torch::Tensor PolicyModel::forward(const torch::Tensor& tokens, KvCache* cache) {
    const std::int64_t batch = tokens.size(0);
    const std::int64_t len = tokens.size(1);
    const std::int64_t past = cache != nullptr ? cache->length() : 0;
    const std::int64_t total = past + len;
    const std::int64_t d = m_shape.dModel;
    const std::int64_t h = m_shape.heads;
    const std::int64_t dh = d / h;
    auto positions = torch::arange(past, total, tokens.options());
    torch::Tensor x = m_tokEmb.index_select(0, tokens.reshape({-1})).reshape({batch, len, d}) +
                      m_posEmb.index_select(0, positions).unsqueeze(0);
    // Query i sits at position past + i and may not see keys after it.
    torch::Tensor causal =
        torch::ones({len, total},
                    torch::TensorOptions().dtype(torch::kBool).device(tokens.device()))
            .triu(past + 1);
    const double invSqrt = 1.0 / std::sqrt(static_cast<double>(dh));
    if (cache != nullptr && cache->keys.empty()) {
        cache->keys.resize(m_layers.size());
        cache->values.resize(m_layers.size());
    }
    for (std::size_t li = 0; li < m_layers.size(); ++li) {
        const Layer& L = m_layers[li];
        torch::Tensor n1 = torch::layer_norm(x, {d}, L.ln1W, L.ln1B, 1e-5);
        auto heads = [&](const torch::Tensor& t) {
            return t.reshape({batch, len, h, dh}).transpose(1, 2);  // [B, H, t, dh]
        };
        torch::Tensor q = heads(project(n1, L.wq, L.bq, L.q));
        torch::Tensor k = heads(project(n1, L.wk, L.bk, L.k));
        torch::Tensor v = heads(project(n1, L.wv, L.bv, L.v));
        if (cache != nullptr) {
            if (past > 0) {
                k = torch::cat({cache->keys[li], k}, 2);
                v = torch::cat({cache->values[li], v}, 2);
            }
            cache->keys[li] = k;
            cache->values[li] = v;
        }
        torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * invSqrt;
        scores = scores.masked_fill(causal, -std::numeric_limits<float>::infinity());
        torch::Tensor att = torch::matmul(torch::softmax(scores, -1), v);
        att = att.transpose(1, 2).reshape({batch, len, d});
        x = x + project(att, L.wo, L.bo, L.o);
        torch::Tensor n2 = torch::layer_norm(x, {d}, L.ln2W, L.ln2B, 1e-5);
        x = x + torch::linear(torch::gelu(torch::linear(n2, L.w1, L.b1)), L.w2, L.b2);
    }
    x = torch::layer_norm(x, {d}, m_lnfW, m_lnfB, 1e-5);
    return torch::linear(x, m_head);
}

Generation generate(PolicyModel& model, const torch::Tensor& prompts, int length,
                    double temperature, bool greedy, int eosToken) {
    torch::NoGradGuard noGrad;
    KvCache cache;
    torch::Tensor input = prompts;  // the whole prompt first, then the last sampled token
    std::vector<torch::Tensor> generated;
    std::vector<torch::Tensor> logProbs;
    for (int t = 0; t < length; ++t) {
        torch::Tensor logits = model.forward(input, &cache).select(1, input.size(1) - 1);
        torch::Tensor logp = torch::log_softmax(logits / temperature, -1);
        torch::Tensor next = greedy ? logp.argmax(-1, /*keepdim=*/true)
                                    : torch::multinomial(logp.exp(), 1, /*replacement=*/true);
        logProbs.push_back(logp.gather(1, next));
        generated.push_back(next);
        input = next;
    }
    generated.insert(generated.begin(), prompts);
    torch::Tensor seq = torch::cat(generated, 1);
    Generation out;
    out.tokens = seq;
    out.logProbs = torch::cat(logProbs, 1);
    torch::Tensor response = seq.slice(1, prompts.size(1));
    torch::Tensor isEos = response.eq(eosToken).to(torch::kInt64);
    // A token is live if no EOS came strictly before it.
    torch::Tensor before = isEos.cumsum(1) - isEos;
    out.mask = before.eq(0).to(torch::kFloat32);
    return out;
}

torch::Tensor responseLogProbs(PolicyModel& model, const torch::Tensor& tokens, int length,
                               double temperature, torch::Tensor* entropy) {
    const std::int64_t total = tokens.size(1);
    torch::Tensor logits = model.forward(tokens.slice(1, 0, total - 1));
    // Position i predicts token i + 1; the response occupies the last `length` positions.
    logits = logits.slice(1, total - 1 - length, total - 1) / temperature;
    torch::Tensor logp = torch::log_softmax(logits, -1);
    torch::Tensor targets = tokens.slice(1, total - length, total).unsqueeze(-1);
    if (entropy != nullptr) {
        *entropy = -(logp.exp() * logp).sum(-1);
    }
    return logp.gather(-1, targets).squeeze(-1);
}

}  // namespace runplane::smoke
