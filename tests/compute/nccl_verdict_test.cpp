// Bus-bandwidth factors, the healthy/degraded verdict and the RDMA NIC scan.
#include <gtest/gtest.h>

#include "compute/gpu/nccl_verdict.h"
#include "tests/compute/test_util.h"

namespace runplane::compute {
namespace {

TEST(BusBandwidth, FactorsFollowNcclTestsFormulas) {
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_reduce", 8), 2.0 * 7 / 8);  // 1.75
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_reduce", 2), 1.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_reduce", 1), 0.0);  // one GPU: busbw 0 by definition
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_gather", 8), 7.0 / 8);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("reduce_scatter", 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_to_all", 16), 15.0 / 16);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_gather", 1), 0.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("broadcast", 8), 0.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("all_reduce", 0), 0.0);
}

NcclProbeRow row(std::string collective, std::uint64_t bytes, double busbw, bool correct = true) {
    NcclProbeRow r;
    r.collective = std::move(collective);
    r.bytes = bytes;
    r.busbwGBps = busbw;
    r.algbwGBps = busbw;
    r.correct = correct;
    return r;
}

NcclVerdictInput hopperNode(double peakBusbw) {
    NcclVerdictInput input;
    input.worldSize = 8;
    input.localRanks = 8;
    input.gpuNames.assign(8, "NVIDIA H200");
    input.rows = {row("all_reduce", 8ull << 20, 120.0),
                  row("all_reduce", 256ull << 20, peakBusbw - 5),
                  row("all_reduce", 1ull << 30, peakBusbw), row("all_gather", 1ull << 30, 999.0)};
    return input;
}

TEST(NcclVerdict, SingleGpuIsNotApplicable) {  // issue 7: one H200 on the GPU host
    NcclVerdictInput input;
    input.worldSize = 1;
    input.localRanks = 1;
    input.gpuNames = {"NVIDIA H200"};
    input.rows = {row("all_reduce", 1ull << 30, 0.0)};
    const NcclVerdict verdict = judgeNcclProbe(input);
    EXPECT_EQ(verdict.status, "n/a");
    EXPECT_EQ(verdict.text, "n/a: single GPU, busbw is 0 by definition (results correct)");
}

TEST(NcclVerdict, WrongResultsFailWhateverTheSpeed) {
    NcclVerdictInput input = hopperNode(450);
    input.rows.push_back(row("all_to_all", 64ull << 20, 300, false));
    const NcclVerdict verdict = judgeNcclProbe(input);
    EXPECT_EQ(verdict.status, "failed");
    EXPECT_EQ(verdict.text, "failed: wrong results from all_to_all at 67108864 B");
}

TEST(NcclVerdict, EightHopperGpusAgainstNvswitchProfile) {
    const NcclVerdict healthy = judgeNcclProbe(hopperNode(380));
    EXPECT_EQ(healthy.status, "healthy") << healthy.text;
    EXPECT_DOUBLE_EQ(healthy.peakBusbwGBps, 380);
    EXPECT_DOUBLE_EQ(healthy.expectedLowGBps, 370);
    EXPECT_DOUBLE_EQ(healthy.expectedHighGBps, 480);
    EXPECT_DOUBLE_EQ(healthy.thresholdGBps, 0.9 * 370);
    EXPECT_NE(healthy.text.find("all_reduce peak busbw 380.0 GB/s at 1073741824 B over 8 ranks"),
              std::string::npos)
        << healthy.text;

    // Just above and below 90 % of 370 = 333 GB/s.
    EXPECT_EQ(judgeNcclProbe(hopperNode(333.1)).status, "healthy");
    const NcclVerdict degraded = judgeNcclProbe(hopperNode(200));
    EXPECT_EQ(degraded.status, "degraded");
    EXPECT_NE(degraded.text.find("54.1 % of the expected low end"), std::string::npos)
        << degraded.text;
}

TEST(NcclVerdict, OnlyLargeAllReduceRowsAreJudged) {
    NcclVerdictInput input = hopperNode(400);
    input.rows = {row("all_reduce", 128ull << 20, 400), row("all_gather", 1ull << 30, 400)};
    const NcclVerdict verdict = judgeNcclProbe(input);
    EXPECT_EQ(verdict.status, "not judged");
    EXPECT_NE(verdict.text.find("256 MiB"), std::string::npos);
}

TEST(NcclVerdict, UnknownHardwareIsNotJudged) {
    NcclVerdictInput input = hopperNode(400);
    input.gpuNames.assign(8, "NVIDIA H100 PCIe");
    EXPECT_EQ(judgeNcclProbe(input).status, "not judged");
    input.gpuNames.assign(8, "NVIDIA H200");
    input.worldSize = input.localRanks = 4;
    const NcclVerdict four = judgeNcclProbe(input);
    EXPECT_EQ(four.status, "not judged");
    EXPECT_NE(four.text.find("no profile for 4 x NVIDIA H200"), std::string::npos) << four.text;
}

TEST(NcclVerdict, HopperNameMatching) {
    EXPECT_TRUE(isNvswitchHopperName("NVIDIA H100 80GB HBM3"));
    EXPECT_TRUE(isNvswitchHopperName("NVIDIA H200"));
    EXPECT_FALSE(isNvswitchHopperName("NVIDIA H100 PCIe"));
    EXPECT_FALSE(isNvswitchHopperName("NVIDIA H100 NVL"));
    EXPECT_FALSE(isNvswitchHopperName("NVIDIA H200 NVL"));
    EXPECT_FALSE(isNvswitchHopperName("NVIDIA A100-SXM4-80GB"));
}

TEST(NcclVerdict, MultiNodeUsesActiveNics) {
    NcclVerdictInput input = hopperNode(350);
    input.worldSize = 16;  // two nodes of 8
    for (int k = 0; k < 8; ++k) {
        input.nics.push_back({"mlx5_" + std::to_string(k) + "/1", "InfiniBand", 400, true});
    }
    input.nics.push_back({"mlx5_8/1", "Ethernet", 100, false});  // down: ignored
    const NcclVerdict verdict = judgeNcclProbe(input);
    // 8 x 400 Gb/s = 400 GB/s line rate; x 0.92..0.96 = 368..384, capped by NVLink's 370..480.
    EXPECT_DOUBLE_EQ(verdict.expectedLowGBps, 368);
    EXPECT_DOUBLE_EQ(verdict.expectedHighGBps, 384);
    EXPECT_EQ(verdict.status, "healthy") << verdict.text;

    input.nics.resize(1);  // one NDR NIC per node: 46..48 GB/s
    input.rows.back().busbwGBps = 0;
    input.rows = {row("all_reduce", 1ull << 30, 40)};
    const NcclVerdict oneNic = judgeNcclProbe(input);
    EXPECT_DOUBLE_EQ(oneNic.expectedLowGBps, 46);
    EXPECT_DOUBLE_EQ(oneNic.expectedHighGBps, 48);
    EXPECT_EQ(oneNic.status, "degraded") << oneNic.text;  // 40 < 0.9 x 46 = 41.4

    input.nics.clear();
    EXPECT_EQ(judgeNcclProbe(input).status, "not judged");
}

TEST(NcclVerdict, NothingMeasured) {
    EXPECT_EQ(judgeNcclProbe({}).status, "n/a");
}

TEST(RdmaNics, ScansSysfsLayout) {
    test::ScratchDir sysfs;
    const auto port = [&](const std::string& dev, const std::string& n, const std::string& state,
                          const std::string& rate, const std::string& layer) {
        const auto dir = sysfs.path() / dev / "ports" / n;
        test::writeFile(dir / "state", state + "\n");
        test::writeFile(dir / "rate", rate + "\n");
        test::writeFile(dir / "link_layer", layer + "\n");
    };
    port("mlx5_1", "1", "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
    port("mlx5_0", "1", "1: DOWN", "10 Gb/sec (4X SDR)", "InfiniBand");
    port("mlx5_2", "1", "4: ACTIVE", "200 Gb/sec (2X HDR)", "Ethernet");
    const auto nics = scanRdmaNics(sysfs.path().string());
    ASSERT_EQ(nics.size(), 3u);
    EXPECT_EQ(nics[0].name, "mlx5_0/1");
    EXPECT_FALSE(nics[0].active);
    EXPECT_EQ(nics[1].name, "mlx5_1/1");
    EXPECT_TRUE(nics[1].active);
    EXPECT_DOUBLE_EQ(nics[1].rateGbps, 400);
    EXPECT_EQ(nics[1].linkLayer, "InfiniBand");
    EXPECT_EQ(nics[2].linkLayer, "Ethernet");
    EXPECT_TRUE(scanRdmaNics("/nonexistent/sys/class/infiniband").empty());
}

}  // namespace
}  // namespace runplane::compute
