#include "backend/plan/detail/model_shape_yaml.h"

namespace runplane::plan::detail {

void readModelShape(MapReader& r, ModelShape& s) {
    r.get("name", s.name);
    r.get("display_name", s.displayName);
    r.get("source", s.source);
    r.get("num_layers", s.numLayers);
    r.get("hidden_size", s.hidden);
    r.get("ffn_hidden_size", s.ffnHidden);
    r.get("gated_mlp", s.gatedMlp);
    r.get("moe_ffn_hidden_size", s.moeFfnHidden);
    r.get("num_experts", s.numExperts);
    r.get("moe_router_topk", s.topK);
    r.get("shared_expert_intermediate_size", s.sharedExpertHidden);
    r.get("shared_expert_gate", s.sharedExpertGate);
    r.get("first_k_dense", s.firstKDense);
    r.get("moe_latent_size", s.moeLatentSize);
    r.get("num_attention_heads", s.numAttentionHeads);
    r.get("num_query_groups", s.numQueryGroups);
    r.get("kv_channels", s.kvChannels);
    r.get("vocab_size", s.vocabSize);
    r.get("tied_embeddings", s.tiedEmbeddings);
    r.get("add_qkv_bias", s.qkvBias);
    r.get("qk_layernorm", s.qkLayernorm);
    r.get("attention_output_gate", s.attentionOutputGate);
    r.getEnum("attention", s.attention);
    {
        MapReader m(r.context(), r.child("mla"), r.pathOf("mla"));
        m.get("q_lora_rank", s.mla.qLoraRank);
        m.get("kv_lora_rank", s.mla.kvLoraRank);
        m.get("qk_head_dim", s.mla.qkHeadDim);
        m.get("qk_pos_emb_head_dim", s.mla.qkPosEmbHeadDim);
        m.get("v_head_dim", s.mla.vHeadDim);
        m.finish();
    }
    {
        MapReader m(r.context(), r.child("linear_attention"), r.pathOf("linear_attention"));
        m.getEnum("kind", s.linear.kind);
        m.get("full_attention_interval", s.linear.fullAttentionInterval);
        m.get("extra_full_attention_layers", s.linear.extraFullAttentionLayers);
        m.get("num_key_heads", s.linear.numKeyHeads);
        m.get("num_value_heads", s.linear.numValueHeads);
        m.get("key_head_dim", s.linear.keyHeadDim);
        m.get("value_head_dim", s.linear.valueHeadDim);
        m.get("conv_kernel", s.linear.convKernel);
        m.finish();
    }
    r.get("mtp_num_layers", s.mtpNumLayers);
    r.get("default_variant", s.defaultVariant);
    const YAML::Node variants = r.child("variants");
    if (variants.IsDefined()) {
        if (!variants.IsSequence()) {
            r.context().error(r.pathOf("variants"), locOf(variants.Mark()),
                              "'" + r.pathOf("variants") + "' must be a list");
        } else {
            for (std::size_t i = 0; i < variants.size(); ++i) {
                const std::string path = r.pathOf("variants") + "[" + std::to_string(i) + "]";
                MapReader v(r.context(), variants[i], path);
                ModelVariant variant;
                v.get("name", variant.name);
                v.get("num_layers", variant.numLayers);
                v.get("mtp_num_layers", variant.mtpNumLayers);
                v.get("megatron_model_type", variant.megatronModelType);
                v.get("checkpoint_suffix", variant.checkpointSuffix);
                v.get("description", variant.description);
                v.finish();
                if (variant.name.empty()) {
                    r.context().error(path, locOf(variants[i].Mark()),
                                      "'" + path + ".name' is required");
                }
                s.variants.push_back(std::move(variant));
            }
        }
    }
}

void writeModelShape(SectionWriter& w, const ModelShape& s) {
    const ModelShape d;
    w.field("name", s.name);
    w.field("display_name", s.displayName);
    w.field("source", s.source);
    w.field("num_layers", s.numLayers, d.numLayers);
    w.field("hidden_size", s.hidden, d.hidden);
    w.field("ffn_hidden_size", s.ffnHidden, d.ffnHidden);
    w.field("gated_mlp", s.gatedMlp, d.gatedMlp);
    w.field("moe_ffn_hidden_size", s.moeFfnHidden, d.moeFfnHidden);
    w.field("num_experts", s.numExperts, d.numExperts);
    w.field("moe_router_topk", s.topK, d.topK);
    w.field("shared_expert_intermediate_size", s.sharedExpertHidden, d.sharedExpertHidden);
    w.field("shared_expert_gate", s.sharedExpertGate, d.sharedExpertGate);
    w.field("first_k_dense", s.firstKDense, d.firstKDense);
    w.field("moe_latent_size", s.moeLatentSize, d.moeLatentSize);
    w.field("num_attention_heads", s.numAttentionHeads, d.numAttentionHeads);
    w.field("num_query_groups", s.numQueryGroups, d.numQueryGroups);
    w.field("kv_channels", s.kvChannels, d.kvChannels);
    w.field("vocab_size", s.vocabSize, d.vocabSize);
    w.field("tied_embeddings", s.tiedEmbeddings, d.tiedEmbeddings);
    w.field("add_qkv_bias", s.qkvBias, d.qkvBias);
    w.field("qk_layernorm", s.qkLayernorm, d.qkLayernorm);
    w.field("attention_output_gate", s.attentionOutputGate, d.attentionOutputGate);
    w.enumField("attention", s.attention, d.attention);
    {
        SectionWriter m(w.emitter(), "mla", &w);
        m.field("q_lora_rank", s.mla.qLoraRank, d.mla.qLoraRank);
        m.field("kv_lora_rank", s.mla.kvLoraRank, d.mla.kvLoraRank);
        m.field("qk_head_dim", s.mla.qkHeadDim, d.mla.qkHeadDim);
        m.field("qk_pos_emb_head_dim", s.mla.qkPosEmbHeadDim, d.mla.qkPosEmbHeadDim);
        m.field("v_head_dim", s.mla.vHeadDim, d.mla.vHeadDim);
    }
    {
        SectionWriter m(w.emitter(), "linear_attention", &w);
        m.enumField("kind", s.linear.kind, d.linear.kind);
        m.field("full_attention_interval", s.linear.fullAttentionInterval,
                d.linear.fullAttentionInterval);
        m.field("extra_full_attention_layers", s.linear.extraFullAttentionLayers);
        m.field("num_key_heads", s.linear.numKeyHeads, d.linear.numKeyHeads);
        m.field("num_value_heads", s.linear.numValueHeads, d.linear.numValueHeads);
        m.field("key_head_dim", s.linear.keyHeadDim, d.linear.keyHeadDim);
        m.field("value_head_dim", s.linear.valueHeadDim, d.linear.valueHeadDim);
        m.field("conv_kernel", s.linear.convKernel, d.linear.convKernel);
    }
    w.field("mtp_num_layers", s.mtpNumLayers, d.mtpNumLayers);
    w.field("default_variant", s.defaultVariant);
    if (!s.variants.empty()) {
        w.keyLine("variants");
        YAML::Emitter& out = w.emitter();
        out << YAML::BeginSeq;
        const ModelVariant dv;
        for (const auto& v : s.variants) {
            SectionWriter item(out, nullptr);
            item.field("name", v.name, std::string("\x01"));  // always written
            item.field("num_layers", v.numLayers, dv.numLayers);
            item.field("mtp_num_layers", v.mtpNumLayers, dv.mtpNumLayers);
            item.field("megatron_model_type", v.megatronModelType);
            item.field("checkpoint_suffix", v.checkpointSuffix);
            item.field("description", v.description);
        }
        out << YAML::EndSeq;
    }
}

}  // namespace runplane::plan::detail
