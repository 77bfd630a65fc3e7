// The recipe field table (recipe_fields.h). One row per field: its path, accessor, label,
// tooltip and when it applies; the kind, the enum choices, the default and the bound (from
// recipe_limits.cpp) are derived from the accessor's type and the path, so they cannot disagree
// with the Recipe struct or the limits table.

#include "backend/plan/recipe_fields.h"

#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "backend/plan/detail/enum_tables.h"
#include "backend/plan/detail/yaml_support.h"

namespace runplane::plan {
namespace {

// ---- value <-> FieldValue, by C++ type ----

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {
    using Inner = T;
};

template <typename T>
constexpr FieldKind kindOf() {
    if constexpr (IsOptional<T>::value) {
        return kindOf<typename IsOptional<T>::Inner>();
    } else if constexpr (std::is_same_v<T, bool>) {
        return FieldKind::Bool;
    } else if constexpr (std::is_same_v<T, int>) {
        return FieldKind::Int;
    } else if constexpr (std::is_same_v<T, double>) {
        return FieldKind::Double;
    } else if constexpr (std::is_same_v<T, std::string>) {
        return FieldKind::String;
    } else if constexpr (std::is_enum_v<T>) {
        return FieldKind::Enum;
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
        return FieldKind::IntList;
    } else {
        static_assert(std::is_same_v<T, std::vector<std::string>>, "not a scalar field type");
        return FieldKind::StringList;
    }
}

template <typename T>
FieldValue toValue(const T& v) {
    if constexpr (IsOptional<T>::value) {
        return v.has_value() ? toValue(*v) : FieldValue{};
    } else if constexpr (std::is_enum_v<T>) {
        return std::string(detail::enumName(v));
    } else {
        return FieldValue{v};
    }
}

// Applies v to out when it holds out's type (an enum: a known name); false otherwise.
template <typename T>
bool fromValue(const FieldValue& v, T& out) {
    if constexpr (IsOptional<T>::value) {
        if (std::holds_alternative<std::monostate>(v)) {
            out.reset();
            return true;
        }
        typename IsOptional<T>::Inner inner{};
        if (!fromValue(v, inner)) {
            return false;
        }
        out = std::move(inner);
        return true;
    } else if constexpr (std::is_enum_v<T>) {
        const auto* name = std::get_if<std::string>(&v);
        return name != nullptr && detail::enumFromName(*name, out);
    } else {
        const auto* p = std::get_if<T>(&v);
        if (p == nullptr) {
            return false;
        }
        out = *p;
        return true;
    }
}

template <typename T>
std::vector<std::string_view> choicesOf() {
    if constexpr (IsOptional<T>::value) {
        return choicesOf<typename IsOptional<T>::Inner>();
    } else if constexpr (std::is_enum_v<T>) {
        std::vector<std::string_view> names;
        for (const auto& entry : detail::enumTable(static_cast<const T*>(nullptr))) {
            names.emplace_back(entry.name);
        }
        return names;
    } else {
        return {};
    }
}

// Ref: a captureless generic lambda returning a reference to the field (const or not).
template <auto Ref>
FieldValue getField(const Recipe& r) {
    return toValue(Ref(r));
}

template <auto Ref>
void setField(Recipe& r, const FieldValue& v) {
    fromValue(v, Ref(r));
}

using Why = const char* (*)(const Recipe&);

struct Row : RecipeField {
    Row& dec(int digits) {
        decimals = digits;
        return *this;
    }
    Row& unset(const char* text) {
        unsetText = text;
        return *this;
    }
    Row& bespoke() {
        bespokeYaml = true;
        return *this;
    }
    Row& always() {
        alwaysWritten = true;
        return *this;
    }
};

template <auto Ref>
Row field(std::string_view path, const char* label, const char* tooltip = "", Why why = nullptr) {
    using T = std::remove_cvref_t<decltype(Ref(std::declval<Recipe&>()))>;
    Row f;
    f.path = path;
    const auto dot = path.rfind('.');
    f.section = dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
    f.key = path.data() + (dot == std::string_view::npos ? 0 : dot + 1);  // NUL-terminated
    f.kind = kindOf<T>();
    f.optional = IsOptional<T>::value;
    f.choices = choicesOf<T>();
    if (f.isNumeric()) {
        f.bound = findFieldBound(f.kind == FieldKind::IntList ? std::string(path) + "[]"
                                                              : std::string(path));
    }
    f.label = label;
    f.tooltip = tooltip;
    f.decimals = f.kind == FieldKind::Double ? 2 : 0;
    f.get = &getField<Ref>;
    f.set = &setField<Ref>;
    f.disabledWhy = why;
    return f;
}

#define RP_FIELD(MEMBER)           \
    field < [](auto& r) -> auto& { \
        return r.MEMBER;           \
    }                              \
    >

// ---- when a field applies ----

bool colocate(const Recipe& r) {
    return r.placement == Placement::Colocate;
}
bool vllm(const Recipe& r) {
    return effectiveEngine(r) == RolloutEngine::Vllm;
}

const char* underColocateTrainer(const Recipe& r) {
    return colocate(r) ? "under colocate the trainer uses every node" : nullptr;
}
const char* megatronOnly(const Recipe& r) {
    return r.trainer.backend == TrainBackend::Fsdp
               ? "FSDP shards by data parallelism only: Megatron parallelism does not apply"
               : nullptr;
}
const char* needsTp(const Recipe& r) {
    return r.trainer.tp <= 1 ? "sequence parallelism needs TP > 1" : nullptr;
}
const char* ppOnly(const Recipe& r) {
    const char* m = megatronOnly(r);
    return m != nullptr ? m : (r.trainer.pp <= 1 ? "needs PP > 1" : nullptr);
}
const char* underColocateRollout(const Recipe& r) {
    return colocate(r) ? "under colocate the engines use the trainer's GPUs" : nullptr;
}
const char* sglangEp(const Recipe& r) {
    return vllm(r) ? "vLLM derives EP = TP × DP from expert parallel" : nullptr;
}
const char* sglangDpAttention(const Recipe& r) {
    return vllm(r) ? "an SGLang option; vLLM uses DP with expert parallel" : nullptr;
}
const char* vllmExpertParallel(const Recipe& r) {
    return vllm(r) ? nullptr : "a vLLM option; SGLang sets EP with ep_size";
}
const char* eplbWhy(const Recipe& r) {
    if (!vllm(r)) {
        return "EPLB here is vLLM's expert-parallel load balancer";
    }
    return r.rollout.expertParallel ? nullptr : "needs expert parallel";
}
const char* eplbExpertsWhy(const Recipe& r) {
    const char* w = eplbWhy(r);
    return w != nullptr ? w : (r.rollout.eplb.enabled ? nullptr : "EPLB is off");
}
const char* cudaGraphOff(const Recipe& r) {
    return r.rollout.cudaGraph ? nullptr : "CUDA graphs are off";
}
const char* bf16Weights(const Recipe& r) {
    return r.rollout.weightDtype == WeightDtype::Bf16 ? "weights are BF16: nothing is quantised"
                                                      : nullptr;
}
const char* klLossOff(const Recipe& r) {
    return r.algorithm.useKlLoss ? nullptr : "KL loss is off";
}
const char* opdOff(const Recipe& r) {
    return r.algorithm.useOpd ? nullptr : "on-policy distillation is off";
}
const char* cpuOffloadOff(const Recipe& r) {
    return r.optimizer.cpuOffload ? nullptr : "CPU offload is off";
}
const char* loraOff(const Recipe& r) {
    return r.lora.rank <= 0 ? "LoRA is off (rank 0)" : nullptr;
}
const char* colocateOnly(const Recipe& r) {
    return colocate(r) ? nullptr : "only used under colocate";
}
const char* diskOnly(const Recipe& r) {
    return r.weightUpdate.transport == WeightTransport::Disk ? nullptr : "only for transport disk";
}
const char* commandOnly(const Recipe& r) {
    return r.launcher.kind == LauncherKind::Command ? nullptr : "only for launcher kind command";
}
const char* rayStopOff(const Recipe& r) {
    return r.launcher.rayStop ? nullptr : "ray stop is off";
}

std::vector<RecipeField> buildTable() {
    const Row rows[] = {
        RP_FIELD(name)("name", "Name"),
        RP_FIELD(description)("description", "Description", "one line"),
        RP_FIELD(framework)("framework", "Framework",
                            "miles, slime, or the vLLM-based variant (vime)")
            .always(),
        RP_FIELD(model.name)("model.name", "Model", "a model of the catalog (recipes/models)")
            .bespoke(),
        RP_FIELD(model.variant)("model.variant", "Variant", "--model-variant").bespoke(),

        RP_FIELD(hardware.gpu)("hardware.gpu", "GPU"),
        RP_FIELD(hardware.gpuMemoryGb)("hardware.gpu_memory_gb", "HBM per GPU (GB)").dec(1),
        RP_FIELD(hardware.gpusPerNode)("hardware.gpus_per_node", "GPUs per node",
                                       "0 = a CPU-only node"),
        RP_FIELD(hardware.hostRamGb)("hardware.host_ram_gb", "Host RAM per node (GB)").dec(0),
        RP_FIELD(hardware.cpuArch)("hardware.cpu_arch", "CPU"),
        RP_FIELD(hardware.nvlink)("hardware.nvlink", "NVLink"),
        RP_FIELD(hardware.assumed)(
            "hardware.assumed", "Hardware assumed",
            "the importer's stand-ins: memory findings over HBM / RAM are warnings"),

        RP_FIELD(cluster.nodes)("cluster.nodes", "Nodes"),
        RP_FIELD(cluster.masterAddr)(
            "cluster.master_addr", "Master address",
            "the head's LAN IP (never 127.0.0.1 for multi-node); empty = decided at launch"),
        RP_FIELD(cluster.rayObjectStoreFraction)("cluster.ray_object_store_fraction",
                                                 "Ray object store share of RAM"),
        RP_FIELD(cluster.rayObjectStoreMaxGb)("cluster.ray_object_store_max_gb",
                                              "Ray object store cap (GB)")
            .dec(0),
        RP_FIELD(placement)("placement", "Placement",
                            "colocate: trainer and engines share GPUs and take turns"),

        RP_FIELD(trainer.backend)("trainer.backend", "Backend", "--train-backend"),
        RP_FIELD(trainer.nodes)("trainer.nodes", "Trainer nodes", "--actor-num-nodes",
                                underColocateTrainer)
            .unset("default (= cluster nodes)"),
        RP_FIELD(trainer.gpusPerNode)("trainer.gpus_per_node", "Trainer GPUs per node",
                                      "--actor-num-gpus-per-node")
            .unset("default (= hardware GPUs per node)"),
        RP_FIELD(trainer.tp)("trainer.tp", "TP", "--tensor-model-parallel-size", megatronOnly),
        RP_FIELD(trainer.pp)("trainer.pp", "PP", "--pipeline-model-parallel-size", megatronOnly),
        RP_FIELD(trainer.cp)("trainer.cp", "CP", "--context-parallel-size", megatronOnly),
        RP_FIELD(trainer.ep)("trainer.ep", "EP", "--expert-model-parallel-size", megatronOnly),
        RP_FIELD(trainer.etp)("trainer.etp", "ETP", "default: = TP", megatronOnly)
            .unset("default (= TP)"),
        RP_FIELD(trainer.sequenceParallel)("trainer.sequence_parallel", "Sequence parallel",
                                           "--sequence-parallel", needsTp),
        RP_FIELD(trainer.decoderFirstPipelineNumLayers)("trainer.decoder_first_pipeline_num_layers",
                                                        "First PP stage layers", "", ppOnly),
        RP_FIELD(trainer.decoderLastPipelineNumLayers)("trainer.decoder_last_pipeline_num_layers",
                                                       "Last PP stage layers", "", ppOnly),
        RP_FIELD(trainer.numLayersPerVirtualStage)("trainer.num_layers_per_virtual_stage",
                                                   "Layers per virtual stage", "", ppOnly),
        RP_FIELD(trainer.recompute)("trainer.recompute", "Activation recompute",
                                    "full / uniform / 1"),

        RP_FIELD(rollout.engine)("rollout.engine", "Engine")
            .unset("default (vllm for vime, sglang otherwise)"),
        RP_FIELD(rollout.numGpus)("rollout.num_gpus", "Rollout GPUs", "--rollout-num-gpus",
                                  underColocateRollout),
        RP_FIELD(rollout.gpusPerEngine)("rollout.gpus_per_engine", "GPUs per engine",
                                        "--rollout-num-gpus-per-engine"),
        RP_FIELD(rollout.engines)("rollout.engines", "Engines (cross-check)",
                                  "= rollout GPUs / GPUs per engine"),
        RP_FIELD(rollout.ppSize)("rollout.pp_size", "Engine PP"),
        RP_FIELD(rollout.dpSize)("rollout.dp_size", "Engine DP"),
        RP_FIELD(rollout.epSize)("rollout.ep_size", "Engine EP (SGLang)", "--sglang-ep-size",
                                 sglangEp),
        RP_FIELD(rollout.dpAttention)("rollout.dp_attention", "DP attention (SGLang)", "",
                                      sglangDpAttention),
        RP_FIELD(rollout.expertParallel)("rollout.expert_parallel", "Expert parallel (vLLM)",
                                         "--vllm-enable-expert-parallel", vllmExpertParallel),
        RP_FIELD(rollout.eplb.enabled)("rollout.eplb.enabled", "EPLB", "", eplbWhy),
        RP_FIELD(rollout.eplb.redundantExperts)("rollout.eplb.redundant_experts",
                                                "Redundant experts", "", eplbExpertsWhy),
        RP_FIELD(rollout.memFraction)(
            "rollout.mem_fraction", "Memory fraction",
            "--sglang-mem-fraction-static / --vllm-gpu-memory-utilization"),
        RP_FIELD(rollout.cudaGraph)("rollout.cuda_graph", "CUDA graphs"),
        RP_FIELD(rollout.cudaGraphSizes)("rollout.cuda_graph_sizes", "CUDA graph batch sizes",
                                         "the batch sizes captured, e.g. 1, 2, 4, 8", cudaGraphOff),
        RP_FIELD(rollout.cudaGraphMaxBs)("rollout.cuda_graph_max_bs", "CUDA graph max batch",
                                         "0 = the engine's default", cudaGraphOff),
        RP_FIELD(rollout.weightDtype)("rollout.weight_dtype", "Engine weights"),
        RP_FIELD(rollout.quantScope)("rollout.quant_scope", "Quantised weights", "", bf16Weights),
        RP_FIELD(rollout.maxResponseLen)("rollout.max_response_len", "Max response length",
                                         "--rollout-max-response-len"),
        RP_FIELD(rollout.maxContextLen)("rollout.max_context_len", "Max context length"),
        RP_FIELD(rollout.maxPromptLen)("rollout.max_prompt_len", "Max prompt length"),
        RP_FIELD(rollout.temperature)("rollout.temperature", "Sampling temperature",
                                      "--rollout-temperature (default 1.0)"),
        RP_FIELD(rollout.moeBackend)("rollout.moe_backend", "MoE backend"),
        RP_FIELD(rollout.loraBackend)("rollout.lora_backend", "LoRA backend",
                                      "MoE LoRA on SGLang needs triton", loraOff),

        RP_FIELD(batch.rolloutBatchSize)("batch.rollout_batch_size", "Rollout batch size",
                                         "prompts per rollout step (required)"),
        RP_FIELD(batch.nSamplesPerPrompt)("batch.n_samples_per_prompt", "Samples per prompt"),
        RP_FIELD(batch.globalBatchSize)("batch.global_batch_size", "Global batch size",
                                        "must equal rollout batch size × samples per prompt"),
        RP_FIELD(batch.numStepsPerRollout)("batch.num_steps_per_rollout",
                                           "Optimizer steps per rollout"),
        RP_FIELD(batch.microBatchSize)("batch.micro_batch_size", "Micro batch size"),
        RP_FIELD(batch.dynamicBatchSize)("batch.dynamic_batch_size", "Dynamic batch size"),
        RP_FIELD(batch.maxTokensPerGpu)(
            "batch.max_tokens_per_gpu", "Max tokens per GPU",
            "token budget per GPU per micro-batch (× CP with context parallelism)"),
        RP_FIELD(batch.overSamplingBatchSize)("batch.over_sampling_batch_size",
                                              "Over-sampling batch size"),
        RP_FIELD(batch.numRollout)("batch.num_rollout", "Rollouts"),
        RP_FIELD(batch.numEpoch)("batch.num_epoch", "Epochs"),

        RP_FIELD(algorithm.advantageEstimator)("algorithm.advantage_estimator", "Advantage"),
        RP_FIELD(algorithm.useKlLoss)("algorithm.use_kl_loss", "KL loss",
                                      "loads the full reference model even with a zero "
                                      "coefficient"),
        RP_FIELD(algorithm.klLossCoef)("algorithm.kl_loss_coef", "KL loss coefficient", "",
                                       klLossOff)
            .dec(4),
        RP_FIELD(algorithm.klLossType)("algorithm.kl_loss_type", "KL loss type"),
        RP_FIELD(algorithm.klCoef)(
            "algorithm.kl_coef", "KL reward coefficient",
            "reward-shaping KL (--kl-coef): loads the reference model when > 0")
            .dec(4),
        RP_FIELD(algorithm.epsClip)("algorithm.eps_clip", "Clip ε").dec(3),
        RP_FIELD(algorithm.epsClipHigh)("algorithm.eps_clip_high", "Clip ε (high)",
                                        "--eps-clip-high")
            .dec(3)
            .unset("default (= clip ε)"),
        RP_FIELD(algorithm.entropyCoef)("algorithm.entropy_coef", "Entropy coefficient").dec(4),
        RP_FIELD(algorithm.useTis)("algorithm.use_tis", "TIS"),
        RP_FIELD(algorithm.lr)("algorithm.lr", "Learning rate").dec(8),
        RP_FIELD(algorithm.normalizeAdvantages)("algorithm.normalize_advantages",
                                                "Normalize advantages",
                                                "--normalize-advantages (reinforce++ needs it)"),
        RP_FIELD(algorithm.useRolloutLogprobs)("algorithm.use_rollout_logprobs",
                                               "Use rollout logprobs",
                                               "--use-rollout-logprobs (exclusive with TIS)"),
        RP_FIELD(algorithm.useOpd)("algorithm.use_opd", "On-policy distillation", "--use-opd"),
        RP_FIELD(algorithm.opdType)("algorithm.opd_type", "OPD teacher runs in", "--opd-type",
                                    opdOff)
            .unset("unset (required with OPD)"),

        RP_FIELD(optimizer.kind)("optimizer.kind", "Optimizer", "--optimizer"),
        RP_FIELD(optimizer.distributed)("optimizer.distributed", "Distributed optimizer"),
        RP_FIELD(optimizer.cpuOffload)("optimizer.cpu_offload", "CPU Adam (offload)"),
        RP_FIELD(optimizer.overlapCpuOptimizerD2hH2d)("optimizer.overlap_cpu_optimizer_d2h_h2d",
                                                      "Overlap D2H/H2D", "", cpuOffloadOff),
        RP_FIELD(optimizer.precisionAware)("optimizer.precision_aware",
                                           "Precision-aware optimizer"),
        RP_FIELD(optimizer.offloadFraction)("optimizer.offload_fraction", "Offload fraction", "",
                                            cpuOffloadOff),

        RP_FIELD(lora.rank)("lora.rank", "Rank (0 = off)"),
        RP_FIELD(lora.alpha)("lora.alpha", "Alpha", "", loraOff).dec(1),
        RP_FIELD(lora.dropout)("lora.dropout", "Dropout", "", loraOff),
        RP_FIELD(lora.targetModules)("lora.target_modules", "Target modules",
                                     "all-linear, or q_proj, k_proj, v_proj, o_proj ...", loraOff),
        RP_FIELD(lora.baseCpuBackup)(
            "lora.base_cpu_backup", "Base weights CPU backup",
            "--lora-base-cpu-backup: engines keep a host mirror; weight sync sends LoRA deltas "
            "only",
            loraOff),

        RP_FIELD(memory.offloadTrain)("memory.offload_train", "Offload trainer while rolling out")
            .unset("default (on under colocate)"),
        RP_FIELD(memory.offloadRollout)("memory.offload_rollout", "Offload engines while training")
            .unset("default (on under colocate)"),
        RP_FIELD(memory.offloadTrainTarget)("memory.offload_train_target", "Offload trainer to"),
        RP_FIELD(memory.dropCheckpointPageCacheAfterLoad)(
            "memory.drop_checkpoint_page_cache_after_load", "Drop checkpoint page cache",
            "the multi-TB checkpoint read leaves page cache competing with the pinned peak"),
        RP_FIELD(memory.colocateMemoryPeakDevice)("memory.colocate_memory_peak_device",
                                                  "Colocate peak device", "", colocateOnly),
        RP_FIELD(memory.backupMode)(
            "memory.backup_mode", "Weight-sync backup",
            "clone leaves ~75 GB per rank of malloc arena behind after every update"),
        RP_FIELD(memory.reloadRolloutWeightsFromDisk)("memory.reload_rollout_weights_from_disk",
                                                      "Reload engine weights from disk"),
        RP_FIELD(memory.disableWeightsBackuper)("memory.disable_weights_backuper",
                                                "Disable weights backuper"),
        RP_FIELD(memory.updateWeightBufferGb)("memory.update_weight_buffer_gb",
                                              "Weight-update bucket (GB)")
            .dec(3),
        RP_FIELD(memory.processHostGb)("memory.process_host_gb", "Host RAM per GPU process (GB)",
                                       "a measured fixed budget (docs/memory-model.md §5)"),
        RP_FIELD(memory.processGpuGb)("memory.process_gpu_gb", "HBM per GPU process (GB)",
                                      "a measured fixed budget (docs/memory-model.md §5)"),
        RP_FIELD(memory.allocatorFragmentation)("memory.allocator_fragmentation",
                                                "Allocator fragmentation",
                                                "slack over the transient (activation) peak"),

        RP_FIELD(weightUpdate.mode)("weight_update.mode", "Mode"),
        RP_FIELD(weightUpdate.transport)("weight_update.transport", "Transport"),
        RP_FIELD(weightUpdate.diskDir)("weight_update.disk_dir", "Shared disk directory",
                                       "--update-weight-disk-dir (shared by trainer and engines)",
                                       diskOnly),
        RP_FIELD(weightUpdate.localCheckpointDir)(
            "weight_update.local_checkpoint_dir",
            "Local checkpoint directory",
            "--update-weight-local-checkpoint-dir (rollout-host NVMe)", diskOnly),
        RP_FIELD(weightUpdate.releaseTrain)("weight_update.release_train",
                                            "Release trainer every step", "--release-train"),

        RP_FIELD(environment.ncclVersion)(
            "environment.nccl_version", "NCCL version",
            "the NCCL the run loads, e.g. 2.30.7 (cross-node CUDA-graph rollout needs >= 2.30.7)"),
        RP_FIELD(environment.ncclSoPath)("environment.nccl_so_path", "libnccl path"),

        RP_FIELD(checkpoints.modelDir)("checkpoints.model_dir", "Model dir"),
        RP_FIELD(checkpoints.hfCheckpoint)("checkpoints.hf_checkpoint", "HF checkpoint"),
        RP_FIELD(checkpoints.refLoad)("checkpoints.ref_load", "Reference (torch_dist)"),
        RP_FIELD(checkpoints.load)("checkpoints.load", "Load"),
        RP_FIELD(checkpoints.save)("checkpoints.save", "Save"),
        RP_FIELD(checkpoints.saveInterval)("checkpoints.save_interval", "Save interval"),
        RP_FIELD(checkpoints.convertedEp)("checkpoints.converted_ep",
                                          "Checkpoint converted with EP",
                                          "must equal the trainer's EP, else loading may hang"),
        RP_FIELD(checkpoints.noSaveOptim)("checkpoints.no_save_optim", "Do not save optimizer",
                                          "--no-save-optim"),
        RP_FIELD(checkpoints.noLoadOptim)("checkpoints.no_load_optim", "Do not load optimizer",
                                          "--no-load-optim"),
        RP_FIELD(checkpoints.opdTeacherLoad)("checkpoints.opd_teacher_load",
                                             "OPD teacher checkpoint",
                                             "--opd-teacher-load: the megatron OPD teacher"),

        RP_FIELD(eval.interval)("eval.interval", "Interval (rollouts)"),
        RP_FIELD(eval.nSamplesPerEvalPrompt)("eval.n_samples_per_eval_prompt",
                                             "Samples per eval prompt"),
        RP_FIELD(eval.maxResponseLen)("eval.max_response_len", "Eval max response length"),
        RP_FIELD(eval.skipEvalBeforeTrain)("eval.skip_eval_before_train",
                                           "Skip eval before training"),

        RP_FIELD(launcher.kind)("launcher.kind", "Kind")
            .unset("default (miles_script for miles, slime_bash otherwise)"),
        RP_FIELD(launcher.script)("launcher.script", "Script"),
        RP_FIELD(launcher.entryPoint)("launcher.entry_point", "Entry point",
                                      "train.py (synchronous) or train_async.py (cannot "
                                      "colocate)"),
        RP_FIELD(launcher.argv)("launcher.argv", "Command (argv)", "one argument per line",
                                commandOnly),
        RP_FIELD(launcher.workdir)("launcher.workdir", "Working directory"),
        RP_FIELD(launcher.preLaunch)("launcher.pre_launch", "Before the job",
                                     "shell lines run before the job, one per line"),
        RP_FIELD(launcher.rayStartArgs)("launcher.ray_start_args", "ray start arguments",
                                        "words the head's ray start gets besides its own"),
        RP_FIELD(launcher.rayStop)("launcher.ray_stop", "ray stop first"),
        RP_FIELD(launcher.rayStopArgs)("launcher.ray_stop_args", "ray stop arguments", "",
                                       rayStopOff),

        RP_FIELD(analysis.primaryMetric)(
            "analysis.primary_metric", "Primary metric",
            "the series the Runs table shows, e.g. eval/gsm8k (empty: the first score-kind "
            "eval/* series)"),
        RP_FIELD(analysis.memoryAlarmGb)(
            "analysis.memory_alarm_gb", "Memory alarm line",
            "host memory per node, decimal GB: the memory panel's alarm line and the "
            "memory.host-over-alarm rule")
            .unset("default (750/956 of RAM)"),
    };
    return std::vector<RecipeField>(std::begin(rows), std::end(rows));
}

#undef RP_FIELD

const std::vector<RecipeField>& table() {
    static const std::vector<RecipeField> fields = buildTable();
    return fields;
}

const std::unordered_map<std::string_view, const RecipeField*>& index() {
    static const auto byPath = [] {
        std::unordered_map<std::string_view, const RecipeField*> out;
        for (const RecipeField& f : table()) {
            out.emplace(f.path, &f);
        }
        return out;
    }();
    return byPath;
}

}  // namespace

FieldValue RecipeField::defaultValue() const {
    static const Recipe kDefaults;
    return get(kDefaults);
}

std::span<const RecipeField> recipeFields() {
    return table();
}

const RecipeField* findRecipeField(std::string_view path) {
    const auto it = index().find(path);
    return it == index().end() ? nullptr : it->second;
}

const RecipeField& recipeField(std::string_view path) {
    const RecipeField* f = findRecipeField(path);
    if (f == nullptr) {
        throw std::logic_error("'" + std::string(path) + "' is not in the recipe field table");
    }
    return *f;
}

std::string fieldValueText(const FieldValue& value) {
    struct Text {
        std::string operator()(std::monostate) const { return {}; }
        std::string operator()(bool v) const { return v ? "true" : "false"; }
        std::string operator()(int v) const { return std::to_string(v); }
        std::string operator()(double v) const { return detail::formatDouble(v); }
        std::string operator()(const std::string& v) const { return v; }
        std::string operator()(const std::vector<int>& v) const {
            std::string out = "[";
            for (std::size_t i = 0; i < v.size(); ++i) {
                out += (i == 0 ? "" : ", ") + std::to_string(v[i]);
            }
            return out + "]";
        }
        std::string operator()(const std::vector<std::string>& v) const {
            std::string out = "[";
            for (std::size_t i = 0; i < v.size(); ++i) {
                out += (i == 0 ? "" : ", ") + v[i];
            }
            return out + "]";
        }
    };
    return std::visit(Text{}, value);
}

}  // namespace runplane::plan
