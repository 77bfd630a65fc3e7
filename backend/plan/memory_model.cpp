// Over 600 lines: every memory component of docs/memory-model.md (host and GPU, each phase) in
// one place, so each formula sits beside the ones it is summed with.
#include "backend/plan/memory_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "backend/plan/detail/plan_steps.h"
#include "backend/plan/model_params.h"
#include "backend/plan/pinned_rounding.h"
#include "backend/plan/recipe_limits.h"
#include "backend/plan/topology.h"

namespace runplane::plan {

void PhaseMemory::add(Component c, double count, double unitBytes) {
    const double bytes = count * unitBytes;
    if (bytes <= 0 || m_count >= kCapacity) {
        return;
    }
    m_items[static_cast<std::size_t>(m_count++)] = MemoryItem{c, count, unitBytes, bytes, false};
    m_total += bytes;
}

void PhaseMemory::addCapped(Component c, double count, double unitBytes, double capBytes) {
    const double raw = count * unitBytes;
    const double bytes = std::min(raw, capBytes);
    if (bytes <= 0 || m_count >= kCapacity) {
        return;
    }
    m_items[static_cast<std::size_t>(m_count++)] =
        MemoryItem{c, count, unitBytes, bytes, raw > capBytes};
    m_total += bytes;
}

double PhaseMemory::bytesOf(Component c) const {
    double sum = 0;
    for (const auto& item : items()) {
        if (item.component == c) {
            sum += item.bytes;
        }
    }
    return sum;
}

double bytesPerWeight(WeightDtype dtype) {
    switch (dtype) {
        case WeightDtype::Bf16:
        case WeightDtype::Fp16:
            return 2.0;
        case WeightDtype::Fp8:
            return 1.0 + 4.0 / (128.0 * 128.0);  // FP8 + one fp32 scale per 128x128 block
        case WeightDtype::Nvfp4:
            return 0.5 + 1.0 / 16.0;  // 4-bit values + one FP8 (E4M3) scale per 16 values
        case WeightDtype::Mxfp4:
            return 0.5 + 1.0 / 32.0;  // 4-bit values + one E8M0 scale per 32 values
        case WeightDtype::Int4:
            return 0.5 + 2.0 / 128.0;  // 4-bit values + one bf16 scale per group of 128
    }
    return 2.0;
}

namespace {

constexpr double kBf16 = 2.0;
constexpr double kFp32Grad = 4.0;           // Megatron accumulates bf16 grads in fp32 main_grad
constexpr double kAdamState = 12.0;         // fp32 master + exp_avg + exp_avg_sq
constexpr double kCpuAdamPinned = 8.0;      // CPU Adam: pinned fp32 master + pinned fp32 grad copy
constexpr double kCpuAdamPaged = 8.0;       // and the two fp32 moments (pageable)
constexpr double kActivationFactor = 34.0;  // bytes per token per hidden unit per layer (SP, flash)

/// What one trainer rank of a pipeline stage holds.
struct StageRank {
    double weights = 0;        // bf16 weights
    double weightsPinned = 0;  // a pinned host copy of them, tensor by tensor (power-of-2 blocks)
    double expertWeights = 0;  // the routed-expert part of weights
    double grads = 0;
    double optimizerGpu = 0;
    double optimizerFull = 0;  // as if nothing were offloaded
    double cpuAdam = 0;        // host side of --optimizer-cpu-offload
    double lora = 0;
    double activations = 0;
    double logits = 0;
    double checkpointShardDense = 0;   // bytes of this rank's dense shard in the checkpoint
    double checkpointShardExpert = 0;  // bytes of this rank's expert shard
};

int atLeast1(int v) {
    return v > 0 ? v : 1;
}

double tokensPerMicroBatch(const Recipe& r, const Layout& l) {
    if (r.batch.dynamicBatchSize && r.batch.maxTokensPerGpu.has_value()) {
        return *r.batch.maxTokensPerGpu;
    }
    // Static batching: micro_batch_size samples of prompt + response, split over CP.
    double seq = r.rollout.maxResponseLen.value_or(0) + r.rollout.maxPromptLen.value_or(0);
    if (seq <= 0) {
        seq = r.rollout.maxContextLen.value_or(4096);  // slime's seq_length placeholder
    }
    return r.batch.microBatchSize * seq / l.cp;
}

std::vector<StageRank> stageRanks(const Recipe& r, const ModelShape& s, const ModelParams& p,
                                  const Layout& l) {
    const auto stages = splitStages(s, p, l.pp, r.trainer.decoderFirstPipelineNumLayers.value_or(0),
                                    r.trainer.decoderLastPipelineNumLayers.value_or(0));
    const double tp = l.tp;
    const double expertShard = double(l.ep) * l.etp;
    const double dpCp = double(atLeast1(l.dp)) * l.cp;
    const double edp = atLeast1(l.expertDp);
    const bool lora = r.lora.rank > 0;
    const bool distributed = r.optimizer.distributed;
    const bool fsdp = r.trainer.backend == TrainBackend::Fsdp;
    const double fsdpShard = fsdp ? dpCp : 1.0;
    const double offloaded =
        r.optimizer.cpuOffload ? std::clamp(r.optimizer.offloadFraction, 0.0, 1.0) : 0.0;
    const double loraTotal = double(loraParams(s, r.lora.rank, r.lora.targetModules));
    const double tokens = tokensPerMicroBatch(r, l);
    const double spShard = r.trainer.sequenceParallel && l.tp > 1 ? tp : 1.0;
    const int microBatches =
        std::max(1, atLeast1(r.batch.globalBatchSize.value_or(1)) /
                        std::max(1, atLeast1(l.dp) * atLeast1(r.batch.microBatchSize)));
    std::vector<StageRank> out(stages.size());
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const StageParams& st = stages[i];
        StageRank& sr = out[i];
        const double dense = double(st.dense) / tp;
        const double experts = double(st.experts) / expertShard;
        // FSDP (ZeRO-3): a rank holds 1/DP of the weights plus the all-gathered units in flight
        // (the running layer and the prefetched next one); grads and optimizer state are sharded
        // the same way whatever optimizer.distributed says (docs/memory-model.md)
        const double gathered =
            fsdp && st.numLayers > 0 ? 2.0 * (dense + experts) / st.numLayers : 0.0;
        sr.weights = kBf16 * ((dense + experts) / fsdpShard + gathered);
        const PinnedRounding round =
            pinnedRounding(s, st, i + 1 == stages.size(), l.tp, l.ep, l.etp);
        sr.weightsPinned = kBf16 * (dense * round.dense + experts * round.experts);
        sr.expertWeights = kBf16 * experts / fsdpShard;
        sr.checkpointShardDense = kBf16 * dense;
        sr.checkpointShardExpert = kBf16 * experts;
        const double share = s.numLayers > 0 ? double(st.numLayers) / s.numLayers : 0.0;
        if (lora) {
            const double adapters = loraTotal * share / tp;
            sr.lora = adapters * (kBf16 + kFp32Grad) + adapters * kAdamState / dpCp;
        } else {
            sr.grads = kFp32Grad * (dense + experts) / fsdpShard;
            const double shard = fsdp          ? (dense + experts) / fsdpShard
                                 : distributed ? dense / dpCp + experts / edp
                                               : dense + experts;
            sr.optimizerFull = kAdamState * shard;
            sr.optimizerGpu = sr.optimizerFull * (1.0 - offloaded);
            // Megatron's HybridDeviceOptimizer pins its fp32 master and grad copies (2 x 4 B)
            // through PyTorch's power-of-2 host allocator; the moments are pageable
            const double pinned = dense * round.dense + experts * round.experts;
            const double pinnedShard =
                fsdp          ? pinned / fsdpShard
                : distributed ? dense * round.dense / dpCp + experts * round.experts / edp
                              : pinned;
            sr.cpuAdam = (kCpuAdamPaged * shard + kCpuAdamPinned * pinnedShard) * offloaded;
        }
        // Activations: with full recompute only each layer's input is kept (x in-flight
        // micro-batches of 1F1B on this stage) plus one layer's working set; without it every
        // layer keeps its working set.
        const double perLayer = kActivationFactor * tokens * s.hidden / spShard;
        double moeWork = 0;
        if (s.isMoe()) {
            moeWork = tokens * s.topK * (2.0 * s.hidden + 3.0 * s.expertFfn()) * kBf16 / l.etp;
        }
        const double inflight = std::min<double>(l.pp - int(i), microBatches);
        if (r.trainer.recompute) {
            sr.activations =
                kBf16 * tokens * s.hidden / spShard * st.numLayers * std::max(1.0, inflight) +
                perLayer + moeWork;
        } else {
            sr.activations = (perLayer + moeWork) * st.numLayers * std::max(1.0, inflight);
        }
        if (i + 1 == stages.size()) {
            sr.logits = 2.0 * 4.0 * tokens * s.vocabSize / tp;  // fp32 logits and their grad
        }
    }
    return out;
}

/// Engine weights of one GPU: experts at the engine dtype, the rest at BF16 unless the dtype
/// covers all linear weights; embeddings stay BF16.
double engineWeightsPerGpu(const Recipe& r, const ModelShape& s, const ModelParams& p,
                           const Layout& l) {
    const double dt = bytesPerWeight(r.rollout.weightDtype);
    const double vocab = double(p.embedding + p.outputLayer);
    const double body = double(p.totalDense) - vocab;
    const double denseBytes =
        body * (r.rollout.quantScope == QuantScope::All ? dt : kBf16) + vocab * kBf16;
    const double expertBytes = double(p.totalExperts) * dt;
    const double gpus = atLeast1(l.gpusPerEngine);
    // What the engine does not shard over its TP ranks: the MoE router is a replicated linear
    // on every rank, and with TP above the KV-head count each rank keeps a whole KV head
    // (share 1/G instead of 1/TP). Both stay BF16 (the NVFP4 checkpoints are experts-only).
    const double tp = atLeast1(l.engineTp);
    const double router = double(s.numMoeLayers()) * s.hidden * s.numExperts;
    double replicated = router * (1.0 - 1.0 / tp);
    const int groups = s.queryGroups();
    if (s.attention == AttentionKind::Gqa && groups > 0 && tp > groups) {
        const double kv =
            double(s.numFullAttentionLayers()) * 2.0 * s.hidden * groups * s.headDim();
        replicated += kv * (1.0 / groups - 1.0 / tp);
    }
    return (denseBytes + expertBytes) / gpus + kBf16 * replicated;
}

Phase peakOf(const std::array<PhaseMemory, kPhaseCount>& phases, double& peak) {
    Phase best = Phase::Load;
    peak = 0;
    for (int i = 0; i < kPhaseCount; ++i) {
        if (phases[std::size_t(i)].total() > peak) {
            peak = phases[std::size_t(i)].total();
            best = kPhases[std::size_t(i)];
        }
    }
    return best;
}

PhaseMemory& at(std::array<PhaseMemory, kPhaseCount>& phases, Phase p) {
    return phases[static_cast<std::size_t>(p)];
}

}  // namespace

MemoryPlan planMemory(const Recipe& r, const ModelShape& s) {
    return planMemory(r, s, planTopology(r));
}

MemoryPlan planMemory(const Recipe& r, const ModelShape& s, const Topology& topology) {
    if (!checkRecipeLimits(r, true).empty() || !checkShapeLimits(s, "", true).empty()) {
        return MemoryPlan{};  // too large to plan; planRecipe reports recipe.limits
    }
    return detail::planMemoryWithin(r, s, topology, computeParams(s));
}

MemoryPlan detail::planMemoryWithin(const Recipe& r, const ModelShape& s, const Topology& topology,
                                    const ModelParams& params) {
    MemoryPlan plan;
    const Layout& l = topology.layout;
    plan.cpuOnly = r.hardware.gpusPerNode <= 0;
    plan.hostRamBytes = r.hardware.hostRamGb * kGb;
    // The recipe's own alarm line (analysis.memory_alarm_gb), else the source's 750 of 956 GB.
    plan.hostAlarmBytes = r.analysis.memoryAlarmGb.has_value()
                              ? *r.analysis.memoryAlarmGb * kGb
                              : plan.hostRamBytes * kHostAlarmFraction;
    plan.gpuBytes = r.hardware.gpuMemoryGb * kGb;

    const std::vector<StageRank> stages = stageRanks(r, s, params, l);
    const int world = plan.cpuOnly ? std::max(1, l.trainerNodes) : l.worldSize;
    const int ranksPerStage = std::max(1, world / l.pp);
    auto stageOf = [&](int rank) {
        return std::min<int>(int(stages.size()) - 1, rank / ranksPerStage);
    };

    const bool colocate = l.colocate;
    const bool offloadTrain = offloadTrainOn(r);
    const bool offloadRollout = offloadRolloutOn(r);
    const bool lora = r.lora.rank > 0;
    const bool megatron = r.trainer.backend == TrainBackend::Megatron;
    const bool backuper = megatron && !r.memory.disableWeightsBackuper &&
                          !(r.framework == Framework::Miles && lora && colocate);
    const bool tmsToHost =
        colocate && offloadTrain && r.memory.offloadTrainTarget == OffloadTarget::Cpu;
    const bool mirror = colocate && offloadRollout && r.lora.baseCpuBackup && lora &&
                        !r.memory.reloadRolloutWeightsFromDisk;
    const bool reference = r.algorithm.useKlLoss || r.algorithm.klCoef != 0.0;
    const bool clone = r.memory.backupMode == BackupMode::Clone && colocate && offloadTrain;
    const bool ray = effectiveLauncher(r) != LauncherKind::Command;
    const bool dropCache = r.memory.dropCheckpointPageCacheAfterLoad;
    const double engineGpuBytes = engineWeightsPerGpu(r, s, params, l);
    plan.engineWeightsPerGpu = engineGpuBytes;
    for (const auto& st : stages) {
        plan.trainerWeightsPerRankMax = std::max(plan.trainerWeightsPerRankMax, st.weights);
    }

    auto tmsPerRank = [&](const StageRank& st) {
        return (backuper ? 0.0 : st.weights) + st.optimizerGpu + st.lora;
    };
    auto clonePerRank = [&](const StageRank& st) {
        return s.isMoe() ? st.expertWeights : st.weights;
    };

    // ---- host, per node (from the topology: which ranks and engine shards each node holds) ----
    const int nodes =
        plan.cpuOnly ? std::max(l.nodes, 1)
                     : std::max(l.nodes, topology.gpus.empty() ? 1 : topology.gpus.back().node + 1);
    plan.nodes.resize(std::size_t(nodes));
    std::size_t slot = 0;
    for (int n = 0; n < nodes; ++n) {
        NodeMemory& node = plan.nodes[std::size_t(n)];
        node.node = n;
        double perRank[8] = {};  // per component sums, indexed below
        enum { kPinnedWeights, kTms, kClone, kCpuAdam, kDeviceState, kCount_ };
        static_assert(kCount_ <= 8);
        int trainerRanks = 0;
        int engineGpus = 0;
        double pageCache = 0;
        // Distinct checkpoint shards the node's ranks read (DP / CP replicas on one node share
        // the same files in the page cache). Keys stage * 2^16 + coordinate; left uninitialised
        // past the counts (hot loop).
        int denseSeen[64];
        int expertSeen[64];
        int denseCount = 0;
        int expertCount = 0;
        auto firstTime = [](int* seen, int& count, int key) {
            for (int i = 0; i < count; ++i) {
                if (seen[i] == key) {
                    return false;
                }
            }
            if (count < 64) {
                seen[count++] = key;
            }
            return true;
        };
        auto addRank = [&](int rank, int tpCoord, int expertCoord) {
            ++trainerRanks;
            const int stage = stageOf(rank);
            const StageRank& st = stages[std::size_t(stage)];
            perRank[kPinnedWeights] += st.weightsPinned;
            perRank[kTms] += tmsPerRank(st);
            perRank[kClone] += clonePerRank(st);
            perRank[kCpuAdam] += st.cpuAdam;
            perRank[kDeviceState] += st.weights + st.grads + st.optimizerGpu + st.lora;
            if (firstTime(denseSeen, denseCount, stage * 65536 + tpCoord)) {
                pageCache += st.checkpointShardDense;
            }
            if (firstTime(expertSeen, expertCount, stage * 65536 + expertCoord)) {
                pageCache += st.checkpointShardExpert;
            }
        };
        if (plan.cpuOnly) {
            if (n < l.trainerNodes || (n == 0 && world > 0)) {
                addRank(0, 0, 0);
            }
            engineGpus = n == 0 && l.rolloutGpus > 0 ? 1 : 0;
        } else {
            for (; slot < topology.gpus.size() && topology.gpus[slot].node == n; ++slot) {
                const GpuSlot& g = topology.gpus[slot];
                if (g.trainer.rank >= 0) {
                    addRank(g.trainer.rank, g.trainer.tp, g.trainer.etp + l.etp * g.trainer.ep);
                }
                if (g.engine.engine >= 0) {
                    ++engineGpus;
                }
            }
        }
        node.trainerRanks = trainerRanks;
        node.engineGpus = engineGpus;
        // the backuper's and the reference's copies are pinned tensor by tensor (TensorBackuper:
        // torch.empty_like(..., pin_memory=True)), so they pay the power-of-2 rounding
        const double avgWeights = trainerRanks > 0 ? perRank[kPinnedWeights] / trainerRanks : 0.0;
        const int processes = plan.cpuOnly ? 1 : trainerRanks + engineGpus;
        const double tms = tmsToHost ? perRank[kTms] : 0.0;
        const double engineMirror = mirror ? engineGpus * engineGpuBytes : 0.0;
        for (Phase phase : kPhases) {
            PhaseMemory& pm = at(node.phases, phase);
            pm.add(Component::ProcessRuntime, processes, r.memory.processHostGb * kGb);
            if (ray) {
                pm.addCapped(Component::RayObjectStore, r.cluster.rayObjectStoreFraction,
                             plan.hostRamBytes, r.cluster.rayObjectStoreMaxGb * kGb);
            }
            if (phase == Phase::Load || !dropCache) {
                pm.add(Component::PageCache, 1, pageCache);
            }
            if (trainerRanks > 0) {
                pm.add(Component::CpuAdamState, trainerRanks, perRank[kCpuAdam] / trainerRanks);
                if (backuper) {
                    pm.add(Component::WeightsBackuper, trainerRanks, avgWeights);
                }
                if (reference) {
                    pm.add(Component::ReferenceCopy, trainerRanks, avgWeights);
                }
            }
            if (plan.cpuOnly) {
                pm.add(Component::DeviceStateInRam, 1,
                       perRank[kDeviceState] + engineMirror * 0 +
                           (engineGpus > 0 ? engineGpuBytes : 0.0));
            }
            if (clone && phase != Phase::Load && trainerRanks > 0) {
                pm.add(Component::CloneArena, trainerRanks, perRank[kClone] / trainerRanks);
            }
            switch (phase) {
                case Phase::Load:
                    break;
                case Phase::Rollout:
                    if (trainerRanks > 0) {
                        pm.add(Component::TrainerBackup, trainerRanks, tms / trainerRanks);
                    }
                    break;
                case Phase::Train:
                    if (engineGpus > 0) {
                        pm.add(Component::EngineMirror, engineGpus, engineMirror / engineGpus);
                    }
                    break;
                case Phase::WeightSync: {
                    pm.add(Component::PinnedStaging, trainerRanks,
                           r.memory.updateWeightBufferGb * kGb);
                    // Hand-off: with the peak on the CPU the trainer offloads before the engines
                    // onload, so both backups meet in host RAM; with --colocate-memory-peak-device
                    // gpu the engines onload first and the overlap moves to HBM.
                    const bool both = r.memory.colocateMemoryPeakDevice == PeakDevice::Cpu;
                    if (both || tms >= engineMirror) {
                        if (trainerRanks > 0) {
                            pm.add(Component::TrainerBackup, trainerRanks, tms / trainerRanks);
                        }
                    }
                    if ((both || engineMirror > tms) && engineGpus > 0) {
                        pm.add(Component::EngineMirror, engineGpus, engineMirror / engineGpus);
                    }
                    break;
                }
            }
        }
        node.peakPhase = peakOf(node.phases, node.peakBytes);
        plan.trainerBackupPerNodeMax = std::max(plan.trainerBackupPerNodeMax, tms);
        plan.engineMirrorPerNodeMax = std::max(plan.engineMirrorPerNodeMax, engineMirror);
        plan.pageCachePerNodeMax = std::max(plan.pageCachePerNodeMax, pageCache);
        if (reference) {
            plan.referencePerNodeMax = std::max(plan.referencePerNodeMax, perRank[kPinnedWeights]);
        }
        if (clone && trainerRanks > 0) {
            plan.cloneArenaPerRank =
                std::max(plan.cloneArenaPerRank, perRank[kClone] / trainerRanks);
        }
        if (node.peakBytes > plan.peakBytes) {
            plan.peakBytes = node.peakBytes;
            plan.peakNode = n;
            plan.peakPhase = node.peakPhase;
            const PhaseMemory& peak = at(node.phases, node.peakPhase);
            plan.fixedHostPerNodeMax =
                peak.bytesOf(Component::ProcessRuntime) + peak.bytesOf(Component::RayObjectStore);
        }
    }

    // ---- device, per GPU class ----
    const double gpuProcess = r.memory.processGpuGb * kGb;
    const double fragmentation = std::max(0.0, r.memory.allocatorFragmentation);
    const double trainerGpuProcesses = colocate && l.rolloutGpus > 0 ? 2.0 : 1.0;
    for (const auto& st : stages) {
        plan.trainPeakPerGpuIfOptimizerOnGpu =
            std::max(plan.trainPeakPerGpuIfOptimizerOnGpu,
                     st.weights + st.grads + st.optimizerFull + st.lora +
                         (st.activations + st.logits) * (1.0 + fragmentation) +
                         trainerGpuProcesses * gpuProcess);
    }
    if (plan.cpuOnly) {
        return plan;
    }
    const double kv = std::max(0.0, r.rollout.memFraction * plan.gpuBytes - engineGpuBytes);
    // Every process on a GPU keeps its CUDA context and NCCL buffers in every phase, asleep or
    // not; the allocator's slack rides on the activations that come and go each micro-batch.
    auto addRuntime = [&](GpuMemory& g, double processes) {
        for (Phase phase : kPhases) {
            at(g.phases, phase).add(Component::GpuRuntime, processes, gpuProcess);
        }
    };
    auto fillTrainer = [&](GpuMemory& g, const StageRank& st) {
        PhaseMemory& load = at(g.phases, Phase::Load);
        load.add(Component::TrainerWeights, 1, st.weights);
        load.add(Component::TrainerGrads, 1, st.grads);
        load.add(Component::TrainerOptimizer, 1, st.optimizerGpu);
        load.add(Component::LoraState, 1, st.lora);
        PhaseMemory& train = at(g.phases, Phase::Train);
        train.add(Component::TrainerWeights, 1, st.weights);
        train.add(Component::TrainerGrads, 1, st.grads);
        train.add(Component::TrainerOptimizer, 1, st.optimizerGpu);
        train.add(Component::LoraState, 1, st.lora);
        train.add(Component::Activations, 1, st.activations);
        train.add(Component::Logits, 1, st.logits);
        train.add(Component::AllocatorSlack, fragmentation, st.activations + st.logits);
        if (!(colocate && offloadTrain)) {
            PhaseMemory& rollout = at(g.phases, Phase::Rollout);
            rollout.add(Component::TrainerWeights, 1, st.weights);
            rollout.add(Component::TrainerGrads, 1, st.grads);
            rollout.add(Component::TrainerOptimizer, 1, st.optimizerGpu);
            rollout.add(Component::LoraState, 1, st.lora);
        }
        PhaseMemory& sync = at(g.phases, Phase::WeightSync);
        sync.add(Component::TrainerWeights, 1, st.weights);
        sync.add(Component::LoraState, 1, st.lora);
        if (!colocate || r.memory.colocateMemoryPeakDevice == PeakDevice::Gpu) {
            sync.add(Component::TrainerGrads, 1, st.grads);
            sync.add(Component::TrainerOptimizer, 1, st.optimizerGpu);
        }
    };
    auto fillEngine = [&](GpuMemory& g, bool withTrainer) {
        at(g.phases, Phase::Rollout).add(Component::EngineWeights, 1, engineGpuBytes);
        at(g.phases, Phase::Rollout).add(Component::KvCache, 1, kv);
        if (!(colocate && offloadRollout)) {
            at(g.phases, Phase::Train).add(Component::EngineWeights, 1, engineGpuBytes);
            at(g.phases, Phase::Train).add(Component::KvCache, 1, kv);
        }
        at(g.phases, Phase::WeightSync).add(Component::EngineWeights, 1, engineGpuBytes);
        if (!withTrainer) {
            at(g.phases, Phase::Load).add(Component::EngineWeights, 1, engineGpuBytes);
            at(g.phases, Phase::Load).add(Component::KvCache, 1, kv);
        }
    };
    const int stageCount = int(stages.size());
    for (int sIdx = 0; sIdx < stageCount && world > 0; ++sIdx) {
        GpuMemory g;
        g.trainerStage = sIdx;
        g.gpus = ranksPerStage;
        g.exampleGpu = sIdx * ranksPerStage;
        g.engine = colocate && g.exampleGpu < l.rolloutGpus;
        fillTrainer(g, stages[std::size_t(sIdx)]);
        if (g.engine) {
            fillEngine(g, true);
        }
        addRuntime(g, g.engine ? 2.0 : 1.0);
        g.peakPhase = peakOf(g.phases, g.peakBytes);
        plan.gpus.push_back(g);
    }
    const int engineOnly = colocate ? std::max(0, l.rolloutGpus - world) : l.rolloutGpus;
    if (engineOnly > 0) {
        GpuMemory g;
        g.engine = true;
        g.gpus = engineOnly;
        g.exampleGpu = colocate ? world : l.rolloutFirstGpu;
        fillEngine(g, false);
        addRuntime(g, 1.0);
        g.peakPhase = peakOf(g.phases, g.peakBytes);
        plan.gpus.push_back(g);
    }
    return plan;
}

const char* toString(Phase phase) {
    switch (phase) {
        case Phase::Load:
            return "load";
        case Phase::Rollout:
            return "rollout";
        case Phase::Train:
            return "train";
        case Phase::WeightSync:
            return "weight_sync";
    }
    return "?";
}

const char* toString(Component c) {
    switch (c) {
        case Component::ProcessRuntime:
            return "process runtime";
        case Component::RayObjectStore:
            return "Ray object store";
        case Component::PageCache:
            return "checkpoint page cache";
        case Component::CpuAdamState:
            return "CPU Adam state";
        case Component::WeightsBackuper:
            return "weights backuper (actor copy)";
        case Component::ReferenceCopy:
            return "reference model copy (KL)";
        case Component::TrainerBackup:
            return "trainer tms backup";
        case Component::EngineMirror:
            return "engine weight mirror";
        case Component::CloneArena:
            return "malloc arena (clone backups)";
        case Component::PinnedStaging:
            return "pinned staging";
        case Component::DeviceStateInRam:
            return "model state in RAM (CPU run)";
        case Component::TrainerWeights:
            return "trainer weights";
        case Component::TrainerGrads:
            return "trainer grads";
        case Component::TrainerOptimizer:
            return "trainer optimizer";
        case Component::LoraState:
            return "LoRA adapters + optimizer";
        case Component::Activations:
            return "activations";
        case Component::Logits:
            return "logits";
        case Component::EngineWeights:
            return "engine weights";
        case Component::KvCache:
            return "KV cache pool";
        case Component::GpuRuntime:
            return "process runtime (GPU)";
        case Component::AllocatorSlack:
            return "allocator fragmentation";
    }
    return "?";
}

const char* formulaOf(Component c) {
    switch (c) {
        case Component::ProcessRuntime:
            return "GPU processes on node x memory.process_host_gb";
        case Component::RayObjectStore:
            return "min(ray_object_store_fraction x host RAM, ray_object_store_max_gb)";
        case Component::PageCache:
            return "distinct checkpoint shards read by the node's ranks x 2 B/param";
        case Component::CpuAdamState:
            return "ranks x (8 B x shard + 8 B x shard pinned, power-of-2 blocks) x "
                   "offload_fraction";
        case Component::WeightsBackuper:
            return "ranks x bf16 weights per rank, pinned (power-of-2 blocks per tensor)";
        case Component::ReferenceCopy:
            return "ranks x bf16 reference weights per rank, pinned (power-of-2 blocks)";
        case Component::TrainerBackup:
            return "ranks x (bf16 weights unless a backuper holds them + GPU optimizer state + "
                   "LoRA)";
        case Component::EngineMirror:
            return "engine GPUs on node x engine weights per GPU";
        case Component::CloneArena:
            return "ranks x routed-expert bf16 weights per rank (dense models: all weights)";
        case Component::PinnedStaging:
            return "ranks x update_weight_buffer_gb";
        case Component::DeviceStateInRam:
            return "trainer weights + grads + optimizer + engine weights";
        case Component::TrainerWeights:
            return "2 B x (stage dense / TP + stage experts / (EP x ETP))";
        case Component::TrainerGrads:
            return "4 B x trainable params per rank";
        case Component::TrainerOptimizer:
            return "12 B x (dense / (DP x CP) + experts / expert-DP) x (1 - offload_fraction)";
        case Component::LoraState:
            return "adapter params per rank x (2 + 4 B) + 12 B / (DP x CP)";
        case Component::Activations:
            return "recompute: 2 B x T x H / SP x layers x in-flight + 34 B x T x H / SP (+ MoE)";
        case Component::Logits:
            return "8 B x T x vocab / TP (last stage)";
        case Component::EngineWeights:
            return "(experts x dtype bytes + dense x bf16 or dtype) / GPUs per engine";
        case Component::KvCache:
            return "mem_fraction x HBM - engine weights";
        case Component::GpuRuntime:
            return "processes on the GPU (trainer, engine) x memory.process_gpu_gb";
        case Component::AllocatorSlack:
            return "memory.allocator_fragmentation x (activations + logits)";
    }
    return "?";
}

bool isFixedBudget(Component c) {
    return c == Component::ProcessRuntime || c == Component::RayObjectStore ||
           c == Component::GpuRuntime;
}

std::string formatGb(double bytes) {
    char buffer[32];
    const double gb = std::round(bytes / kGb * 10.0) / 10.0;
    auto [ptr, ec] =
        std::to_chars(buffer, buffer + sizeof(buffer), gb, std::chars_format::fixed, 1);
    (void)ec;
    return std::string(buffer, ptr) + " GB";
}

std::string describe(const MemoryItem& item) {
    char buffer[32];
    std::string countText;
    if (std::floor(item.count) == item.count) {
        countText = std::to_string(static_cast<long long>(item.count));
    } else {
        auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), item.count);
        (void)ec;
        countText.assign(buffer, ptr);
    }
    std::string out = countText + " x " + formatGb(item.unitBytes);
    if (item.capped) {
        out += ", capped at " + formatGb(item.bytes);
    } else {
        out += " = " + formatGb(item.bytes);
    }
    return out;
}

std::string GpuMemory::label() const {
    std::string out;
    if (trainerStage >= 0) {
        out = "trainer stage " + std::to_string(trainerStage);
    }
    if (engine) {
        out += out.empty() ? "engine" : " + engine";
    }
    return out + " (" + std::to_string(gpus) + " GPUs)";
}

}  // namespace runplane::plan
