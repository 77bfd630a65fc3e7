// The HF config.json cross-check (hf_config.h; docs/rules.md).

#include "backend/plan/hf_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "backend/plan/detail/recipe_flags.h"

namespace runplane::plan {
namespace {

using nlohmann::json;

/// The first integer among keys (HF spells some quantities differently per architecture).
std::optional<long long> intOf(const json& config, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        const auto it = config.find(key);
        if (it != config.end() && it->is_number_integer()) {
            return it->get<long long>();
        }
    }
    return std::nullopt;
}

struct Reader {
    const Recipe& recipe;
    const std::string& configPath;
    const std::string& field;
    std::vector<Finding>& findings;

    void compare(const json& config, std::initializer_list<const char*> keys, long long ours,
                 const char* ourName) const {
        const auto theirs = intOf(config, keys);
        if (!theirs.has_value() || *theirs == ours) {
            return;
        }
        std::string key;
        for (const char* k : keys) {
            if (config.contains(k)) {
                key = k;
                break;
            }
        }
        mismatch(key, std::to_string(*theirs), ourName, std::to_string(ours));
    }

    void mismatch(const std::string& key, const std::string& theirs, const char* ourName,
                  const std::string& ours) const {
        findings.push_back(Finding{
            Severity::Error, "model.hf-config", field,
            "the checkpoint's config.json says " + key + " " + theirs +
                " but the recipe's model has " + ourName + " " + ours + " (" + configPath + ")",
            "pick the model (or variant) the checkpoint holds, or point the checkpoint path at "
            "the model being trained",
            recipe.sources.find(field)});
    }
};

void info(const Recipe& recipe, const std::string& field, std::string message,
          std::vector<Finding>& findings) {
    findings.push_back(Finding{Severity::Info, "model.hf-config-unreadable", field,
                               std::move(message),
                               "check the checkpoint directory (config.json is what SGLang and "
                               "the HF converter read)",
                               recipe.sources.find(field)});
}

/// Reads path into text unless it is larger than the bound; false (with why) otherwise.
bool readBounded(const std::filesystem::path& path, std::string& text, std::string& why) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) {
        why = "cannot read its size: " + ec.message();
        return false;
    }
    if (size > kMaxHfConfigBytes) {
        why = "it is " + std::to_string(size) + " bytes, over the " +
              std::to_string(kMaxHfConfigBytes) + "-byte bound";
        return false;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        why = "it cannot be opened";
        return false;
    }
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return true;
}

void compareShape(const Reader& r, const json& c, const ModelShape& s) {
    r.compare(c, {"num_hidden_layers", "num_layers", "n_layer"}, s.numLayers, "num_layers");
    r.compare(c, {"hidden_size", "n_embd", "d_model"}, s.hidden, "hidden_size");
    r.compare(c, {"num_attention_heads", "n_head"}, s.numAttentionHeads, "num_attention_heads");
    if (s.attention == AttentionKind::Gqa) {
        r.compare(c, {"num_key_value_heads"}, s.queryGroups(), "num_query_groups");
        if (s.kvChannels > 0) {
            r.compare(c, {"head_dim"}, s.kvChannels, "kv_channels");
        }
    } else {
        r.compare(c, {"kv_lora_rank"}, s.mla.kvLoraRank, "kv_lora_rank");
        r.compare(c, {"q_lora_rank"}, s.mla.qLoraRank, "q_lora_rank");
        r.compare(c, {"qk_rope_head_dim"}, s.mla.qkPosEmbHeadDim, "qk_pos_emb_head_dim");
        r.compare(c, {"v_head_dim"}, s.mla.vHeadDim, "v_head_dim");
    }
    // The dense FFN only where the model has dense MLP layers (slime skips it for pure MoE).
    if (!s.isMoe() || s.firstKDense > 0) {
        r.compare(c, {"intermediate_size", "ffn_hidden_size"}, s.ffnHidden, "ffn_hidden_size");
    }
    if (s.isMoe()) {
        r.compare(c, {"num_experts", "n_routed_experts", "num_local_experts"}, s.numExperts,
                  "num_experts");
        r.compare(c, {"num_experts_per_tok", "moe_topk"}, s.topK, "moe_router_topk");
        r.compare(c, {"moe_intermediate_size"}, s.expertFfn(), "moe_ffn_hidden_size");
        if (s.sharedExpertHidden > 0) {
            r.compare(c, {"shared_expert_intermediate_size"}, s.sharedExpertHidden,
                      "shared_expert_intermediate_size");
        }
        if (s.firstKDense > 0) {
            r.compare(c, {"first_k_dense_replace"}, s.firstKDense, "first_k_dense");
        }
    } else {
        const auto experts = intOf(c, {"num_experts", "n_routed_experts", "num_local_experts"});
        if (experts.has_value() && *experts > 0) {
            r.compare(c, {"num_experts", "n_routed_experts", "num_local_experts"}, 0,
                      "num_experts");
        }
    }
    r.compare(c, {"vocab_size"}, s.vocabSize, "vocab_size");
    const auto tied = c.find("tie_word_embeddings");
    if (tied != c.end() && tied->is_boolean() && tied->get<bool>() != s.tiedEmbeddings) {
        r.mismatch("tie_word_embeddings", tied->get<bool>() ? "true" : "false", "tied_embeddings",
                   s.tiedEmbeddings ? "true" : "false");
    }
}

}  // namespace

std::string hfCheckpointDir(const Recipe& recipe, std::string* fieldOut) {
    const detail::RecipeFlags flags(recipe);
    std::string field = "checkpoints.hf_checkpoint";
    std::string dir = recipe.checkpoints.hfCheckpoint;
    if (dir.empty()) {
        if (auto v = flags.value("--hf-checkpoint"); v.has_value()) {
            dir = *v;
            field = flags.field("--hf-checkpoint");
        } else if (!recipe.checkpoints.modelDir.empty()) {
            dir = recipe.checkpoints.modelDir;
            field = "checkpoints.model_dir";
        }
    }
    if (fieldOut != nullptr) {
        *fieldOut = field;
    }
    return dir;
}

std::vector<Finding> checkHfConfig(const Recipe& recipe, const ModelShape& shape) {
    std::vector<Finding> findings;
    std::string field;
    const std::string dir = hfCheckpointDir(recipe, &field);
    std::error_code ec;
    if (dir.empty() || !std::filesystem::is_directory(dir, ec)) {
        return findings;  // nothing to read from here
    }
    const std::filesystem::path path = std::filesystem::path(dir) / "config.json";
    const std::string configPath = path.string();
    if (!std::filesystem::is_regular_file(path, ec)) {
        info(recipe, field,
             "the checkpoint directory " + dir + " has no config.json: not cross-checked",
             findings);
        return findings;
    }
    std::string text;
    std::string why;
    if (!readBounded(path, text, why)) {
        info(recipe, field, configPath + " is not read: " + why, findings);
        return findings;
    }
    const json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        info(recipe, field, configPath + " is not a JSON object: not cross-checked", findings);
        return findings;
    }
    // Multimodal checkpoints keep the language model's shape under text_config.
    const auto text_config = parsed.find("text_config");
    const json& config = !parsed.contains("num_hidden_layers") && text_config != parsed.end() &&
                                 text_config->is_object()
                             ? *text_config
                             : parsed;
    compareShape(Reader{recipe, configPath, field, findings}, config, shape);
    return findings;
}

std::vector<Finding> checkHfConfig(const Recipe& recipe, const ModelCatalog& catalog) {
    auto shape = resolveModel(recipe, catalog);
    if (!shape.ok()) {
        return {};
    }
    return checkHfConfig(recipe, *shape);
}

}  // namespace runplane::plan
