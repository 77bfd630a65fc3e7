// The memory model against the source's measurements for the Qwen3.8-2.4T-A95B `full` recipe
// (domain.md seed 000), the safeguard flags moving the peak the way the source says, and the
// topology of which GPU holds which coordinate. (issue 3)

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>

#include "backend/plan/catalog.h"
#include "backend/plan/model_params.h"
#include "backend/plan/pinned_rounding.h"
#include "backend/plan/planner.h"
#include "tests/plan/test_support.h"

namespace runplane::plan {
namespace {

constexpr double GB = 1e9;

struct Planned {
    Recipe recipe;
    Plan plan;
};

Planned planOf(const char* file, const std::function<void(Recipe&)>& mutate = {}) {
    Planned p{test::loadShipped(file), {}};
    if (mutate) {
        mutate(p.recipe);
    }
    p.plan = planRecipe(p.recipe, test::catalog());
    return p;
}

bool hasRule(const Plan& plan, const char* id) {
    for (const auto& f : plan.findings) {
        if (f.ruleId == id) {
            return true;
        }
    }
    return false;
}

double within(double value, double reference) {
    return std::abs(value / reference - 1.0);
}

const char* kFull = "qwen3.8-2.4T-A95B-full.yaml";

TEST(MemoryModel, FullRecipeMatchesTheSourceWithinTenPercent) {
    const Planned p = planOf(kFull);
    const MemoryPlan& m = p.plan.memory;
    // Trainer torch_memory_saver backup during rollout: ~390 GB/node.
    EXPECT_LT(within(m.trainerBackupPerNodeMax, 390 * GB), 0.10) << m.trainerBackupPerNodeMax / GB;
    // Engines' NVFP4 mirror during training: ~372 GB/node.
    EXPECT_LT(within(m.engineMirrorPerNodeMax, 372 * GB), 0.10) << m.engineMirrorPerNodeMax / GB;
    // Healthy peak 600-650 GB/node.
    EXPECT_GE(m.peakBytes, 600 * GB * 0.9);
    EXPECT_LE(m.peakBytes, 650 * GB * 1.1);
    EXPECT_LT(m.peakBytes, m.hostAlarmBytes);
    // Exactly one side holds a host backup in every phase.
    for (const auto& node : m.nodes) {
        for (Phase phase : kPhases) {
            const PhaseMemory& pm = node.phases[std::size_t(phase)];
            const bool trainer = pm.bytesOf(Component::TrainerBackup) > 0;
            const bool engine = pm.bytesOf(Component::EngineMirror) > 0;
            EXPECT_FALSE(trainer && engine) << "node " << node.node << " " << toString(phase);
        }
        EXPECT_GT(node.phases[std::size_t(Phase::Rollout)].bytesOf(Component::TrainerBackup), 0);
        EXPECT_GT(node.phases[std::size_t(Phase::Train)].bytesOf(Component::EngineMirror), 0);
        EXPECT_EQ(node.phases[std::size_t(Phase::Train)].bytesOf(Component::TrainerBackup), 0);
    }
    EXPECT_EQ(m.nodes.size(), 16u);
}

TEST(MemoryModel, FullRecipeMatchesEverySeedFigureWithinFivePercentOnEveryNode) {
    // Issue 16's goal, per node and per quantity (scripts/seed-figures.py prints them): trainer
    // tms backup ~390 GB (403.0 on the stage 0/3 nodes, 386.6 on stages 1/2), NVFP4 mirror ~372
    // GB (361.4), peak 600-650 GB (597.6-614.0), clone arena ~75 GB/rank (74.1).
    const Planned p = planOf(kFull);
    for (const auto& node : p.plan.memory.nodes) {
        SCOPED_TRACE("node " + std::to_string(node.node));
        const double backup =
            node.phases[std::size_t(Phase::Rollout)].bytesOf(Component::TrainerBackup);
        const double mirror =
            node.phases[std::size_t(Phase::Train)].bytesOf(Component::EngineMirror);
        EXPECT_LT(within(backup, 390 * GB), 0.05) << backup / GB;
        EXPECT_LT(within(mirror, 372 * GB), 0.05) << mirror / GB;
        EXPECT_GE(node.peakBytes, 0.95 * 600 * GB) << node.peakBytes / GB;
        EXPECT_LE(node.peakBytes, 1.05 * 650 * GB) << node.peakBytes / GB;
    }
    const Planned clone = planOf(kFull, [](Recipe& r) { r.memory.backupMode = BackupMode::Clone; });
    EXPECT_LT(within(clone.plan.memory.cloneArenaPerRank, 75 * GB), 0.05);
}

TEST(MemoryModel, BothBackupsResidentWithoutThePeakDeviceFlag) {
    const Planned healthy = planOf(kFull);
    const Planned p =
        planOf(kFull, [](Recipe& r) { r.memory.colocateMemoryPeakDevice = PeakDevice::Cpu; });
    EXPECT_GT(p.plan.memory.peakBytes, 750 * GB);
    EXPECT_EQ(p.plan.memory.peakPhase, Phase::WeightSync);
    EXPECT_GT(p.plan.memory.peakBytes,
              healthy.plan.memory.peakBytes + 0.9 * healthy.plan.memory.engineMirrorPerNodeMax);
    EXPECT_TRUE(hasRule(p.plan, "memory.one-host-backup"));
    EXPECT_TRUE(hasRule(p.plan, "memory.host-over-ram") ||
                hasRule(p.plan, "memory.host-over-alarm"));
}

TEST(MemoryModel, CloneBackupsAddAbout75GbPerRank) {
    const Planned healthy = planOf(kFull);
    const Planned p = planOf(kFull, [](Recipe& r) { r.memory.backupMode = BackupMode::Clone; });
    EXPECT_LT(within(p.plan.memory.cloneArenaPerRank, 75 * GB), 0.10)
        << p.plan.memory.cloneArenaPerRank / GB;
    const double added = p.plan.memory.peakBytes - healthy.plan.memory.peakBytes;
    EXPECT_LT(within(added, 4 * 75 * GB), 0.10) << added / GB;  // 4 ranks per node
    EXPECT_GT(p.plan.memory.peakBytes, 750 * GB);
    EXPECT_TRUE(hasRule(p.plan, "memory.clone-backup"));
    EXPECT_TRUE(hasRule(p.plan, "memory.host-over-alarm"));
}

TEST(MemoryModel, KlLossPinsAReferenceCopy) {
    const Planned healthy = planOf(kFull);
    const Planned p = planOf(kFull, [](Recipe& r) { r.algorithm.useKlLoss = true; });
    EXPECT_GT(p.plan.memory.referencePerNodeMax, 300 * GB);
    EXPECT_NEAR(p.plan.memory.peakBytes - healthy.plan.memory.peakBytes,
                p.plan.memory.referencePerNodeMax, 1 * GB);
    EXPECT_TRUE(hasRule(p.plan, "algorithm.kl-reference-copy"));
    EXPECT_GT(p.plan.memory.peakBytes, 750 * GB);
}

TEST(MemoryModel, PageCacheStaysWithoutTheDropFlag) {
    const Planned healthy = planOf(kFull);
    const Planned p =
        planOf(kFull, [](Recipe& r) { r.memory.dropCheckpointPageCacheAfterLoad = false; });
    const double cache = p.plan.memory.pageCachePerNodeMax;
    EXPECT_GT(cache, 250 * GB);
    EXPECT_NEAR(p.plan.memory.peakBytes - healthy.plan.memory.peakBytes, cache, 1 * GB);
    EXPECT_GT(p.plan.memory.peakBytes, 750 * GB);
    EXPECT_TRUE(hasRule(p.plan, "memory.page-cache"));
    // The load phase holds the cache either way (it is dropped after the load).
    EXPECT_GT(
        healthy.plan.memory.nodes[0].phases[std::size_t(Phase::Load)].bytesOf(Component::PageCache),
        250 * GB);
}

TEST(MemoryModel, ItemsAreCountTimesUnitAndTotalsAdd) {
    const Planned p = planOf(kFull);
    auto check = [](const PhaseMemory& pm) {
        double sum = 0;
        for (const auto& item : pm.items()) {
            if (!item.capped) {
                EXPECT_NEAR(item.bytes, item.count * item.unitBytes, 1.0);
            } else {
                EXPECT_LT(item.bytes, item.count * item.unitBytes);
            }
            EXPECT_STRNE(formulaOf(item.component), "?");
            EXPECT_FALSE(describe(item).empty());
            sum += item.bytes;
        }
        EXPECT_NEAR(pm.total(), sum, 1.0);
    };
    for (const auto& node : p.plan.memory.nodes) {
        for (const auto& pm : node.phases) {
            check(pm);
        }
    }
    for (const auto& gpu : p.plan.memory.gpus) {
        for (const auto& pm : gpu.phases) {
            check(pm);
        }
        EXPECT_LE(gpu.peakBytes, p.plan.memory.gpuBytes);
    }
}

TEST(MemoryModel, Nvfp4IsFourBitsPlusAnFp8ScalePer16) {
    EXPECT_DOUBLE_EQ(bytesPerWeight(WeightDtype::Nvfp4), 0.5 + 1.0 / 16);
    EXPECT_DOUBLE_EQ(bytesPerWeight(WeightDtype::Bf16), 2.0);
    const Planned bf16 =
        planOf(kFull, [](Recipe& r) { r.rollout.weightDtype = WeightDtype::Bf16; });
    const Planned nvfp4 = planOf(kFull);
    EXPECT_GT(bf16.plan.memory.engineWeightsPerGpu, 3 * nvfp4.plan.memory.engineWeightsPerGpu);
}

TEST(MemoryModel, CpuAdamStateLivesOnTheHost) {
    const Planned p = planOf("known-good/slime-qwen3-30B-A3B.yaml");
    const NodeMemory& node = p.plan.memory.nodes[0];
    const double adam = node.phases[std::size_t(Phase::Train)].bytesOf(Component::CpuAdamState);
    // 16 B per parameter of each rank's optimizer shard, of which the fp32 master and grad copies
    // (8 B) are pinned in power-of-2 blocks. One node holds the whole model: dense params split
    // over TP 4 x DP 2 = 8 ranks, experts over EP 8. An expert's fc1 (2 x 768 x 2048) and fc2
    // (2048 x 768) take 4/3 of their bytes in power-of-2 blocks; the dense tensors between 1x
    // and 2x.
    const ModelParams params = computeParams(*p.plan.model);
    const double experts = double(params.totalExperts);
    const double dense = double(params.totalDense);
    const double low = 8.0 * double(params.total) + 8.0 * (experts * 4.0 / 3.0 + dense);
    const double high = 8.0 * double(params.total) + 8.0 * (experts * 4.0 / 3.0 + 2.0 * dense);
    EXPECT_GE(adam, low * 0.999);
    EXPECT_LE(adam, high);
    for (const auto& gpu : p.plan.memory.gpus) {
        EXPECT_EQ(gpu.phases[std::size_t(Phase::Train)].bytesOf(Component::TrainerOptimizer), 0);
    }
}

TEST(MemoryModel, PinnedCopiesRoundEachTensorToAPowerOfTwo) {
    // PyTorch's CachingHostAllocator rounds a pinned request up to the next power of two.
    // DeepSeek-V3 experts at ETP 1: fc1 2 x 2048 x 7168 and fc2 7168 x 2048 bf16 = 7/8 of a power
    // of two -> 8/7; Qwen3.8-2.4T's (2 x 2048 x 8192, 8192 x 2048) are powers of two -> 1.
    const Planned r1 = planOf("known-good/slime-deepseek-r1.yaml");
    const ModelParams p1 = computeParams(*r1.plan.model);
    const auto st1 = splitStages(*r1.plan.model, p1, 4, 0, 13);
    const PinnedRounding a = pinnedRounding(*r1.plan.model, st1[1], false, 8, 32, 1);
    EXPECT_NEAR(a.experts, 8.0 / 7.0, 1e-9);
    EXPECT_GE(a.dense, 1.0);
    EXPECT_LT(a.dense, 2.0);
    const Planned q = planOf(kFull);
    const ModelParams pq = computeParams(*q.plan.model);
    const auto stq = splitStages(*q.plan.model, pq, 4, 0, 0);
    EXPECT_DOUBLE_EQ(pinnedRounding(*q.plan.model, stq[1], false, 1, 16, 1).experts, 1.0);
}

// slime docs/en/examples/deepseek-r1.md: "To save GPU memory, we will use CPU Adam. Each node
// (8xH100) will occupy 1.4~1.5TB of host memory", for scripts/run-deepseek-r1.sh, which also
// passes --use-kl-loss --kl-loss-coef 0.00 (a reference copy). The goal: within 10 % of that
// range on the node that needs the most (every node gets the same RAM).
TEST(MemoryModel, DeepSeekR1CpuAdamHostMemoryPerNodeIsTheDocumentedOne) {
    const Planned p = planOf("known-good/slime-deepseek-r1.yaml", [](Recipe& r) {
        r.algorithm.useKlLoss = true;
        r.algorithm.klLossCoef = 0.0;
    });
    const double peak = p.plan.memory.peakBytes;
    std::cout << "[ deepseek-r1 ] host peak per node " << peak / 1e12 << " TB on node "
              << p.plan.memory.peakNode << "\n";
    EXPECT_GE(peak, 0.9 * 1.4e12);
    EXPECT_LE(peak, 1.1 * 1.5e12);
    // the terms that make it: CPU Adam (16 B/param, 8 B of it pinned in power-of-2 blocks) and
    // the backuper's and the reference's pinned bf16 copies
    const PhaseMemory& train =
        p.plan.memory.nodes[std::size_t(p.plan.memory.peakNode)].phases[std::size_t(Phase::Train)];
    EXPECT_GT(train.bytesOf(Component::CpuAdamState), 0.5 * peak);
    EXPECT_GT(train.bytesOf(Component::ReferenceCopy), 0);
    EXPECT_GT(train.bytesOf(Component::WeightsBackuper), 0);
}

// Seed 002: Qwen3-30B-A3B on 1 x 8 H100 needs CPU Adam. Without it the rank holds 8.0 GB bf16
// weights + 16.0 GB fp32 grads + 45.8 GB Adam state + activations and logits, plus two processes'
// CUDA/NCCL runtime and the allocator's fragmentation: over 80 GB, an error naming what CPU Adam
// removes. With CPU Adam the same rank fits with room to spare.
const char* kVime30b = "vime-qwen3-30B-A3B-1x8.yaml";

const Finding* findingOf(const Plan& plan, const char* id) {
    for (const auto& f : plan.findings) {
        if (f.ruleId == id) {
            return &f;
        }
    }
    return nullptr;
}

TEST(MemoryModel, Qwen3MoeOn8H100WithoutCpuAdamIsOverHbm) {
    const Planned p = planOf(kVime30b, [](Recipe& r) { r.optimizer.cpuOffload = false; });
    const Finding* f = findingOf(p.plan, "memory.gpu-over-capacity");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Error);
    const GpuMemory& g = p.plan.memory.gpus.at(0);
    const PhaseMemory& train = g.phases[std::size_t(Phase::Train)];
    const double adam = train.bytesOf(Component::TrainerOptimizer);
    // 12 B x (dense / (TP 4 x DP 2) + experts / EP 8): the per-rank shard of 30.5 B params.
    EXPECT_NEAR(adam / GB, 45.8, 0.5);
    EXPECT_NE(f->message.find("CPU Adam (optimizer.cpu_offload) removes " + formatGb(adam)),
              std::string::npos)
        << f->message;
    EXPECT_GT(g.peakBytes, 80 * GB);
    EXPECT_GT(train.bytesOf(Component::GpuRuntime), 0);
    EXPECT_GT(train.bytesOf(Component::AllocatorSlack), 0);
}

TEST(MemoryModel, Qwen3MoeOn8H100WithCpuAdamFits) {
    const Planned p = planOf(kVime30b);
    EXPECT_FALSE(hasRule(p.plan, "memory.gpu-over-capacity"));
    EXPECT_FALSE(hasRule(p.plan, "memory.gpu-headroom"));
    for (const auto& g : p.plan.memory.gpus) {
        EXPECT_LT(g.peakBytes, (1.0 - kGpuHeadroomFraction) * 80 * GB) << g.label();
    }
}

TEST(MemoryModel, LittleHeadroomIsAWarning) {
    // The same run with an engine pool of 0.94 x 80 GB: 75.2 GB + two processes' 1.3 GB runtime
    // = 77.8 GB in rollout. It fits, but leaves under 5 % of HBM free.
    const Planned tight = planOf(kVime30b, [](Recipe& r) { r.rollout.memFraction = 0.94; });
    const Finding* f = findingOf(tight.plan, "memory.gpu-headroom");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warning);
    EXPECT_NEAR(tight.plan.memory.gpus.at(0).peakBytes / GB, 0.94 * 80 + 2 * 1.3, 0.01);
    EXPECT_FALSE(hasRule(tight.plan, "memory.gpu-over-capacity"));
}

TEST(MemoryModel, FixedBudgetsAreRecipeFields) {
    const Planned healthy = planOf(kFull);
    const Planned edited = planOf(kFull, [](Recipe& r) {
        r.cluster.rayObjectStoreMaxGb = 50;
        r.memory.processHostGb = 2;
    });
    const NodeMemory& a = healthy.plan.memory.nodes[0];
    const NodeMemory& b = edited.plan.memory.nodes[0];
    const auto& la = a.phases[std::size_t(Phase::Load)];
    const auto& lb = b.phases[std::size_t(Phase::Load)];
    EXPECT_NEAR(la.bytesOf(Component::RayObjectStore), 200 * GB, 1);
    EXPECT_NEAR(lb.bytesOf(Component::RayObjectStore), 50 * GB, 1);
    const double processes = a.trainerRanks + a.engineGpus;
    EXPECT_NEAR(la.bytesOf(Component::ProcessRuntime), processes * 1.11 * GB, 1);
    EXPECT_NEAR(lb.bytesOf(Component::ProcessRuntime), processes * 2 * GB, 1);
    EXPECT_TRUE(isFixedBudget(Component::RayObjectStore));
    EXPECT_FALSE(isFixedBudget(Component::TrainerBackup));
    EXPECT_GT(healthy.plan.memory.fixedHostPerNodeMax, 200 * GB);
}

TEST(MemoryModel, CpuOnlySmokeRunFitsThisMachine) {
    const Planned p = planOf("smoke-local.yaml");
    EXPECT_TRUE(p.plan.memory.cpuOnly);
    EXPECT_TRUE(p.plan.memory.gpus.empty());
    EXPECT_LT(p.plan.memory.peakBytes, 24 * GB);
    EXPECT_EQ(p.plan.memory.nodes[0].phases[0].bytesOf(Component::RayObjectStore), 0);
}

TEST(Topology, FullRecipeCoordinates) {
    const Topology t = planTopology(test::loadShipped(kFull));
    ASSERT_EQ(t.gpus.size(), 64u);
    ASSERT_EQ(t.engines.size(), 4u);
    const GpuSlot& g = t.gpus[17];
    EXPECT_EQ(g.node, 4);
    EXPECT_EQ(g.localGpu, 1);
    EXPECT_EQ(g.trainer.rank, 17);
    EXPECT_EQ(g.trainer.pp, 1);
    EXPECT_EQ(g.trainer.dp, 1);
    EXPECT_EQ(g.trainer.ep, 1);
    EXPECT_EQ(g.engine.engine, 1);
    EXPECT_EQ(g.engine.rank, 1);
    EXPECT_EQ(t.engines[3].firstNode, 12);
    EXPECT_EQ(t.engines[3].lastNode, 15);
    const auto lines = t.summaryLines();
    ASSERT_EQ(lines.size(), 16u);
    EXPECT_EQ(lines[0].rfind("node 0: gpu0 T[r0 tp0 pp0 cp0 dp0 ep0] E0.0 | gpu1", 0), 0u)
        << lines[0];
}

TEST(Topology, MegatronRankOrderTpCpDpPp) {
    // DeepSeek-R1: TP8 PP4 CP4 EP32 on 128 GPUs.
    const Topology t = planTopology(test::loadShipped("known-good/slime-deepseek-r1.yaml"));
    const GpuSlot& g = t.gpus[77];  // 77 = tp 5 + 8 * (cp 1 + 4 * (dp 0 + 1 * pp 2))
    EXPECT_EQ(g.trainer.tp, 5);
    EXPECT_EQ(g.trainer.cp, 1);
    EXPECT_EQ(g.trainer.dp, 0);
    EXPECT_EQ(g.trainer.pp, 2);
    EXPECT_EQ(g.trainer.ep, 77 % 32);
    EXPECT_EQ(g.engine.engine, 1);
    EXPECT_EQ(g.engine.rank, 13);
}

TEST(Topology, DisaggregatedRolloutFollowsTheActor) {
    const Topology t = planTopology(test::loadShipped("known-good/slime-qwen3-235B-A22B.yaml"));
    ASSERT_EQ(t.gpus.size(), 128u);
    EXPECT_EQ(t.gpus[63].trainer.rank, 63);
    EXPECT_EQ(t.gpus[63].engine.engine, -1);
    EXPECT_EQ(t.gpus[64].trainer.rank, -1);
    EXPECT_EQ(t.gpus[64].engine.engine, 0);
    EXPECT_EQ(t.engines.size(), 2u);
    EXPECT_EQ(t.engines[1].firstNode, 12);
}

TEST(Topology, VllmEngineWithDataParallelAndEplb) {
    const Recipe r = test::loadShipped("vime-qwen3-30B-A3B-24gpu-eplb.yaml");
    const Layout l = computeLayout(r);
    EXPECT_EQ(l.engine, RolloutEngine::Vllm);
    EXPECT_EQ(l.engineTp, 8);
    EXPECT_EQ(l.engineDp, 3);
    EXPECT_EQ(l.engineEp, 24);
    EXPECT_TRUE(l.engineCrossNode);
    const Topology t = planTopology(r);
    EXPECT_EQ(t.gpus[9].engine.tp, 1);
    EXPECT_EQ(t.gpus[9].engine.dp, 1);
    EXPECT_EQ(t.gpus[23].engine.dp, 2);
}

TEST(Plan, JsonCarriesEverything) {
    const Planned p = planOf(kFull);
    const std::string json = planToJson(p.plan, "full.yaml");
    for (const char* key :
         {"\"findings\"", "\"layout\"", "\"memory\"", "\"topology\"", "\"trainer tms backup\"",
          "\"engine weight mirror\"", "\"formula\"", "\"weight_sync\"", "\"expert_dp\""}) {
        EXPECT_NE(json.find(key), std::string::npos) << key;
    }
    const std::string findings = findingsToJson(p.plan.findings, "full.yaml");
    EXPECT_NE(findings.find("\"errors\": false"), std::string::npos) << findings;
}

}  // namespace
}  // namespace runplane::plan

namespace runplane::plan {
namespace {

TEST(Plan, JsonNeverThrowsOnOddBytes) {
    Recipe r = test::loadShipped("smoke-local.yaml");
    r.checkpoints.save = std::string("/runs/\xff\xfe/out");
    r.trainer.tp = 3;  // a finding whose message is built from the recipe
    const Plan plan = planRecipe(r, test::catalog());
    std::string json;
    EXPECT_NO_THROW(json = planToJson(plan, "odd\xff.yaml"));
    EXPECT_NE(json.find("\"findings\""), std::string::npos);
}

TEST(Catalog, MissingDirectoryIsAnErrorNotAnException) {
    auto missing = ModelCatalog::loadDirectory("/nonexistent/runplane/models");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("/nonexistent/runplane/models"), std::string::npos);
}

TEST(Catalog, LocateRecipesDirHonoursTheEnvironment) {
    ::setenv("RUNPLANE_RECIPES", test::recipesDir().c_str(), 1);
    auto dir = locateRecipesDir("");
    ::unsetenv("RUNPLANE_RECIPES");
    ASSERT_TRUE(dir.ok()) << dir.error();
    EXPECT_TRUE(std::filesystem::is_directory(*dir + "/models"));
}

// FSDP shards weights, grads and Adam state over DP (ZeRO-3, docs/memory-model.md): slime's
// run-qwen3-30B-A3B-fsdp.sh layout (8 GPUs, no TP/PP/EP) holds 1/8 of the weights plus two
// gathered layers per rank; the same layout on Megatron (no sharding of weights) holds them all.
TEST(MemoryModel, FsdpShardsWeightsOverDataParallel) {
    auto layout = [](TrainBackend backend) {
        return [backend](Recipe& r) {
            r.trainer.backend = backend;
            r.trainer.tp = 1;
            r.trainer.ep = 1;
            r.trainer.etp = 1;
            r.trainer.sequenceParallel = false;
        };
    };
    const Planned fsdp = planOf("known-good/slime-qwen3-30B-A3B.yaml", layout(TrainBackend::Fsdp));
    const Planned megatron =
        planOf("known-good/slime-qwen3-30B-A3B.yaml", layout(TrainBackend::Megatron));
    auto shape = resolveModel(fsdp.recipe, test::catalog());
    ASSERT_TRUE(shape.ok()) << shape.error();
    const double total = double(computeParams(*shape).total);
    const double layers = shape->numLayers;
    EXPECT_NEAR(fsdp.plan.memory.trainerWeightsPerRankMax, 2.0 * (total / 8 + 2.0 * total / layers),
                1e-6 * total);
    EXPECT_NEAR(megatron.plan.memory.trainerWeightsPerRankMax, 2.0 * total, 1e-6 * total);
    EXPECT_FALSE(hasRule(fsdp.plan, "memory.gpu-over-capacity"));
    EXPECT_TRUE(hasRule(megatron.plan, "memory.gpu-over-capacity"));
}

// Engine weights count at rollout.weight_dtype: slime's Qwen3-30B-A3B-INT4 checkpoint on one GPU
// per engine fits mem_fraction 0.7 of 80 GB; the bf16 checkpoint (61 GB) does not.
TEST(MemoryModel, EngineWeightsCountTheCheckpointPrecision) {
    auto oneGpuEngines = [](WeightDtype dtype) {
        return [dtype](Recipe& r) {
            r.rollout.gpusPerEngine = 1;
            r.rollout.weightDtype = dtype;
        };
    };
    const Planned int4 =
        planOf("known-good/slime-qwen3-30B-A3B.yaml", oneGpuEngines(WeightDtype::Int4));
    const Planned bf16 =
        planOf("known-good/slime-qwen3-30B-A3B.yaml", oneGpuEngines(WeightDtype::Bf16));
    EXPECT_LT(int4.plan.memory.engineWeightsPerGpu, 0.3 * bf16.plan.memory.engineWeightsPerGpu);
    EXPECT_FALSE(hasRule(int4.plan, "memory.engine-weights-fit"));
    EXPECT_TRUE(hasRule(bf16.plan, "memory.engine-weights-fit"));
}

// planRecipe computes the layout and the parameter counts once and hands them to each step
// (issue #22); the plan is the one the public steps give when each computes its own.
TEST(Plan, OnePassEqualsTheStepsOnEveryShippedRecipe) {
    int count = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test::recipesDir())) {
        const auto& path = entry.path();
        if (!entry.is_regular_file() || path.extension() != ".yaml" ||
            path.parent_path().filename() == "models") {
            continue;
        }
        SCOPED_TRACE(path.string());
        auto r = loadRecipe(path.string());
        ASSERT_TRUE(r.ok()) << r.error();
        const Plan plan = planRecipe(*r, test::catalog());
        if (!plan.model.has_value()) {
            continue;
        }
        ++count;
        const Layout layout = computeLayout(*r);
        EXPECT_EQ(plan.layout.worldSize, layout.worldSize);
        EXPECT_EQ(plan.layout.dp, layout.dp);
        EXPECT_EQ(plan.layout.engines, layout.engines);
        EXPECT_EQ(plan.params.total, computeParams(*plan.model).total);
        const Topology topology = planTopology(*r);
        EXPECT_EQ(plan.topology.summaryLines(), topology.summaryLines());
        const MemoryPlan memory = planMemory(*r, *plan.model, topology);
        EXPECT_EQ(plan.memory.peakBytes, memory.peakBytes);
        EXPECT_EQ(plan.memory.peakNode, memory.peakNode);
        EXPECT_EQ(plan.memory.nodes.size(), memory.nodes.size());
        const std::vector<Finding> findings = validateResolved(*r, *plan.model, memory);
        ASSERT_EQ(plan.findings.size(), findings.size());
        for (std::size_t i = 0; i < findings.size(); ++i) {
            EXPECT_EQ(plan.findings[i].ruleId, findings[i].ruleId);
            EXPECT_EQ(plan.findings[i].message, findings[i].message);
        }
    }
    EXPECT_GE(count, 20);
}

}  // namespace
}  // namespace runplane::plan
