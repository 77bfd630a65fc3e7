// The rollout engines' rows of the flag table (flag_rules.h): SGLang's flags as slime and miles
// pass them (--sglang-<flag>), vLLM's as vime does (--vllm-<flag>), and the engines' other
// spellings of the same flags.

#include <nlohmann/json.hpp>

#include "backend/launch/flag_rows.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

constexpr FlagRule kRows[] = {
    // --- engine: SGLang (slime, miles) ---------------------------------------------------------
    valueFlag("--rollout-num-gpus-per-engine", fields::kRolloutGpusPerEngine, "ENGINE_ARGS",
              kTrainBits),
    alwaysFlag("--sglang-mem-fraction-static", fields::kRolloutMemFraction, "ENGINE_ARGS",
               kSglangBits, "always written: the recipe default (0.8) is not SGLang's"),
    valueFlag("--sglang-pp-size", fields::kRolloutPpSize, "ENGINE_ARGS", kSglangBits),
    valueFlag("--sglang-dp-size", fields::kRolloutDpSize, "ENGINE_ARGS", kSglangBits),
    valueFlag("--sglang-ep-size", fields::kRolloutEpSize, "ENGINE_ARGS", kSglangBits),
    switchFlag("--sglang-enable-dp-attention", fields::kRolloutDpAttention, "ENGINE_ARGS",
               kSglangBits, "true"),
    switchFlag("--sglang-enable-eplb", fields::kRolloutEplbEnabled, "ENGINE_ARGS", kSglangBits,
               "true"),
    valueFlag("--sglang-ep-num-redundant-experts", fields::kRolloutEplbRedundantExperts,
              "ENGINE_ARGS", kSglangBits),
    switchFlag("--sglang-disable-cuda-graph", fields::kRolloutCudaGraph, "ENGINE_ARGS", kSglangBits,
               "false", "written when cuda_graph is false"),
    valueFlag("--sglang-cuda-graph-bs", fields::kRolloutCudaGraphSizes, "ENGINE_ARGS", kSglangBits),
    valueFlag("--sglang-cuda-graph-max-bs", fields::kRolloutCudaGraphMaxBs, "ENGINE_ARGS",
              kSglangBits),
    valueFlag("--sglang-moe-runner-backend", fields::kRolloutMoeBackend, "ENGINE_ARGS",
              kSglangBits),
    valueFlag("--sglang-lora-backend", fields::kRolloutLoraBackend, "ENGINE_ARGS", kSglangBits),
    // --- engine: vLLM (vime) -------------------------------------------------------------------
    alwaysFlag("--vllm-gpu-memory-utilization", fields::kRolloutMemFraction, "ENGINE_ARGS",
               kVimeBit, "always written: the recipe default (0.8) is not vLLM's (0.9)"),
    valueFlag("--vllm-pipeline-parallel-size", fields::kRolloutPpSize, "ENGINE_ARGS", kVimeBit),
    valueFlag("--vllm-data-parallel-size", fields::kRolloutDpSize, "ENGINE_ARGS", kVimeBit),
    switchFlag("--vllm-enable-expert-parallel", fields::kRolloutExpertParallel, "ENGINE_ARGS",
               kVimeBit, "true", "vLLM EP = TP x DP"),
    switchFlag("--vllm-enable-eplb", fields::kRolloutEplbEnabled, "ENGINE_ARGS", kVimeBit, "true"),
    {"--vllm-eplb-config", fields::kRolloutEplbRedundantExperts, "ENGINE_ARGS", kVimeBit, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.rollout.eplb.redundantExperts != 0)
             push(out, "--vllm-eplb-config",
                  {"{\"num_redundant_experts\": " + formatInt(r.rollout.eplb.redundantExperts) +
                   "}"});
     },
     [](const FlagRule&, Recipe& r, const Values& v, std::string& why) {
         if (!one(v, why))
             return false;
         const auto doc = nlohmann::json::parse(v[0], nullptr, false);
         if (!doc.is_object() || doc.size() != 1 || !doc.contains("num_redundant_experts") ||
             !doc["num_redundant_experts"].is_number_integer()) {
             why = "only {\"num_redundant_experts\": N} maps onto the recipe";
             return false;
         }
         r.rollout.eplb.redundantExperts = doc["num_redundant_experts"].get<int>();
         return true;
     },
     "JSON {\"num_redundant_experts\": N}; any other config stays in extra_args"},
    switchFlag("--vllm-enforce-eager", fields::kRolloutCudaGraph, "ENGINE_ARGS", kVimeBit, "false",
               "written when cuda_graph is false"),
    valueFlag("--vllm-cudagraph-capture-sizes", fields::kRolloutCudaGraphSizes, "ENGINE_ARGS",
              kVimeBit),
    valueFlag("--vllm-moe-backend", fields::kRolloutMoeBackend, "ENGINE_ARGS", kVimeBit),
};

// Other spellings of engine flags: SGLang's ServerArgs accepts --ep / --expert-parallel-size for
// --ep-size, --dp / --data-parallel-size for --dp-size, --pipeline-parallel-size for --pp-size and
// --tp / --tensor-parallel-size for --tp-size; slime and miles expose each as --sglang-<spelling>.
// vime exposes vLLM's --<flag> as --vllm-<flag>; vLLM's short forms -pp / -dp / -tp become
// --vllm-pp / --vllm-dp. Import reads an alias as its rule and records the spelling in
// launcher.flag_spellings; export writes the recorded spelling, else the rule's.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"--sglang-ep", "--sglang-ep-size"},
    {"--sglang-expert-parallel-size", "--sglang-ep-size"},
    {"--sglang-dp", "--sglang-dp-size"},
    {"--sglang-data-parallel-size", "--sglang-dp-size"},
    {"--sglang-pipeline-parallel-size", "--sglang-pp-size"},
    {"--vllm-pp", "--vllm-pipeline-parallel-size"},
    {"--vllm-dp", "--vllm-data-parallel-size"},
};

}  // namespace

std::span<const FlagRule> engineFlagRows() {
    return kRows;
}

std::span<const std::pair<std::string_view, std::string_view>> engineFlagAliases() {
    return kAliases;
}

}  // namespace runplane::plan::launch::detail
