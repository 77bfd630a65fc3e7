#pragma once
// INTERNAL to runplane-smoke's LibTorch translation units (includes <torch/torch.h>).
//
// The colocated memory pattern of slime/miles runs, at small scale but with real copies:
//  - Trainer: weights + Adam state + a stand-in "state shard" of --backup-scale-mb MiB. While
//    the rollout runs, the trainer sleeps: everything is copied to one host buffer (the
//    torch_memory_saver backup) and the device tensors are freed; wake() copies back and drops
//    the host pages.
//  - RolloutEngine: its own copy of the policy (base + LoRA) + a stand-in weight shard of
//    backup-scale/2 MiB + a KV-cache pool of backup-scale MiB. While training runs, the engine
//    sleeps: the KV pool is discarded (never backed up), the base weights are mirrored to host
//    (--lora-base-cpu-backup) and the device copy is freed. At weight sync the engine wakes from
//    its mirror read through get_cpu_backup(zero_copy): zero_copy reads the mirror in place;
//    clone copies it into a fresh host allocation each update, which is kept alive afterwards
//    (up to kCloneRetainedGenerations) to model the glibc malloc arena the source reports left
//    behind by every clone. Only the LoRA adapters travel from the trainer.
// Neither class is thread-safe.

#include <torch/torch.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "compute/smoke/host_memory.h"
#include "compute/smoke/policy_model.h"
#include "compute/smoke/smoke_config.h"

namespace runplane::smoke {

/// How many clone generations stay resident (the modelled arena retention).
inline constexpr int kCloneRetainedGenerations = 4;

/// Where a list of float32 tensors lives inside one host buffer (64-byte aligned slots).
class HostLayout {
  public:
    HostLayout() = default;
    explicit HostLayout(const std::vector<torch::Tensor>& tensors);
    std::size_t bytes() const { return m_bytes; }
    std::size_t count() const { return m_offsets.size(); }
    /// A CPU tensor viewing slot i of `buffer` (no copy).
    torch::Tensor view(const HostBuffer& buffer, std::size_t i) const;

  private:
    std::vector<std::vector<std::int64_t>> m_shapes;
    std::vector<std::size_t> m_offsets;
    std::size_t m_bytes = 0;
};

/// Hand-written Adam over a fixed parameter list; its moments are plain tensors so they can be
/// offloaded like everything else.
struct AdamState {
    std::vector<torch::Tensor> params;
    std::vector<torch::Tensor> expAvg, expAvgSq;
    std::int64_t step = 0;
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;

    void reset(std::vector<torch::Tensor> parameters, double learningRate);
    void apply();  ///< one update from the current .grad() of every parameter
    void zeroGrad();
};

/// Frees a device tensor's storage in place (the tensor object, e.g. a registered parameter,
/// stays valid and is refilled by restore()).
void releaseStorage(torch::Tensor& t);
/// Returns cached device blocks to the driver (CUDA builds); no-op on CPU.
void releaseDeviceCache(torch::Device device);

class Trainer {
  public:
    Trainer(std::unique_ptr<PolicyModel> model, torch::Device device, std::size_t padBytes);
    PolicyModel& model() { return *m_model; }
    AdamState& optimizer() { return m_adam; }
    bool asleep() const { return m_asleep; }

    Status sleep();
    Status wake();
    /// Host copies of the parameters while asleep (base then LoRA, model order) and of the
    /// state shard; used by weight sync.
    std::vector<torch::Tensor> hostParameterViews(bool loraOnly) const;
    torch::Tensor hostShardView() const;
    std::size_t hostBackupBytes() const { return m_asleep ? m_layout.bytes() : 0; }

  private:
    std::vector<torch::Tensor*> stateTensors();

    std::unique_ptr<PolicyModel> m_model;
    torch::Device m_device;
    AdamState m_adam;
    torch::Tensor m_shard;
    HostLayout m_layout;
    HostBuffer m_backup;  // persistent mapping, pages dropped on wake
    bool m_asleep = false;
};

class RolloutEngine {
  public:
    RolloutEngine(std::unique_ptr<PolicyModel> model, torch::Device device,
                  std::size_t weightPadBytes, std::size_t kvPoolBytes, BackupMode mode,
                  bool baseCpuBackup);
    PolicyModel& model() { return *m_model; }
    bool asleep() const { return m_asleep; }

    /// Full weight copy from an awake trainer (the initial sync).
    void loadFrom(PolicyModel& trainerModel);
    Status sleep();
    /// Wakes and syncs weights from the sleeping trainer: LoRA only when the base mirror exists,
    /// base + LoRA + shard otherwise. Returns the bytes shipped from the trainer.
    Result<std::size_t> wakeAndSync(const Trainer& trainer);
    std::size_t mirrorBytes() const { return m_mirrorHeld ? m_layout.bytes() : 0; }
    std::size_t retainedCloneBytes() const;

  private:
    std::unique_ptr<PolicyModel> m_model;
    torch::Device m_device;
    std::size_t m_kvBytes;
    BackupMode m_mode;
    bool m_baseCpuBackup;
    std::int64_t m_weightElems = 0;
    torch::Tensor m_weightShard;
    torch::Tensor m_kvPool;
    HostLayout m_layout;
    HostBuffer m_mirror;
    bool m_mirrorHeld = false;
    std::deque<HostBuffer> m_retainedClones;
    bool m_asleep = false;
};

}  // namespace runplane::smoke
