// The flag table's rows (flag_rules.h) for LoRA, memory and offload, and the options of the miles
// Python launcher (python scripts/run_*.py), with the launcher's option list.

#include <cmath>

#include "backend/launch/flag_rows.h"
#include "backend/launch/miles_launcher.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

constexpr FlagRule kRows[] = {
    // --- LoRA (miles) --------------------------------------------------------------------------
    valueFlag("--lora-rank", fields::kLoraRank, "LORA_ARGS", kSlimeBit | kMilesBit),
    {"--lora-alpha", fields::kLoraAlpha, "LORA_ARGS", kSlimeBit | kMilesBit, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.lora.rank > 0 || r.lora.alpha != 16)
             push(out, "--lora-alpha", {formatDouble(r.lora.alpha)});
     },
     &applyValue, "written with any rank > 0"},
    valueFlag("--lora-dropout", fields::kLoraDropout, "LORA_ARGS", kMilesBit),
    {"--target-modules", fields::kLoraTargetModules, "LORA_ARGS", kSlimeBit | kMilesBit, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.lora.targetModules.empty())
             return;
         std::string joined;
         for (const auto& m : r.lora.targetModules)
             joined += (joined.empty() ? "" : ",") + m;
         push(out, "--target-modules", {joined});
     },
     [](const FlagRule&, Recipe& r, const Values& v, std::string& why) {
         if (!one(v, why))
             return false;
         std::vector<std::string> list;
         std::string item;
         for (char c : v[0] + ",") {
             if (c != ',') {
                 item += c;
             } else if (!item.empty()) {
                 list.push_back(item);
                 item.clear();
             } else {
                 why = "empty module name in '" + v[0] + "'";
                 return false;
             }
         }
         r.lora.targetModules = std::move(list);
         return true;
     },
     "comma-separated"},
    switchFlag("--lora-base-cpu-backup", fields::kLoraBaseCpuBackup, "LORA_ARGS", kMilesBit,
               "true"),
    // --- memory / offload ----------------------------------------------------------------------
    switchFlag("--offload-train", fields::kMemoryOffloadTrain, "MISC_ARGS", kTrainBits, "true",
               "written when set"),
    switchFlag("--no-offload-train", fields::kMemoryOffloadTrain, "MISC_ARGS", kTrainBits, "false"),
    switchFlag("--offload-rollout", fields::kMemoryOffloadRollout, "MISC_ARGS", kTrainBits, "true"),
    switchFlag("--no-offload-rollout", fields::kMemoryOffloadRollout, "MISC_ARGS", kTrainBits,
               "false"),
    {"--offload", fields::kMemoryOffloadTrain, "MISC_ARGS", kTrainBits, false, nullptr,
     [](const FlagRule&, Recipe& r, const Values& v, std::string& why) {
         if (!checkSwitch(v, why))
             return false;
         r.memory.offloadTrain = true;
         r.memory.offloadRollout = true;
         return true;
     },
     "read only: = --offload-train --offload-rollout"},
    valueFlag("--offload-train-target", fields::kMemoryOffloadTrainTarget, "MISC_ARGS", kMilesBit),
    switchFlag("--drop-checkpoint-page-cache-after-load",
               fields::kMemoryDropCheckpointPageCacheAfterLoad, "MISC_ARGS", kMilesBit, "true"),
    valueFlag("--colocate-memory-peak-device", fields::kMemoryColocateMemoryPeakDevice, "MISC_ARGS",
              kMilesBit),
    switchFlag("--reload-rollout-weights-from-disk", fields::kMemoryReloadRolloutWeightsFromDisk,
               "MISC_ARGS", kMilesBit, "true"),
    switchFlag("--disable-weights-backuper", fields::kMemoryDisableWeightsBackuper, "MISC_ARGS",
               kTrainBits, "true"),
    {"--update-weight-buffer-size", fields::kMemoryUpdateWeightBufferGb, "MISC_ARGS", kTrainBits,
     false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.memory.updateWeightBufferGb != MemoryFlags{}.updateWeightBufferGb)
             push(out, "--update-weight-buffer-size",
                  {formatInt(std::llround(r.memory.updateWeightBufferGb * 1e9))});
     },
     [](const FlagRule&, Recipe& r, const Values& v, std::string& why) {
         double bytes = 0;
         if (!setDouble(v, bytes, why))
             return false;
         r.memory.updateWeightBufferGb = bytes / 1e9;
         return true;
     },
     "bytes on the command line, decimal GB in the recipe"},
    // --- options of the miles Python launcher (python scripts/run_*.py) ------------------------
    valueFlag("--model-variant", fields::kModelVariant, "SCRIPT_ARGS", kScriptBit),
    valueFlag("--num-nodes", fields::kClusterNodes, "SCRIPT_ARGS", kScriptBit),
    {"--hardware", fields::kHardwareGpu, "SCRIPT_ARGS", kScriptBit, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         // only launchers that have the option (run_qwen3_8.py): the others reject it
         const MilesLauncherFacts* facts = milesLauncherFacts(r.launcher.script);
         if (facts != nullptr && !facts->hardware.empty() && !r.hardware.gpu.empty())
             push(out, "--hardware", {r.hardware.gpu});
     },
     &applyValue,
     "launchers that take it (run_qwen3_8.py: B300 or GB300; B300 adds the full engine CPU "
     "backup)"},
    {"--lora", fields::kLoraRank, "SCRIPT_ARGS", kScriptBit, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.lora.rank > 0)
             push(out, "--lora");
     },
     [](const FlagRule&, Recipe&, const Values& v, std::string& why) {
         return checkSwitch(v, why);  // the rank comes with --lora-rank
     },
     "switch; the rank comes with --lora-rank"},
    switchFlag("--recompute", fields::kTrainerRecompute, "SCRIPT_ARGS", kScriptBit, "true"),
    valueFlag("--model-dir", fields::kCheckpointsModelDir, "SCRIPT_ARGS", kScriptBit),
};

const ScriptOption kScriptOptions[] = {
    {"--model-variant", "--model-variant", false},
    {"--hardware", "--hardware", false},
    {"--num-nodes", "--num-nodes", true},
    {"--num-gpus-per-node", "--num-gpus-per-node", true},
    {"--tp", "--tensor-model-parallel-size", true},
    {"--pp", "--pipeline-model-parallel-size", true},
    {"--ep", "--expert-model-parallel-size", true},
    {"--etp", "--expert-tensor-parallel-size", false},
    {"--cp", "--context-parallel-size", true},
    {"--lora", "--lora", false},
    {"--lora-rank", "--lora-rank", false},
    {"--lora-alpha", "--lora-alpha", false},
    {"--num-rollout", "--num-rollout", false},
    {"--rollout-batch-size", "--rollout-batch-size", true},
    {"--n-samples-per-prompt", "--n-samples-per-prompt", true},
    {"--rollout-max-response-len", "--rollout-max-response-len", false},
    {"--global-batch-size", "--global-batch-size", false},
    {"--recompute", "--recompute", false},
    {"--model-dir", "--model-dir", false},
};

}  // namespace

std::span<const FlagRule> miscFlagRows() {
    return kRows;
}

std::span<const ScriptOption> launcherOptions() {
    return kScriptOptions;
}

}  // namespace runplane::plan::launch::detail
