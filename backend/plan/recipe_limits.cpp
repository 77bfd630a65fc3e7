// The bound table of every numeric recipe and model-shape field (docs/recipe.md lists the same
// table) and the checks that apply it. The upper bounds are far above any real run (the largest
// shipped recipe: 32 nodes, 896 experts, 94 layers) and low enough that every table the planner
// builds stays small and every product it forms fits in 32-bit (parallel sizes, batch sizes) or
// 64-bit (parameter counts) arithmetic.

#include "backend/plan/recipe_limits.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "backend/plan/recipe_fields.h"

namespace runplane::plan {
namespace {

constexpr double kGpus = kMaxPlannedGpus;
constexpr double k2p20 = 1 << 20;
constexpr double k2p24 = 1 << 24;
constexpr double k2p30 = 1 << 30;

constexpr const char* kParallel =
    "parallel sizes above 512 are beyond any GPU count the planner lays out, and TP x PP x CP "
    "stays in 32-bit arithmetic";
constexpr const char* kSeq = "16M tokens, far beyond any context window";
constexpr const char* kBatch = "keeps batch products in 32-bit arithmetic";
constexpr const char* kSteps = "a count of steps; 2^30 keeps it in 32-bit arithmetic";
constexpr const char* kEngine = "an engine spans at most the GPUs the planner lays out";
constexpr const char* kFraction = "a fraction";
constexpr const char* kCoef = "a loss coefficient";

// clang-format off
constexpr FieldBound kRecipeBounds[] = {
    {"hardware.gpus_per_node", 0, 64, "GPUs in one node (0 = CPU only); the planner keeps a row per GPU", true},
    {"hardware.gpu_memory_gb", 0, 4096, "HBM of one GPU in GB (0 = CPU only)", false},
    {"hardware.host_ram_gb", 1, 1048576, "host RAM of one node in GB", false},
    {"cluster.nodes", 1, 4096, "largest cluster the planner sizes per-node tables for", true},
    {"cluster.ray_object_store_fraction", 0, 1, "a fraction of host RAM", false},
    {"cluster.ray_object_store_max_gb", 0, 1048576, "at most a node's RAM bound, in GB", false},
    {"trainer.nodes", 1, 4096, "at most cluster.nodes' bound", true},
    {"trainer.gpus_per_node", 1, 64, "at most hardware.gpus_per_node's bound", true},
    {"trainer.tp", 1, 512, kParallel, true},
    {"trainer.pp", 1, 512, kParallel, true},
    {"trainer.cp", 1, 512, kParallel, true},
    {"trainer.ep", 1, 4096, "at most the experts a model may have", true},
    {"trainer.etp", 1, 512, kParallel, true},
    {"trainer.decoder_first_pipeline_num_layers", 0, 1024, "at most the layers a model may have", true},
    {"trainer.decoder_last_pipeline_num_layers", 0, 1024, "at most the layers a model may have", true},
    {"trainer.num_layers_per_virtual_stage", 1, 1024, "at most the layers a model may have", true},
    {"rollout.num_gpus", 0, kGpus, "most GPUs the planner lays out", true},
    {"rollout.gpus_per_engine", 1, 4096, kEngine, true},
    {"rollout.engines", 0, kGpus, "at most one engine per GPU", true},
    {"rollout.pp_size", 1, 4096, kEngine, true},
    {"rollout.dp_size", 1, 4096, kEngine, true},
    {"rollout.ep_size", 1, 4096, kEngine, true},
    {"rollout.eplb.redundant_experts", 0, 4096, "at most the experts a model may have", true},
    {"rollout.mem_fraction", 0, 1, "a fraction of HBM", false},
    {"rollout.cuda_graph_sizes[]", 1, k2p20, "a batch size per captured graph", false},
    {"rollout.cuda_graph_max_bs", 0, k2p20, "a batch size", false},
    {"rollout.max_response_len", 1, k2p24, kSeq, true},
    {"rollout.max_context_len", 1, k2p24, kSeq, true},
    {"rollout.max_prompt_len", 1, k2p24, kSeq, true},
    {"rollout.temperature", 0, 100, "a sampling temperature", false},
    {"batch.rollout_batch_size", 1, k2p20, kBatch, true},
    {"batch.n_samples_per_prompt", 1, 1024, kBatch, true},
    {"batch.global_batch_size", 1, k2p30, kBatch, true},
    {"batch.num_steps_per_rollout", 1, k2p20, kBatch, true},
    {"batch.micro_batch_size", 1, 4096, kBatch, true},
    {"batch.max_tokens_per_gpu", 1, k2p30, kBatch, true},
    {"batch.over_sampling_batch_size", 1, k2p30, kBatch, true},
    {"batch.num_rollout", 1, k2p30, kSteps, false},
    {"batch.num_epoch", 1, 1000000, "a count of passes over the data", false},
    {"algorithm.kl_loss_coef", 0, 1000, kCoef, false},
    {"algorithm.kl_coef", 0, 1000, kCoef, false},
    {"algorithm.eps_clip", 0, 100, "a clipping range", false},
    {"algorithm.eps_clip_high", 0, 100, "a clipping range", false},
    {"algorithm.entropy_coef", 0, 1000, kCoef, false},
    {"algorithm.lr", 0, 1, "a learning rate", false},
    {"optimizer.offload_fraction", 0, 1, kFraction, false},
    {"lora.rank", 0, 65536, "at most the hidden size a model may have", true},
    {"lora.alpha", 0, 1000000, "a LoRA scale", false},
    {"lora.dropout", 0, 1, "a probability", false},
    {"memory.update_weight_buffer_gb", 0, 1024, "a bucket in host RAM, in GB", false},
    {"memory.process_host_gb", 0, 1024, "host RAM of one GPU process, in GB", false},
    {"memory.process_gpu_gb", 0, 1024, "HBM of one GPU process outside the allocator, in GB", false},
    {"memory.allocator_fragmentation", 0, 10, "a multiple of the transient peak", false},
    {"checkpoints.save_interval", 1, k2p30, kSteps, false},
    {"checkpoints.converted_ep", 1, 4096, "at most trainer.ep's bound", false},
    {"eval.interval", 1, k2p30, kSteps, false},
    {"eval.n_samples_per_eval_prompt", 1, 1024, kBatch, false},
    {"eval.max_response_len", 1, k2p24, kSeq, false},
    {"analysis.memory_alarm_gb", 0.01, 1048576, "at most hardware.host_ram_gb's bound", false},
};

constexpr const char* kDim = "a hidden dimension; keeps parameter counts in 64-bit arithmetic";
constexpr const char* kHeads = "a head count; keeps parameter counts in 64-bit arithmetic";
constexpr const char* kLayers = "the deepest models have about 130 layers; the planner walks every layer";

constexpr FieldBound kShapeBounds[] = {
    {"num_layers", 0, 1024, kLayers, true},
    {"hidden_size", 0, 65536, kDim, true},
    {"ffn_hidden_size", 0, k2p20, kDim, true},
    {"moe_ffn_hidden_size", 0, 262144, kDim, true},
    {"num_experts", 0, 4096, "routed experts per layer; keeps parameter counts in 64-bit arithmetic", true},
    {"moe_router_topk", 0, 4096, "at most num_experts' bound", true},
    {"shared_expert_intermediate_size", 0, k2p20, kDim, true},
    {"first_k_dense", 0, 1024, kLayers, true},
    {"moe_latent_size", 0, 65536, kDim, true},
    {"num_attention_heads", 0, 4096, kHeads, true},
    {"num_query_groups", 0, 4096, kHeads, true},
    {"kv_channels", 0, 65536, kDim, true},
    {"vocab_size", 0, k2p24, "16M tokens; keeps parameter counts in 64-bit arithmetic", true},
    {"mla.q_lora_rank", 0, 65536, kDim, true},
    {"mla.kv_lora_rank", 0, 65536, kDim, true},
    {"mla.qk_head_dim", 0, 65536, kDim, true},
    {"mla.qk_pos_emb_head_dim", 0, 65536, kDim, true},
    {"mla.v_head_dim", 0, 65536, kDim, true},
    {"linear_attention.full_attention_interval", 0, 1024, kLayers, true},
    {"linear_attention.extra_full_attention_layers[]", 1, 1024, kLayers, true},
    {"linear_attention.num_key_heads", 0, 4096, kHeads, true},
    {"linear_attention.num_value_heads", 0, 4096, kHeads, true},
    {"linear_attention.key_head_dim", 0, 65536, kDim, true},
    {"linear_attention.value_head_dim", 0, 65536, kDim, true},
    {"linear_attention.conv_kernel", 0, 1024, "a convolution width", true},
    {"mtp_num_layers", 0, 64, "multi-token-prediction depth", true},
    {"variants[].num_layers", 0, 1024, kLayers, true},
    {"variants[].mtp_num_layers", -1, 64, "multi-token-prediction depth (-1 = the base shape's)", true},
};
// clang-format on

consteval const FieldBound* S(std::string_view path) {
    for (const auto& b : kShapeBounds) {
        if (std::string_view(b.path) == path) {
            return &b;
        }
    }
    throw "no such shape bound";
}

using BoundIndex = std::unordered_map<std::string_view, const FieldBound*>;

const BoundIndex& recipeIndex() {
    static const BoundIndex index = [] {
        BoundIndex out;
        for (const auto& b : kRecipeBounds) {
            out.emplace(b.path, &b);
        }
        return out;
    }();
    return index;
}

const BoundIndex& shapeIndex() {
    static const BoundIndex index = [] {
        BoundIndex out;
        for (const auto& b : kShapeBounds) {
            out.emplace(b.path, &b);
        }
        return out;
    }();
    return index;
}

const FieldBound* lookup(const BoundIndex& index, std::string_view path) {
    const auto it = index.find(path);
    return it == index.end() ? nullptr : it->second;
}

std::string number(double v) {
    char buffer[32];
    // Whole numbers print as integers: the shortest form of 1000000 is "1e+06", which reads
    // badly next to the counts users typed.
    constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
    if (std::abs(v) < kExactIntegers && v == std::trunc(v)) {
        auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<long long>(v));
        return ec == std::errc() ? std::string(buffer, ptr) : std::string("?");
    }
    auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
    return ec == std::errc() ? std::string(buffer, ptr) : std::string("?");
}

/// "eval.datasets[3].x" -> "eval.datasets[].x", the form the tables use for list items.
std::string withoutIndices(std::string_view path) {
    std::string out;
    out.reserve(path.size());
    bool inIndex = false;
    for (char c : path) {
        if (c == '[') {
            inIndex = true;
            out += '[';
        } else if (c == ']') {
            inIndex = false;
            out += ']';
        } else if (!inIndex) {
            out += c;
        }
    }
    return out;
}

class Checker {
  public:
    Checker(std::string_view prefix, bool planOnly, std::vector<LimitViolation>& out)
        : m_prefix(prefix), m_planOnly(planOnly), m_out(out) {}

    void operator()(const FieldBound* b, double value, std::string_view path = {}) const {
        if (m_planOnly && !b->sizesPlan) {
            return;
        }
        // The plan-entry check is for cost only: values below the minimum are clamped by the
        // planner and reported by the validation rules (trainer.positive, cluster.size, ...).
        if (value > b->max || (!m_planOnly && value < b->min)) {
            const std::string full =
                std::string(m_prefix) + std::string(path.empty() ? b->path : path);
            m_out.push_back({full, boundMessage(*b, full, number(value))});
        }
    }
    template <typename T>
    void operator()(const FieldBound* b, const std::optional<T>& value) const {
        if (value.has_value()) {
            (*this)(b, double(*value));
        }
    }
    void product(std::string_view path, double value, double max, const std::string& what) const {
        if (value > max) {
            m_out.push_back({std::string(m_prefix) + std::string(path),
                             what + " = " + number(value) + ", more than the " + number(max) +
                                 " the planner lays out"});
        }
    }

  private:
    std::string_view m_prefix;
    bool m_planOnly;
    std::vector<LimitViolation>& m_out;
};

}  // namespace

std::span<const FieldBound> recipeFieldBounds() {
    return kRecipeBounds;
}

std::span<const FieldBound> modelShapeFieldBounds() {
    return kShapeBounds;
}

const FieldBound* findFieldBound(std::string_view path) {
    const std::string bare = withoutIndices(path);
    constexpr std::string_view kShape = "model.shape.";
    if (bare.starts_with(kShape)) {
        return lookup(shapeIndex(), std::string_view(bare).substr(kShape.size()));
    }
    const FieldBound* b = lookup(recipeIndex(), bare);
    return b != nullptr ? b : lookup(shapeIndex(), bare);  // catalog files: shape at the top
}

std::string boundMessage(const FieldBound& bound, std::string_view path, std::string_view got) {
    return "'" + std::string(path) + "' must be in " + number(bound.min) + ".." +
           number(bound.max) + " (" + bound.reason + "), got " + std::string(got);
}

std::vector<LimitViolation> checkShapeLimits(const ModelShape& s, std::string_view prefix,
                                             bool planOnly) {
    std::vector<LimitViolation> out;
    const Checker check(prefix, planOnly, out);
    check(S("num_layers"), s.numLayers);
    check(S("hidden_size"), s.hidden);
    check(S("ffn_hidden_size"), s.ffnHidden);
    check(S("moe_ffn_hidden_size"), s.moeFfnHidden);
    check(S("num_experts"), s.numExperts);
    check(S("moe_router_topk"), s.topK);
    check(S("shared_expert_intermediate_size"), s.sharedExpertHidden);
    check(S("first_k_dense"), s.firstKDense);
    check(S("moe_latent_size"), s.moeLatentSize);
    check(S("num_attention_heads"), s.numAttentionHeads);
    check(S("num_query_groups"), s.numQueryGroups);
    check(S("kv_channels"), s.kvChannels);
    check(S("vocab_size"), s.vocabSize);
    check(S("mla.q_lora_rank"), s.mla.qLoraRank);
    check(S("mla.kv_lora_rank"), s.mla.kvLoraRank);
    check(S("mla.qk_head_dim"), s.mla.qkHeadDim);
    check(S("mla.qk_pos_emb_head_dim"), s.mla.qkPosEmbHeadDim);
    check(S("mla.v_head_dim"), s.mla.vHeadDim);
    const LinearAttention& la = s.linear;
    check(S("linear_attention.full_attention_interval"), la.fullAttentionInterval);
    for (std::size_t i = 0; i < la.extraFullAttentionLayers.size(); ++i) {
        check(S("linear_attention.extra_full_attention_layers[]"), la.extraFullAttentionLayers[i],
              "linear_attention.extra_full_attention_layers[" + std::to_string(i) + "]");
    }
    check(S("linear_attention.num_key_heads"), la.numKeyHeads);
    check(S("linear_attention.num_value_heads"), la.numValueHeads);
    check(S("linear_attention.key_head_dim"), la.keyHeadDim);
    check(S("linear_attention.value_head_dim"), la.valueHeadDim);
    check(S("linear_attention.conv_kernel"), la.convKernel);
    check(S("mtp_num_layers"), s.mtpNumLayers);
    for (std::size_t i = 0; i < s.variants.size(); ++i) {
        const std::string at = "variants[" + std::to_string(i) + "]";
        check(S("variants[].num_layers"), s.variants[i].numLayers, at + ".num_layers");
        check(S("variants[].mtp_num_layers"), s.variants[i].mtpNumLayers, at + ".mtp_num_layers");
    }
    return out;
}

std::vector<LimitViolation> checkRecipeLimits(const Recipe& r, bool planOnly) {
    std::vector<LimitViolation> out;
    const Checker check("", planOnly, out);
    // Every bounded field of the table (recipe_fields.h), in its order.
    for (const RecipeField& f : recipeFields()) {
        if (f.bound == nullptr) {
            continue;
        }
        const FieldValue value = f.get(r);
        if (const int* n = std::get_if<int>(&value)) {
            check(f.bound, *n);
        } else if (const double* d = std::get_if<double>(&value)) {
            check(f.bound, *d);
        } else if (const auto* items = std::get_if<std::vector<int>>(&value)) {
            for (std::size_t i = 0; i < items->size(); ++i) {
                check(f.bound, (*items)[i], std::string(f.path) + "[" + std::to_string(i) + "]");
            }
        }
    }
    const Batch& b = r.batch;

    // Products the planner sizes its per-GPU tables by, and the one batch product the rules form
    // from two bounded fields that could still overflow (only when the factors are in bounds:
    // a factor out of bounds is the one message that matters).
    const bool factorsInBounds = out.empty();
    if (factorsInBounds) {
        check.product("cluster.nodes", double(r.cluster.nodes) * r.hardware.gpusPerNode, kGpus,
                      "cluster.nodes x hardware.gpus_per_node");
        check.product("trainer.nodes",
                      double(r.trainer.nodes.value_or(r.cluster.nodes)) *
                          r.trainer.gpusPerNode.value_or(r.hardware.gpusPerNode),
                      kGpus, "trainer nodes x trainer GPUs per node");
    }
    if (factorsInBounds && b.globalBatchSize.has_value() && b.numStepsPerRollout.has_value()) {
        check.product("batch.global_batch_size", double(*b.globalBatchSize) * *b.numStepsPerRollout,
                      k2p30, "global_batch_size x num_steps_per_rollout");
    }
    if (r.model.shape.has_value()) {
        for (auto& v : checkShapeLimits(*r.model.shape, "model.shape.", planOnly)) {
            out.push_back(std::move(v));
        }
    }
    return out;
}

}  // namespace runplane::plan
