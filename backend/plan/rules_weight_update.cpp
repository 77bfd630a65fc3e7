// Placement exclusions and weight-update transport rules from slime's slime_validate_args,
// train_async.py and miles' argument checks: the entry point, fully-async vs colocate, the
// flush-cache interval, disk / delta weight sync and --release-train. Messages keep the
// framework's wording; docs/rules.md lists the source of each.

#include "backend/plan/detail/framework_args.h"
#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {

/// The weight-update settings, typed fields first, then extra_args.
struct WeightSync {
    TextSetting mode;
    TextSetting transport;
    TextSetting diskDir;
    TextSetting localDir;
    BoolSetting releaseTrain;
    bool delta() const { return mode.value == "delta"; }
    bool disk() const { return transport.value == "disk"; }
};

WeightSync weightSync(const Recipe& r, const RecipeFlags& flags) {
    const WeightUpdate& u = r.weightUpdate;
    WeightSync w;
    w.mode = textSetting(flags, u.mode != WeightUpdateMode::Full ? toString(u.mode) : "",
                         fields::kWeightUpdateMode, "--update-weight-mode");
    if (!w.mode.given()) {
        w.mode.value = "full";
    }
    w.transport =
        textSetting(flags, u.transport != WeightTransport::Nccl ? toString(u.transport) : "",
                    fields::kWeightUpdateTransport, "--update-weight-transport");
    if (!w.transport.given()) {
        w.transport.value = "nccl";
    }
    w.diskDir =
        textSetting(flags, u.diskDir, fields::kWeightUpdateDiskDir, "--update-weight-disk-dir");
    w.localDir = textSetting(flags, u.localCheckpointDir, fields::kWeightUpdateLocalCheckpointDir,
                             "--update-weight-local-checkpoint-dir");
    w.releaseTrain =
        boolSetting(flags, u.releaseTrain, fields::kWeightUpdateReleaseTrain, "--release-train");
    return w;
}

void checkEntryPoint(const RuleContext& ctx, const RecipeFlags& flags) {
    const Recipe& r = ctx.recipe;
    const std::string& entry = r.launcher.entryPoint;
    if (entry.find('/') != std::string::npos && !entry.ends_with("/train.py") &&
        !entry.ends_with("/train_async.py")) {
        // a script's own entry point (slime examples/on_policy_distillation/topkopd_train.py):
        // valid, but not one validate knows
        ctx.emitAt("launcher.entry-point", Severity::Warning, fields::kLauncherEntryPoint,
                   fields::kLauncherEntryPoint,
                   "entry_point '" + entry +
                       "' is the script's own program: its flags are checked as train.py's",
                   "nothing to do if the program takes train.py's arguments");
    } else if (entry != "train.py" && entry != "train_async.py") {
        ctx.emit("launcher.entry-point", fields::kLauncherEntryPoint,
                 "unknown entry_point '" + entry + "': " + toString(r.framework) +
                     " trains with train.py (synchronous) or train_async.py (fully asynchronous)",
                 "set launcher.entry_point: train.py or train_async.py");
    }
    const bool colocate = colocated(r, flags);
    if (entry == "train_async.py" && colocate) {
        ctx.emitAt("placement.async-colocate", Severity::Error, fields::kPlacement,
                   fields::kLauncherEntryPoint,
                   "Colocation is not supported for async training (entry_point train_async.py "
                   "with placement colocate).",
                   "use placement: disaggregated, or entry_point: train.py");
    }
    if (r.framework == Framework::Miles && flags.on("--fully-async") && colocate &&
        r.trainer.backend == TrainBackend::Fsdp) {
        ctx.emitField("placement.fully-async-colocate", flags.field("--fully-async"),
                      "--fully-async --colocate needs the megatron IPC weight updater; the FSDP "
                      "updater still pauses and resumes generation on its own",
                      "use trainer.backend: megatron, or placement: disaggregated");
    }
}

void checkPlacementExclusions(const RuleContext& ctx, const RecipeFlags& flags,
                              const WeightSync& w) {
    const Recipe& r = ctx.recipe;
    const bool colocate = colocated(r, flags);
    if (const auto interval = flags.number("--flush-cache-interval");
        interval.has_value() && *interval != 1) {
        const std::string field = flags.field("--flush-cache-interval");
        if (colocate || offloadRolloutOn(r) || w.releaseTrain.on) {
            ctx.emitField("placement.flush-cache-interval", field,
                          "--flush-cache-interval values other than 1 require separate "
                          "training/rollout GPUs without rollout offload or release-train (" +
                              std::string(colocate            ? "placement is colocate"
                                          : w.releaseTrain.on ? "release_train is on"
                                                              : "offload_rollout is on") +
                              ")",
                          "run disaggregated with memory.offload_rollout: false, or use 1");
        } else if (flags.on("--debug-train-only") || flags.on("--debug-rollout-only") ||
                   flags.has("--load-debug-rollout-data")) {
            ctx.emitField("placement.flush-cache-interval", field,
                          "--flush-cache-interval values other than 1 require live rollout and "
                          "training.",
                          "drop the debug mode, or use 1");
        }
    }
    const auto transfer = flags.value("--update-weight-transfer-mode");
    if (r.framework != Framework::Miles || !transfer ||
        (*transfer != "p2p" && *transfer != "disk-delta")) {
        return;
    }
    // miles' p2p (RDMA) and disk-delta weight transfer (miles_validate_args).
    const bool p2p = *transfer == "p2p";
    const std::string field = flags.field("--update-weight-transfer-mode");
    const std::string mode = p2p ? "P2P" : "Disk-delta";
    if (colocate) {
        ctx.emitField("placement.transfer-mode", field,
                      mode + " weight transfer mode is not compatible with --colocate." +
                          (p2p ? " Please use broadcast mode or disable colocate."
                               : " Colocate transfers weights via CUDA IPC (only a handle crosses "
                                 "processes), so the delta bookkeeping (snapshot + diff + encode) "
                                 "is pure overhead."),
                      "use placement: disaggregated, or the default broadcast mode");
    }
    if (flags.has("--prefill-num-servers")) {
        ctx.emitField("placement.transfer-mode", field,
                      mode + " weight transfer mode has not been tested when PD is enabled.",
                      "drop --prefill-num-servers, or use the default broadcast mode");
    }
    if (r.lora.rank > 0) {
        ctx.emitField("placement.transfer-mode", field,
                      std::string("LoRA weight sync is not supported for ") +
                          (p2p ? "p2p (RDMA)" : "disk-delta") + " weight transfer.",
                      "use the default broadcast mode with LoRA");
    }
    if (p2p) {
        return;
    }
    if (!w.diskDir.given()) {
        ctx.emitField(
            "weight-update.disk-dir", w.diskDir.field,
            "--update-weight-transfer-mode=disk-delta requires --update-weight-disk-dir "
            "to point at a filesystem shared between the trainer and the rollout engines.",
            "set weight_update.disk_dir to a directory every node mounts");
    }
    if (!w.localDir.given()) {
        ctx.emitField("weight-update.delta-local-dir", w.localDir.field,
                      "--update-weight-transfer-mode=disk-delta requires "
                      "--update-weight-local-checkpoint-dir (a rollout-host-local directory, e.g. "
                      "NVMe).",
                      "set weight_update.local_checkpoint_dir to a local NVMe path on the "
                      "rollout hosts");
    }
    const TextSetting hf = textSetting(flags, r.checkpoints.hfCheckpoint,
                                       fields::kCheckpointsHfCheckpoint, "--hf-checkpoint");
    if (!hf.given()) {
        ctx.emitField(
            "weight-update.delta-hf-checkpoint", field,
            "--update-weight-transfer-mode=disk-delta requires --hf-checkpoint to be a "
            "local directory: the baseline snapshot is seeded from its safetensors bytes.",
            "set checkpoints.hf_checkpoint to the HF checkpoint directory (preflight "
            "checks it exists on every node)");
    }
}

void checkWeightSync(const RuleContext& ctx, const RecipeFlags& flags, const WeightSync& w) {
    const Recipe& r = ctx.recipe;
    if (w.disk() && !w.diskDir.given()) {
        ctx.emitField("weight-update.disk-dir", w.diskDir.field,
                      "--update-weight-transport=disk requires --update-weight-disk-dir to point "
                      "at a filesystem shared between the trainer and the rollout engines.",
                      "set weight_update.disk_dir to a directory every node mounts");
    }
    if (w.delta() && r.framework == Framework::Vime) {
        // vime_validate_args raises before any other delta check (vllm-project/vime@035f9834
        // vime/utils/arguments.py, _validate_update_weight_args)
        ctx.emitField("weight-update.vime-delta", w.mode.field,
                      "--update-weight-mode=delta is unverified on vime+vLLM and is disabled; use "
                      "--update-weight-mode=full.",
                      "set weight_update.mode: full (vime raises NotImplementedError on delta)");
    } else if (w.delta()) {
        if (!w.disk()) {
            ctx.emitField("weight-update.delta-transport", w.transport.field,
                          "--update-weight-mode=delta requires --update-weight-transport=disk, "
                          "got '" +
                              w.transport.value + "'.",
                          "set weight_update.transport: disk");
        }
        if (colocated(r, flags)) {
            ctx.emitAt("weight-update.delta-colocate", Severity::Error, fields::kWeightUpdateMode,
                       fields::kPlacement,
                       "--update-weight-mode=delta is not supported with --colocate. Colocate "
                       "transfers weights via CUDA IPC (only a handle crosses processes), so the "
                       "delta bookkeeping (snapshot + diff + encode) is pure overhead.",
                       "use weight_update.mode: full under colocate, or run disaggregated");
        }
        if (!w.localDir.given()) {
            ctx.emitField(
                "weight-update.delta-local-dir", w.localDir.field,
                "--update-weight-mode=delta requires --update-weight-local-checkpoint-dir "
                "(a rollout-host-local NVMe directory).",
                "set weight_update.local_checkpoint_dir to a local NVMe path on the "
                "rollout hosts");
        }
    }
    if (!w.releaseTrain.on) {
        return;
    }
    const std::string& rt = w.releaseTrain.field;
    const bool critic = r.algorithm.advantageEstimator == AdvantageEstimator::Ppo ||
                        flags.value("--advantage-estimator").value_or("") == "ppo";
    if (critic) {
        ctx.emitField("weight-update.release-train-critic", rt,
                      "--release-train does not support critic training yet (advantage_estimator "
                      "ppo trains a critic).",
                      "use a critic-free estimator (grpo), or drop release_train");
    }
    const TextSetting save =
        textSetting(flags, r.checkpoints.save, fields::kCheckpointsSave, "--save");
    if (!save.given()) {
        ctx.emitField("weight-update.release-train-save", rt,
                      "--release-train requires --save so the next Megatron actor can reload.",
                      "set checkpoints.save");
    } else if (!r.checkpoints.saveInterval.has_value() && !flags.has("--save-interval")) {
        ctx.emitField("weight-update.release-train-save-interval", rt,
                      "--release-train without save_interval saves every rollout (slime sets "
                      "save_interval = 1)",
                      "budget one checkpoint write per rollout, or set checkpoints.save_interval");
    }
    if (w.delta() || !w.disk()) {
        ctx.emitField("weight-update.release-train-transport", rt,
                      "--release-train requires --update-weight-mode=full and "
                      "--update-weight-transport=disk (got mode " +
                          w.mode.value + ", transport " + w.transport.value + ").",
                      "set weight_update.mode: full and weight_update.transport: disk");
    }
    if (r.trainer.backend != TrainBackend::Megatron || flags.on("--keep-old-actor")) {
        ctx.emitField("weight-update.release-train-backend", rt,
                      r.trainer.backend != TrainBackend::Megatron
                          ? "--release-train releases and recreates Megatron actors: it needs "
                            "the Megatron backend"
                          : "--release-train cannot keep an old actor (--keep-old-actor)",
                      "use trainer.backend: megatron without --keep-old-actor");
    }
    if (colocated(r, flags)) {
        if (r.memory.offloadTrain.value_or(false) || flags.on("--offload-train")) {
            ctx.emitAt("weight-update.release-train-offload", Severity::Info,
                       fields::kMemoryOffloadTrain, fields::kWeightUpdateReleaseTrain,
                       "Ignoring --offload-train because --release-train releases train actors "
                       "instead.",
                       "drop memory.offload_train");
        }
        if (r.memory.offloadRollout == std::optional<bool>(false)) {
            ctx.emitAt("weight-update.release-train-offload", Severity::Info,
                       fields::kMemoryOffloadRollout, fields::kWeightUpdateReleaseTrain,
                       "Ignoring --no-offload-rollout because colocated --release-train needs "
                       "rollout offload.",
                       "drop memory.offload_rollout: false");
        }
    }
}

}  // namespace

void checkPlacementAndWeightUpdate(const RuleContext& ctx) {
    const RecipeFlags flags(ctx.recipe);
    const WeightSync w = weightSync(ctx.recipe, flags);
    checkEntryPoint(ctx, flags);
    checkPlacementExclusions(ctx, flags, w);
    checkWeightSync(ctx, flags, w);
}

}  // namespace runplane::plan::detail
