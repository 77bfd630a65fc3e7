#pragma once
// MemoryPlan: host memory per node and device memory per GPU, per phase (load, rollout, train,
// weight sync), as named components with bytes and the formula that gave them. Everything comes
// from the model shape, the parallel layout and the recipe's flags; the formulas and their
// sources are in docs/memory-model.md. Pure arithmetic (no strings until describe()), fast
// enough to run on every keystroke; thread-safe.

#include <array>
#include <span>
#include <string>
#include <vector>

#include "backend/plan/model_shape.h"
#include "backend/plan/recipe.h"
#include "backend/plan/topology.h"

namespace runplane::plan {

enum class Phase { Load, Rollout, Train, WeightSync };
inline constexpr int kPhaseCount = 4;
inline constexpr std::array<Phase, kPhaseCount> kPhases = {Phase::Load, Phase::Rollout,
                                                           Phase::Train, Phase::WeightSync};

enum class Component {
    // host
    ProcessRuntime,    // CUDA context, PyTorch, NCCL and Python heap of every GPU process
    RayObjectStore,    // Ray's shared-memory object store
    PageCache,         // left by reading the trainer's torch_dist checkpoint
    CpuAdamState,      // --optimizer-cpu-offload: fp32 master + grads + Adam moments on the host
    WeightsBackuper,   // TensorBackuper "actor" copy of the trainer weights
    ReferenceCopy,     // KL loss: the reference model's weights pinned on the host
    TrainerBackup,     // torch_memory_saver backup of a sleeping trainer
    EngineMirror,      // --lora-base-cpu-backup: the sleeping engines' weight mirror
    CloneArena,        // glibc arena retained by get_cpu_backup(clone) after weight sync
    PinnedStaging,     // weight-update bucket per trainer rank
    DeviceStateInRam,  // CPU-only runs: what would live on the GPU lives in RAM
    // device
    TrainerWeights,
    TrainerGrads,
    TrainerOptimizer,
    LoraState,  // adapters + their grads and Adam state
    Activations,
    Logits,
    EngineWeights,
    KvCache,         // the engine's static pool left after weights: mem_fraction x HBM - weights
    GpuRuntime,      // CUDA context, cuBLAS workspace, NCCL buffers of every process on the GPU
    AllocatorSlack,  // caching-allocator fragmentation over the transient (activation) peak
};

/// Components that are budgets rather than derived from the model (recipe fields with measured
/// defaults: process runtimes, Ray's object store); the plan shows them apart.
bool isFixedBudget(Component component);

/// One line of a memory plan: bytes = count x unitBytes (count may be a fraction, e.g. Ray's
/// 0.3 of RAM); `cap` notes a component that was capped (Ray: 200 GB).
struct MemoryItem {
    Component component = Component::ProcessRuntime;
    double count = 0;
    double unitBytes = 0;
    double bytes = 0;
    bool capped = false;
};

/// A phase's components (fixed capacity: no allocation while planning).
class PhaseMemory {
  public:
    static constexpr int kCapacity = 12;
    void add(Component c, double count, double unitBytes);
    void addCapped(Component c, double count, double unitBytes, double capBytes);
    std::span<const MemoryItem> items() const { return {m_items.data(), std::size_t(m_count)}; }
    double total() const { return m_total; }
    double bytesOf(Component c) const;

  private:
    std::array<MemoryItem, kCapacity> m_items{};
    int m_count = 0;
    double m_total = 0;
};

struct NodeMemory {
    int node = 0;
    int trainerRanks = 0;
    int engineGpus = 0;
    std::array<PhaseMemory, kPhaseCount> phases;
    double peakBytes = 0;
    Phase peakPhase = Phase::Load;
};

/// One class of identical GPUs: a trainer pipeline stage (and, colocated, its engine shard), or
/// engine-only GPUs when disaggregated.
struct GpuMemory {
    int trainerStage = -1;  // -1: no trainer rank
    bool engine = false;
    int gpus = 0;        // how many GPUs are in this class
    int exampleGpu = 0;  // global index of one of them
    std::array<PhaseMemory, kPhaseCount> phases;
    double peakBytes = 0;
    Phase peakPhase = Phase::Load;
    std::string label() const;
};

struct MemoryPlan {
    double hostRamBytes = 0;
    double hostAlarmBytes = 0;  // analysis.memory_alarm_gb, else 750 / 956 of RAM (the source)
    double gpuBytes = 0;
    bool cpuOnly = false;
    std::vector<NodeMemory> nodes;
    std::vector<GpuMemory> gpus;
    // Headline figures (the source's measurements are compared against these).
    double trainerBackupPerNodeMax = 0;  // rollout phase
    double engineMirrorPerNodeMax = 0;   // train phase
    double cloneArenaPerRank = 0;
    double pageCachePerNodeMax = 0;
    double referencePerNodeMax = 0;
    double trainerWeightsPerRankMax = 0;
    double engineWeightsPerGpu = 0;
    double trainPeakPerGpuIfOptimizerOnGpu = 0;  // for the CPU-Adam rule
    double fixedHostPerNodeMax = 0;              // fixed budgets on the peak node's peak phase
    int peakNode = 0;
    Phase peakPhase = Phase::Load;
    double peakBytes = 0;
};

MemoryPlan planMemory(const Recipe& recipe, const ModelShape& shape);
/// As above, with the recipe's topology already computed (planTopology(recipe)).
MemoryPlan planMemory(const Recipe& recipe, const ModelShape& shape, const Topology& topology);

const char* toString(Phase phase);
const char* toString(Component component);
/// The symbolic formula of a component, e.g. "ranks on node x bf16 weights per rank".
const char* formulaOf(Component component);
/// "4 x 93.7 GB = 374.8 GB" style rendering of one item.
std::string describe(const MemoryItem& item);
/// Decimal gigabytes with one decimal, e.g. "374.8 GB".
std::string formatGb(double bytes);

/// Bytes per weight of a dtype, scales included (NVFP4: 4-bit values + one FP8 scale per 16).
double bytesPerWeight(WeightDtype dtype);

inline constexpr double kGb = 1e9;
/// Ray caps its default object store at 200 GB (ray_constants
/// DEFAULT_OBJECT_STORE_MAX_MEMORY_BYTES).
inline constexpr double kRayObjectStoreCapBytes = 200e9;
/// Free HBM below this share of a GPU is a warning (memory.gpu-headroom): the allocator's
/// retry-after-free and the engines' CUDA graphs need room the plan does not itemise.
inline constexpr double kGpuHeadroomFraction = 0.05;
/// The source's alarm line relative to its host RAM: 750 GB of 956 GB.
inline constexpr double kHostAlarmFraction = 750.0 / 956.0;

}  // namespace runplane::plan
