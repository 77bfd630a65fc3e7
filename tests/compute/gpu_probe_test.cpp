// GPU tests (label `gpu`): the real probe and NVML on real hardware. Skipped only when this host
// has no GPU (the probe reports "no CUDA device").
#include <gtest/gtest.h>

#include "compute/gpu/gpu_inventory.h"
#include "compute/gpu/nccl_probe.h"
#include "compute/gpu/nccl_resolve.h"

namespace runplane::compute {
namespace {

NcclProbeConfig smallSweep() {
    NcclProbeConfig config;
    config.probeBinaryPath = COMPUTE_PROBE_BINARY;
    config.collectives = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
    config.minBytes = 8u << 20;
    config.maxBytes = 32u << 20;
    config.warmupIters = 2;
    config.iters = 5;
    return config;
}

bool noGpu(const NcclProbeOutcome& outcome) {
    return outcome.unavailableReason.find("no CUDA device") != std::string::npos;
}

TEST(GpuProbe, AllCollectivesAreCorrectOnLocalGpus) {  // issue 7
    if (std::string(COMPUTE_PROBE_BINARY).empty())
        GTEST_SKIP() << "built without CUDA";
    const auto outcome = runNcclProbe(smallSweep());
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    if (noGpu(*outcome))
        GTEST_SKIP() << outcome->unavailableReason;
    ASSERT_TRUE(outcome->unavailableReason.empty()) << outcome->unavailableReason;
    EXPECT_GE(outcome->ranks, 1u);
    EXPECT_EQ(outcome->rows.size(), 4u * 3u);  // 8, 16, 32 MiB per collective
    for (const auto& row : outcome->rows) {
        EXPECT_TRUE(row.correct) << row.collective << " " << row.bytes;
        EXPECT_GT(row.timeUsP50, 0.0);
        EXPECT_GE(row.timeUsP95, row.timeUsP50);
        EXPECT_DOUBLE_EQ(row.busbwGBps,
                         row.algbwGBps * busBandwidthFactor(row.collective, outcome->ranks));
    }
    if (outcome->ranks == 1) {
        EXPECT_EQ(outcome->verdict, "n/a: single GPU, busbw is 0 by definition (results correct)");
    }
    EXPECT_EQ(outcome->ncclEnv.count("NCCL_NVLS_ENABLE"), 1u);
}

TEST(GpuProbe, MultiNodeModeWithAUniqueIdOnOneNode) {
    if (std::string(COMPUTE_PROBE_BINARY).empty())
        GTEST_SKIP() << "built without CUDA";
    NcclProbeConfig config = smallSweep();
    config.collectives = {"all_reduce"};
    config.maxBytes = config.minBytes;
    auto lease = createNcclUniqueId(config, std::chrono::seconds(120));
    ASSERT_TRUE(lease.ok()) << lease.error();
    const auto local = runNcclProbe(smallSweep());
    ASSERT_TRUE(local.ok()) << local.error();
    if (noGpu(*local))
        GTEST_SKIP() << local->unavailableReason;
    config.uniqueId = (*lease)->id();
    config.worldSize = local->ranks;  // every local GPU is one rank of a one-node "world"
    config.firstRank = 0;
    const auto outcome = runNcclProbe(config);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    ASSERT_EQ(outcome->rows.size(), 1u);
    EXPECT_TRUE(outcome->rows[0].correct);
    EXPECT_EQ(outcome->ranks, local->ranks);
}

TEST(GpuInventory, RealNvmlSeesTheGpus) {
    const GpuSnapshot snapshot = queryGpus();
    if (!snapshot.unavailableReason.empty())
        GTEST_SKIP() << snapshot.unavailableReason;
    ASSERT_FALSE(snapshot.gpus.empty());
    for (const auto& gpu : snapshot.gpus) {
        EXPECT_FALSE(gpu.name.empty());
        EXPECT_EQ(gpu.uuid.rfind("GPU-", 0), 0u) << gpu.uuid;
        EXPECT_GT(gpu.memoryTotalBytes, 0u);
        EXPECT_LE(gpu.memoryUsedBytes, gpu.memoryTotalBytes);
        EXPECT_LE(gpu.utilizationPercent, 100u);
        EXPECT_FALSE(gpu.pciBusId.empty());
    }
}

}  // namespace
}  // namespace runplane::compute
