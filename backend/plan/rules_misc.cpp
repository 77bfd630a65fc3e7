// Rules on the algorithm, the optimizer, LoRA, checkpoints, NCCL and the memory plan.

#include <algorithm>
#include <array>
#include <charconv>

#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {

std::string str(int v) {
    return std::to_string(v);
}

/// "2.30.7" -> {2, 30, 7}; false if it does not read as MAJOR.MINOR[.PATCH].
bool parseVersion(const std::string& text, std::array<int, 3>& out) {
    out = {0, 0, 0};
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (int i = 0; i < 3; ++i) {
        auto [next, ec] = std::from_chars(p, end, out[std::size_t(i)]);
        if (ec != std::errc()) {
            return false;
        }
        p = next;
        if (p == end) {
            return i >= 1;
        }
        if (*p != '.' || i == 2) {
            return false;
        }
        ++p;
    }
    return p == end;
}

// Memory findings over hardware the importer assumed (hardware.assumed: the script named no GPU
// or host) are warnings that name the assumption; a recipe that states its hardware keeps errors.
Severity overSeverity(const Recipe& r) {
    return r.hardware.assumed ? Severity::Warning : Severity::Error;
}

std::string assumedNote(const Recipe& r) {
    if (!r.hardware.assumed) {
        return std::string();
    }
    return " (on assumed hardware: the script names no GPU; " + r.hardware.gpu + " with " +
           num(r.hardware.gpuMemoryGb) + " GB HBM and " + num(r.hardware.hostRamGb) +
           " GB host RAM stand in)";
}

std::string assumedHint(const Recipe& r, std::string hint) {
    if (!r.hardware.assumed) {
        return hint;
    }
    return "set hardware.gpu, hardware.gpu_memory_gb and hardware.host_ram_gb to the machine and "
           "drop hardware.assumed; else " +
           hint;
}

bool versionBelow(const std::array<int, 3>& v, std::array<int, 3> than) {
    return v < than;
}

}  // namespace

void checkAlgorithmAndLora(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const Algorithm& a = r.algorithm;
    const Layout& l = ctx.layout;
    const ModelShape& s = ctx.shape;
    const bool kl = a.useKlLoss || a.klCoef != 0.0;
    // with LoRA the reference is the base model with the adapters off (slime's
    // run-qwen3-30B-A3B-lora.sh drops --ref-load on purpose)
    if (kl && r.checkpoints.refLoad.empty() && r.lora.rank == 0) {
        ctx.emit("algorithm.kl-needs-ref", fields::kCheckpointsRefLoad,
                 std::string(a.useKlLoss ? "use_kl_loss" : "kl_coef " + num(a.klCoef)) +
                     " needs the reference model, but checkpoints.ref_load is empty",
                 "set checkpoints.ref_load to the torch_dist reference checkpoint");
    }
    if (a.klCoef != 0.0 && a.klLossCoef != 0.0) {
        ctx.emit("algorithm.kl-both", fields::kAlgorithmKlCoef,
                 "kl_coef (" + num(a.klCoef) + ") and kl_loss_coef (" + num(a.klLossCoef) +
                     ") are both non-zero",
                 "use one KL mechanism");
    }
    if (a.useKlLoss) {
        const std::string extra = ctx.memory.referencePerNodeMax > 0
                                      ? " (+" + gb(ctx.memory.referencePerNodeMax) + " per node)"
                                      : std::string();
        if (a.klLossCoef == 0.0) {
            ctx.emit("algorithm.kl-reference-copy", fields::kAlgorithmUseKlLoss,
                     "use_kl_loss with kl_loss_coef 0 still loads a full reference copy" + extra,
                     "drop use_kl_loss");
        } else {
            ctx.emit("algorithm.kl-reference-copy", Severity::Info, fields::kAlgorithmUseKlLoss,
                     "the KL loss pins a reference copy of the base weights" + extra,
                     "budget it, or drop use_kl_loss");
        }
    }
    const Optimizer& opt = r.optimizer;
    if (opt.cpuOffload && !opt.precisionAware) {
        ctx.emit("optimizer.cpu-offload-precision", fields::kOptimizerPrecisionAware,
                 "cpu_offload needs precision_aware (Megatron asserts it)",
                 "set optimizer.precision_aware: true");
    }
    if (opt.cpuOffload && !opt.overlapCpuOptimizerD2hH2d) {
        ctx.emit("optimizer.cpu-offload-overlap", fields::kOptimizerOverlapCpuOptimizerD2hH2d,
                 "cpu_offload without overlap_cpu_optimizer_d2h_h2d serializes every step's copies",
                 "set optimizer.overlap_cpu_optimizer_d2h_h2d: true");
    }
    if (opt.cpuOffload && l.trainerNodes > 1 && r.lora.rank == 0 &&
        ctx.memory.trainPeakPerGpuIfOptimizerOnGpu > 0 &&
        ctx.memory.trainPeakPerGpuIfOptimizerOnGpu <= 0.9 * ctx.memory.gpuBytes) {
        ctx.emit("optimizer.cpu-adam-multinode", Severity::Info, fields::kOptimizerCpuOffload,
                 "CPU Adam on " + str(l.trainerNodes) +
                     " nodes: with the distributed optimizer the training peak would be " +
                     gb(ctx.memory.trainPeakPerGpuIfOptimizerOnGpu) + " per GPU, within " +
                     gb(ctx.memory.gpuBytes) + " HBM",
                 "drop optimizer.cpu_offload on multi-node runs (the distributed optimizer "
                 "shards the state over DP)");
    }
    const Lora& lo = r.lora;
    if (lo.rank > 0) {
        if (r.framework == Framework::Vime) {
            ctx.emit("lora.framework", fields::kLoraRank,
                     "LoRA (rank " + str(lo.rank) + ") is a slime / miles feature; " +
                         toString(r.framework) + " has none",
                     "use framework: slime or miles, or lora.rank: 0");
        }
        // a --lora-target-preset (kept verbatim in extra_args) names the modules too
        const bool preset =
            std::any_of(r.extraArgs.begin(), r.extraArgs.end(),
                        [](const ExtraArg& e) { return e.flag == "--lora-target-preset"; });
        // miles' diffusion trainer (--diffusion-train, FSDP) falls back to the modules of the
        // --diffusion-model's train pipeline config when none are given (apply_lora: `targets =
        // args.lora_target_modules or train_pipeline_config.lora_target_modules`; Qwen/Qwen-Image
        // registers to_q, to_k, to_v, to_out.0, add_q/k/v_proj, to_add_out)
        const bool diffusion =
            r.trainer.backend == TrainBackend::Fsdp &&
            std::any_of(r.extraArgs.begin(), r.extraArgs.end(),
                        [](const ExtraArg& e) { return e.flag == "--diffusion-train"; });
        if (lo.targetModules.empty() && !preset &&
            !(diffusion && r.framework == Framework::Miles)) {
            std::string message =
                "lora.rank is " + str(lo.rank) + " but no target modules are given";
            std::string hint = "e.g. target_modules: [q_proj, k_proj, v_proj, o_proj]";
            if (diffusion && r.frameworkAssumed) {
                // the diffusion trainer is miles': a warning when the framework is a guess
                ctx.emitOneFramework("lora.target-modules", fields::kLoraTargetModules.str(),
                                     std::move(message), std::move(hint));
            } else {
                ctx.emit("lora.target-modules", fields::kLoraTargetModules, std::move(message),
                         std::move(hint));
            }
        }
        static constexpr std::string_view kKnown[] = {"q_proj",    "k_proj",    "v_proj",
                                                      "o_proj",    "gate_proj", "up_proj",
                                                      "down_proj", "all-linear"};
        for (const auto& m : lo.targetModules) {
            if (std::find(std::begin(kKnown), std::end(kKnown), m) == std::end(kKnown)) {
                ctx.emit("lora.unknown-module", fields::kLoraTargetModules,
                         "unknown LoRA target module '" + m + "'",
                         "use q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj or "
                         "all-linear");
            }
        }
        // slime's and miles' FSDP backends have LoRA too (slime fsdp_utils/lora_utils.py; miles
        // miles/backends/fsdp_utils/lora_utils.py, used by its own run-diffusion-grpo-ocr-debug.sh:
        // --train-backend fsdp --lora-rank 64)
        if (r.trainer.backend != TrainBackend::Megatron &&
            !(r.trainer.backend == TrainBackend::Fsdp &&
              (r.framework == Framework::Slime || r.framework == Framework::Miles))) {
            ctx.emit("lora.backend", fields::kTrainerBackend,
                     std::string("LoRA on ") + toString(r.framework) +
                         " needs the Megatron backend (slime's and miles' FSDP have LoRA too)",
                     "set trainer.backend: megatron");
        }
        if (s.attention == AttentionKind::Gqa && l.tp > s.queryGroups()) {
            ctx.emit("lora.tp-bound", fields::kTrainerTp,
                     "num_query_groups (" + str(s.queryGroups()) +
                         ") bounds the native-LoRA tensor-parallel size, but TP is " + str(l.tp),
                     "use TP <= " + str(s.queryGroups()));
        }
        if (s.isMoe() && l.engine == RolloutEngine::Sglang && r.rollout.loraBackend != "triton") {
            ctx.emit("lora.moe-sglang-backend", fields::kRolloutLoraBackend,
                     "MoE LoRA needs the SGLang triton LoRA backend (lora_backend is '" +
                         r.rollout.loraBackend + "')",
                     "set rollout.lora_backend: triton");
        }
        if (!l.colocate && l.pp > 1) {
            ctx.emit("lora.disaggregated-pp", fields::kTrainerPp,
                     "LoRA with disaggregated NCCL weight sync needs PP 1, got PP " + str(l.pp),
                     "colocate, or use PP 1");
        }
    }
    if (lo.baseCpuBackup && (lo.rank == 0 || !l.colocate)) {
        ctx.emit("lora.base-cpu-backup", fields::kLoraBaseCpuBackup,
                 std::string("base_cpu_backup has no effect ") +
                     (lo.rank == 0 ? "without LoRA" : "without colocate"),
                 "remove lora.base_cpu_backup");
    }
    if (r.checkpoints.convertedEp.has_value() && *r.checkpoints.convertedEp != l.ep) {
        const bool strict = r.framework == Framework::Vime;
        ctx.emit("checkpoints.converted-ep", strict ? Severity::Error : Severity::Info,
                 fields::kCheckpointsConvertedEp,
                 "the checkpoint was converted with EP " + str(*r.checkpoints.convertedEp) +
                     " but training runs EP " + str(l.ep) +
                     (strict ? ": load_checkpoint may be extremely slow or hang"
                             : ": torch_dist reshards on load (the optimizer state may not)"),
                 "convert with --expert-model-parallel-size " + str(l.ep) +
                     (strict ? "" : ", or resume with no_load_optim"));
    }
}

void checkEnvironmentAndMemory(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const Layout& l = ctx.layout;
    const MemoryPlan& m = ctx.memory;
    std::array<int, 3> version{};
    const std::string& text = r.environment.ncclVersion;
    const bool known = !text.empty() && parseVersion(text, version);
    if (!text.empty() && !known) {
        ctx.emit("nccl.version-format", fields::kEnvironmentNcclVersion,
                 "nccl_version '" + text + "' does not read as MAJOR.MINOR.PATCH",
                 "e.g. nccl_version: \"2.30.7\"");
    }
    if (requiredNcclVersionCode(r, l) != 0) {
        const std::string engine = "engines of " + str(l.gpusPerEngine) + " GPUs span " +
                                   str((l.gpusPerEngine + l.gpusPerNode - 1) / l.gpusPerNode) +
                                   " nodes with CUDA graphs";
        if (!known) {
            ctx.emitAt("nccl.cross-node-engine", Severity::Info, fields::kEnvironmentNcclVersion,
                       fields::kRolloutGpusPerEngine,
                       engine +
                           ": they need NCCL >= 2.30.7; the version is not declared (preflight "
                           "checks the library the run loads)",
                       "set environment.nccl_version once known");
        } else if (versionBelow(version, {2, 30, 7})) {
            ctx.emitAt("nccl.cross-node-engine", Severity::Error, fields::kEnvironmentNcclVersion,
                       fields::kRolloutGpusPerEngine,
                       engine + ": NCCL " + text +
                           " is older than 2.30.7 (2.28.x deadlocks CUDA-graph-captured "
                           "cross-node collectives)",
                       "install nvidia-nccl-cu13==2.30.7 and point SGLANG_NCCL_SO_PATH and "
                       "LD_PRELOAD at its libnccl.so.2");
        }
    }
    if (known && l.colocate && l.trainerNodes > 1 && versionBelow(version, {2, 28, 0})) {
        ctx.emit("nccl.multinode-colocate", fields::kEnvironmentNcclVersion,
                 "multi-node colocate with NCCL " + text +
                     ": 2.27.5 failed with 'Bad address' after the first pause/resume",
                 "upgrade NCCL (>= 2.30.7), or run disaggregated");
    }
    // Host memory per node (the message text is only built when a line is crossed).
    if (m.peakBytes > m.hostAlarmBytes && !m.nodes.empty()) {
        const NodeMemory& peak = m.nodes[std::size_t(m.peakNode)];
        std::string top;
        const PhaseMemory& pm = peak.phases[std::size_t(peak.peakPhase)];
        std::array<const MemoryItem*, PhaseMemory::kCapacity> sorted{};
        std::size_t n = 0;
        for (const auto& item : pm.items()) {
            sorted[n++] = &item;
        }
        std::sort(sorted.begin(), sorted.begin() + long(n),
                  [](const MemoryItem* a, const MemoryItem* b) { return a->bytes > b->bytes; });
        for (std::size_t i = 0; i < std::min<std::size_t>(n, 3); ++i) {
            top += (i == 0 ? "" : ", ") + std::string(toString(sorted[i]->component)) + " " +
                   gb(sorted[i]->bytes);
        }
        const std::string where = "node " + str(m.peakNode) + " peaks at " + gb(m.peakBytes) +
                                  " of host memory in " + toString(m.peakPhase) + " (" + top + ")";
        if (m.peakBytes > m.hostRamBytes) {
            ctx.emit("memory.host-over-ram", overSeverity(r), fields::kHardwareHostRamGb,
                     where + ", over its " + gb(m.hostRamBytes) + " of RAM" + assumedNote(r),
                     assumedHint(r,
                                 "apply the memory safeguards (drop page cache, peak device "
                                 "gpu, zero-copy backups, no KL loss) or add nodes"));
        } else {
            const bool own = r.analysis.memoryAlarmGb.has_value();
            ctx.emit("memory.host-over-alarm",
                     own ? fields::kAnalysisMemoryAlarmGb : fields::kHardwareHostRamGb,
                     where + ", above the alarm line " + gb(m.hostAlarmBytes) +
                         (own ? " (analysis.memory_alarm_gb)" : " (750 of 956 GB)"),
                     "look for a second backup or page cache in the components");
        }
    }
    if (l.colocate && m.trainerBackupPerNodeMax > 0 && m.engineMirrorPerNodeMax > 0 &&
        r.memory.colocateMemoryPeakDevice == PeakDevice::Cpu) {
        ctx.emit("memory.one-host-backup", fields::kMemoryColocateMemoryPeakDevice,
                 "the trainer backup (" + gb(m.trainerBackupPerNodeMax) +
                     "/node) and the engine mirror (" + gb(m.engineMirrorPerNodeMax) +
                     "/node) are both resident during the hand-off: exactly one side should hold "
                     "a host backup",
                 "set memory.colocate_memory_peak_device: gpu");
    }
    if (m.cloneArenaPerRank > 0) {
        ctx.emit("memory.clone-backup", fields::kMemoryBackupMode,
                 "clone backups leave about " + gb(m.cloneArenaPerRank) +
                     " per rank of glibc malloc arena after every weight update",
                 "set memory.backup_mode: zero_copy");
    }
    if (!r.memory.dropCheckpointPageCacheAfterLoad &&
        m.pageCachePerNodeMax > 0.05 * m.hostRamBytes) {
        // Page cache is reclaimable: it only matters when it is what lifts a node over the line.
        const bool matters = m.peakBytes > m.hostAlarmBytes &&
                             m.peakBytes - m.pageCachePerNodeMax <= m.hostAlarmBytes;
        ctx.emit(
            "memory.page-cache", matters ? Severity::Warning : Severity::Info,
            fields::kMemoryDropCheckpointPageCacheAfterLoad,
            "reading the checkpoint leaves " + gb(m.pageCachePerNodeMax) +
                " per node of page cache that competes with the pinned-allocation peak" +
                (matters ? std::string(" and lifts the node over the alarm line") : std::string()),
            "set memory.drop_checkpoint_page_cache_after_load: true (miles)");
    }
    // Device memory per GPU class: over HBM is an error, less than the headroom left a warning.
    // Both name what CPU Adam would take off the GPU when the optimizer state is on it.
    auto cpuAdamNote = [&](const GpuMemory& g) {
        const double adam = g.phases[std::size_t(g.peakPhase)].bytesOf(Component::TrainerOptimizer);
        if (adam <= 0 || r.optimizer.cpuOffload) {
            return std::string();
        }
        return "; CPU Adam (optimizer.cpu_offload) removes " + gb(adam) + " of optimizer state";
    };
    for (const auto& g : m.gpus) {
        if (g.peakBytes > m.gpuBytes) {
            ctx.emit("memory.gpu-over-capacity", overSeverity(r), fields::kHardwareGpuMemoryGb,
                     g.label() + " peaks at " + gb(g.peakBytes) + " in " + toString(g.peakPhase) +
                         ", over " + gb(m.gpuBytes) + " of HBM" + cpuAdamNote(g) + assumedNote(r),
                     assumedHint(r,
                                 "widen the parallelism (TP/PP/EP), enable CPU Adam, "
                                 "recompute or lower max_tokens_per_gpu"));
            break;
        }
    }
    for (const auto& g : m.gpus) {
        if (g.peakBytes <= m.gpuBytes && g.peakBytes > (1.0 - kGpuHeadroomFraction) * m.gpuBytes) {
            ctx.emit("memory.gpu-headroom", fields::kHardwareGpuMemoryGb,
                     g.label() + " peaks at " + gb(g.peakBytes) + " in " + toString(g.peakPhase) +
                         ", leaving " + gb(m.gpuBytes - g.peakBytes) + " of " + gb(m.gpuBytes) +
                         " HBM (under the " + num(kGpuHeadroomFraction * 100) + " % headroom)" +
                         cpuAdamNote(g),
                     "widen the parallelism, enable CPU Adam or lower max_tokens_per_gpu");
            break;
        }
    }
    if (!m.cpuOnly && l.rolloutGpus > 0 && r.rollout.memFraction > 0 &&
        m.engineWeightsPerGpu >= r.rollout.memFraction * m.gpuBytes) {
        ctx.emit("memory.engine-weights-fit", overSeverity(r), fields::kRolloutMemFraction,
                 "engine weights take " + gb(m.engineWeightsPerGpu) + " per GPU (" +
                     toString(r.rollout.weightDtype) + "), more than mem_fraction " +
                     num(r.rollout.memFraction) + " x " + gb(m.gpuBytes) + " = " +
                     gb(r.rollout.memFraction * m.gpuBytes) + ": no room for the KV cache" +
                     assumedNote(r),
                 assumedHint(r,
                             "raise gpus_per_engine or mem_fraction, or set "
                             "rollout.weight_dtype to the checkpoint's precision"));
    }
}

}  // namespace runplane::plan::detail

namespace runplane::plan::detail {

void checkLauncher(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const LauncherKind kind = effectiveLauncher(r);
    if (kind == LauncherKind::Command && r.launcher.argv.empty()) {
        ctx.emit("launcher.command-argv", fields::kLauncherArgv,
                 "launcher kind command needs launcher.argv (the program and its arguments)",
                 "e.g. argv: [runplane-smoke, --device, cpu]");
    }
    // a bash script with `ray job submit ... train.py` (slime_bash) launches miles as well: miles
    // ships such scripts (scripts/run-*.sh); only miles' Python launcher is framework-bound
    if (kind == LauncherKind::MilesScript && r.framework != Framework::Miles) {
        ctx.emit("launcher.kind-framework", fields::kLauncherKind,
                 std::string("launcher kind ") + toString(kind) + " does not launch " +
                     toString(r.framework),
                 "use slime_bash");
    }
    if (kind != LauncherKind::Command) {
        return;
    }
    // Flags the command repeats from the recipe must say the same thing.
    const auto& argv = r.launcher.argv;
    auto check = [&](const char* flag, const std::string& expected, const char* field) {
        for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
            if (argv[i] == flag && argv[i + 1] != expected) {
                ctx.emit("launcher.argv-consistency", fields::kLauncherArgv,
                         std::string("launcher.argv passes ") + flag + " " + argv[i + 1] + " but " +
                             field + " is " + expected,
                         std::string("make them agree (") + field + " = " + expected + ")");
            }
        }
    };
    const Batch& b = r.batch;
    check("--rollout-batch-size", std::to_string(b.rolloutBatchSize), "batch.rollout_batch_size");
    check("--n-samples-per-prompt", std::to_string(b.nSamplesPerPrompt),
          "batch.n_samples_per_prompt");
    if (b.globalBatchSize.has_value()) {
        check("--global-batch-size", std::to_string(*b.globalBatchSize), "batch.global_batch_size");
    }
    if (b.numRollout.has_value()) {
        check("--rl-steps", std::to_string(*b.numRollout), "batch.num_rollout");
        check("--num-rollout", std::to_string(*b.numRollout), "batch.num_rollout");
    }
    check("--lora-rank", std::to_string(r.lora.rank), "lora.rank");
    check("--lora-alpha", num(r.lora.alpha), "lora.alpha");
    check("--backup-mode", toString(r.memory.backupMode), "memory.backup_mode");
    check("--layers", std::to_string(ctx.shape.numLayers), "the model's num_layers");
}

}  // namespace runplane::plan::detail
