// The checks miles adds to slime's argument validation that a recipe can express (issue 16), read
// in a stored copy of radixark/miles' miles/utils/arguments.py (`miles_validate_args`, 90,205
// characters) and miles/utils/multi_lora.py (`validate_multi_lora_args`): on-policy
// distillation's top-k and teacher URLs, prefill log-prob recomputation, the session server and
// its TITO middleware, dynamic global batches, optimizer-state streaming to disk, fully-async
// concurrency, the bshd format, indexer replay, the shared-outer expert LoRA layout, multi-LoRA,
// --skip-actor-forward-only, the disk offload chunk, rollout fault tolerance with an eval fleet,
// --rematerialize-param-from-master-weight, external rollout engines and PD, and snapshot eval.
// Only for framework: miles; every message keeps miles' wording (docs/rules.md, checks 61-77),
// with the recipe's values where miles prints them.

#include <optional>
#include <string>
#include <vector>

#include "backend/plan/detail/framework_args.h"
#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {

std::string opdTypeOf(const Recipe& r, const RecipeFlags& flags) {
    if (r.algorithm.opdType) {
        return toString(*r.algorithm.opdType);
    }
    return flags.value("--opd-type").value_or("");
}

bool envOn(const Recipe& r, const char* name) {
    for (const auto& [key, value] : r.environment.env) {
        if (key == name) {
            return value == "1" || value == "true" || value == "True";
        }
    }
    return false;
}

void checkOpdAdditions(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const bool opd = r.algorithm.useOpd || flags.on("--use-opd");
    const bool urls = flags.has("--opd-teacher-urls");
    if (!opd) {
        if (urls) {
            ctx.emitField("opd.teacher-urls", flags.field("--opd-teacher-urls"),
                          "--opd-teacher-urls is set but --use-opd is not enabled. Please add "
                          "--use-opd flag.",
                          "set algorithm.use_opd: true, or drop --opd-teacher-urls");
        }
        return;
    }
    const std::string type = opdTypeOf(r, flags);
    if (type.empty()) {
        return;  // opd.needs-type reports it; miles raises that first
    }
    if (flags.has("--opd-log-prob-top-k")) {
        const auto k = flags.number("--opd-log-prob-top-k");
        const std::string field = flags.field("--opd-log-prob-top-k");
        if (k && *k < 0) {
            ctx.emitField("opd.log-prob-top-k", field,
                          "--opd-log-prob-top-k must be non-negative (it is " + num(*k) + ").",
                          "set --opd-log-prob-top-k 0 (sampled-token OPD) or a positive k");
        } else if (k && *k > 0 && type != "sglang") {
            ctx.emitField("opd.log-prob-top-k", field,
                          "--opd-log-prob-top-k is currently supported only with "
                          "--opd-type=sglang (it is " +
                              type + ").",
                          "use algorithm.opd_type: sglang, or --opd-log-prob-top-k 0");
        } else if (k && *k > 0 &&
                   flags.value("--opd-top-k-strategy").value_or("only-student") != "only-teacher" &&
                   !envOn(r, "MILES_USE_LEGACY_ROLLOUT_V1")) {
            ctx.emitField("opd.log-prob-top-k", field,
                          "--opd-log-prob-top-k with a student-side strategy needs "
                          "opd_student_top_logprobs, which only the v1 rollout produces; set "
                          "MILES_USE_LEGACY_ROLLOUT_V1=1 (strategy " +
                              flags.value("--opd-top-k-strategy").value_or("only-student") +
                              ", miles' default only-student)",
                          "add MILES_USE_LEGACY_ROLLOUT_V1=1 to environment.env, or pass "
                          "--opd-top-k-strategy only-teacher");
        }
    }
    if (urls && type != "sglang") {
        ctx.emitField(
            "opd.teacher-urls", flags.field("--opd-teacher-urls"),
            "--opd-teacher-urls is only supported with --opd-type=sglang (it is " + type + ").",
            "use algorithm.opd_type: sglang, or drop --opd-teacher-urls");
    }
}

void checkSessionServer(const RuleContext& ctx, const RecipeFlags& flags) {
    if (flags.on("--recompute-logprobs-via-prefill") && !flags.on("--true-on-policy-mode")) {
        ctx.emitField("rollout.prefill-logprobs", flags.field("--recompute-logprobs-via-prefill"),
                      "--recompute-logprobs-via-prefill requires --true-on-policy-mode",
                      "add --true-on-policy-mode, or drop --recompute-logprobs-via-prefill");
    }
    // --use-session-server: bare (or "v1") is the append-only server, "v2" tree serving.
    const ExtraArg* server = flags.find("--use-session-server");
    std::string version;
    bool serverOn = false;
    if (server != nullptr) {
        const auto value = flags.value("--use-session-server");
        version = value.value_or("");
        serverOn = version.empty() ? flags.on("--use-session-server")
                                   : (version != "false" && version != "False");
        if (!version.empty() && version != "v1" && version != "v2" && version != "true" &&
            version != "True" && version != "false" && version != "False") {
            ctx.emitField("rollout.session-server", flags.field("--use-session-server"),
                          "--use-session-server='" + version +
                              "' is not a known session server version; pass it bare (or 'v1') "
                              "for the append-only linear server, or 'v2' for tree serving.",
                          "pass --use-session-server, --use-session-server v1 or v2");
            return;
        }
    }
    if (version == "v2") {
        std::string unsupported;
        for (const char* flag : {"--group-rm", "--recompute-logprobs-via-prefill"}) {
            if (flags.on(flag)) {
                unsupported += (unsupported.empty() ? "" : ", ") + std::string(flag);
            }
        }
        if (!unsupported.empty()) {
            ctx.emitField("rollout.session-server", flags.field("--use-session-server"),
                          "--use-session-server v2 does not support " + unsupported +
                              "; v2 returns list[Sample]",
                          "drop " + unsupported + ", or use the v1 session server");
        }
    }
    const auto tito = flags.value("--tito-model");
    if (tito && *tito != "default") {
        if (!serverOn) {
            ctx.emitField("rollout.session-server", flags.field("--tito-model"),
                          "--tito-model=" + *tito +
                              " requires --use-session-server; this flag only configures the "
                              "session-server TITO middleware.",
                          "add --use-session-server, or drop --tito-model");
        } else if (flags.has("--chat-template-path") &&
                   flags.value("--chat-template-path").value_or("") != "autofix") {
            ctx.emitField("rollout.session-server", flags.field("--chat-template-path"),
                          "--chat-template-path cannot override the template registered for "
                          "--tito-model=" +
                              *tito + "; use --tito-model=default for a custom template",
                          "drop --chat-template-path, or pass --tito-model default");
        }
    }
}

void checkBatchAdditions(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const bool multiLora = flags.number("--multi-lora-n-adapters").value_or(0) > 0;
    const bool dynamic = r.batch.dynamicBatchSize || flags.on("--use-dynamic-batch-size");
    if (flags.on("--use-dynamic-global-batch-size") && !multiLora && !dynamic) {
        ctx.emitField("batch.dynamic-global-batch", flags.field("--use-dynamic-global-batch-size"),
                      "--use-dynamic-global-batch-size requires --use-dynamic-batch-size (with "
                      "--max-tokens-per-gpu): static micro-batching cannot guarantee dp_size * "
                      "mb_group alignment when the physical sample count is data-dependent; this "
                      "configuration is not supported.",
                      "set batch.dynamic_batch_size: true with max_tokens_per_gpu");
    }
    const auto concurrent = flags.number("--async-max-concurrent-samples");
    if (concurrent && *concurrent < r.batch.nSamplesPerPrompt) {
        ctx.emitField("rollout.async-max-concurrent", flags.field("--async-max-concurrent-samples"),
                      "--async-max-concurrent-samples (" + num(*concurrent) +
                          ") must be at least --n-samples-per-prompt (" +
                          std::to_string(r.batch.nSamplesPerPrompt) +
                          "): the worker submits whole groups, so one group already puts "
                          "n_samples_per_prompt trajectories in flight",
                      "raise --async-max-concurrent-samples to at least " +
                          std::to_string(r.batch.nSamplesPerPrompt));
    }
    if (flags.value("--qkv-format").value_or("") == "bshd") {
        if (r.trainer.backend != TrainBackend::Megatron) {
            ctx.emitField("trainer.bshd", flags.field("--qkv-format"),
                          "bshd format is only supported for megatron backend.",
                          "set trainer.backend: megatron, or drop --qkv-format bshd");
        } else if (dynamic) {
            ctx.emitField("trainer.bshd", flags.field("--qkv-format"),
                          "Dynamic batch size is not supported for bshd format. Please specify "
                          "--micro-batch-size instead.",
                          "set batch.dynamic_batch_size: false with batch.micro_batch_size, or "
                          "drop --qkv-format bshd");
        }
    }
    if (flags.on("--use-rollout-indexer-replay") && r.trainer.cp != 1) {
        ctx.emitField("trainer.indexer-replay-cp", flags.field("--use-rollout-indexer-replay"),
                      "indexer replay does not support context parallelism yet (trainer.cp is " +
                          std::to_string(r.trainer.cp) + ")",
                      "set trainer.cp: 1, or drop --use-rollout-indexer-replay");
    }
}

/// The first failing assert of miles' --stream-optimizer-state-to-disk block, in its order.
void checkStreamOptimizerState(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    if (!flags.on("--stream-optimizer-state-to-disk")) {
        return;
    }
    const std::string field = flags.field("--stream-optimizer-state-to-disk");
    const bool offloadTrain = offloadTrainOn(r) || flags.on("--offload-train");
    const std::string& kind = r.optimizer.kind;
    const bool muon = kind.find("muon") != std::string::npos;
    auto fail = [&](const std::string& message, const std::string& fix) {
        ctx.emitField("optimizer.stream-to-disk", field, message, fix);
    };
    if (offloadTrain && r.memory.offloadTrainTarget != OffloadTarget::Disk) {
        fail(
            "--stream-optimizer-state-to-disk with --offload-train requires "
            "--offload-train-target=disk: a run that cannot hold the optimizer state on GPU for "
            "the duration of the step will not hold a pinned host copy of the whole actor "
            "either.",
            "set memory.offload_train_target: disk, or run disaggregated without offload_train");
    } else if (flags.on("--indep-dp")) {
        fail("--stream-optimizer-state-to-disk does not support --indep-dp",
             "drop one of the two flags");
    } else if (muon && kind.rfind("dist_", 0) != 0) {
        fail(
            "--stream-optimizer-state-to-disk with Muon requires the layer-wise distributed "
            "optimizer; pass --optimizer dist_muon, got " +
                kind,
            "set optimizer.kind: dist_muon");
    } else if (!muon && !r.optimizer.distributed) {
        fail("--stream-optimizer-state-to-disk requires the distributed optimizer",
             "set optimizer.distributed: true");
    } else if (!muon && kind != "adam") {
        fail("--stream-optimizer-state-to-disk requires --optimizer adam, got " + kind,
             "set optimizer.kind: adam");
    } else if (r.lora.rank > 0 || flags.number("--multi-lora-n-adapters").value_or(0) > 0) {
        fail(
            "--stream-optimizer-state-to-disk does not support LoRA: the LoRA checkpoint path "
            "persists optimizer.state_dict(), which the store leaves empty",
            "drop --stream-optimizer-state-to-disk for LoRA runs");
    } else if (r.optimizer.cpuOffload || flags.on("--optimizer-cpu-offload")) {
        fail("--stream-optimizer-state-to-disk excludes --optimizer-cpu-offload",
             "set optimizer.cpu_offload: false, or drop --stream-optimizer-state-to-disk");
    } else if (!muon && flags.on("--offload-optimizer-states")) {
        fail("--stream-optimizer-state-to-disk excludes --offload-optimizer-states",
             "drop one of the two flags");
    } else if (r.optimizer.precisionAware || flags.on("--use-precision-aware-optimizer")) {
        fail(
            "--stream-optimizer-state-to-disk requires mcore to hold the fp32 main params "
            "(--use-precision-aware-optimizer is set)",
            "set optimizer.precision_aware: false");
    } else {
        for (const char* flag :
             {"--reset-optimizer-states", "--save-local-weight-checksum", "--enable-witness"}) {
            if (flags.on(flag)) {
                fail("--stream-optimizer-state-to-disk excludes " + std::string(flag) +
                         ": it reads the optimizer state or main params, which the NVMe store "
                         "owns",
                     "drop " + std::string(flag));
                break;
            }
        }
    }
}

void checkLoraAdditions(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    // miles' --lora-rank is an int: set from 1 on. Compared as the double it was read as, never
    // cast: a script's 5.6e104 is "set" (miles' argparse refuses it) and not undefined behaviour.
    const bool rankSet = r.lora.rank > 0 || flags.number("--lora-rank").value_or(0) >= 1;
    // miles turns sglang's switch on when the trainer's is on; they can only disagree the other
    // way round.
    if (rankSet && flags.on("--sglang-experts-shared-outer-loras") &&
        !flags.on("--experts-shared-outer-loras")) {
        ctx.emitField("lora.shared-outer-agree", flags.field("--sglang-experts-shared-outer-loras"),
                      "experts_shared_outer_loras and sglang_experts_shared_outer_loras must agree",
                      "add --experts-shared-outer-loras, or drop "
                      "--sglang-experts-shared-outer-loras");
    }
    const auto adapters = flags.number("--multi-lora-n-adapters");
    if (!adapters || *adapters <= 0) {
        return;
    }
    const std::string field = flags.field("--multi-lora-n-adapters");
    const bool hasTargets = !r.lora.targetModules.empty() || flags.has("--target-modules");
    const std::string& kind = r.optimizer.kind;
    const bool offloadTrain = offloadTrainOn(r) || flags.on("--offload-train");
    auto fail = [&](const std::string& message, const std::string& fix) {
        ctx.emitField("lora.multi-lora", field, message, fix);
    };
    if (!rankSet) {
        fail("--lora-rank must be set when --multi-lora-n-adapters > 0", "set lora.rank");
    } else if (!hasTargets) {
        fail("--target-modules must be set when --multi-lora-n-adapters > 0",
             "set lora.target_modules");
    } else if (r.trainer.backend != TrainBackend::Megatron) {
        fail("Multi-LoRA currently requires --train-backend megatron",
             "set trainer.backend: megatron");
    } else if (kind.find("muon") != std::string::npos) {
        fail(
            "Multi-LoRA does not support Muon: per-adapter decoupled stepping is only "
            "implemented for Adam-family per-slot optimizers",
            "set optimizer.kind: adam");
    } else if (colocated(r, flags)) {
        fail(
            "Multi-LoRA requires disaggregated rollout engines: weight sync is only implemented "
            "for the distributed path, not the colocated tensor path.",
            "set placement: disaggregated");
    } else if (flags.on("--indep-dp")) {
        fail(
            "Multi-LoRA does not support independent-DP training; remove 'train' from "
            "--ft-components",
            "drop --indep-dp");
    } else if (offloadTrain) {
        fail(
            "Multi-LoRA retains per-adapter gradient accumulation in GPU buffers between train "
            "calls; --offload-train would destroy it. Disable offload for multi-LoRA.",
            "set memory.offload_train: false");
    } else if (flags.on("--enable-witness")) {
        fail(
            "Multi-LoRA runs without the distributed optimizer (per-slot LayerWise optimizers); "
            "the witness module assumes use_distributed_optimizer",
            "drop --enable-witness");
    } else if (flags.number("--sglang-tokenizer-worker-num").value_or(1) != 1) {
        fail(
            "Multi-LoRA requires --sglang-tokenizer-worker-num 1: each tokenizer worker process "
            "holds its own LoRA registry (it is " +
                num(*flags.number("--sglang-tokenizer-worker-num")) + ")",
            "set --sglang-tokenizer-worker-num 1");
    } else if (flags.on("--calculate-per-token-loss")) {
        fail(
            "Multi-LoRA normalizes each sample by its adapter batch (sample-mean); per-token "
            "loss normalization would make adapter batch weights depend on batch contents. Drop "
            "--calculate-per-token-loss.",
            "drop --calculate-per-token-loss");
    } else if (flags.number("--multi-lora-max-coalesce-wait-s").value_or(0) < 0) {
        fail("--multi-lora-max-coalesce-wait-s must be non-negative",
             "set --multi-lora-max-coalesce-wait-s >= 0");
    } else if (kind != "adam") {
        fail(
            "Multi-LoRA requires --optimizer adam: the per-slot optimizer isolation only "
            "implements Adam semantics; got --optimizer " +
                kind,
            "set optimizer.kind: adam");
    } else if (flags.number("--multi-lora-max-adapter-global-batch-size").value_or(1) <= 0) {
        fail("--multi-lora-max-adapter-global-batch-size must be positive",
             "set --multi-lora-max-adapter-global-batch-size > 0");
    } else if (flags.on("--disable-rollout-trim-samples")) {
        fail(
            "Multi-LoRA computes the exact dynamic batch size in rollout postprocessing; do not "
            "pass --disable-rollout-trim-samples",
            "drop --disable-rollout-trim-samples");
    }
}

/// miles' validate_skip_actor_forward_only: the training step reuses the rollout's log-probs
/// instead of a forward pass of the actor, so nothing may make the two differ.
void checkSkipActorForward(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    if (!flags.on("--skip-actor-forward-only")) {
        return;
    }
    const std::string field = flags.field("--skip-actor-forward-only");
    const char* option = "--skip-actor-forward-only";
    auto fail = [&](const std::string& message, const std::string& fix) {
        ctx.emitField("trainer.skip-actor-forward", field, message, fix);
    };
    if (r.trainer.backend != TrainBackend::Megatron) {
        fail(std::string(option) + " only supports --train-backend megatron",
             "set trainer.backend: megatron");
        return;
    }
    const std::string lossType = flags.value("--loss-type").value_or("policy_loss");
    if (lossType != "policy_loss") {
        fail(std::string(option) + " only supports --loss-type policy_loss (got " + lossType + ")",
             "drop --loss-type, or drop " + std::string(option));
        return;
    }
    // compute_advantages_and_returns is on unless --disable-compute-advantages-and-returns
    if (flags.on("--disable-compute-advantages-and-returns")) {
        fail(std::string(option) + " requires actor advantage computation",
             "drop --disable-compute-advantages-and-returns, or drop " + std::string(option));
        return;
    }
    // A dropout flag left out keeps Megatron's default of 0.1 (--hidden-dropout,
    // --attention-dropout), which the check counts as enabled.
    auto nonZero = [&](const char* flag, double absent) {
        return flags.has(flag) ? flags.number(flag).value_or(absent) != 0 : absent != 0;
    };
    bool sinkhorn = false;
    for (const auto& v : flags.values("--moe-router-load-balancing-type")) {
        sinkhorn = sinkhorn || v.find("sinkhorn") != std::string::npos;
    }
    const std::pair<const char*, bool> options[] = {
        {"--keep-old-actor", flags.on("--keep-old-actor")},
        {"--kl-coef", r.algorithm.klCoef != 0 || nonZero("--kl-coef", 0)},
        {"--use-opd", r.algorithm.useOpd || flags.on("--use-opd")},
        {"--hidden-dropout", nonZero("--hidden-dropout", 0.1)},
        {"--attention-dropout", nonZero("--attention-dropout", 0.1)},
        {"--lora-dropout", r.lora.dropout != 0 || nonZero("--lora-dropout", 0)},
        {"--moe-input-jitter-eps", nonZero("--moe-input-jitter-eps", 0)},
        {"--moe-router-force-load-balancing", flags.on("--moe-router-force-load-balancing")},
        {"--moe-router-force-biased", flags.has("--moe-router-force-biased")},
        {"--moe-router-load-balancing-type sinkhorn", sinkhorn},
        {"--use-rollout-entropy", flags.on("--use-rollout-entropy")},
        {"--true-on-policy-mode", flags.on("--true-on-policy-mode")},
        {"--log-correct-samples", flags.on("--log-correct-samples")},
        {"--rollout-data-postprocess-path", flags.has("--rollout-data-postprocess-path")},
        {"--custom-megatron-before-log-prob-hook-path",
         flags.has("--custom-megatron-before-log-prob-hook-path")},
        {"--custom-megatron-before-train-step-hook-path",
         flags.has("--custom-megatron-before-train-step-hook-path")},
        {"--custom-model-provider-path", flags.has("--custom-model-provider-path")},
        {"--dumper-source-patcher-config-train", flags.has("--dumper-source-patcher-config-train")},
        {"--save-debug-train-data",
         flags.has("--save-debug-train-data") && !flags.has("--dump-details")},
        {"--use-routing-replay",
         flags.on("--use-routing-replay") && !flags.on("--use-rollout-routing-replay")},
        {"--use-indexer-replay",
         flags.on("--use-indexer-replay") && !flags.on("--use-rollout-indexer-replay")},
    };
    std::string incompatible;
    for (const auto& [name, enabled] : options) {
        if (enabled) {
            incompatible += (incompatible.empty() ? "" : ", ") + std::string(name);
        }
    }
    if (!incompatible.empty()) {
        fail(std::string(option) + " is incompatible with: " + incompatible,
             "drop " + incompatible + " (a dropout flag: pass it as 0), or drop " +
                 std::string(option));
        return;
    }
    const auto steps = r.batch.numStepsPerRollout;
    if (steps && *steps != 1) {
        fail(std::string(option) +
                 " requires exactly one optimizer step per rollout; got --num-steps-per-rollout " +
                 std::to_string(*steps),
             "set batch.num_steps_per_rollout: 1");
        return;
    }
    const bool multiLora = flags.number("--multi-lora-n-adapters").value_or(0) > 0;
    const long long samples =
        static_cast<long long>(r.batch.rolloutBatchSize) * r.batch.nSamplesPerPrompt;
    if (!flags.on("--use-dynamic-global-batch-size") && !multiLora && r.batch.globalBatchSize &&
        *r.batch.globalBatchSize != samples) {
        fail(std::string(option) + " requires exactly one optimizer step for " +
                 std::to_string(samples) + " rollout samples; got --global-batch-size " +
                 std::to_string(*r.batch.globalBatchSize),
             "set batch.global_batch_size: " + std::to_string(samples));
    }
}

/// miles' --offload-train-target=disk block: the chunk of the GPU<->disk staging buffer.
void checkOffloadDiskChunk(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const bool diskTarget = r.memory.offloadTrainTarget == OffloadTarget::Disk ||
                            flags.value("--offload-train-target").value_or("") == "disk";
    const auto chunk = flags.number("--offload-train-disk-chunk-mb");
    if (diskTarget && chunk && *chunk <= 0) {
        ctx.emitField("memory.offload-disk-chunk", flags.field("--offload-train-disk-chunk-mb"),
                      "--offload-train-disk-chunk-mb must be positive (it is " + num(*chunk) + ")",
                      "drop --offload-train-disk-chunk-mb (miles' default 256), or pass a "
                      "positive size in MiB");
    }
}

/// miles' rollout fault tolerance (--use-fault-tolerance; --ft-components defaults to
/// "rollout") cannot heal a dedicated eval fleet.
void checkFaultToleranceEval(const RuleContext& ctx, const RecipeFlags& flags) {
    if (!flags.on("--use-fault-tolerance")) {
        return;
    }
    bool rollout = !flags.has("--ft-components");
    for (const auto& component : flags.values("--ft-components")) {
        rollout = rollout || component == "rollout";
    }
    const auto evalGpus = flags.number("--eval-num-gpus");
    if (rollout && evalGpus && *evalGpus > 0) {
        ctx.emitField("rollout.ft-eval-fleet", flags.field("--eval-num-gpus"),
                      "rollout fault tolerance does not support a dedicated eval fleet "
                      "(--eval-num-gpus > 0): the eval fleet pins engine addresses once at "
                      "startup, so a healed eval cell would make every later eval skip silently",
                      "drop --eval-num-gpus (evaluate on the rollout engines), or leave "
                      "'rollout' out of --ft-components");
    }
}

/// miles' _validate_rematerialize_param_from_master_weight: the first failing assert, in its
/// order. Under --debug-train-only miles turns the switch off instead. Three of its asserts
/// carry no message; theirs state the condition.
void checkRematerializeParam(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const char* option = "--rematerialize-param-from-master-weight";
    if (!flags.on(option) || flags.on("--debug-train-only")) {
        return;
    }
    const std::string field = flags.field(option);
    auto fail = [&](const std::string& message, const std::string& fix) {
        ctx.emitField("trainer.rematerialize-param", field, message, fix);
    };
    bool ftTrain = false;
    if (flags.on("--use-fault-tolerance")) {
        for (const auto& component : flags.values("--ft-components")) {
            ftTrain = ftTrain || component == "train";
        }
    }
    const bool lora = r.lora.rank > 0 || flags.number("--lora-rank").value_or(0) > 0;
    const bool offloadTrain = offloadTrainOn(r) || flags.on("--offload-train");
    const bool diskTarget = r.memory.offloadTrainTarget == OffloadTarget::Disk ||
                            flags.value("--offload-train-target").value_or("") == "disk";
    const bool precisionAware =
        r.optimizer.precisionAware || flags.on("--use-precision-aware-optimizer");
    const bool cpuAdam = r.optimizer.cpuOffload || flags.on("--optimizer-cpu-offload");
    if (r.trainer.backend != TrainBackend::Megatron) {
        fail(std::string(option) + " reads Megatron's distributed-optimizer main params",
             "set trainer.backend: megatron");
    } else if (lora) {
        fail(std::string(option) + " does not support LoRA", "drop " + std::string(option));
    } else if (flags.on("--debug-disable-optimizer")) {
        fail("--debug-disable-optimizer leaves no main params to rematerialize from",
             "drop --debug-disable-optimizer, or drop " + std::string(option));
    } else if (flags.on("--indep-dp") || ftTrain) {
        fail(std::string(option) +
                 " drops the backup inside update_weights, which RayTrainGroup runs on the first "
                 "alive cell only. Every other cell would keep it for the whole run. Lift this "
                 "once all cells update weights." +
                 (ftTrain ? " (--ft-components train turns on --indep-dp)" : ""),
             "drop --indep-dp ('train' from --ft-components), or drop " + std::string(option));
    } else if (!colocated(r, flags) || !offloadTrain) {
        fail(std::string(option) +
                 " requires --colocate and --offload-train (miles asserts "
                 "args.colocate and args.offload_train)",
             "set placement: colocate with memory.offload_train: true");
    } else if (diskTarget) {
        fail(
            "--offload-train-target=disk streams the weights to NVMe and reads them back from GPU "
            "after resume, so there is no backup for the rebuild to replace",
            "set memory.offload_train_target: cpu, or drop " + std::string(option));
    } else if (!r.optimizer.distributed) {
        fail(std::string(option) +
                 " requires the distributed optimizer (miles asserts "
                 "args.use_distributed_optimizer)",
             "set optimizer.distributed: true");
    } else if (flags.on("--keep-old-actor")) {
        fail(std::string(option) +
                 " excludes --keep-old-actor (miles asserts not "
                 "args.keep_old_actor)",
             "drop --keep-old-actor");
    } else if (precisionAware && !cpuAdam) {
        fail(
            "--use-precision-aware-optimizer on GPU keeps the master weights inside TE FusedAdam, "
            "stored as int16 remainders of the params. There is nothing standalone to rebuild "
            "from. Add --optimizer-cpu-offload, which holds standalone masters instead.",
            "set optimizer.cpu_offload: true, or optimizer.precision_aware: false");
    } else if (flags.on("--overlap-param-gather")) {
        fail(
            "the rebuild calls DDP.start_param_sync outside the training step; "
            "overlap-param-gather does not support that",
            "drop --overlap-param-gather");
    } else if (flags.on("--disable-compute-advantages-and-returns")) {
        fail(
            "the per-cycle rebuild runs in the compute_advantages_and_returns block; without it "
            "training would run on dropped weights",
            "drop --disable-compute-advantages-and-returns");
    } else if (flags.number("--num-critic-only-steps").value_or(0) != 0) {
        fail(
            "critic-only steps run update_weights repeatedly without an intervening actor "
            "wake_up",
            "set --num-critic-only-steps 0");
    }
}

/// miles' external rollout engines (rollout_external: --rollout-external-engine-addrs or
/// --custom-inference-engine-provider-path given, as _compute_rollout_external derives it) and
/// the PD / sglang-config exclusions around them: the first failing assert, in miles' order
/// (the eval-fleet one sits in _resolve_rollout_functions, which runs before the others).
void checkExternalEngines(const RuleContext& ctx, const RecipeFlags& flags) {
    const bool external = flags.has("--rollout-external-engine-addrs") ||
                          flags.has("--custom-inference-engine-provider-path");
    const std::string externalFlag = flags.has("--rollout-external-engine-addrs")
                                         ? "--rollout-external-engine-addrs"
                                         : "--custom-inference-engine-provider-path";
    const bool prefill = flags.has("--prefill-num-servers");
    const bool sglangConfig = flags.has("--sglang-config");
    auto fail = [&](const char* flag, const std::string& message, const std::string& fix) {
        ctx.emitField("rollout.external-engines", flags.field(flag), message, fix);
    };
    if (external && flags.number("--eval-num-gpus").value_or(0) > 0) {
        fail("--eval-num-gpus", "eval_num_gpus cannot be set with external rollout engines.",
             "drop --eval-num-gpus, or drop " + externalFlag);
    } else if (prefill && external) {
        fail("--prefill-num-servers",
             "prefill_num_servers cannot be set with external rollout engines; use "
             "--rollout-external-router-pd.",
             "replace --prefill-num-servers with --rollout-external-router-pd");
    } else if (sglangConfig && external) {
        fail("--sglang-config",
             "sglang_config cannot be set with external rollout engines; the topology comes from "
             "discovery.",
             "drop --sglang-config");
    } else if (flags.on("--rollout-external-router-pd") && !external) {
        fail("--rollout-external-router-pd",
             "--rollout-external-router-pd only applies to external rollout engines; internally "
             "launched engines infer PD from the sglang config.",
             "drop --rollout-external-router-pd, or pass --rollout-external-engine-addrs");
    } else if (sglangConfig && prefill) {
        fail("--prefill-num-servers",
             "sglang_config and prefill_num_servers are mutually exclusive. Use server_groups in "
             "the YAML config instead.",
             "drop --prefill-num-servers and describe the PD split in the sglang config's "
             "server_groups");
    }
}

/// miles' snapshot eval: a dedicated eval fleet (--eval-num-gpus > 0) turns eval_uses_snapshots
/// on (so does a CheckpointEvalFn --eval-function-path, a class the recipe cannot show); the
/// first failing assert of its block, in miles' order.
void checkSnapshotEval(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    if (flags.number("--eval-num-gpus").value_or(0) <= 0) {
        return;
    }
    const std::string field = flags.field("--eval-num-gpus");
    auto fail = [&](const std::string& message, const std::string& fix) {
        ctx.emitField("eval.snapshot", field, message, fix);
    };
    std::optional<double> evalInterval = flags.number("--eval-interval");
    if (r.eval.interval) {
        evalInterval = *r.eval.interval;
    }
    std::optional<double> saveInterval = flags.number("--save-interval");
    if (r.checkpoints.saveInterval) {
        saveInterval = *r.checkpoints.saveInterval;
    }
    const bool evalHfDir = flags.has("--eval-hf-dir");
    if (envOn(r, "MILES_USE_LEGACY_ROLLOUT_V1")) {
        fail(
            "Snapshot eval requires the class-based rollout API; unset MILES_USE_LEGACY_ROLLOUT_V1",
            "drop MILES_USE_LEGACY_ROLLOUT_V1 from environment.env, or drop --eval-num-gpus");
    } else if (!evalInterval) {
        fail("Snapshot eval requires --eval-interval.", "set eval.interval");
    } else if (!evalHfDir && !flags.has("--save-hf")) {
        fail(
            "Snapshot eval requires a snapshot source: set --eval-hf-dir (staging exports) or "
            "--save-hf (reuse periodic HF checkpoints).",
            "add --eval-hf-dir <dir> or --save-hf <dir>");
    } else if (colocated(r, flags)) {
        fail("Snapshot eval is not supported with --colocate.",
             "set placement: disaggregated, or drop --eval-num-gpus");
    } else if (flags.on("--debug-rollout-only")) {
        fail("Snapshot eval is not supported with debug_rollout_only.",
             "drop --debug-rollout-only, or drop --eval-num-gpus");
    } else if (flags.has("--load-debug-rollout-data")) {
        fail(
            "Snapshot eval is not supported with --load-debug-rollout-data: no rollout functions "
            "are loaded.",
            "drop --load-debug-rollout-data, or drop --eval-num-gpus");
    } else if (!evalHfDir &&
               (!saveInterval || *saveInterval == 0 ||
                static_cast<long long>(*evalInterval) % static_cast<long long>(*saveInterval) !=
                    0)) {
        fail(
            "Reusing --save-hf checkpoints for eval requires eval_interval to be a multiple of "
            "save_interval (got eval_interval=" +
                num(*evalInterval) +
                ", save_interval=" + (saveInterval ? num(*saveInterval) : std::string("None")) +
                "). Set --eval-hf-dir for independent snapshots.",
            "set checkpoints.save_interval to a divisor of eval.interval, or add --eval-hf-dir");
    }
}

}  // namespace

void checkMilesArgs(const RuleContext& ctx, const RecipeFlags& flags) {
    if (ctx.recipe.framework != Framework::Miles) {
        return;
    }
    checkOpdAdditions(ctx, flags);
    checkSessionServer(ctx, flags);
    checkBatchAdditions(ctx, flags);
    checkStreamOptimizerState(ctx, flags);
    checkLoraAdditions(ctx, flags);
    checkSkipActorForward(ctx, flags);
    checkOffloadDiskChunk(ctx, flags);
    checkFaultToleranceEval(ctx, flags);
    checkRematerializeParam(ctx, flags);
    checkExternalEngines(ctx, flags);
    checkSnapshotEval(ctx, flags);
}

}  // namespace runplane::plan::detail
