// The checks of slime's slime_validate_args (and miles' copy) that the other rule files do not
// cover: on-policy distillation, algorithm switches, MTP, parameter lists, debug modes and the
// rollout data transport. Each message keeps the framework's wording; docs/rules.md lists the
// source line of each.

#include <algorithm>
#include <cmath>

#include "backend/plan/detail/framework_args.h"
#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {

void checkOpd(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const BoolSetting opd =
        boolSetting(flags, r.algorithm.useOpd, fields::kAlgorithmUseOpd, "--use-opd");
    const TextSetting teacher =
        textSetting(flags, r.checkpoints.opdTeacherLoad, fields::kCheckpointsOpdTeacherLoad,
                    "--opd-teacher-load");
    if (!opd.on) {
        if (teacher.given()) {
            ctx.emitField("opd.teacher-without-opd", teacher.field,
                          "--opd-teacher-load is set (" + teacher.value +
                              ") but --use-opd is not enabled. Please add --use-opd flag.",
                          "set algorithm.use_opd: true, or drop the teacher checkpoint");
        }
        return;
    }
    const TextSetting type =
        textSetting(flags, r.algorithm.opdType ? toString(*r.algorithm.opdType) : std::string(),
                    fields::kAlgorithmOpdType, "--opd-type");
    if (!type.given()) {
        ctx.emitField("opd.needs-type", type.field,
                      std::string("--opd-type must be specified when --use-opd is enabled. "
                                  "Choose '") +
                          (r.framework == Framework::Vime ? "vllm" : "sglang") + "' or 'megatron'.",
                      "set algorithm.opd_type: sglang (external teacher server) or megatron "
                      "(teacher loaded from checkpoints.opd_teacher_load)");
        return;
    }
    const std::string& t = type.value;
    // vime's own arguments.py (vllm-project/vime@035f9834 vime/utils/arguments.py,
    // vime_validate_args): the external teacher is a vLLM server, `--opd-type vllm`; its
    // message names 'vllm' or 'megatron'
    const bool vime = r.framework == Framework::Vime;
    const std::string external = vime ? "vllm" : "sglang";
    // slime's later examples (examples/on_policy_distillation) load several Megatron teachers
    // with the plural --opd-teacher-loads; either flag names the teacher checkpoint.
    const bool teachers = teacher.given() || flags.has("--opd-teacher-loads");
    if (t == "megatron") {
        if (!teachers) {
            ctx.emitField(
                "opd.megatron-teacher", teacher.field,
                "--opd-teacher-load is required when --opd-type=megatron. Please provide "
                "the path to the teacher model checkpoint.",
                "set checkpoints.opd_teacher_load to the teacher's torch_dist checkpoint");
        }
    } else if (t == external) {
        if (teacher.given()) {
            ctx.emitField("opd.sglang-no-teacher", teacher.field,
                          "--opd-teacher-load should not be set when --opd-type=" + external +
                              " (it is " + teacher.value + "). In " + external +
                              " mode, teacher log-probs are obtained from external "
                              "server during rollout.",
                          "drop checkpoints.opd_teacher_load, or use opd_type: megatron");
        }
    } else if (t == "self" && !vime) {
        // On-policy self-distillation (OPSD), used by slime's examples/on_policy_distillation
        // (run-qwen3-8B-opsd.sh): one model is student and teacher. The arguments.py read for
        // docs/rules.md predates it and lists only sglang and megatron; no check of its own was
        // read, so none is made.
    } else {
        ctx.emitField("opd.needs-type", type.field,
                      "argument --opd-type: invalid choice: '" + t + "' (choose from '" + external +
                          "', 'megatron')",
                      "set algorithm.opd_type: " + external + " or megatron");
    }
}

void checkAlgorithm(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const Algorithm& a = r.algorithm;
    const bool reinforce = a.advantageEstimator == AdvantageEstimator::ReinforcePlusPlus ||
                           a.advantageEstimator == AdvantageEstimator::ReinforcePlusPlusBaseline;
    if (reinforce && !a.normalizeAdvantages && !flags.on("--normalize-advantages")) {
        ctx.emit("algorithm.reinforce-normalize", fields::kAlgorithmNormalizeAdvantages,
                 std::string("The 'reinforce_plus_plus' and 'reinforce_plus_plus_baseline' "
                             "advantage estimators require advantage normalization (advantage "
                             "estimator is ") +
                     toString(a.advantageEstimator) + ")",
                 "set algorithm.normalize_advantages: true (--normalize-advantages)");
    }
    const BoolSetting logprobs =
        boolSetting(flags, a.useRolloutLogprobs, fields::kAlgorithmUseRolloutLogprobs,
                    "--use-rollout-logprobs");
    const BoolSetting tis = boolSetting(flags, a.useTis, fields::kAlgorithmUseTis, "--use-tis");
    // slime skips the check when the policy-gradient loss resolves to REINFORCE: --pg-loss-type
    // reinforce, or no --pg-loss-type with --use-score-centering (its default objective).
    const auto pgLoss = flags.value("--pg-loss-type");
    const bool reinforceLoss = pgLoss ? *pgLoss == "reinforce" : flags.on("--use-score-centering");
    if (logprobs.on && tis.on && !reinforceLoss) {
        ctx.emitField("algorithm.rollout-logprobs-tis", logprobs.field,
                      "use_rollout_logprobs and use_tis cannot be set at the same time.",
                      "drop one: TIS corrects with the trainer's recomputed log-probs");
    }
    if (flags.on("--get-mismatch-metrics") && !flags.has("--custom-tis-function-path")) {
        ctx.emitField("algorithm.mismatch-metrics-tis", flags.field("--get-mismatch-metrics"),
                      "get_mismatch_metrics is set but custom_tis_function_path is None. Using "
                      "default vanilla_tis_function for metrics calculation.",
                      "pass --custom-tis-function-path to measure with your own TIS function");
    }
    if (a.advantageEstimator == AdvantageEstimator::Cispo && a.epsClip < 1.0) {
        ctx.emit("algorithm.cispo-eps-clip", fields::kAlgorithmEpsClip,
                 "CISPO is canonically single-sided, but --eps-clip=" + num(a.epsClip) +
                     " keeps the lower clip bound " + num(1.0 - a.epsClip) + " active",
                 "set algorithm.eps_clip: 1.0 (and tune eps_clip_high, e.g. 4.0) for the "
                 "canonical wide setting");
    }
    if (a.advantageEstimator == AdvantageEstimator::Ppo && r.framework == Framework::Miles) {
        if (r.trainer.backend != TrainBackend::Megatron) {
            ctx.emit("algorithm.ppo-miles", fields::kTrainerBackend,
                     "Shared Actor/Critic PPO requires the Megatron backend (trainer.backend is " +
                         std::string(toString(r.trainer.backend)) + ")",
                     "set trainer.backend: megatron, or use a critic-free estimator (grpo)");
        }
        if (a.klCoef != 0.0) {
            ctx.emit("algorithm.ppo-miles", fields::kAlgorithmKlCoef,
                     "Shared Actor/Critic PPO does not support reward-level KL (--kl-coef " +
                         num(a.klCoef) +
                         "): the critic trains before the actor and never sees ref log probs, so "
                         "its value targets would silently exclude the KL penalty applied to the "
                         "actor's rewards. Use --use-kl-loss for KL regularization instead.",
                     "set algorithm.kl_coef: 0 and use algorithm.use_kl_loss");
        }
    }
}

void checkTrainingSwitches(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const BoolSetting dynamic =
        boolSetting(flags, r.batch.dynamicBatchSize, fields::kBatchDynamicBatchSize,
                    "--use-dynamic-batch-size");
    if (flags.on("--balance-by-flops") && !dynamic.on) {
        ctx.emitField("batch.balance-by-flops", flags.field("--balance-by-flops"),
                      "--balance-by-flops requires --use-dynamic-batch-size",
                      "set batch.dynamic_batch_size: true (with max_tokens_per_gpu)");
    }
    if (flags.on("--enable-mtp-training")) {
        const auto layers = flags.number("--mtp-num-layers");
        const bool set = layers.has_value() ? *layers != 0 : ctx.shape.mtpNumLayers > 0;
        if (!set) {
            ctx.emitField("trainer.mtp-needs-layers", flags.field("--enable-mtp-training"),
                          "mtp_num_layers must be set when enable_mtp_training is set (the model " +
                              ctx.shape.name +
                              " has no MTP layers and no --mtp-num-layers is given)",
                          "pass --mtp-num-layers N, or drop --enable-mtp-training");
        }
    }
    const auto only = flags.values("--only-train-params-name-list");
    const auto freeze = flags.values("--freeze-params-name-list");
    if (!only.empty() && !freeze.empty()) {
        ctx.emitField("trainer.param-name-lists", flags.field("--freeze-params-name-list"),
                      "You can only specify ONE of: --only-train-params-name-list, or "
                      "--freeze-params-name-list.",
                      "keep one list (only-train lists what trains, freeze what does not)");
    }
    if (flags.on("--use-rollout-routing-replay")) {
        const auto prefetch = flags.number("--routing-replay-prefetch-microbatches");
        if (prefetch.has_value() && *prefetch < 0) {
            ctx.emitField("trainer.routing-replay-prefetch",
                          flags.field("--routing-replay-prefetch-microbatches"),
                          "--routing-replay-prefetch-microbatches must be non-negative (got " +
                              num(*prefetch) + ")",
                          "use 0 or more");
        }
    }
}

void checkDebugModes(const RuleContext& ctx, const RecipeFlags& flags) {
    const auto train = flags.value("--save-debug-train-data");
    const auto rollout = flags.value("--save-debug-rollout-data");
    if (train && rollout && *train == *rollout) {
        ctx.emitField(
            "debug.save-paths", flags.field("--save-debug-train-data"),
            "--save-debug-train-data must not be equal to --save-debug-rollout-data (both " +
                *train + ").",
            "give the two dumps different paths (e.g. .../train_data/{rollout_id}.pt)");
    }
    const bool trainOnly =
        flags.on("--debug-train-only") || flags.value("--load-debug-rollout-data").has_value();
    if (flags.on("--debug-rollout-only") && trainOnly) {
        ctx.emitField("debug.rollout-xor-train", flags.field("--debug-rollout-only"),
                      "debug_rollout_only and debug_train_only cannot be set at the same time, "
                      "please set only one of them." +
                          std::string(flags.has("--load-debug-rollout-data")
                                          ? " (--load-debug-rollout-data implies debug_train_only)"
                                          : ""),
                      "keep one debug mode");
    }
}

void checkDataTransport(const RuleContext& ctx, const RecipeFlags& flags) {
    if (const auto t = flags.number("--rollout-cleanup-timeout"); t.has_value() && *t <= 0) {
        ctx.emitField("rollout.positive-knobs", flags.field("--rollout-cleanup-timeout"),
                      "--rollout-cleanup-timeout must be positive (got " + num(*t) + ")",
                      "use a positive number of seconds (default 60)");
    }
    const bool straw = flags.value("--rollout-data-transport").value_or("") == "straw";
    for (const char* flag : {"--rollout-queue-lease-seconds", "--rollout-queue-segment-mib",
                             "--rollout-io-concurrency"}) {
        if (const auto v = flags.number(flag); v.has_value() && *v <= 0) {
            ctx.emitField("rollout.positive-knobs", flags.field(flag),
                          std::string(flag) + " must be positive (got " + num(*v) + ")",
                          "use a positive value or drop the flag");
        }
    }
    if (!straw) {
        if (flags.value("--data-source-path").value_or("") ==
            "slime.data.queue_data_source.QueueDataSource") {
            ctx.emitField("rollout.straw-transport", flags.field("--data-source-path"),
                          "QueueDataSource requires --rollout-data-transport straw",
                          "pass --rollout-data-transport straw, or another data source");
        }
        if (flags.on("--rollout-queue-online-gc")) {
            ctx.emitField("rollout.straw-transport", flags.field("--rollout-queue-online-gc"),
                          "--rollout-queue-online-gc requires --rollout-data-transport straw",
                          "pass --rollout-data-transport straw, or drop the flag");
        }
    } else if (flags.has("--buffer-filter-path")) {
        ctx.emitField("rollout.straw-transport", flags.field("--buffer-filter-path"),
                      "--buffer-filter-path is not supported by straw; scheduling is persisted in "
                      "the queue and prioritizes older weight versions within ready and partial "
                      "groups",
                      "drop --buffer-filter-path, or use the default rollout transport");
    }
}

/// miles_validate_args additions (miles/utils/arguments.py), wording as the framework words it.
void checkMilesAdditions(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    if (r.framework != Framework::Miles) {
        return;
    }
    for (const char* flag : {"--save-trigger-sentinel", "--custom-megatron-post-save-hook-path"}) {
        if (flags.has(flag) && r.checkpoints.save.empty() && !flags.value("--save")) {
            const std::string name = std::string(flag).substr(2);
            std::string attr = name;
            std::replace(attr.begin(), attr.end(), '-', '_');
            ctx.emitField("checkpoints.save-trigger-needs-save", flags.field(flag),
                          "'--save' is required when " + attr + " is set.",
                          "set checkpoints.save, or drop " + std::string(flag));
        }
    }
    const auto evalGpus = flags.number("--eval-num-gpus");
    const auto perEngine = flags.number("--eval-num-gpus-per-engine");
    if (evalGpus && *evalGpus > 0 && perEngine && *perEngine > 0 &&
        std::fmod(*evalGpus, *perEngine) != 0) {
        ctx.emitField("eval.fleet-divisible", flags.field("--eval-num-gpus"),
                      "eval_num_gpus (" + num(*evalGpus) +
                          ") must be divisible by eval_num_gpus_per_engine (" + num(*perEngine) +
                          ").",
                      "make --eval-num-gpus a multiple of --eval-num-gpus-per-engine");
    }
    if (evalGpus.value_or(0) <= 0) {
        for (std::size_t i = 0; i < r.extraArgs.size(); ++i) {
            if (r.extraArgs[i].flag.rfind("--eval-sglang-", 0) == 0) {
                ctx.emitField("eval.sglang-needs-fleet", "extra_args[" + std::to_string(i) + "]",
                              "--eval-sglang-* configures the dedicated eval fleet, which needs "
                              "--eval-num-gpus > 0. Got " +
                                  r.extraArgs[i].flag + " with --eval-num-gpus 0.",
                              "pass --eval-num-gpus N (the eval fleet), or drop the flag");
                break;
            }
        }
    }
    if (flags.on("--indep-dp")) {
        const BoolSetting dynamic =
            boolSetting(flags, r.batch.dynamicBatchSize, fields::kBatchDynamicBatchSize,
                        "--use-dynamic-batch-size");
        if (r.trainer.backend != TrainBackend::Megatron) {
            ctx.emitField("trainer.indep-dp", flags.field("--indep-dp"),
                          "indep_dp requires train_backend='megatron', got '" +
                              std::string(toString(r.trainer.backend)) + "'",
                          "set trainer.backend: megatron, or drop --indep-dp");
        } else if (!dynamic.on) {
            ctx.emitField("trainer.indep-dp", flags.field("--indep-dp"),
                          "--indep-dp requires --use-dynamic-batch-size (with "
                          "--max-tokens-per-gpu): the live cell count after a fault need not "
                          "divide global_batch_size",
                          "set batch.dynamic_batch_size: true with max_tokens_per_gpu");
        } else if (flags.on("--use-dynamic-global-batch-size")) {
            ctx.emitField("trainer.indep-dp", flags.field("--use-dynamic-global-batch-size"),
                          "--indep-dp does not support --use-dynamic-global-batch-size: "
                          "independent cells do not expose a DP size to the rollout side",
                          "drop one of the two flags");
        }
    }
    if (flags.on("--use-session-server") && flags.on("--partial-rollout")) {
        ctx.emitField("rollout.session-server-partial", flags.field("--partial-rollout"),
                      "--use-session-server does not support --partial-rollout",
                      "drop one of the two flags");
    }
}

}  // namespace

void checkFrameworkArgs(const RuleContext& ctx) {
    const RecipeFlags flags(ctx.recipe);
    checkOpd(ctx, flags);
    checkAlgorithm(ctx, flags);
    checkTrainingSwitches(ctx, flags);
    checkDebugModes(ctx, flags);
    checkDataTransport(ctx, flags);
    checkMilesAdditions(ctx, flags);
    checkScoreCentering(ctx, flags);
    checkTrainerRecovery(ctx, flags);
    checkMilesArgs(ctx, flags);
}

}  // namespace runplane::plan::detail
