// Rules on batching, the schedule, eval/save cadence and the rollout engines.

#include <algorithm>

#include "backend/plan/detail/recipe_flags.h"
#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {
std::string str(int v) {
    return std::to_string(v);
}
}  // namespace

void checkBatch(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const Batch& b = r.batch;
    const Layout& l = ctx.layout;
    if (b.rolloutBatchSize < 1 || b.nSamplesPerPrompt < 1 || b.microBatchSize < 1) {
        ctx.emit("batch.positive", fields::kBatchRolloutBatchSize,
                 "rollout_batch_size (" + str(b.rolloutBatchSize) + "), n_samples_per_prompt (" +
                     str(b.nSamplesPerPrompt) + ") and micro_batch_size (" + str(b.microBatchSize) +
                     ") must be >= 1",
                 "use positive batch sizes");
        return;
    }
    if (const RecipeFlags flags(r);
        flags.runTime("--rollout-batch-size") || flags.runTime("--global-batch-size")) {
        // the batch sizes are computed on the node (`ROLLOUT_BATCH_SIZE=$((8 * NUM_GPUS))`, a
        // pre-launch step; batch.rollout_batch_size holds a stand-in): nothing to check before
        // the job starts (issue 45)
        return;
    }
    const int samples = b.rolloutBatchSize * b.nSamplesPerPrompt;
    const std::string samplesText =
        str(b.rolloutBatchSize) + " x " + str(b.nSamplesPerPrompt) + " = " + str(samples);
    int gbs = 0;
    if (b.globalBatchSize.has_value() && b.numStepsPerRollout.has_value()) {
        const int steps = *b.numStepsPerRollout;
        if (steps < 1 || *b.globalBatchSize * steps != samples) {
            ctx.emit("batch.identity", fields::kBatchGlobalBatchSize,
                     "rollout_batch_size x n_samples_per_prompt (" + samplesText +
                         ") != global_batch_size x num_steps_per_rollout (" +
                         str(*b.globalBatchSize) + " x " + str(steps) + " = " +
                         str(*b.globalBatchSize * steps) + ")",
                     "give only one of them, or make global_batch_size = " +
                         str(steps > 0 ? samples / steps : samples));
        }
        gbs = *b.globalBatchSize;
    } else if (b.globalBatchSize.has_value()) {
        gbs = *b.globalBatchSize;
        if (gbs < 1 || gbs > samples) {
            ctx.emit("batch.identity", fields::kBatchGlobalBatchSize,
                     "Not enough samples " + str(samples) + " for global_batch_size " + str(gbs) +
                         " (rollout_batch_size x n_samples_per_prompt = " + samplesText + ")",
                     "set global_batch_size = " + str(samples) + " (one step per rollout)");
        } else if (samples % gbs != 0) {
            ctx.emit("batch.identity", fields::kBatchGlobalBatchSize,
                     "rollout_batch_size x n_samples_per_prompt (" + samplesText +
                         ") is not a multiple of global_batch_size (" + str(gbs) + "); " +
                         str(samples % gbs) + " samples per rollout are dropped",
                     "make global_batch_size divide " + str(samples));
        }
    } else if (b.numStepsPerRollout.has_value()) {
        const int steps = *b.numStepsPerRollout;
        if (steps < 1 || samples % steps != 0) {
            ctx.emit("batch.identity", fields::kBatchNumStepsPerRollout,
                     "rollout_batch_size x n_samples_per_prompt (" + samplesText +
                         ") is not divisible by num_steps_per_rollout (" + str(steps) + ")",
                     "pick steps that divide " + str(samples));
        } else {
            gbs = samples / steps;
        }
    } else {
        const int fallback = b.microBatchSize * std::max(l.dp, 1);
        ctx.emit("batch.identity", fields::kBatchGlobalBatchSize,
                 "neither global_batch_size nor num_steps_per_rollout is given; Megatron would "
                 "default global_batch_size to micro_batch_size x DP = " +
                     str(fallback) + " (" + str(samples / std::max(fallback, 1)) +
                     " optimizer steps per rollout)",
                 "set global_batch_size = " + str(samples) +
                     " (rollout_batch_size x "
                     "n_samples_per_prompt)");
    }
    if (gbs > 0 && l.dp > 0) {
        const int unit = b.microBatchSize * l.dp;
        if (gbs < l.dp) {
            ctx.emit("batch.micro-batch", fields::kBatchGlobalBatchSize,
                     "global_batch_size (" + str(gbs) + ") is smaller than DP (" + str(l.dp) +
                         "): every step needs at least one sample per data-parallel rank",
                     "raise global_batch_size to a multiple of " + str(unit));
        } else if (gbs % unit != 0) {
            ctx.emit("batch.micro-batch", fields::kBatchGlobalBatchSize,
                     "global_batch_size (" + str(gbs) +
                         ") is not divisible by micro_batch_size x "
                         "DP = " +
                         str(b.microBatchSize) + " x " + str(l.dp) + " = " + str(unit),
                     "make global_batch_size a multiple of " + str(unit));
        } else if (!b.dynamicBatchSize && r.trainer.numLayersPerVirtualStage.has_value() &&
                   l.pp > 1 && gbs % (unit * l.pp) != 0) {
            ctx.emit("batch.static-schedule", fields::kBatchMicroBatchSize,
                     "static batching with virtual pipeline stages needs global_batch_size (" +
                         str(gbs) +
                         ") divisible by DP x micro_batch_size x PP = " + str(unit * l.pp),
                     "enable dynamic_batch_size or adjust global_batch_size");
        }
    }
    if (b.dynamicBatchSize && !b.maxTokensPerGpu.has_value()) {
        ctx.emit("batch.dynamic-needs-max-tokens", fields::kBatchMaxTokensPerGpu,
                 "dynamic_batch_size needs max_tokens_per_gpu",
                 "start at rollout max_response_len / CP" +
                     (r.rollout.maxResponseLen.has_value()
                          ? " = " + str(*r.rollout.maxResponseLen / std::max(l.cp, 1))
                          : std::string()));
    }
    if (b.dynamicBatchSize && b.maxTokensPerGpu.has_value() &&
        r.rollout.maxResponseLen.has_value()) {
        const int start = *r.rollout.maxResponseLen / std::max(l.cp, 1);
        if (*b.maxTokensPerGpu < start) {
            ctx.emit("batch.max-tokens-budget", fields::kBatchMaxTokensPerGpu,
                     "max_tokens_per_gpu (" + str(*b.maxTokensPerGpu) +
                         ") is below max_response_len / CP = " + str(*r.rollout.maxResponseLen) +
                         " / " + str(l.cp) + " = " + str(start) +
                         ": longer samples get a micro-batch of their own",
                     "raise max_tokens_per_gpu to >= " + str(start) + " or raise CP");
        }
    }
    if (b.overSamplingBatchSize.has_value() && *b.overSamplingBatchSize < b.rolloutBatchSize) {
        ctx.emit("batch.over-sampling", fields::kBatchOverSamplingBatchSize,
                 "over_sampling_batch_size (" + str(*b.overSamplingBatchSize) +
                     ") < rollout_batch_size (" + str(b.rolloutBatchSize) + ")",
                 "use >= " + str(b.rolloutBatchSize) + " (default: equal)");
    }
    if (b.nSamplesPerPrompt == 1 && r.algorithm.advantageEstimator == AdvantageEstimator::Grpo) {
        ctx.emit("batch.group-size-one", fields::kBatchNSamplesPerPrompt,
                 "n_samples_per_prompt is 1: GRPO std normalization is disabled",
                 "use >= 2 samples per prompt for group-relative advantages");
    }
    if (!b.numRollout.has_value() && !b.numEpoch.has_value()) {
        ctx.emit("batch.num-rollout", fields::kBatchNumRollout,
                 "neither num_rollout nor num_epoch is given", "set batch.num_rollout");
    }
    // a lone --eval-prompt-data PATH (no NAME) stays in extra_args: data all the same; so is
    // --eval-config FILE, a YAML naming the eval datasets (slime examples/eval_multi_task)
    const bool evalDataInExtras =
        std::any_of(r.extraArgs.begin(), r.extraArgs.end(), [](const ExtraArg& e) {
            return e.flag == "--eval-prompt-data" || e.flag == "--eval-config";
        });
    if (r.eval.interval.has_value() && r.eval.datasets.empty() && !evalDataInExtras) {
        ctx.emit("eval.needs-data", fields::kEvalInterval,
                 "eval.interval is " + str(*r.eval.interval) + " but no eval datasets are given",
                 "add eval.datasets: [{name: aime, path: ...}]");
    }
    if (r.checkpoints.saveInterval.has_value() && r.checkpoints.save.empty()) {
        ctx.emit("checkpoints.save-needs-path", fields::kCheckpointsSaveInterval,
                 "save_interval is " + str(*r.checkpoints.saveInterval) +
                     " but checkpoints.save is empty",
                 "set checkpoints.save");
    }
    if (r.rollout.temperature <= 0) {
        ctx.emit("rollout.temperature", fields::kRolloutTemperature,
                 "rollout temperature is " + num(r.rollout.temperature) +
                     "; greedy sampling (0) is rejected",
                 "use a temperature > 0 (default 1.0)");
    }
    if (r.rollout.maxPromptLen.has_value() && r.rollout.maxContextLen.has_value() &&
        *r.rollout.maxPromptLen > *r.rollout.maxContextLen - 1) {
        ctx.emit("rollout.prompt-len", fields::kRolloutMaxPromptLen,
                 "max_prompt_len (" + str(*r.rollout.maxPromptLen) + ") > max_context_len - 1 (" +
                     str(*r.rollout.maxContextLen - 1) + ")",
                 "lower max_prompt_len");
    }
}

void checkRollout(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const Rollout& o = r.rollout;
    const Layout& l = ctx.layout;
    const ModelShape& s = ctx.shape;
    const RolloutEngine want =
        r.framework == Framework::Vime ? RolloutEngine::Vllm : RolloutEngine::Sglang;
    if (l.engine != want) {
        ctx.emit("rollout.engine-framework", fields::kRolloutEngine,
                 std::string(toString(r.framework)) + " runs " + toString(want) + " engines, not " +
                     toString(l.engine),
                 std::string("set rollout.engine: ") + toString(want));
    }
    if (o.gpusPerEngine < 1) {
        ctx.emit("rollout.engine-divisible", fields::kRolloutGpusPerEngine,
                 "gpus_per_engine must be >= 1, got " + str(o.gpusPerEngine), "use >= 1");
        return;
    }
    if (l.rolloutGpus > 0 && l.rolloutGpus % o.gpusPerEngine != 0) {
        ctx.emit("rollout.engine-divisible", fields::kRolloutGpusPerEngine,
                 "rollout GPUs (" + str(l.rolloutGpus) +
                     ") are not divisible by gpus_per_engine (" + str(o.gpusPerEngine) + ")",
                 "pick gpus_per_engine dividing " + str(l.rolloutGpus));
    } else if (o.engines.has_value() && *o.engines != l.engines) {
        ctx.emit("rollout.engines-count", fields::kRolloutEngines,
                 "rollout.engines is " + str(*o.engines) +
                     " but rollout GPUs / gpus_per_engine = " + str(l.rolloutGpus) + " / " +
                     str(o.gpusPerEngine) + " = " + str(l.engines),
                 "remove rollout.engines or fix the GPU counts");
    }
    if (o.ppSize < 1 || o.gpusPerEngine % o.ppSize != 0) {
        ctx.emit("rollout.pp-divides", fields::kRolloutPpSize,
                 "gpus_per_engine (" + str(o.gpusPerEngine) + ") is not divisible by pp_size (" +
                     str(o.ppSize) + ")",
                 "pick a pp_size dividing " + str(o.gpusPerEngine));
    }
    if (l.engine == RolloutEngine::Sglang) {
        if (o.dpSize > 1 && !o.dpAttention) {
            ctx.emit("rollout.dp-attention", fields::kRolloutDpAttention,
                     "SGLang dp_size " + str(o.dpSize) + " needs dp_attention",
                     "set rollout.dp_attention: true");
        }
        if (o.dpSize < 1 || o.gpusPerEngine % o.dpSize != 0) {
            ctx.emit("rollout.dp-divides", fields::kRolloutDpSize,
                     "dp_size (" + str(o.dpSize) + ") does not divide gpus_per_engine (" +
                         str(o.gpusPerEngine) + ")",
                     "pick a dp_size dividing " + str(o.gpusPerEngine));
        }
        if (o.epSize < 1 || o.gpusPerEngine % o.epSize != 0) {
            ctx.emit("rollout.ep-divides", fields::kRolloutEpSize,
                     "ep_size (" + str(o.epSize) + ") does not divide gpus_per_engine (" +
                         str(o.gpusPerEngine) + ")",
                     "pick an ep_size dividing " + str(o.gpusPerEngine));
        }
    } else if (o.dpSize < 1 || o.ppSize < 1 || o.gpusPerEngine % (o.dpSize * o.ppSize) != 0) {
        ctx.emit("rollout.dp-divides", fields::kRolloutDpSize,
                 "vLLM needs TP x DP x PP = gpus_per_engine, but dp_size " + str(o.dpSize) +
                     " x pp_size " + str(o.ppSize) + " does not divide " + str(o.gpusPerEngine),
                 "pick dp_size x pp_size dividing " + str(o.gpusPerEngine));
    }
    // Engine expert parallelism and EPLB redundancy.
    const int redundant =
        o.eplb.enabled || l.engine == RolloutEngine::Sglang ? o.eplb.redundantExperts : 0;
    if (l.engineEp > 1 && s.isMoe()) {
        const int total = s.numExperts + redundant;
        if (total % l.engineEp != 0) {
            const int needed = (l.engineEp - s.numExperts % l.engineEp) % l.engineEp;
            ctx.emit("rollout.engine-ep-experts", fields::kRolloutEplbRedundantExperts,
                     "engine EP " + str(l.engineEp) + " does not divide num_experts" +
                         (redundant > 0 ? " + redundant experts (" + str(s.numExperts) + " + " +
                                              str(redundant) + " = " + str(total) + ")"
                                        : " (" + str(s.numExperts) + ")"),
                     "enable EPLB with " + str(needed) + " redundant experts (" +
                         str(s.numExperts) + " + " + str(needed) + " = " +
                         str(s.numExperts + needed) + " = " + str(l.engineEp) + " x " +
                         str((s.numExperts + needed) / l.engineEp) + ")");
        }
    }
    if (o.eplb.enabled && (l.engineEp <= 1 || !s.isMoe())) {
        ctx.emit("rollout.eplb", fields::kRolloutEplbEnabled,
                 "EPLB is enabled but the engine has no expert parallelism (engine EP " +
                     str(l.engineEp) + (s.isMoe() ? "" : ", dense model") + ")",
                 l.engine == RolloutEngine::Vllm ? "set rollout.expert_parallel: true"
                                                 : "set rollout.ep_size");
    } else if (l.engine == RolloutEngine::Vllm && !o.eplb.enabled && o.eplb.redundantExperts > 0) {
        ctx.emit("rollout.eplb", fields::kRolloutEplbRedundantExperts,
                 "redundant_experts is " + str(o.eplb.redundantExperts) +
                     " but vLLM only uses them with eplb.enabled",
                 "set rollout.eplb.enabled: true");
    }
    if (o.memFraction <= 0 || o.memFraction > 1) {
        ctx.emit("rollout.mem-fraction", fields::kRolloutMemFraction,
                 "mem_fraction must be in (0, 1], got " + num(o.memFraction), "use 0.7");
    } else if (l.colocate && o.memFraction > 0.8) {
        ctx.emit("rollout.mem-fraction", Severity::Warning, fields::kRolloutMemFraction,
                 "colocated engines share the GPU with Megatron's allocations; mem_fraction " +
                     num(o.memFraction) + " > 0.8",
                 "use 0.8 or lower (0.7 typical, 0.6 on OOM)");
    }
    if (l.colocate && (r.memory.offloadTrain == false || r.memory.offloadRollout == false)) {
        ctx.emit("placement.colocate-offload",
                 r.memory.offloadTrain == false ? fields::kMemoryOffloadTrain
                                                : fields::kMemoryOffloadRollout,
                 "colocate with offload turned off keeps trainer and engines on the GPU together",
                 "leave offload_train / offload_rollout at their default (on under colocate)");
    }
    const bool diskElsewhere = r.trainer.backend != TrainBackend::Megatron || !offloadTrainOn(r);
    if (r.memory.offloadTrainTarget == OffloadTarget::Disk && !diskElsewhere &&
        r.framework != Framework::Miles && r.frameworkAssumed) {
        // only the framework is wrong, and it is the importer's assumption
        ctx.emitOneFramework("placement.offload-disk", fields::kMemoryOffloadTrainTarget.str(),
                             "offload_train_target disk needs miles",
                             "use offload_train_target: cpu");
    } else if (r.memory.offloadTrainTarget == OffloadTarget::Disk &&
               (r.framework != Framework::Miles || diskElsewhere)) {
        ctx.emit("placement.offload-disk", fields::kMemoryOffloadTrainTarget,
                 "offload_train_target disk needs miles, the Megatron backend and offload_train",
                 "use offload_train_target: cpu");
    }
}

}  // namespace runplane::plan::detail
