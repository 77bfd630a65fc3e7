// The field <-> flag table. Each row is written once here and read by both directions, so what
// the exporter writes is exactly what the importer maps back (docs/launch-scripts.md).
// Over 800 lines because it is one table: splitting the rows across files would hide which flag
// a field has. The meta-block slots copy through the recipe field table
// (backend/plan/recipe_fields.h, FIELD rows); every row names its field by the table's constant
// (backend/plan/recipe_paths.h: fields::kTrainerTp; a string literal does not compile). The flag
// rows (RP_INT, RP_DOUBLE, ...) still spell member and default each; reading those through the
// field's row too is what would shrink it.

#include "backend/launch/flag_rules.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>

#include "backend/launch/miles_launcher.h"
#include "backend/launch/shell_text.h"
#include "backend/plan/recipe_fields.h"

namespace runplane::plan::launch::detail {
namespace {

using Out = std::vector<FlagValues>;
using Values = std::vector<std::string>;

bool one(const Values& v, std::string& why) {
    if (v.size() != 1) {
        why = "expects one value, got " + std::to_string(v.size());
        return false;
    }
    return true;
}

bool setInt(const Values& v, int& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    auto n = parseInt(v[0]);
    if (!n || *n < INT_MIN || *n > INT_MAX) {
        why = "expects an integer, got '" + v[0] + "'";
        return false;
    }
    out = static_cast<int>(*n);
    return true;
}

bool setInt(const Values& v, std::optional<int>& out, std::string& why) {
    int n = 0;
    if (!setInt(v, n, why)) {
        return false;
    }
    out = n;
    return true;
}

bool setDouble(const Values& v, double& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    auto d = parseDouble(v[0]);
    if (!d) {
        why = "expects a number, got '" + v[0] + "'";
        return false;
    }
    out = *d;
    return true;
}

bool setDouble(const Values& v, std::optional<double>& out, std::string& why) {
    double d = 0;
    if (!setDouble(v, d, why)) {
        return false;
    }
    out = d;
    return true;
}

bool setString(const Values& v, std::string& out, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    out = v[0];
    return true;
}

template <typename T>
bool setSwitch(const Values& v, T& out, T value, std::string& why) {
    if (!v.empty()) {
        why = "is a switch and takes no value, got '" + v[0] + "'";
        return false;
    }
    out = value;
    return true;
}

bool setIntList(const Values& v, std::vector<int>& out, std::string& why) {
    if (v.empty()) {
        why = "expects a list of integers";
        return false;
    }
    std::vector<int> list;
    for (const auto& s : v) {
        auto n = parseInt(s);
        if (!n || *n < INT_MIN || *n > INT_MAX) {
            why = "expects integers, got '" + s + "'";
            return false;
        }
        list.push_back(static_cast<int>(*n));
    }
    out = std::move(list);
    return true;
}

template <typename E>
bool setEnum(const Values& v, E& out, std::initializer_list<E> all, std::string& why) {
    if (!one(v, why)) {
        return false;
    }
    std::string names;
    for (E e : all) {
        if (v[0] == toString(e)) {
            out = e;
            return true;
        }
        names += names.empty() ? "" : ", ";
        names += toString(e);
    }
    why = "'" + v[0] + "' is not one of " + names;
    return false;
}

void push(Out& out, const char* flag, Values values = {}) {
    out.push_back({flag, std::move(values)});
}

// Row builders. MEMBER is an expression on `r` (a recipe field); DEF its recipe default.
#define RP_INT(FLAG, FIELD, GROUP, BITS, ALWAYS, MEMBER, DEF, NOTE)                                \
    FlagRule {                                                                                     \
        FLAG, FIELD, GROUP, BITS, ALWAYS,                                                          \
            [](const Recipe& r, bool always, Out& out) {                                           \
                if (always || r.MEMBER != (DEF))                                                   \
                    push(out, FLAG, {formatInt(r.MEMBER)});                                        \
            },                                                                                     \
            [](Recipe& r, const Values& v, std::string& why) { return setInt(v, r.MEMBER, why); }, \
            NOTE                                                                                   \
    }
#define RP_OPT_INT(FLAG, FIELD, GROUP, BITS, MEMBER, NOTE)                                         \
    FlagRule {                                                                                     \
        FLAG, FIELD, GROUP, BITS, false,                                                           \
            [](const Recipe& r, bool, Out& out) {                                                  \
                if (r.MEMBER)                                                                      \
                    push(out, FLAG, {formatInt(*r.MEMBER)});                                       \
            },                                                                                     \
            [](Recipe& r, const Values& v, std::string& why) { return setInt(v, r.MEMBER, why); }, \
            NOTE                                                                                   \
    }
#define RP_DOUBLE(FLAG, FIELD, GROUP, BITS, ALWAYS, MEMBER, DEF, NOTE) \
    FlagRule {                                                         \
        FLAG, FIELD, GROUP, BITS, ALWAYS,                              \
            [](const Recipe& r, bool always, Out& out) {               \
                if (always || r.MEMBER != (DEF))                       \
                    push(out, FLAG, {formatDouble(r.MEMBER)});         \
            },                                                         \
            [](Recipe& r, const Values& v, std::string& why) {         \
                return setDouble(v, r.MEMBER, why);                    \
            },                                                         \
            NOTE                                                       \
    }
#define RP_OPT_DOUBLE(FLAG, FIELD, GROUP, BITS, MEMBER, NOTE)   \
    FlagRule {                                                  \
        FLAG, FIELD, GROUP, BITS, false,                        \
            [](const Recipe& r, bool, Out& out) {               \
                if (r.MEMBER)                                   \
                    push(out, FLAG, {formatDouble(*r.MEMBER)}); \
            },                                                  \
            [](Recipe& r, const Values& v, std::string& why) {  \
                return setDouble(v, r.MEMBER, why);             \
            },                                                  \
            NOTE                                                \
    }
#define RP_STRING(FLAG, FIELD, GROUP, BITS, MEMBER, NOTE)      \
    FlagRule {                                                 \
        FLAG, FIELD, GROUP, BITS, false,                       \
            [](const Recipe& r, bool, Out& out) {              \
                if (!r.MEMBER.empty())                         \
                    push(out, FLAG, {r.MEMBER});               \
            },                                                 \
            [](Recipe& r, const Values& v, std::string& why) { \
                return setString(v, r.MEMBER, why);            \
            },                                                 \
            NOTE                                               \
    }
// An enum flag: written when the field is not DEF; reads one of the listed values.
#define RP_ENUM(FLAG, FIELD, GROUP, BITS, MEMBER, DEF, NOTE, ...) \
    FlagRule {                                                    \
        FLAG, FIELD, GROUP, BITS, false,                          \
            [](const Recipe& r, bool, Out& out) {                 \
                if (r.MEMBER != (DEF))                            \
                    push(out, FLAG, {toString(r.MEMBER)});        \
            },                                                    \
            [](Recipe& r, const Values& v, std::string& why) {    \
                return setEnum(v, r.MEMBER, {__VA_ARGS__}, why);  \
            },                                                    \
            NOTE                                                  \
    }
// A list of integers: written when the list is not empty.
#define RP_INT_LIST(FLAG, FIELD, GROUP, BITS, MEMBER, NOTE)    \
    FlagRule {                                                 \
        FLAG, FIELD, GROUP, BITS, false,                       \
            [](const Recipe& r, bool, Out& out) {              \
                if (r.MEMBER.empty())                          \
                    return;                                    \
                Values v;                                      \
                for (int s : r.MEMBER)                         \
                    v.push_back(formatInt(s));                 \
                push(out, FLAG, std::move(v));                 \
            },                                                 \
            [](Recipe& r, const Values& v, std::string& why) { \
                return setIntList(v, r.MEMBER, why);           \
            },                                                 \
            NOTE                                               \
    }
// A store_true flag: written when the field equals ON.
#define RP_SWITCH(FLAG, FIELD, GROUP, BITS, MEMBER, ON, NOTE)               \
    FlagRule {                                                              \
        FLAG, FIELD, GROUP, BITS, false,                                    \
            [](const Recipe& r, bool, Out& out) {                           \
                if (r.MEMBER == (ON))                                       \
                    push(out, FLAG);                                        \
            },                                                              \
            [](Recipe& r, const Values& v, std::string& why) {              \
                return setSwitch(v, r.MEMBER, decltype(r.MEMBER)(ON), why); \
            },                                                              \
            NOTE                                                            \
    }

const FlagRule kRules[] = {
    // --- cluster / placement -----------------------------------------------------------------
    {"--actor-num-nodes", fields::kTrainerNodes, "CLUSTER_ARGS", kTrainBits, false,
     [](const Recipe& r, bool always, Out& out) {
         if (always || r.trainer.nodes || trainerNodes(r) != 1)
             push(out, "--actor-num-nodes", {formatInt(trainerNodes(r))});
     },
     [](Recipe& r, const Values& v, std::string& why) { return setInt(v, r.trainer.nodes, why); },
     "effective trainer nodes (written when set or not 1); explicitness kept in runplane-meta"},
    {"--actor-num-gpus-per-node", fields::kTrainerGpusPerNode, "CLUSTER_ARGS", kTrainBits, false,
     [](const Recipe& r, bool always, Out& out) {
         if (always || r.trainer.gpusPerNode || trainerGpusPerNode(r) != 8)
             push(out, "--actor-num-gpus-per-node", {formatInt(trainerGpusPerNode(r))});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         return setInt(v, r.trainer.gpusPerNode, why);
     },
     "effective trainer GPUs per node (written when set or not 8)"},
    {"--num-gpus-per-node", fields::kHardwareGpusPerNode, "CLUSTER_ARGS", kTrainBits, false,
     [](const Recipe& r, bool always, Out& out) {
         const int g = r.hardware.gpusPerNode;
         if (always || g != 8 || g != trainerGpusPerNode(r))
             push(out, "--num-gpus-per-node", {formatInt(g)});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         return setInt(v, r.hardware.gpusPerNode, why);
     },
     "rollout placement; written when not 8 or not the trainer's"},
    RP_SWITCH("--colocate", fields::kPlacement, "CLUSTER_ARGS", kTrainBits, placement,
              Placement::Colocate, ""),
    RP_OPT_INT("--rollout-num-gpus", fields::kRolloutNumGpus, "CLUSTER_ARGS", kTrainBits,
               rollout.numGpus, ""),
    RP_ENUM("--train-backend", fields::kTrainerBackend, "CLUSTER_ARGS",
            kSlimeBit | kMilesBit | kVimeBit, trainer.backend, TrainBackend::Megatron, "",
            TrainBackend::Megatron, TrainBackend::Fsdp),
    // --- trainer parallelism -------------------------------------------------------------------
    RP_INT("--tensor-model-parallel-size", fields::kTrainerTp, "PERF_ARGS", kTrainBits, false,
           trainer.tp, 1, ""),
    RP_SWITCH("--sequence-parallel", fields::kTrainerSequenceParallel, "PERF_ARGS", kTrainBits,
              trainer.sequenceParallel, true, ""),
    RP_INT("--pipeline-model-parallel-size", fields::kTrainerPp, "PERF_ARGS", kTrainBits, false,
           trainer.pp, 1, ""),
    RP_INT("--context-parallel-size", fields::kTrainerCp, "PERF_ARGS", kTrainBits, false,
           trainer.cp, 1, ""),
    RP_INT("--expert-model-parallel-size", fields::kTrainerEp, "PERF_ARGS", kTrainBits, false,
           trainer.ep, 1, ""),
    RP_OPT_INT("--expert-tensor-parallel-size", fields::kTrainerEtp, "PERF_ARGS", kTrainBits,
               trainer.etp, "written only when the recipe sets etp"),
    RP_OPT_INT("--decoder-first-pipeline-num-layers", fields::kTrainerDecoderFirstPipelineNumLayers,
               "PERF_ARGS", kTrainBits, trainer.decoderFirstPipelineNumLayers, ""),
    RP_OPT_INT("--decoder-last-pipeline-num-layers", fields::kTrainerDecoderLastPipelineNumLayers,
               "PERF_ARGS", kTrainBits, trainer.decoderLastPipelineNumLayers, ""),
    RP_OPT_INT("--num-layers-per-virtual-pipeline-stage", fields::kTrainerNumLayersPerVirtualStage,
               "PERF_ARGS", kTrainBits, trainer.numLayersPerVirtualStage, ""),
    {"--recompute-granularity", fields::kTrainerRecompute, "PERF_ARGS", kTrainBits, false,
     [](const Recipe& r, bool, Out& out) {
         if (!r.trainer.recompute)
             return;
         push(out, "--recompute-granularity", {"full"});
         push(out, "--recompute-method", {"uniform"});
         push(out, "--recompute-num-layers", {"1"});
     },
     nullptr,
     "the three flags `full` / `uniform` / `1` together; any other form stays in extra_args"},
    RP_INT("--micro-batch-size", fields::kBatchMicroBatchSize, "PERF_ARGS", kTrainBits, false,
           batch.microBatchSize, 1, ""),
    RP_SWITCH("--use-dynamic-batch-size", fields::kBatchDynamicBatchSize, "PERF_ARGS", kTrainBits,
              batch.dynamicBatchSize, true, ""),
    RP_OPT_INT("--max-tokens-per-gpu", fields::kBatchMaxTokensPerGpu, "PERF_ARGS", kTrainBits,
               batch.maxTokensPerGpu, ""),
    // --- rollout / batch -----------------------------------------------------------------------
    RP_OPT_INT("--num-rollout", fields::kBatchNumRollout, "ROLLOUT_ARGS", kTrainBits,
               batch.numRollout, ""),
    RP_OPT_INT("--num-epoch", fields::kBatchNumEpoch, "ROLLOUT_ARGS", kTrainBits, batch.numEpoch,
               ""),
    RP_INT("--rollout-batch-size", fields::kBatchRolloutBatchSize, "ROLLOUT_ARGS", kTrainBits, true,
           batch.rolloutBatchSize, 0, ""),
    RP_INT("--n-samples-per-prompt", fields::kBatchNSamplesPerPrompt, "ROLLOUT_ARGS", kTrainBits,
           false, batch.nSamplesPerPrompt, 1, ""),
    RP_OPT_INT("--global-batch-size", fields::kBatchGlobalBatchSize, "ROLLOUT_ARGS", kTrainBits,
               batch.globalBatchSize, ""),
    RP_OPT_INT("--num-steps-per-rollout", fields::kBatchNumStepsPerRollout, "ROLLOUT_ARGS",
               kTrainBits, batch.numStepsPerRollout, ""),
    RP_OPT_INT("--over-sampling-batch-size", fields::kBatchOverSamplingBatchSize, "ROLLOUT_ARGS",
               kTrainBits, batch.overSamplingBatchSize, ""),
    RP_OPT_INT("--rollout-max-response-len", fields::kRolloutMaxResponseLen, "ROLLOUT_ARGS",
               kTrainBits, rollout.maxResponseLen, ""),
    RP_OPT_INT("--rollout-max-context-len", fields::kRolloutMaxContextLen, "ROLLOUT_ARGS",
               kTrainBits, rollout.maxContextLen, ""),
    RP_OPT_INT("--rollout-max-prompt-len", fields::kRolloutMaxPromptLen, "ROLLOUT_ARGS", kTrainBits,
               rollout.maxPromptLen, ""),
    RP_DOUBLE("--rollout-temperature", fields::kRolloutTemperature, "ROLLOUT_ARGS", kTrainBits,
              false, rollout.temperature, 1.0, ""),
    // --- eval ----------------------------------------------------------------------------------
    RP_OPT_INT("--eval-interval", fields::kEvalInterval, "EVAL_ARGS", kTrainBits, eval.interval,
               ""),
    {"--eval-prompt-data", parts::kEvalDatasets, "EVAL_ARGS", kTrainBits, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.eval.datasets.empty())
             return;
         Values v;
         for (const auto& d : r.eval.datasets) {
             v.push_back(d.name);
             v.push_back(d.path);
         }
         push(out, "--eval-prompt-data", std::move(v));
     },
     [](Recipe& r, const Values& v, std::string& why) {
         if (v.empty() || v.size() % 2 != 0) {
             why = "expects NAME PATH pairs, got " + std::to_string(v.size()) + " value(s)";
             return false;
         }
         r.eval.datasets.clear();
         for (std::size_t i = 0; i < v.size(); i += 2)
             r.eval.datasets.push_back({v[i], v[i + 1]});
         return true;
     },
     "NAME PATH pairs (a lone PATH stays in extra_args)"},
    RP_INT("--n-samples-per-eval-prompt", fields::kEvalNSamplesPerEvalPrompt, "EVAL_ARGS",
           kTrainBits, false, eval.nSamplesPerEvalPrompt, 1, ""),
    RP_OPT_INT("--eval-max-response-len", fields::kEvalMaxResponseLen, "EVAL_ARGS", kTrainBits,
               eval.maxResponseLen, ""),
    RP_SWITCH("--skip-eval-before-train", fields::kEvalSkipEvalBeforeTrain, "EVAL_ARGS", kTrainBits,
              eval.skipEvalBeforeTrain, true, ""),
    // --- checkpoints ---------------------------------------------------------------------------
    RP_STRING("--hf-checkpoint", fields::kCheckpointsHfCheckpoint, "CKPT_ARGS", kTrainBits,
              checkpoints.hfCheckpoint, ""),
    RP_STRING("--ref-load", fields::kCheckpointsRefLoad, "CKPT_ARGS", kTrainBits,
              checkpoints.refLoad, ""),
    RP_STRING("--load", fields::kCheckpointsLoad, "CKPT_ARGS", kTrainBits, checkpoints.load, ""),
    RP_STRING("--save", fields::kCheckpointsSave, "CKPT_ARGS", kTrainBits, checkpoints.save, ""),
    RP_OPT_INT("--save-interval", fields::kCheckpointsSaveInterval, "CKPT_ARGS", kTrainBits,
               checkpoints.saveInterval, ""),
    RP_SWITCH("--no-save-optim", fields::kCheckpointsNoSaveOptim, "CKPT_ARGS", kTrainBits,
              checkpoints.noSaveOptim, true, ""),
    RP_SWITCH("--no-load-optim", fields::kCheckpointsNoLoadOptim, "CKPT_ARGS", kTrainBits,
              checkpoints.noLoadOptim, true, ""),
    // --- algorithm -----------------------------------------------------------------------------
    {"--advantage-estimator", fields::kAlgorithmAdvantageEstimator, "GRPO_ARGS", kTrainBits, false,
     [](const Recipe& r, bool always, Out& out) {
         if (always || r.algorithm.advantageEstimator != AdvantageEstimator::Grpo)
             push(out, "--advantage-estimator", {toString(r.algorithm.advantageEstimator)});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         return setEnum(v, r.algorithm.advantageEstimator,
                        {AdvantageEstimator::Grpo, AdvantageEstimator::Gspo,
                         AdvantageEstimator::Cispo, AdvantageEstimator::ReinforcePlusPlus,
                         AdvantageEstimator::ReinforcePlusPlusBaseline, AdvantageEstimator::Ppo},
                        why);
     },
     ""},
    RP_SWITCH("--use-kl-loss", fields::kAlgorithmUseKlLoss, "GRPO_ARGS", kTrainBits,
              algorithm.useKlLoss, true, ""),
    {"--kl-loss-coef", fields::kAlgorithmKlLossCoef, "GRPO_ARGS", kTrainBits, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.algorithm.useKlLoss || r.algorithm.klLossCoef != 0.0)
             push(out, "--kl-loss-coef", {formatDouble(r.algorithm.klLossCoef)});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         return setDouble(v, r.algorithm.klLossCoef, why);
     },
     "written whenever the KL loss is on"},
    {"--kl-loss-type", fields::kAlgorithmKlLossType, "GRPO_ARGS", kTrainBits, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.algorithm.klLossType != "k1")
             push(out, "--kl-loss-type", {r.algorithm.klLossType});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         return setString(v, r.algorithm.klLossType, why);
     },
     ""},
    RP_DOUBLE("--kl-coef", fields::kAlgorithmKlCoef, "GRPO_ARGS", kTrainBits, false,
              algorithm.klCoef, 0.0, ""),
    RP_DOUBLE("--entropy-coef", fields::kAlgorithmEntropyCoef, "GRPO_ARGS", kTrainBits, false,
              algorithm.entropyCoef, 0.0, ""),
    RP_DOUBLE("--eps-clip", fields::kAlgorithmEpsClip, "GRPO_ARGS", kTrainBits, false,
              algorithm.epsClip, 0.2, ""),
    RP_OPT_DOUBLE("--eps-clip-high", fields::kAlgorithmEpsClipHigh, "GRPO_ARGS", kTrainBits,
                  algorithm.epsClipHigh, ""),
    RP_SWITCH("--use-tis", fields::kAlgorithmUseTis, "GRPO_ARGS", kTrainBits, algorithm.useTis,
              true, ""),
    RP_SWITCH("--normalize-advantages", fields::kAlgorithmNormalizeAdvantages, "GRPO_ARGS",
              kTrainBits, algorithm.normalizeAdvantages, true, ""),
    RP_SWITCH("--use-rollout-logprobs", fields::kAlgorithmUseRolloutLogprobs, "GRPO_ARGS",
              kTrainBits, algorithm.useRolloutLogprobs, true, ""),
    RP_SWITCH("--use-opd", fields::kAlgorithmUseOpd, "GRPO_ARGS", kTrainBits, algorithm.useOpd,
              true, ""),
    {"--opd-type", fields::kAlgorithmOpdType, "GRPO_ARGS", kTrainBits, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.algorithm.opdType)
             push(out, "--opd-type", {toString(*r.algorithm.opdType)});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         OpdType t = OpdType::Sglang;
         if (!setEnum(v, t, {OpdType::Sglang, OpdType::Megatron}, why)) {
             return false;
         }
         r.algorithm.opdType = t;
         return true;
     },
     ""},
    RP_STRING("--opd-teacher-load", fields::kCheckpointsOpdTeacherLoad, "CKPT_ARGS", kTrainBits,
              checkpoints.opdTeacherLoad, ""),
    // --- weight update -------------------------------------------------------------------------
    RP_ENUM("--update-weight-mode", fields::kWeightUpdateMode, "MISC_ARGS", kTrainBits,
            weightUpdate.mode, WeightUpdateMode::Full, "", WeightUpdateMode::Full,
            WeightUpdateMode::Delta),
    RP_ENUM("--update-weight-transport", fields::kWeightUpdateTransport, "MISC_ARGS", kTrainBits,
            weightUpdate.transport, WeightTransport::Nccl, "", WeightTransport::Nccl,
            WeightTransport::Disk),
    RP_STRING("--update-weight-disk-dir", fields::kWeightUpdateDiskDir, "MISC_ARGS", kTrainBits,
              weightUpdate.diskDir, ""),
    RP_STRING("--update-weight-local-checkpoint-dir", fields::kWeightUpdateLocalCheckpointDir,
              "MISC_ARGS", kTrainBits, weightUpdate.localCheckpointDir, ""),
    RP_SWITCH("--release-train", fields::kWeightUpdateReleaseTrain, "MISC_ARGS", kTrainBits,
              weightUpdate.releaseTrain, true, ""),
    // --- optimizer -----------------------------------------------------------------------------
    {"--optimizer", fields::kOptimizerKind, "OPTIMIZER_ARGS", kTrainBits, false,
     [](const Recipe& r, bool always, Out& out) {
         if (always || r.optimizer.kind != "adam")
             push(out, "--optimizer", {r.optimizer.kind});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         return setString(v, r.optimizer.kind, why);
     },
     ""},
    RP_DOUBLE("--lr", fields::kAlgorithmLr, "OPTIMIZER_ARGS", kTrainBits, false, algorithm.lr, 1e-6,
              ""),
    RP_SWITCH("--optimizer-cpu-offload", fields::kOptimizerCpuOffload, "OPTIMIZER_ARGS", kTrainBits,
              optimizer.cpuOffload, true, ""),
    RP_SWITCH("--overlap-cpu-optimizer-d2h-h2d", fields::kOptimizerOverlapCpuOptimizerD2hH2d,
              "OPTIMIZER_ARGS", kTrainBits, optimizer.overlapCpuOptimizerD2hH2d, true, ""),
    RP_SWITCH("--use-precision-aware-optimizer", fields::kOptimizerPrecisionAware, "OPTIMIZER_ARGS",
              kTrainBits, optimizer.precisionAware, true, ""),
    RP_DOUBLE("--optimizer-offload-fraction", fields::kOptimizerOffloadFraction, "OPTIMIZER_ARGS",
              kTrainBits, false, optimizer.offloadFraction, 1.0, ""),
    // --- engine: SGLang (slime, miles) ---------------------------------------------------------
    RP_INT("--rollout-num-gpus-per-engine", fields::kRolloutGpusPerEngine, "ENGINE_ARGS",
           kTrainBits, false, rollout.gpusPerEngine, 1, ""),
    RP_DOUBLE("--sglang-mem-fraction-static", fields::kRolloutMemFraction, "ENGINE_ARGS",
              kSglangBits, true, rollout.memFraction, 0.8,
              "always written: the recipe default (0.8) is not SGLang's"),
    RP_INT("--sglang-pp-size", fields::kRolloutPpSize, "ENGINE_ARGS", kSglangBits, false,
           rollout.ppSize, 1, ""),
    RP_INT("--sglang-dp-size", fields::kRolloutDpSize, "ENGINE_ARGS", kSglangBits, false,
           rollout.dpSize, 1, ""),
    RP_INT("--sglang-ep-size", fields::kRolloutEpSize, "ENGINE_ARGS", kSglangBits, false,
           rollout.epSize, 1, ""),
    RP_SWITCH("--sglang-enable-dp-attention", fields::kRolloutDpAttention, "ENGINE_ARGS",
              kSglangBits, rollout.dpAttention, true, ""),
    RP_SWITCH("--sglang-enable-eplb", fields::kRolloutEplbEnabled, "ENGINE_ARGS", kSglangBits,
              rollout.eplb.enabled, true, ""),
    RP_INT("--sglang-ep-num-redundant-experts", fields::kRolloutEplbRedundantExperts, "ENGINE_ARGS",
           kSglangBits, false, rollout.eplb.redundantExperts, 0, ""),
    RP_SWITCH("--sglang-disable-cuda-graph", fields::kRolloutCudaGraph, "ENGINE_ARGS", kSglangBits,
              rollout.cudaGraph, false, "written when cuda_graph is false"),
    RP_INT_LIST("--sglang-cuda-graph-bs", fields::kRolloutCudaGraphSizes, "ENGINE_ARGS",
                kSglangBits, rollout.cudaGraphSizes, ""),
    RP_INT("--sglang-cuda-graph-max-bs", fields::kRolloutCudaGraphMaxBs, "ENGINE_ARGS", kSglangBits,
           false, rollout.cudaGraphMaxBs, 0, ""),
    RP_STRING("--sglang-moe-runner-backend", fields::kRolloutMoeBackend, "ENGINE_ARGS", kSglangBits,
              rollout.moeBackend, ""),
    RP_STRING("--sglang-lora-backend", fields::kRolloutLoraBackend, "ENGINE_ARGS", kSglangBits,
              rollout.loraBackend, ""),
    // --- engine: vLLM (vime) -------------------------------------------------------------------
    RP_DOUBLE("--vllm-gpu-memory-utilization", fields::kRolloutMemFraction, "ENGINE_ARGS", kVimeBit,
              true, rollout.memFraction, 0.8,
              "always written: the recipe default (0.8) is not vLLM's (0.9)"),
    RP_INT("--vllm-pipeline-parallel-size", fields::kRolloutPpSize, "ENGINE_ARGS", kVimeBit, false,
           rollout.ppSize, 1, ""),
    RP_INT("--vllm-data-parallel-size", fields::kRolloutDpSize, "ENGINE_ARGS", kVimeBit, false,
           rollout.dpSize, 1, ""),
    RP_SWITCH("--vllm-enable-expert-parallel", fields::kRolloutExpertParallel, "ENGINE_ARGS",
              kVimeBit, rollout.expertParallel, true, "vLLM EP = TP x DP"),
    RP_SWITCH("--vllm-enable-eplb", fields::kRolloutEplbEnabled, "ENGINE_ARGS", kVimeBit,
              rollout.eplb.enabled, true, ""),
    {"--vllm-eplb-config", fields::kRolloutEplbRedundantExperts, "ENGINE_ARGS", kVimeBit, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.rollout.eplb.redundantExperts != 0)
             push(out, "--vllm-eplb-config",
                  {"{\"num_redundant_experts\": " + formatInt(r.rollout.eplb.redundantExperts) +
                   "}"});
     },
     [](Recipe& r, const Values& v, std::string& why) {
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
    RP_SWITCH("--vllm-enforce-eager", fields::kRolloutCudaGraph, "ENGINE_ARGS", kVimeBit,
              rollout.cudaGraph, false, "written when cuda_graph is false"),
    RP_INT_LIST("--vllm-cudagraph-capture-sizes", fields::kRolloutCudaGraphSizes, "ENGINE_ARGS",
                kVimeBit, rollout.cudaGraphSizes, ""),
    RP_STRING("--vllm-moe-backend", fields::kRolloutMoeBackend, "ENGINE_ARGS", kVimeBit,
              rollout.moeBackend, ""),
    // --- LoRA (miles) --------------------------------------------------------------------------
    RP_INT("--lora-rank", fields::kLoraRank, "LORA_ARGS", kSlimeBit | kMilesBit, false, lora.rank,
           0, ""),
    {"--lora-alpha", fields::kLoraAlpha, "LORA_ARGS", kSlimeBit | kMilesBit, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.lora.rank > 0 || r.lora.alpha != 16)
             push(out, "--lora-alpha", {formatDouble(r.lora.alpha)});
     },
     [](Recipe& r, const Values& v, std::string& why) { return setDouble(v, r.lora.alpha, why); },
     "written with any rank > 0"},
    RP_DOUBLE("--lora-dropout", fields::kLoraDropout, "LORA_ARGS", kMilesBit, false, lora.dropout,
              0.0, ""),
    {"--target-modules", fields::kLoraTargetModules, "LORA_ARGS", kSlimeBit | kMilesBit, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.lora.targetModules.empty())
             return;
         std::string joined;
         for (const auto& m : r.lora.targetModules)
             joined += (joined.empty() ? "" : ",") + m;
         push(out, "--target-modules", {joined});
     },
     [](Recipe& r, const Values& v, std::string& why) {
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
    RP_SWITCH("--lora-base-cpu-backup", fields::kLoraBaseCpuBackup, "LORA_ARGS", kMilesBit,
              lora.baseCpuBackup, true, ""),
    // --- memory / offload ----------------------------------------------------------------------
    RP_SWITCH("--offload-train", fields::kMemoryOffloadTrain, "MISC_ARGS", kTrainBits,
              memory.offloadTrain, std::optional<bool>(true), "written when set"),
    RP_SWITCH("--no-offload-train", fields::kMemoryOffloadTrain, "MISC_ARGS", kTrainBits,
              memory.offloadTrain, std::optional<bool>(false), ""),
    RP_SWITCH("--offload-rollout", fields::kMemoryOffloadRollout, "MISC_ARGS", kTrainBits,
              memory.offloadRollout, std::optional<bool>(true), ""),
    RP_SWITCH("--no-offload-rollout", fields::kMemoryOffloadRollout, "MISC_ARGS", kTrainBits,
              memory.offloadRollout, std::optional<bool>(false), ""),
    {"--offload", fields::kMemoryOffloadTrain, "MISC_ARGS", kTrainBits, false, nullptr,
     [](Recipe& r, const Values& v, std::string& why) {
         return setSwitch(v, r.memory.offloadTrain, std::optional<bool>(true), why) &&
                setSwitch(v, r.memory.offloadRollout, std::optional<bool>(true), why);
     },
     "read only: = --offload-train --offload-rollout"},
    RP_ENUM("--offload-train-target", fields::kMemoryOffloadTrainTarget, "MISC_ARGS", kMilesBit,
            memory.offloadTrainTarget, OffloadTarget::Cpu, "", OffloadTarget::Cpu,
            OffloadTarget::Disk),
    RP_SWITCH("--drop-checkpoint-page-cache-after-load",
              fields::kMemoryDropCheckpointPageCacheAfterLoad, "MISC_ARGS", kMilesBit,
              memory.dropCheckpointPageCacheAfterLoad, true, ""),
    RP_ENUM("--colocate-memory-peak-device", fields::kMemoryColocateMemoryPeakDevice, "MISC_ARGS",
            kMilesBit, memory.colocateMemoryPeakDevice, PeakDevice::Cpu, "", PeakDevice::Cpu,
            PeakDevice::Gpu),
    RP_SWITCH("--reload-rollout-weights-from-disk", fields::kMemoryReloadRolloutWeightsFromDisk,
              "MISC_ARGS", kMilesBit, memory.reloadRolloutWeightsFromDisk, true, ""),
    RP_SWITCH("--disable-weights-backuper", fields::kMemoryDisableWeightsBackuper, "MISC_ARGS",
              kTrainBits, memory.disableWeightsBackuper, true, ""),
    {"--update-weight-buffer-size", fields::kMemoryUpdateWeightBufferGb, "MISC_ARGS", kTrainBits,
     false,
     [](const Recipe& r, bool, Out& out) {
         if (r.memory.updateWeightBufferGb != MemoryFlags{}.updateWeightBufferGb)
             push(out, "--update-weight-buffer-size",
                  {formatInt(std::llround(r.memory.updateWeightBufferGb * 1e9))});
     },
     [](Recipe& r, const Values& v, std::string& why) {
         double bytes = 0;
         if (!setDouble(v, bytes, why))
             return false;
         r.memory.updateWeightBufferGb = bytes / 1e9;
         return true;
     },
     "bytes on the command line, decimal GB in the recipe"},
    // --- options of the miles Python launcher (python scripts/run_*.py) ------------------------
    RP_STRING("--model-variant", fields::kModelVariant, "SCRIPT_ARGS", kScriptBit, model.variant,
              ""),
    RP_INT("--num-nodes", fields::kClusterNodes, "SCRIPT_ARGS", kScriptBit, false, cluster.nodes, 1,
           ""),
    {"--hardware", fields::kHardwareGpu, "SCRIPT_ARGS", kScriptBit, false,
     [](const Recipe& r, bool, Out& out) {
         // only launchers that have the option (run_qwen3_8.py): the others reject it
         const MilesLauncherFacts* facts = milesLauncherFacts(r.launcher.script);
         if (facts != nullptr && !facts->hardware.empty() && !r.hardware.gpu.empty())
             push(out, "--hardware", {r.hardware.gpu});
     },
     [](Recipe& r, const Values& v, std::string& why) { return setString(v, r.hardware.gpu, why); },
     "launchers that take it (run_qwen3_8.py: B300 or GB300; B300 adds the full engine CPU "
     "backup)"},
    {"--lora", fields::kLoraRank, "SCRIPT_ARGS", kScriptBit, false,
     [](const Recipe& r, bool, Out& out) {
         if (r.lora.rank > 0)
             push(out, "--lora");
     },
     [](Recipe&, const Values& v, std::string& why) {
         bool on = false;
         return setSwitch(v, on, true, why);  // the rank comes with --lora-rank
     },
     "switch; the rank comes with --lora-rank"},
    RP_SWITCH("--recompute", fields::kTrainerRecompute, "SCRIPT_ARGS", kScriptBit,
              trainer.recompute, true, ""),
    RP_STRING("--model-dir", fields::kCheckpointsModelDir, "SCRIPT_ARGS", kScriptBit,
              checkpoints.modelDir, ""),
};

#undef RP_INT
#undef RP_OPT_INT
#undef RP_DOUBLE
#undef RP_OPT_DOUBLE
#undef RP_STRING
#undef RP_SWITCH
#undef RP_ENUM
#undef RP_INT_LIST

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

#define SLOT(PATH, MEMBER)                                            \
    FieldSlot {                                                       \
        PATH, [](const Recipe& f, Recipe& t) { t.MEMBER = f.MEMBER; } \
    }
// A scalar field: copied through its row of the recipe field table (recipe_fields.h).
#define FIELD(PATH)                                                                  \
    FieldSlot {                                                                      \
        PATH, [](const Recipe& f, Recipe& t) { plan::recipeField(PATH).copy(f, t); } \
    }

const FieldSlot kSlots[] = {
    FIELD(fields::kName),
    FIELD(fields::kDescription),
    FIELD(fields::kFramework),
    SLOT(parts::kModel, model),
    FIELD(fields::kHardwareGpu),
    FIELD(fields::kHardwareGpuMemoryGb),
    FIELD(fields::kHardwareGpusPerNode),
    FIELD(fields::kHardwareHostRamGb),
    FIELD(fields::kHardwareCpuArch),
    FIELD(fields::kHardwareNvlink),
    FIELD(fields::kHardwareAssumed),
    FIELD(fields::kClusterNodes),
    FIELD(fields::kClusterMasterAddr),
    FIELD(fields::kClusterRayObjectStoreFraction),
    FIELD(fields::kPlacement),
    FIELD(fields::kTrainerBackend),
    FIELD(fields::kTrainerNodes),
    FIELD(fields::kTrainerGpusPerNode),
    FIELD(fields::kTrainerTp),
    FIELD(fields::kTrainerPp),
    FIELD(fields::kTrainerCp),
    FIELD(fields::kTrainerEp),
    FIELD(fields::kTrainerEtp),
    FIELD(fields::kTrainerSequenceParallel),
    FIELD(fields::kTrainerDecoderFirstPipelineNumLayers),
    FIELD(fields::kTrainerDecoderLastPipelineNumLayers),
    FIELD(fields::kTrainerNumLayersPerVirtualStage),
    FIELD(fields::kTrainerRecompute),
    FIELD(fields::kRolloutEngine),
    FIELD(fields::kRolloutNumGpus),
    FIELD(fields::kRolloutGpusPerEngine),
    FIELD(fields::kRolloutEngines),
    FIELD(fields::kRolloutPpSize),
    FIELD(fields::kRolloutDpSize),
    FIELD(fields::kRolloutEpSize),
    FIELD(fields::kRolloutDpAttention),
    FIELD(fields::kRolloutExpertParallel),
    FIELD(fields::kRolloutEplbEnabled),
    FIELD(fields::kRolloutEplbRedundantExperts),
    FIELD(fields::kRolloutMemFraction),
    FIELD(fields::kRolloutCudaGraph),
    FIELD(fields::kRolloutCudaGraphSizes),
    FIELD(fields::kRolloutCudaGraphMaxBs),
    FIELD(fields::kRolloutWeightDtype),
    FIELD(fields::kRolloutQuantScope),
    FIELD(fields::kRolloutMaxResponseLen),
    FIELD(fields::kRolloutMaxContextLen),
    FIELD(fields::kRolloutMaxPromptLen),
    FIELD(fields::kRolloutTemperature),
    FIELD(fields::kRolloutMoeBackend),
    FIELD(fields::kRolloutLoraBackend),
    FIELD(fields::kBatchRolloutBatchSize),
    FIELD(fields::kBatchNSamplesPerPrompt),
    FIELD(fields::kBatchGlobalBatchSize),
    FIELD(fields::kBatchNumStepsPerRollout),
    FIELD(fields::kBatchMicroBatchSize),
    FIELD(fields::kBatchDynamicBatchSize),
    FIELD(fields::kBatchMaxTokensPerGpu),
    FIELD(fields::kBatchOverSamplingBatchSize),
    FIELD(fields::kBatchNumRollout),
    FIELD(fields::kBatchNumEpoch),
    FIELD(fields::kAlgorithmAdvantageEstimator),
    FIELD(fields::kAlgorithmUseKlLoss),
    FIELD(fields::kAlgorithmKlLossCoef),
    FIELD(fields::kAlgorithmKlLossType),
    FIELD(fields::kAlgorithmKlCoef),
    FIELD(fields::kAlgorithmEpsClip),
    FIELD(fields::kAlgorithmEpsClipHigh),
    FIELD(fields::kAlgorithmEntropyCoef),
    FIELD(fields::kAlgorithmUseTis),
    FIELD(fields::kAlgorithmNormalizeAdvantages),
    FIELD(fields::kAlgorithmUseRolloutLogprobs),
    FIELD(fields::kAlgorithmUseOpd),
    FIELD(fields::kAlgorithmOpdType),
    SLOT(parts::kWeightUpdate, weightUpdate),
    FIELD(fields::kAlgorithmLr),
    FIELD(fields::kOptimizerKind),
    FIELD(fields::kOptimizerDistributed),
    FIELD(fields::kOptimizerCpuOffload),
    SLOT(fields::kOptimizerOverlapCpuOptimizerD2hH2d, optimizer.overlapCpuOptimizerD2hH2d),
    FIELD(fields::kOptimizerPrecisionAware),
    FIELD(fields::kOptimizerOffloadFraction),
    FIELD(fields::kLoraRank),
    FIELD(fields::kLoraAlpha),
    FIELD(fields::kLoraDropout),
    FIELD(fields::kLoraTargetModules),
    FIELD(fields::kLoraBaseCpuBackup),
    FIELD(fields::kMemoryOffloadTrain),
    FIELD(fields::kMemoryOffloadRollout),
    FIELD(fields::kMemoryOffloadTrainTarget),
    FIELD(fields::kMemoryDropCheckpointPageCacheAfterLoad),
    FIELD(fields::kMemoryColocateMemoryPeakDevice),
    FIELD(fields::kMemoryBackupMode),
    FIELD(fields::kMemoryReloadRolloutWeightsFromDisk),
    FIELD(fields::kMemoryDisableWeightsBackuper),
    FIELD(fields::kMemoryUpdateWeightBufferGb),
    FIELD(fields::kEnvironmentNcclVersion),
    FIELD(fields::kEnvironmentNcclSoPath),
    FIELD(fields::kCheckpointsModelDir),
    FIELD(fields::kCheckpointsHfCheckpoint),
    FIELD(fields::kCheckpointsRefLoad),
    FIELD(fields::kCheckpointsLoad),
    FIELD(fields::kCheckpointsSave),
    FIELD(fields::kCheckpointsSaveInterval),
    FIELD(fields::kCheckpointsConvertedEp),
    FIELD(fields::kCheckpointsNoSaveOptim),
    FIELD(fields::kCheckpointsNoLoadOptim),
    FIELD(fields::kCheckpointsOpdTeacherLoad),
    FIELD(fields::kEvalInterval),
    SLOT(parts::kEvalDatasets, eval.datasets),
    FIELD(fields::kEvalNSamplesPerEvalPrompt),
    FIELD(fields::kEvalMaxResponseLen),
    FIELD(fields::kEvalSkipEvalBeforeTrain),
    SLOT(parts::kLauncher, launcher),
};

#undef FIELD
#undef SLOT

const FieldPath kReconciled[] = {
    fields::kFramework,
    parts::kModel,
    parts::kLauncher,
    fields::kHardwareGpusPerNode,
    fields::kHardwareGpu,
    fields::kClusterNodes,
    fields::kClusterMasterAddr,
    fields::kTrainerNodes,
    fields::kTrainerGpusPerNode,
    fields::kRolloutEngine,
    fields::kEnvironmentNcclSoPath,
};

}  // namespace

unsigned flavourBit(Flavour flavour) {
    switch (flavour) {
        case Flavour::Slime:
            return kSlimeBit;
        case Flavour::Vime:
            return kVimeBit;
        case Flavour::Miles:
            return kMilesBit;
    }
    return 0;
}

void emitFor(const FlagRule& rule, const Recipe& r, bool milesScript, bool always,
             std::vector<FlagValues>& out) {
    if (rule.emit == nullptr) {
        return;
    }
    if (milesScript && ((rule.field == fields::kTrainerNodes && !r.trainer.nodes) ||
                        (rule.field == fields::kTrainerGpusPerNode && !r.trainer.gpusPerNode))) {
        return;
    }
    rule.emit(r, always, out);
}

std::span<const FlagRule> flagRules() {
    return kRules;
}

// Other spellings of engine flags: SGLang's ServerArgs accepts --ep / --expert-parallel-size for
// --ep-size, --dp / --data-parallel-size for --dp-size, --pipeline-parallel-size for --pp-size and
// --tp / --tensor-parallel-size for --tp-size; slime and miles expose each as --sglang-<spelling>.
// vime exposes vLLM's --<flag> as --vllm-<flag>; vLLM's short forms -pp / -dp / -tp become
// --vllm-pp / --vllm-dp. Import reads an alias as its rule and records the spelling in
// launcher.flag_spellings; export writes the recorded spelling, else the rule's.
namespace {
constexpr std::pair<std::string_view, std::string_view> kFlagAliases[] = {
    {"--sglang-ep", "--sglang-ep-size"},
    {"--sglang-expert-parallel-size", "--sglang-ep-size"},
    {"--sglang-dp", "--sglang-dp-size"},
    {"--sglang-data-parallel-size", "--sglang-dp-size"},
    {"--sglang-pipeline-parallel-size", "--sglang-pp-size"},
    {"--vllm-pp", "--vllm-pipeline-parallel-size"},
    {"--vllm-dp", "--vllm-data-parallel-size"},
};

}  // namespace

std::string_view canonicalFlag(std::string_view flag) {
    for (const auto& [alias, canonical] : kFlagAliases) {
        if (flag == alias) {
            return canonical;
        }
    }
    return flag;
}

bool isFlagAlias(std::string_view flag) {
    return canonicalFlag(flag) != flag;
}

bool applyFlag(const FlagRule& rule, std::string_view spelling, Recipe& r,
               const std::vector<std::string>& values, std::string& why) {
    if (rule.apply == nullptr || !rule.apply(r, values, why)) {
        return false;
    }
    if (canonicalFlag(spelling) != rule.flag) {
        return true;  // a miles launcher option ("--tp"): no alias of the rule's flag
    }
    auto& spellings = r.launcher.flagSpellings;
    std::erase_if(spellings, [&](const std::string& s) {
        return s != spelling && canonicalFlag(s) == rule.flag;
    });
    if (spelling != rule.flag &&
        std::find(spellings.begin(), spellings.end(), spelling) == spellings.end()) {
        spellings.emplace_back(spelling);
    }
    return true;
}

std::string spelledFlag(const Recipe& r, std::string_view flag) {
    for (const auto& s : r.launcher.flagSpellings) {
        if (s != flag && canonicalFlag(s) == flag) {
            return s;
        }
    }
    return std::string(flag);
}

const FlagRule* findRule(std::string_view flag) {
    flag = canonicalFlag(flag);
    for (const auto& rule : kRules) {
        if (flag == rule.flag && (rule.flavours & kTrainBits) != 0) {
            return &rule;
        }
    }
    return nullptr;
}

const FlagRule* findScriptOption(std::string_view option) {
    for (const auto& opt : kScriptOptions) {
        if (option == opt.option) {
            for (const auto& rule : kRules) {
                if (std::string_view(rule.flag) == opt.rule) {
                    return &rule;
                }
            }
        }
    }
    return nullptr;
}

std::span<const ScriptOption> scriptOptions() {
    return kScriptOptions;
}

std::span<const FieldSlot> fieldSlots() {
    return kSlots;
}

bool isReconciledField(std::string_view path) {
    for (const FieldPath p : kReconciled) {
        if (path == p.view()) {
            return true;
        }
    }
    return false;
}

bool fieldHasFlag(std::string_view path, unsigned bits) {
    for (const auto& rule : kRules) {
        if ((rule.flavours & bits) != 0 && rule.emit != nullptr && path == rule.field.view()) {
            return true;
        }
    }
    return false;
}

}  // namespace runplane::plan::launch::detail
