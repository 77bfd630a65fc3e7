// The trainer's rows of the flag table (flag_rules.h): cluster and placement, trainer
// parallelism, rollout and batch, eval, checkpoints, algorithm, weight update, optimizer. A
// valueFlag / switchFlag row maps its field through the recipe field table; the others have code
// of their own, for the reason in their note (an effective value, several flags at once, pairs).

#include "backend/launch/flag_rows.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

constexpr FlagRule kRows[] = {
    // --- cluster / placement -----------------------------------------------------------------
    {"--actor-num-nodes", fields::kTrainerNodes, "CLUSTER_ARGS", kTrainBits, false,
     [](const FlagRule&, const Recipe& r, bool always, Out& out) {
         if (always || r.trainer.nodes || trainerNodes(r) != 1)
             push(out, "--actor-num-nodes", {formatInt(trainerNodes(r))});
     },
     &applyValue,
     "effective trainer nodes (written when set or not 1); explicitness kept in runplane-meta"},
    {"--actor-num-gpus-per-node", fields::kTrainerGpusPerNode, "CLUSTER_ARGS", kTrainBits, false,
     [](const FlagRule&, const Recipe& r, bool always, Out& out) {
         if (always || r.trainer.gpusPerNode || trainerGpusPerNode(r) != 8)
             push(out, "--actor-num-gpus-per-node", {formatInt(trainerGpusPerNode(r))});
     },
     &applyValue, "effective trainer GPUs per node (written when set or not 8)"},
    {"--num-gpus-per-node", fields::kHardwareGpusPerNode, "CLUSTER_ARGS", kTrainBits, false,
     [](const FlagRule&, const Recipe& r, bool always, Out& out) {
         const int g = r.hardware.gpusPerNode;
         if (always || g != 8 || g != trainerGpusPerNode(r))
             push(out, "--num-gpus-per-node", {formatInt(g)});
     },
     &applyValue, "rollout placement; written when not 8 or not the trainer's"},
    switchFlag("--colocate", fields::kPlacement, "CLUSTER_ARGS", kTrainBits, "colocate"),
    valueFlag("--rollout-num-gpus", fields::kRolloutNumGpus, "CLUSTER_ARGS", kTrainBits),
    valueFlag("--train-backend", fields::kTrainerBackend, "CLUSTER_ARGS",
              kSlimeBit | kMilesBit | kVimeBit),
    // --- trainer parallelism -------------------------------------------------------------------
    valueFlag("--tensor-model-parallel-size", fields::kTrainerTp, "PERF_ARGS", kTrainBits),
    switchFlag("--sequence-parallel", fields::kTrainerSequenceParallel, "PERF_ARGS", kTrainBits,
               "true"),
    valueFlag("--pipeline-model-parallel-size", fields::kTrainerPp, "PERF_ARGS", kTrainBits),
    valueFlag("--context-parallel-size", fields::kTrainerCp, "PERF_ARGS", kTrainBits),
    valueFlag("--expert-model-parallel-size", fields::kTrainerEp, "PERF_ARGS", kTrainBits),
    valueFlag("--expert-tensor-parallel-size", fields::kTrainerEtp, "PERF_ARGS", kTrainBits,
              "written only when the recipe sets etp"),
    valueFlag("--decoder-first-pipeline-num-layers", fields::kTrainerDecoderFirstPipelineNumLayers,
              "PERF_ARGS", kTrainBits),
    valueFlag("--decoder-last-pipeline-num-layers", fields::kTrainerDecoderLastPipelineNumLayers,
              "PERF_ARGS", kTrainBits),
    valueFlag("--num-layers-per-virtual-pipeline-stage", fields::kTrainerNumLayersPerVirtualStage,
              "PERF_ARGS", kTrainBits),
    {"--recompute-granularity", fields::kTrainerRecompute, "PERF_ARGS", kTrainBits, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (!r.trainer.recompute)
             return;
         push(out, "--recompute-granularity", {"full"});
         push(out, "--recompute-method", {"uniform"});
         push(out, "--recompute-num-layers", {"1"});
     },
     nullptr,
     "the three flags `full` / `uniform` / `1` together; any other form stays in extra_args"},
    valueFlag("--micro-batch-size", fields::kBatchMicroBatchSize, "PERF_ARGS", kTrainBits),
    switchFlag("--use-dynamic-batch-size", fields::kBatchDynamicBatchSize, "PERF_ARGS", kTrainBits,
               "true"),
    valueFlag("--max-tokens-per-gpu", fields::kBatchMaxTokensPerGpu, "PERF_ARGS", kTrainBits),
    // --- rollout / batch -----------------------------------------------------------------------
    valueFlag("--num-rollout", fields::kBatchNumRollout, "ROLLOUT_ARGS", kTrainBits),
    valueFlag("--num-epoch", fields::kBatchNumEpoch, "ROLLOUT_ARGS", kTrainBits),
    alwaysFlag("--rollout-batch-size", fields::kBatchRolloutBatchSize, "ROLLOUT_ARGS", kTrainBits),
    valueFlag("--n-samples-per-prompt", fields::kBatchNSamplesPerPrompt, "ROLLOUT_ARGS",
              kTrainBits),
    valueFlag("--global-batch-size", fields::kBatchGlobalBatchSize, "ROLLOUT_ARGS", kTrainBits),
    valueFlag("--num-steps-per-rollout", fields::kBatchNumStepsPerRollout, "ROLLOUT_ARGS",
              kTrainBits),
    valueFlag("--over-sampling-batch-size", fields::kBatchOverSamplingBatchSize, "ROLLOUT_ARGS",
              kTrainBits),
    valueFlag("--rollout-max-response-len", fields::kRolloutMaxResponseLen, "ROLLOUT_ARGS",
              kTrainBits),
    valueFlag("--rollout-max-context-len", fields::kRolloutMaxContextLen, "ROLLOUT_ARGS",
              kTrainBits),
    valueFlag("--rollout-max-prompt-len", fields::kRolloutMaxPromptLen, "ROLLOUT_ARGS", kTrainBits),
    valueFlag("--rollout-temperature", fields::kRolloutTemperature, "ROLLOUT_ARGS", kTrainBits),
    // --- eval ----------------------------------------------------------------------------------
    valueFlag("--eval-interval", fields::kEvalInterval, "EVAL_ARGS", kTrainBits),
    {"--eval-prompt-data", parts::kEvalDatasets, "EVAL_ARGS", kTrainBits, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.eval.datasets.empty())
             return;
         Values v;
         for (const auto& d : r.eval.datasets) {
             v.push_back(d.name);
             v.push_back(d.path);
         }
         push(out, "--eval-prompt-data", std::move(v));
     },
     [](const FlagRule&, Recipe& r, const Values& v, std::string& why) {
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
    valueFlag("--n-samples-per-eval-prompt", fields::kEvalNSamplesPerEvalPrompt, "EVAL_ARGS",
              kTrainBits),
    valueFlag("--eval-max-response-len", fields::kEvalMaxResponseLen, "EVAL_ARGS", kTrainBits),
    switchFlag("--skip-eval-before-train", fields::kEvalSkipEvalBeforeTrain, "EVAL_ARGS",
               kTrainBits, "true"),
    // --- checkpoints ---------------------------------------------------------------------------
    valueFlag("--hf-checkpoint", fields::kCheckpointsHfCheckpoint, "CKPT_ARGS", kTrainBits),
    valueFlag("--ref-load", fields::kCheckpointsRefLoad, "CKPT_ARGS", kTrainBits),
    valueFlag("--load", fields::kCheckpointsLoad, "CKPT_ARGS", kTrainBits),
    valueFlag("--save", fields::kCheckpointsSave, "CKPT_ARGS", kTrainBits),
    valueFlag("--save-interval", fields::kCheckpointsSaveInterval, "CKPT_ARGS", kTrainBits),
    switchFlag("--no-save-optim", fields::kCheckpointsNoSaveOptim, "CKPT_ARGS", kTrainBits, "true"),
    switchFlag("--no-load-optim", fields::kCheckpointsNoLoadOptim, "CKPT_ARGS", kTrainBits, "true"),
    // --- algorithm -----------------------------------------------------------------------------
    valueFlag("--advantage-estimator", fields::kAlgorithmAdvantageEstimator, "GRPO_ARGS",
              kTrainBits),
    switchFlag("--use-kl-loss", fields::kAlgorithmUseKlLoss, "GRPO_ARGS", kTrainBits, "true"),
    {"--kl-loss-coef", fields::kAlgorithmKlLossCoef, "GRPO_ARGS", kTrainBits, false,
     [](const FlagRule&, const Recipe& r, bool, Out& out) {
         if (r.algorithm.useKlLoss || r.algorithm.klLossCoef != 0.0)
             push(out, "--kl-loss-coef", {formatDouble(r.algorithm.klLossCoef)});
     },
     &applyValue, "written whenever the KL loss is on"},
    valueFlag("--kl-loss-type", fields::kAlgorithmKlLossType, "GRPO_ARGS", kTrainBits),
    valueFlag("--kl-coef", fields::kAlgorithmKlCoef, "GRPO_ARGS", kTrainBits),
    valueFlag("--entropy-coef", fields::kAlgorithmEntropyCoef, "GRPO_ARGS", kTrainBits),
    valueFlag("--eps-clip", fields::kAlgorithmEpsClip, "GRPO_ARGS", kTrainBits),
    valueFlag("--eps-clip-high", fields::kAlgorithmEpsClipHigh, "GRPO_ARGS", kTrainBits),
    switchFlag("--use-tis", fields::kAlgorithmUseTis, "GRPO_ARGS", kTrainBits, "true"),
    switchFlag("--normalize-advantages", fields::kAlgorithmNormalizeAdvantages, "GRPO_ARGS",
               kTrainBits, "true"),
    switchFlag("--use-rollout-logprobs", fields::kAlgorithmUseRolloutLogprobs, "GRPO_ARGS",
               kTrainBits, "true"),
    switchFlag("--use-opd", fields::kAlgorithmUseOpd, "GRPO_ARGS", kTrainBits, "true"),
    valueFlag("--opd-type", fields::kAlgorithmOpdType, "GRPO_ARGS", kTrainBits),
    valueFlag("--opd-teacher-load", fields::kCheckpointsOpdTeacherLoad, "CKPT_ARGS", kTrainBits),
    // --- weight update -------------------------------------------------------------------------
    valueFlag("--update-weight-mode", fields::kWeightUpdateMode, "MISC_ARGS", kTrainBits),
    valueFlag("--update-weight-transport", fields::kWeightUpdateTransport, "MISC_ARGS", kTrainBits),
    valueFlag("--update-weight-disk-dir", fields::kWeightUpdateDiskDir, "MISC_ARGS", kTrainBits),
    valueFlag("--update-weight-local-checkpoint-dir", fields::kWeightUpdateLocalCheckpointDir,
              "MISC_ARGS", kTrainBits),
    switchFlag("--release-train", fields::kWeightUpdateReleaseTrain, "MISC_ARGS", kTrainBits,
               "true"),
    // --- optimizer -----------------------------------------------------------------------------
    valueFlag("--optimizer", fields::kOptimizerKind, "OPTIMIZER_ARGS", kTrainBits),
    valueFlag("--lr", fields::kAlgorithmLr, "OPTIMIZER_ARGS", kTrainBits),
    switchFlag("--optimizer-cpu-offload", fields::kOptimizerCpuOffload, "OPTIMIZER_ARGS",
               kTrainBits, "true"),
    switchFlag("--overlap-cpu-optimizer-d2h-h2d", fields::kOptimizerOverlapCpuOptimizerD2hH2d,
               "OPTIMIZER_ARGS", kTrainBits, "true"),
    switchFlag("--use-precision-aware-optimizer", fields::kOptimizerPrecisionAware,
               "OPTIMIZER_ARGS", kTrainBits, "true"),
    valueFlag("--optimizer-offload-fraction", fields::kOptimizerOffloadFraction, "OPTIMIZER_ARGS",
              kTrainBits),
};

}  // namespace

std::span<const FlagRule> trainFlagRows() {
    return kRows;
}

}  // namespace runplane::plan::launch::detail
