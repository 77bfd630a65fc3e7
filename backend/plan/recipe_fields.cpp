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
Row fieldRow(FieldPath fieldPath, const char* label, const char* tooltip = "", Why why = nullptr) {
    using T = std::remove_cvref_t<decltype(Ref(std::declval<Recipe&>()))>;
    const std::string_view path = fieldPath.view();
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

#define RP_FIELD(MEMBER)              \
    fieldRow < [](auto& r) -> auto& { \
        return r.MEMBER;              \
    }                                 \
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
        RP_FIELD(name)(fields::kName, "Name"),
        RP_FIELD(description)(fields::kDescription, "Description", "one line"),
        RP_FIELD(framework)(fields::kFramework, "Framework",
                            "miles, slime, or the vLLM-based variant (vime)")
            .always(),
        RP_FIELD(frameworkAssumed)(
            fields::kFrameworkAssumed, "Framework assumed",
            "the importer's reading: the script says neither slime nor miles; a rule of one "
            "framework only is a warning"),
        RP_FIELD(model.name)(fields::kModelName, "Model", "a model of the catalog (recipes/models)")
            .bespoke(),
        RP_FIELD(model.variant)(fields::kModelVariant, "Variant", "--model-variant").bespoke(),

        RP_FIELD(hardware.gpu)(fields::kHardwareGpu, "GPU"),
        RP_FIELD(hardware.gpuMemoryGb)(fields::kHardwareGpuMemoryGb, "HBM per GPU (GB)").dec(1),
        RP_FIELD(hardware.gpusPerNode)(fields::kHardwareGpusPerNode, "GPUs per node",
                                       "0 = a CPU-only node"),
        RP_FIELD(hardware.hostRamGb)(fields::kHardwareHostRamGb, "Host RAM per node (GB)").dec(0),
        RP_FIELD(hardware.cpuArch)(fields::kHardwareCpuArch, "CPU"),
        RP_FIELD(hardware.nvlink)(fields::kHardwareNvlink, "NVLink"),
        RP_FIELD(hardware.assumed)(
            fields::kHardwareAssumed, "Hardware assumed",
            "the importer's stand-ins: memory findings over HBM / RAM are warnings"),

        RP_FIELD(cluster.nodes)(fields::kClusterNodes, "Nodes"),
        RP_FIELD(cluster.masterAddr)(
            fields::kClusterMasterAddr, "Master address",
            "the head's LAN IP (never 127.0.0.1 for multi-node); empty = decided at launch"),
        RP_FIELD(cluster.rayObjectStoreFraction)(fields::kClusterRayObjectStoreFraction,
                                                 "Ray object store share of RAM"),
        RP_FIELD(cluster.rayObjectStoreMaxGb)(fields::kClusterRayObjectStoreMaxGb,
                                              "Ray object store cap (GB)")
            .dec(0),
        RP_FIELD(placement)(fields::kPlacement, "Placement",
                            "colocate: trainer and engines share GPUs and take turns"),

        RP_FIELD(trainer.backend)(fields::kTrainerBackend, "Backend", "--train-backend"),
        RP_FIELD(trainer.nodes)(fields::kTrainerNodes, "Trainer nodes", "--actor-num-nodes",
                                underColocateTrainer)
            .unset("default (= cluster nodes)"),
        RP_FIELD(trainer.gpusPerNode)(fields::kTrainerGpusPerNode, "Trainer GPUs per node",
                                      "--actor-num-gpus-per-node")
            .unset("default (= hardware GPUs per node)"),
        RP_FIELD(trainer.tp)(fields::kTrainerTp, "TP", "--tensor-model-parallel-size",
                             megatronOnly),
        RP_FIELD(trainer.pp)(fields::kTrainerPp, "PP", "--pipeline-model-parallel-size",
                             megatronOnly),
        RP_FIELD(trainer.cp)(fields::kTrainerCp, "CP", "--context-parallel-size", megatronOnly),
        RP_FIELD(trainer.ep)(fields::kTrainerEp, "EP", "--expert-model-parallel-size",
                             megatronOnly),
        RP_FIELD(trainer.etp)(fields::kTrainerEtp, "ETP", "default: = TP", megatronOnly)
            .unset("default (= TP)"),
        RP_FIELD(trainer.sequenceParallel)(fields::kTrainerSequenceParallel, "Sequence parallel",
                                           "--sequence-parallel", needsTp),
        RP_FIELD(trainer.decoderFirstPipelineNumLayers)(
            fields::kTrainerDecoderFirstPipelineNumLayers, "First PP stage layers", "", ppOnly),
        RP_FIELD(trainer.decoderLastPipelineNumLayers)(fields::kTrainerDecoderLastPipelineNumLayers,
                                                       "Last PP stage layers", "", ppOnly),
        RP_FIELD(trainer.numLayersPerVirtualStage)(fields::kTrainerNumLayersPerVirtualStage,
                                                   "Layers per virtual stage", "", ppOnly),
        RP_FIELD(trainer.recompute)(fields::kTrainerRecompute, "Activation recompute",
                                    "full / uniform / 1"),

        RP_FIELD(rollout.engine)(fields::kRolloutEngine, "Engine")
            .unset("default (vllm for vime, sglang otherwise)"),
        RP_FIELD(rollout.numGpus)(fields::kRolloutNumGpus, "Rollout GPUs", "--rollout-num-gpus",
                                  underColocateRollout),
        RP_FIELD(rollout.gpusPerEngine)(fields::kRolloutGpusPerEngine, "GPUs per engine",
                                        "--rollout-num-gpus-per-engine"),
        RP_FIELD(rollout.engines)(fields::kRolloutEngines, "Engines (cross-check)",
                                  "= rollout GPUs / GPUs per engine"),
        RP_FIELD(rollout.ppSize)(fields::kRolloutPpSize, "Engine PP"),
        RP_FIELD(rollout.dpSize)(fields::kRolloutDpSize, "Engine DP"),
        RP_FIELD(rollout.epSize)(fields::kRolloutEpSize, "Engine EP (SGLang)", "--sglang-ep-size",
                                 sglangEp),
        RP_FIELD(rollout.dpAttention)(fields::kRolloutDpAttention, "DP attention (SGLang)", "",
                                      sglangDpAttention),
        RP_FIELD(rollout.expertParallel)(fields::kRolloutExpertParallel, "Expert parallel (vLLM)",
                                         "--vllm-enable-expert-parallel", vllmExpertParallel),
        RP_FIELD(rollout.eplb.enabled)(fields::kRolloutEplbEnabled, "EPLB", "", eplbWhy),
        RP_FIELD(rollout.eplb.redundantExperts)(fields::kRolloutEplbRedundantExperts,
                                                "Redundant experts", "", eplbExpertsWhy),
        RP_FIELD(rollout.memFraction)(
            fields::kRolloutMemFraction, "Memory fraction",
            "--sglang-mem-fraction-static / --vllm-gpu-memory-utilization"),
        RP_FIELD(rollout.cudaGraph)(fields::kRolloutCudaGraph, "CUDA graphs"),
        RP_FIELD(rollout.cudaGraphSizes)(fields::kRolloutCudaGraphSizes, "CUDA graph batch sizes",
                                         "the batch sizes captured, e.g. 1, 2, 4, 8", cudaGraphOff),
        RP_FIELD(rollout.cudaGraphMaxBs)(fields::kRolloutCudaGraphMaxBs, "CUDA graph max batch",
                                         "0 = the engine's default", cudaGraphOff),
        RP_FIELD(rollout.weightDtype)(fields::kRolloutWeightDtype, "Engine weights"),
        RP_FIELD(rollout.quantScope)(fields::kRolloutQuantScope, "Quantised weights", "",
                                     bf16Weights),
        RP_FIELD(rollout.maxResponseLen)(fields::kRolloutMaxResponseLen, "Max response length",
                                         "--rollout-max-response-len"),
        RP_FIELD(rollout.maxContextLen)(fields::kRolloutMaxContextLen, "Max context length"),
        RP_FIELD(rollout.maxPromptLen)(fields::kRolloutMaxPromptLen, "Max prompt length"),
        RP_FIELD(rollout.temperature)(fields::kRolloutTemperature, "Sampling temperature",
                                      "--rollout-temperature (default 1.0)"),
        RP_FIELD(rollout.moeBackend)(fields::kRolloutMoeBackend, "MoE backend"),
        RP_FIELD(rollout.loraBackend)(fields::kRolloutLoraBackend, "LoRA backend",
                                      "MoE LoRA on SGLang needs triton", loraOff),

        RP_FIELD(batch.rolloutBatchSize)(fields::kBatchRolloutBatchSize, "Rollout batch size",
                                         "prompts per rollout step (required)"),
        RP_FIELD(batch.nSamplesPerPrompt)(fields::kBatchNSamplesPerPrompt, "Samples per prompt"),
        RP_FIELD(batch.globalBatchSize)(fields::kBatchGlobalBatchSize, "Global batch size",
                                        "must equal rollout batch size × samples per prompt"),
        RP_FIELD(batch.numStepsPerRollout)(fields::kBatchNumStepsPerRollout,
                                           "Optimizer steps per rollout"),
        RP_FIELD(batch.microBatchSize)(fields::kBatchMicroBatchSize, "Micro batch size"),
        RP_FIELD(batch.dynamicBatchSize)(fields::kBatchDynamicBatchSize, "Dynamic batch size"),
        RP_FIELD(batch.maxTokensPerGpu)(
            fields::kBatchMaxTokensPerGpu, "Max tokens per GPU",
            "token budget per GPU per micro-batch (× CP with context parallelism)"),
        RP_FIELD(batch.overSamplingBatchSize)(fields::kBatchOverSamplingBatchSize,
                                              "Over-sampling batch size"),
        RP_FIELD(batch.numRollout)(fields::kBatchNumRollout, "Rollouts"),
        RP_FIELD(batch.numEpoch)(fields::kBatchNumEpoch, "Epochs"),

        RP_FIELD(algorithm.advantageEstimator)(fields::kAlgorithmAdvantageEstimator, "Advantage"),
        RP_FIELD(algorithm.useKlLoss)(fields::kAlgorithmUseKlLoss, "KL loss",
                                      "loads the full reference model even with a zero "
                                      "coefficient"),
        RP_FIELD(algorithm.klLossCoef)(fields::kAlgorithmKlLossCoef, "KL loss coefficient", "",
                                       klLossOff)
            .dec(4),
        RP_FIELD(algorithm.klLossType)(fields::kAlgorithmKlLossType, "KL loss type"),
        RP_FIELD(algorithm.klCoef)(
            fields::kAlgorithmKlCoef, "KL reward coefficient",
            "reward-shaping KL (--kl-coef): loads the reference model when > 0")
            .dec(4),
        RP_FIELD(algorithm.epsClip)(fields::kAlgorithmEpsClip, "Clip ε").dec(3),
        RP_FIELD(algorithm.epsClipHigh)(fields::kAlgorithmEpsClipHigh, "Clip ε (high)",
                                        "--eps-clip-high")
            .dec(3)
            .unset("default (= clip ε)"),
        RP_FIELD(algorithm.entropyCoef)(fields::kAlgorithmEntropyCoef, "Entropy coefficient")
            .dec(4),
        RP_FIELD(algorithm.useTis)(fields::kAlgorithmUseTis, "TIS"),
        RP_FIELD(algorithm.lr)(fields::kAlgorithmLr, "Learning rate").dec(8),
        RP_FIELD(algorithm.normalizeAdvantages)(fields::kAlgorithmNormalizeAdvantages,
                                                "Normalize advantages",
                                                "--normalize-advantages (reinforce++ needs it)"),
        RP_FIELD(algorithm.useRolloutLogprobs)(fields::kAlgorithmUseRolloutLogprobs,
                                               "Use rollout logprobs",
                                               "--use-rollout-logprobs (exclusive with TIS)"),
        RP_FIELD(algorithm.useOpd)(fields::kAlgorithmUseOpd, "On-policy distillation", "--use-opd"),
        RP_FIELD(algorithm.opdType)(fields::kAlgorithmOpdType, "OPD teacher runs in", "--opd-type",
                                    opdOff)
            .unset("unset (required with OPD)"),

        RP_FIELD(optimizer.kind)(fields::kOptimizerKind, "Optimizer", "--optimizer"),
        RP_FIELD(optimizer.distributed)(fields::kOptimizerDistributed, "Distributed optimizer"),
        RP_FIELD(optimizer.cpuOffload)(fields::kOptimizerCpuOffload, "CPU Adam (offload)"),
        RP_FIELD(optimizer.overlapCpuOptimizerD2hH2d)(fields::kOptimizerOverlapCpuOptimizerD2hH2d,
                                                      "Overlap D2H/H2D", "", cpuOffloadOff),
        RP_FIELD(optimizer.precisionAware)(fields::kOptimizerPrecisionAware,
                                           "Precision-aware optimizer"),
        RP_FIELD(optimizer.offloadFraction)(fields::kOptimizerOffloadFraction, "Offload fraction",
                                            "", cpuOffloadOff),

        RP_FIELD(lora.rank)(fields::kLoraRank, "Rank (0 = off)"),
        RP_FIELD(lora.alpha)(fields::kLoraAlpha, "Alpha", "", loraOff).dec(1),
        RP_FIELD(lora.dropout)(fields::kLoraDropout, "Dropout", "", loraOff),
        RP_FIELD(lora.targetModules)(fields::kLoraTargetModules, "Target modules",
                                     "all-linear, or q_proj, k_proj, v_proj, o_proj ...", loraOff),
        RP_FIELD(lora.baseCpuBackup)(
            fields::kLoraBaseCpuBackup, "Base weights CPU backup",
            "--lora-base-cpu-backup: engines keep a host mirror; weight sync sends LoRA deltas "
            "only",
            loraOff),

        RP_FIELD(memory.offloadTrain)(fields::kMemoryOffloadTrain,
                                      "Offload trainer while rolling out")
            .unset("default (on under colocate)"),
        RP_FIELD(memory.offloadRollout)(fields::kMemoryOffloadRollout,
                                        "Offload engines while training")
            .unset("default (on under colocate)"),
        RP_FIELD(memory.offloadTrainTarget)(fields::kMemoryOffloadTrainTarget,
                                            "Offload trainer to"),
        RP_FIELD(memory.dropCheckpointPageCacheAfterLoad)(
            fields::kMemoryDropCheckpointPageCacheAfterLoad, "Drop checkpoint page cache",
            "the multi-TB checkpoint read leaves page cache competing with the pinned peak"),
        RP_FIELD(memory.colocateMemoryPeakDevice)(fields::kMemoryColocateMemoryPeakDevice,
                                                  "Colocate peak device", "", colocateOnly),
        RP_FIELD(memory.backupMode)(
            fields::kMemoryBackupMode, "Weight-sync backup",
            "clone leaves ~75 GB per rank of malloc arena behind after every update"),
        RP_FIELD(memory.reloadRolloutWeightsFromDisk)(fields::kMemoryReloadRolloutWeightsFromDisk,
                                                      "Reload engine weights from disk"),
        RP_FIELD(memory.disableWeightsBackuper)(fields::kMemoryDisableWeightsBackuper,
                                                "Disable weights backuper"),
        RP_FIELD(memory.updateWeightBufferGb)(fields::kMemoryUpdateWeightBufferGb,
                                              "Weight-update bucket (GB)")
            .dec(3),
        RP_FIELD(memory.processHostGb)(fields::kMemoryProcessHostGb,
                                       "Host RAM per GPU process (GB)",
                                       "a measured fixed budget (docs/memory-model.md §5)"),
        RP_FIELD(memory.processGpuGb)(fields::kMemoryProcessGpuGb, "HBM per GPU process (GB)",
                                      "a measured fixed budget (docs/memory-model.md §5)"),
        RP_FIELD(memory.allocatorFragmentation)(fields::kMemoryAllocatorFragmentation,
                                                "Allocator fragmentation",
                                                "slack over the transient (activation) peak"),

        RP_FIELD(weightUpdate.mode)(fields::kWeightUpdateMode, "Mode"),
        RP_FIELD(weightUpdate.transport)(fields::kWeightUpdateTransport, "Transport"),
        RP_FIELD(weightUpdate.diskDir)(fields::kWeightUpdateDiskDir, "Shared disk directory",
                                       "--update-weight-disk-dir (shared by trainer and engines)",
                                       diskOnly),
        RP_FIELD(weightUpdate.localCheckpointDir)(
            fields::kWeightUpdateLocalCheckpointDir, "Local checkpoint directory",
            "--update-weight-local-checkpoint-dir (rollout-host NVMe)", diskOnly),
        RP_FIELD(weightUpdate.releaseTrain)(fields::kWeightUpdateReleaseTrain,
                                            "Release trainer every step", "--release-train"),

        RP_FIELD(environment.ncclVersion)(
            fields::kEnvironmentNcclVersion, "NCCL version",
            "the NCCL the run loads, e.g. 2.30.7 (cross-node CUDA-graph rollout needs >= 2.30.7)"),
        RP_FIELD(environment.ncclSoPath)(fields::kEnvironmentNcclSoPath, "libnccl path"),

        RP_FIELD(checkpoints.modelDir)(fields::kCheckpointsModelDir, "Model dir"),
        RP_FIELD(checkpoints.hfCheckpoint)(fields::kCheckpointsHfCheckpoint, "HF checkpoint"),
        RP_FIELD(checkpoints.refLoad)(fields::kCheckpointsRefLoad, "Reference (torch_dist)"),
        RP_FIELD(checkpoints.load)(fields::kCheckpointsLoad, "Load"),
        RP_FIELD(checkpoints.save)(fields::kCheckpointsSave, "Save"),
        RP_FIELD(checkpoints.saveInterval)(fields::kCheckpointsSaveInterval, "Save interval"),
        RP_FIELD(checkpoints.convertedEp)(fields::kCheckpointsConvertedEp,
                                          "Checkpoint converted with EP",
                                          "must equal the trainer's EP, else loading may hang"),
        RP_FIELD(checkpoints.noSaveOptim)(fields::kCheckpointsNoSaveOptim, "Do not save optimizer",
                                          "--no-save-optim"),
        RP_FIELD(checkpoints.noLoadOptim)(fields::kCheckpointsNoLoadOptim, "Do not load optimizer",
                                          "--no-load-optim"),
        RP_FIELD(checkpoints.opdTeacherLoad)(fields::kCheckpointsOpdTeacherLoad,
                                             "OPD teacher checkpoint",
                                             "--opd-teacher-load: the megatron OPD teacher"),

        RP_FIELD(eval.interval)(fields::kEvalInterval, "Interval (rollouts)"),
        RP_FIELD(eval.nSamplesPerEvalPrompt)(fields::kEvalNSamplesPerEvalPrompt,
                                             "Samples per eval prompt"),
        RP_FIELD(eval.maxResponseLen)(fields::kEvalMaxResponseLen, "Eval max response length"),
        RP_FIELD(eval.skipEvalBeforeTrain)(fields::kEvalSkipEvalBeforeTrain,
                                           "Skip eval before training"),

        RP_FIELD(launcher.kind)(fields::kLauncherKind, "Kind")
            .unset("default (miles_script for miles, slime_bash otherwise)"),
        RP_FIELD(launcher.script)(fields::kLauncherScript, "Script"),
        RP_FIELD(launcher.entryPoint)(fields::kLauncherEntryPoint, "Entry point",
                                      "train.py (synchronous) or train_async.py (cannot "
                                      "colocate)"),
        RP_FIELD(launcher.argv)(fields::kLauncherArgv, "Command (argv)", "one argument per line",
                                commandOnly),
        RP_FIELD(launcher.workdir)(fields::kLauncherWorkdir, "Working directory"),
        RP_FIELD(launcher.preLaunch)(fields::kLauncherPreLaunch, "Before the job",
                                     "shell lines run before the job, one per line"),
        RP_FIELD(launcher.rayStartArgs)(fields::kLauncherRayStartArgs, "ray start arguments",
                                        "words the head's ray start gets besides its own"),
        RP_FIELD(launcher.rayStop)(fields::kLauncherRayStop, "ray stop first"),
        RP_FIELD(launcher.rayStopArgs)(fields::kLauncherRayStopArgs, "ray stop arguments", "",
                                       rayStopOff),
        RP_FIELD(launcher.raySubmitArgs)(fields::kLauncherRaySubmitArgs, "ray job submit arguments",
                                         "words the job submission gets besides its address "
                                         "and runtime environment (--no-wait, --working-dir=DIR)"),
        RP_FIELD(launcher.flagSpellings)(fields::kLauncherFlagSpellings, "Flag spellings",
                                         "engine flags written with an alias of their own, one "
                                         "per line (--sglang-expert-parallel-size)"),
        RP_FIELD(launcher.explicitFlags)(fields::kLauncherExplicitFlags, "Flags written always",
                                         "flags an export writes even at the default value "
                                         "(an imported script spelled them out), e.g. --lr"),

        RP_FIELD(analysis.primaryMetric)(
            fields::kAnalysisPrimaryMetric, "Primary metric",
            "the series the Runs table shows, e.g. eval/gsm8k (empty: the first score-kind "
            "eval/* series)"),
        RP_FIELD(analysis.memoryAlarmGb)(
            fields::kAnalysisMemoryAlarmGb, "Memory alarm line",
            "host memory per node, decimal GB: the memory panel's alarm line and the "
            "memory.host-over-alarm rule")
            .unset("default (750/956 of RAM)"),
        RP_FIELD(analysis.roleRows)(
            fields::kAnalysisRoleRows, "Process roles",
            "rows of the daemon's role table for this recipe's runs, one per line: ROLE "
            "title|cmdline|comm GLOB, e.g. reward cmdline *reward_server.py*"),
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
