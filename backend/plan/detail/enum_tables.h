#pragma once
// Internal: the YAML spelling of every recipe enum, shared by the parser, the writer and toString.

#include <span>
#include <string_view>

#include "backend/plan/recipe.h"

namespace runplane::plan::detail {

template <typename E>
struct EnumName {
    E value;
    const char* name;
};

#define RUNPLANE_ENUM_TABLE(Type, ...)                              \
    inline std::span<const EnumName<Type>> enumTable(const Type*) { \
        static constexpr EnumName<Type> kTable[] = {__VA_ARGS__};   \
        return kTable;                                              \
    }

RUNPLANE_ENUM_TABLE(Framework, {Framework::Miles, "miles"}, {Framework::Slime, "slime"},
                    {Framework::Vime, "vime"})
RUNPLANE_ENUM_TABLE(Placement, {Placement::Disaggregated, "disaggregated"},
                    {Placement::Colocate, "colocate"})
RUNPLANE_ENUM_TABLE(TrainBackend, {TrainBackend::Megatron, "megatron"},
                    {TrainBackend::Fsdp, "fsdp"})
RUNPLANE_ENUM_TABLE(RolloutEngine, {RolloutEngine::Sglang, "sglang"}, {RolloutEngine::Vllm, "vllm"})
RUNPLANE_ENUM_TABLE(WeightDtype, {WeightDtype::Bf16, "bf16"}, {WeightDtype::Fp16, "fp16"},
                    {WeightDtype::Fp8, "fp8"}, {WeightDtype::Nvfp4, "nvfp4"},
                    {WeightDtype::Mxfp4, "mxfp4"}, {WeightDtype::Int4, "int4"})
RUNPLANE_ENUM_TABLE(QuantScope, {QuantScope::All, "all"}, {QuantScope::Experts, "experts"})
RUNPLANE_ENUM_TABLE(CpuArch, {CpuArch::X86_64, "x86_64"}, {CpuArch::Aarch64, "aarch64"})
RUNPLANE_ENUM_TABLE(OffloadTarget, {OffloadTarget::Cpu, "cpu"}, {OffloadTarget::Disk, "disk"})
RUNPLANE_ENUM_TABLE(PeakDevice, {PeakDevice::Cpu, "cpu"}, {PeakDevice::Gpu, "gpu"})
RUNPLANE_ENUM_TABLE(BackupMode, {BackupMode::ZeroCopy, "zero_copy"}, {BackupMode::Clone, "clone"})
RUNPLANE_ENUM_TABLE(LauncherKind, {LauncherKind::MilesScript, "miles_script"},
                    {LauncherKind::SlimeBash, "slime_bash"}, {LauncherKind::Command, "command"})
RUNPLANE_ENUM_TABLE(AdvantageEstimator, {AdvantageEstimator::Grpo, "grpo"},
                    {AdvantageEstimator::Gspo, "gspo"}, {AdvantageEstimator::Cispo, "cispo"},
                    {AdvantageEstimator::ReinforcePlusPlus, "reinforce_plus_plus"},
                    {AdvantageEstimator::ReinforcePlusPlusBaseline, "reinforce_plus_plus_baseline"},
                    {AdvantageEstimator::Ppo, "ppo"})
RUNPLANE_ENUM_TABLE(OpdType, {OpdType::Sglang, "sglang"}, {OpdType::Megatron, "megatron"})
RUNPLANE_ENUM_TABLE(WeightUpdateMode, {WeightUpdateMode::Full, "full"},
                    {WeightUpdateMode::Delta, "delta"})
RUNPLANE_ENUM_TABLE(WeightTransport, {WeightTransport::Nccl, "nccl"},
                    {WeightTransport::Disk, "disk"})
RUNPLANE_ENUM_TABLE(AttentionKind, {AttentionKind::Gqa, "gqa"}, {AttentionKind::Mla, "mla"})
RUNPLANE_ENUM_TABLE(LinearAttentionKind, {LinearAttentionKind::None, "none"},
                    {LinearAttentionKind::Gdn, "gdn"}, {LinearAttentionKind::Kda, "kda"})

// The same spellings as metrics::kindName / directionName (a test checks they agree).
RUNPLANE_ENUM_TABLE(metrics::Kind, {metrics::Kind::Score, "score"}, {metrics::Kind::Loss, "loss"},
                    {metrics::Kind::Count, "count"}, {metrics::Kind::Time, "time"},
                    {metrics::Kind::Tokens, "tokens"}, {metrics::Kind::Bytes, "bytes"},
                    {metrics::Kind::Rate, "rate"}, {metrics::Kind::Ratio, "ratio"},
                    {metrics::Kind::Other, "other"})
RUNPLANE_ENUM_TABLE(metrics::Direction, {metrics::Direction::Higher, "higher"},
                    {metrics::Direction::Lower, "lower"}, {metrics::Direction::None, "none"})

#undef RUNPLANE_ENUM_TABLE

template <typename E>
const char* enumName(E value) {
    for (const auto& entry : enumTable(static_cast<const E*>(nullptr))) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return "?";
}

template <typename E>
bool enumFromName(std::string_view name, E& out) {
    for (const auto& entry : enumTable(static_cast<const E*>(nullptr))) {
        if (name == entry.name) {
            out = entry.value;
            return true;
        }
    }
    return false;
}

}  // namespace runplane::plan::detail
