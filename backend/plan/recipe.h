#pragma once
// Recipe: the single description of an RL post-training run (schema_version 1), as a plain value
// type. YAML in/out with line:column marks for every field (parseRecipe / writeRecipe); the schema
// and every default are documented in docs/recipe.md. All functions here are pure and thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/plan/model_shape.h"
#include "common/metrics/metric_kind.h"
#include "common/result.h"

namespace runplane::plan {

inline constexpr int kRecipeSchemaVersion = 1;

enum class Framework { Miles, Slime, Vime };
enum class Placement { Disaggregated, Colocate };
enum class TrainBackend { Megatron, Fsdp };
enum class RolloutEngine { Sglang, Vllm };
enum class WeightDtype { Bf16, Fp16, Fp8, Nvfp4, Mxfp4, Int4 };
enum class QuantScope { All, Experts };  // which weights carry weightDtype; the rest stay BF16
enum class CpuArch { X86_64, Aarch64 };
enum class OffloadTarget { Cpu, Disk };
enum class PeakDevice { Cpu, Gpu };
enum class BackupMode { ZeroCopy, Clone };
enum class LauncherKind { MilesScript, SlimeBash, Command };
enum class OpdType { Sglang, Megatron };  // on-policy distillation: where the teacher runs
enum class WeightUpdateMode { Full, Delta };
enum class WeightTransport { Nccl, Disk };
enum class AdvantageEstimator {
    Grpo,
    Gspo,
    Cispo,
    ReinforcePlusPlus,
    ReinforcePlusPlusBaseline,
    Ppo
};

/// 1-based line and column in the recipe file; 0 = unknown (e.g. a recipe built in code).
struct SourceLoc {
    int line = 0;
    int column = 0;
    bool known() const { return line > 0; }
};

/// Field path ("trainer.tp", "eval.datasets[1].path") -> where it was written. Locations never
/// take part in recipe equality, so parse(write(r)) == r holds although the marks move.
class SourceMap {
  public:
    void set(std::string path, SourceLoc loc);
    /// The location of path, else of its closest written parent ("trainer"), else unknown.
    SourceLoc find(std::string_view path) const;
    /// True if path itself was written (no walk up to a parent).
    bool contains(std::string_view path) const;
    const std::vector<std::pair<std::string, SourceLoc>>& entries() const { return m_entries; }
    bool operator==(const SourceMap&) const { return true; }

  private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };
    std::vector<std::pair<std::string, SourceLoc>> m_entries;  // in file order
    // path -> index into m_entries: set and find stay O(1) for recipes with long lists.
    std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> m_index;
};

struct ModelRef {
    std::string name;     // catalog name (recipes/models/<name>.yaml); ignored when shape is set
    std::string variant;  // "" = the catalog's default variant
    std::optional<ModelShape> shape;  // inline shape instead of a catalog entry
    bool operator==(const ModelRef&) const = default;
};

struct Hardware {
    std::string gpu = "H100";
    double gpuMemoryGb = 80;  // decimal GB (1e9 bytes) of HBM per GPU
    int gpusPerNode = 8;
    double hostRamGb = 2048;  // decimal GB of host RAM per node
    CpuArch cpuArch = CpuArch::X86_64;
    bool nvlink = true;
    // true: gpu, gpu_memory_gb and host_ram_gb are the importer's defaults (the script names no
    // hardware), so memory findings over them are warnings, not errors
    bool assumed = false;
    bool operator==(const Hardware&) const = default;
};

struct Cluster {
    int nodes = 1;
    std::string masterAddr;               // "" = decided at launch (the head's LAN IP)
    double rayObjectStoreFraction = 0.3;  // Ray's default share of RAM, capped at 200 GB
    double rayObjectStoreMaxGb = 200;     // Ray's DEFAULT_OBJECT_STORE_MAX_MEMORY_BYTES
    bool operator==(const Cluster&) const = default;
};

struct Trainer {
    TrainBackend backend = TrainBackend::Megatron;
    std::optional<int> nodes;        // default: cluster.nodes
    std::optional<int> gpusPerNode;  // default: hardware.gpus_per_node
    int tp = 1;
    int pp = 1;
    int cp = 1;
    int ep = 1;
    std::optional<int> etp;  // default: = tp (Megatron)
    bool sequenceParallel = false;
    std::optional<int> decoderFirstPipelineNumLayers;
    std::optional<int> decoderLastPipelineNumLayers;
    std::optional<int> numLayersPerVirtualStage;
    bool recompute = false;  // full / uniform / 1, as every recipe passes
    bool operator==(const Trainer&) const = default;
};

struct Eplb {
    bool enabled = false;
    int redundantExperts = 0;
    bool operator==(const Eplb&) const = default;
};

struct Rollout {
    std::optional<RolloutEngine> engine;  // default: vllm for vime, sglang otherwise
    std::optional<int> numGpus;           // default: actor GPUs under colocate
    int gpusPerEngine = 1;
    std::optional<int> engines;  // optional cross-check: = num_gpus / gpus_per_engine
    int ppSize = 1;
    int dpSize = 1;
    int epSize = 1;  // SGLang --sglang-ep-size
    bool dpAttention = false;
    bool expertParallel = false;  // vLLM --vllm-enable-expert-parallel (EP = TP x DP)
    Eplb eplb;
    double memFraction = 0.8;  // --sglang-mem-fraction-static / --vllm-gpu-memory-utilization
    bool cudaGraph = true;
    std::vector<int> cudaGraphSizes;
    int cudaGraphMaxBs = 0;
    WeightDtype weightDtype = WeightDtype::Bf16;
    QuantScope quantScope = QuantScope::All;
    std::optional<int> maxResponseLen;
    std::optional<int> maxContextLen;
    std::optional<int> maxPromptLen;
    double temperature = 1.0;
    std::string moeBackend;
    std::string loraBackend;
    bool operator==(const Rollout&) const = default;
};

struct Batch {
    int rolloutBatchSize = 0;  // required
    int nSamplesPerPrompt = 1;
    std::optional<int> globalBatchSize;
    std::optional<int> numStepsPerRollout;
    int microBatchSize = 1;
    bool dynamicBatchSize = false;
    std::optional<int> maxTokensPerGpu;
    std::optional<int> overSamplingBatchSize;
    std::optional<int> numRollout;
    std::optional<int> numEpoch;
    bool operator==(const Batch&) const = default;
};

struct Algorithm {
    AdvantageEstimator advantageEstimator = AdvantageEstimator::Grpo;
    bool useKlLoss = false;
    double klLossCoef = 0.0;
    std::string klLossType = "k1";
    double klCoef = 0.0;
    double epsClip = 0.2;
    std::optional<double> epsClipHigh;
    double entropyCoef = 0.0;
    bool useTis = false;
    double lr = 1e-6;
    bool normalizeAdvantages = false;  // --normalize-advantages (reinforce++ needs it)
    bool useRolloutLogprobs = false;   // --use-rollout-logprobs (exclusive with use_tis)
    bool useOpd = false;               // --use-opd: on-policy distillation
    std::optional<OpdType> opdType;    // --opd-type; required with use_opd
    bool operator==(const Algorithm&) const = default;
};

struct Optimizer {
    std::string kind = "adam";
    bool distributed = true;
    bool cpuOffload = false;
    bool overlapCpuOptimizerD2hH2d = false;
    bool precisionAware = false;
    double offloadFraction = 1.0;
    bool operator==(const Optimizer&) const = default;
};

struct Lora {
    int rank = 0;  // 0 = off
    double alpha = 16;
    double dropout = 0.0;
    std::vector<std::string> targetModules;
    bool baseCpuBackup = false;  // --lora-base-cpu-backup
    bool operator==(const Lora&) const = default;
};

struct MemoryFlags {
    std::optional<bool> offloadTrain;    // default: on under colocate
    std::optional<bool> offloadRollout;  // default: on under colocate
    OffloadTarget offloadTrainTarget = OffloadTarget::Cpu;
    bool dropCheckpointPageCacheAfterLoad = false;
    PeakDevice colocateMemoryPeakDevice = PeakDevice::Cpu;
    BackupMode backupMode = BackupMode::ZeroCopy;
    bool reloadRolloutWeightsFromDisk = false;
    bool disableWeightsBackuper = false;
    double updateWeightBufferGb = 0.536870912;  // 512 MiB bucket per trainer rank
    // Fixed budgets, measured (docs/memory-model.md section 5,
    // scripts/measure-memory-overheads.py).
    double processHostGb = 1.11;           // host RSS of one GPU process (torch, CUDA, NCCL)
    double processGpuGb = 1.30;            // HBM outside the caching allocator per GPU process
    double allocatorFragmentation = 0.10;  // allocator slack over the transient (activation) peak
    bool operator==(const MemoryFlags&) const = default;
};

/// How trained weights reach the rollout engines (slime --update-weight-*, --release-train).
struct WeightUpdate {
    WeightUpdateMode mode = WeightUpdateMode::Full;
    WeightTransport transport = WeightTransport::Nccl;
    std::string diskDir;             // --update-weight-disk-dir (shared by trainer and engines)
    std::string localCheckpointDir;  // --update-weight-local-checkpoint-dir (rollout-host NVMe)
    bool releaseTrain = false;       // --release-train: recreate the trainer every step
    bool operator==(const WeightUpdate&) const = default;
};

struct Environment {
    std::string ncclVersion;  // the NCCL the run loads, e.g. "2.30.7"; "" = unknown
    std::string ncclSoPath;
    std::vector<std::pair<std::string, std::string>> env;
    bool operator==(const Environment&) const = default;
};

struct Checkpoints {
    std::string modelDir;
    std::string hfCheckpoint;
    std::string refLoad;
    std::string load;
    std::string save;
    std::optional<int> saveInterval;
    std::optional<int> convertedEp;  // EP the torch_dist checkpoint was converted with
    bool noSaveOptim = false;
    bool noLoadOptim = false;
    std::string opdTeacherLoad;  // --opd-teacher-load: the megatron OPD teacher checkpoint
    bool operator==(const Checkpoints&) const = default;
};

struct EvalDataset {
    std::string name;
    std::string path;
    bool operator==(const EvalDataset&) const = default;
};

struct Eval {
    std::optional<int> interval;
    std::vector<EvalDataset> datasets;
    int nSamplesPerEvalPrompt = 1;
    std::optional<int> maxResponseLen;
    bool skipEvalBeforeTrain = false;
    bool operator==(const Eval&) const = default;
};

struct Launcher {
    std::optional<LauncherKind> kind;  // default: miles_script for miles, slime_bash otherwise
    std::string script;
    /// The framework's training entry point: "train.py" (synchronous) or "train_async.py"
    /// (fully asynchronous rollout; cannot colocate). Part of the run, not of the launcher.
    std::string entryPoint = "train.py";
    std::vector<std::string> argv;  // kind command: the program and its arguments
    std::string workdir;
    /// Shell text the job script runs before the job, in order: auxiliary servers (e.g. an
    /// on-policy-distillation teacher), the loops that wait for them, run-time probes (NVLink
    /// detection). Kept verbatim from an imported script; an export writes it as code.
    std::vector<std::string> preLaunch;
    /// Words the head's `ray start` gets besides the ones an export writes itself (e.g.
    /// --dashboard-host=0.0.0.0).
    std::vector<std::string> rayStartArgs;
    /// A `ray stop` before the bring-up, with its words (e.g. --force).
    bool rayStop = false;
    std::vector<std::string> rayStopArgs;
    /// Words of the script's `ray job submit` besides --address and --runtime-env-json
    /// (--working-dir=DIR, --no-wait, --submission-id NAME): an export writes them back.
    std::vector<std::string> raySubmitArgs;
    /// Engine flags spelled with one of their aliases in the imported script
    /// ("--sglang-expert-parallel-size" for --sglang-ep-size): an export writes each flag the
    /// way it was read. Empty (a recipe written by hand) = every flag in its canonical spelling.
    std::vector<std::string> flagSpellings;
    /// Flags (canonical spelling) an imported script wrote at the recipe default: an export
    /// writes each of them whatever its field's value, so the script keeps the settings it spelled
    /// out while the field alone holds the value (an edit wins). Empty = defaults are not written.
    std::vector<std::string> explicitFlags;
    bool operator==(const Launcher&) const = default;
};

/// How the run is analysed (Runs table, plots, memory panel); nothing here reaches the launch.
struct Analysis {
    std::string primaryMetric;  // "" = the first score-kind eval/* series (metrics::primaryEval)
    /// Series name, or prefix ending in '*', -> kind (and direction); overrides the naming table.
    std::vector<metrics::KindOverride> metricKinds;
    std::optional<double> memoryAlarmGb;  // decimal GB per node; default: the plan's alarm line
    /// Phase name -> the seconds one occurrence is expected to last (issue 44): the phase-overrun
    /// check's expected duration while the run and its recipe have too little history of the
    /// phase (docs/diagnosis.md "Phase overrun"). Empty (the default): no expectation.
    std::vector<std::pair<std::string, double>> phaseSeconds;
    /// Process-role rows of this recipe's runs (issue 43), one `ROLE FIELD PATTERN [object_store]`
    /// row each, as `--role-table` reads them (docs/daemon.md "Process roles"): sent with the run
    /// (StartRun role_rows) and tried before the daemon's own rows while the run lives. Checked
    /// by the daemon (role_rows:LINE); the roles are not part of the launch.
    std::vector<std::string> roleRows;
    bool operator==(const Analysis&) const = default;
};

/// A flag the recipe does not model, kept verbatim (e.g. from an imported launch script).
/// flag may instead be a splice: an expansion of a launch script the importer could not resolve,
/// `${NAME[@]}`, `"${NAME[@]}"`, `${NAME}`, `$NAME` (see isSpliceWord), with no values; an
/// export writes it back as shell text in place.
struct ExtraArg {
    std::string flag;
    std::vector<std::string> values;
    std::string source;  // where it came from, e.g. "scripts/run-qwen3-4B.sh:42"
    bool operator==(const ExtraArg&) const = default;
};

/// True for the splice forms of ExtraArg::flag: optionally double-quoted, `$NAME`, `${NAME}`,
/// `${NAME[@]}` / `${NAME[*]}`, or `${NAME:-default}` / `${NAME-default}` with a default of
/// [A-Za-z0-9_.,:/=+@%-]; NAME of [A-Za-z_][A-Za-z0-9_]*. Nothing else (no command or arithmetic
/// substitution) so that a recipe never carries code.
bool isSpliceWord(std::string_view word);

/// One run description. Plain value: copy freely, compare with ==, no hidden state.
struct Recipe {
    int schemaVersion = kRecipeSchemaVersion;
    std::string name;
    std::string description;
    Framework framework = Framework::Miles;
    // true: the importer found nothing in the script that says slime or miles and read it as
    // `framework`; a rule of one framework only is then a warning naming both readings
    bool frameworkAssumed = false;
    ModelRef model;
    Hardware hardware;
    Cluster cluster;
    Placement placement = Placement::Disaggregated;
    Trainer trainer;
    Rollout rollout;
    Batch batch;
    Algorithm algorithm;
    Optimizer optimizer;
    Lora lora;
    MemoryFlags memory;
    WeightUpdate weightUpdate;
    Environment environment;
    Checkpoints checkpoints;
    Eval eval;
    Launcher launcher;
    Analysis analysis;
    std::vector<ExtraArg> extraArgs;
    SourceMap sources;  // where each field was written; not part of ==

    bool operator==(const Recipe&) const = default;
};

/// One problem found while reading a recipe file.
struct ParseDiagnostic {
    std::string path;  // field path, e.g. "trainer.tpp"
    SourceLoc loc;
    std::string message;
    /// "file:line:col: error: message"
    std::string format(std::string_view file) const;
};

/// Every diagnostic's format(file), one per line: the message of a file that did not parse.
std::string formatDiagnostics(const std::vector<ParseDiagnostic>& diagnostics,
                              std::string_view file);

/// Every problem of a recipe file at once (unknown keys, wrong types, missing required fields).
struct ParseOutcome {
    std::optional<Recipe> recipe;  // set iff diagnostics is empty
    std::vector<ParseDiagnostic> diagnostics;
};

/// Parses YAML text; fileName only labels the messages.
ParseOutcome parseRecipeDetailed(std::string_view text, std::string_view fileName);
/// As parseRecipeDetailed, the diagnostics joined into one message (one line each).
Result<Recipe> parseRecipe(std::string_view text, std::string_view fileName);
/// Reads a recipe file's text: refuses directories, unreadable paths and files over
/// kMaxRecipeBytes (recipe_limits.h) without reading more than that.
Result<std::string> readRecipeText(const std::string& path);
/// Reads and parses a recipe file.
Result<Recipe> loadRecipe(const std::string& path);
/// Recipe -> YAML (only fields that differ from their default, in schema order).
std::string writeRecipe(const Recipe& recipe);

// Enum names as written in YAML.
const char* toString(Framework value);
const char* toString(Placement value);
const char* toString(TrainBackend value);
const char* toString(RolloutEngine value);
const char* toString(WeightDtype value);
const char* toString(QuantScope value);
const char* toString(CpuArch value);
const char* toString(OffloadTarget value);
const char* toString(PeakDevice value);
const char* toString(BackupMode value);
const char* toString(LauncherKind value);
const char* toString(AdvantageEstimator value);
const char* toString(OpdType value);
const char* toString(WeightUpdateMode value);
const char* toString(WeightTransport value);

// Effective values of the fields whose default depends on other fields.
int trainerNodes(const Recipe& r);
int trainerGpusPerNode(const Recipe& r);
int trainerWorldSize(const Recipe& r);
int effectiveEtp(const Recipe& r);
RolloutEngine effectiveEngine(const Recipe& r);
int rolloutGpus(const Recipe& r);
bool offloadTrainOn(const Recipe& r);
bool offloadRolloutOn(const Recipe& r);
LauncherKind effectiveLauncher(const Recipe& r);

}  // namespace runplane::plan
