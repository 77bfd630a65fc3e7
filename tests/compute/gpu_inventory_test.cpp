// The NVML sampler against fake libnvidia-ml.so.1 builds (tests/compute/fake_nvml.cpp) and with
// NVML absent.
#include <gtest/gtest.h>

#include "compute/gpu/gpu_inventory.h"

namespace runplane::compute {
namespace {

std::string fakeNvml(int variant) {
    return std::string(FAKE_NVML_ROOT) + "/" + std::to_string(variant) + "/libnvidia-ml.so.1";
}

TEST(GpuInventory, AbsentNvmlGivesOneReasonAndNoNoise) {
    testing::internal::CaptureStderr();
    const GpuSnapshot first = queryGpusFrom("/nonexistent/libnvidia-ml.so.1");
    const GpuSnapshot second = queryGpusFrom("/nonexistent/libnvidia-ml.so.1");
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_TRUE(first.gpus.empty());
    EXPECT_EQ(first.unavailableReason.rfind(
                  "NVML unavailable: cannot load /nonexistent/libnvidia-ml.so.1", 0),
              0u)
        << first.unavailableReason;
    EXPECT_EQ(first.unavailableReason, second.unavailableReason);
}

TEST(GpuInventory, DefaultQueryIsConsistent) {
    const GpuSnapshot snapshot = queryGpus();  // this machine has no driver; a GPU host has one
    if (snapshot.unavailableReason.empty()) {
        EXPECT_FALSE(snapshot.gpus.empty());
    } else {
        EXPECT_TRUE(snapshot.gpus.empty());
    }
}

TEST(GpuInventory, ReadsDevicesProcessesAndCounters) {
    const GpuSnapshot snapshot = queryGpusFrom(fakeNvml(1));
    ASSERT_TRUE(snapshot.unavailableReason.empty()) << snapshot.unavailableReason;
    ASSERT_EQ(snapshot.gpus.size(), 2u);
    const GpuDevice& h200 = snapshot.gpus[0];
    EXPECT_EQ(h200.index, 0u);
    EXPECT_EQ(h200.name, "NVIDIA H200");
    EXPECT_EQ(h200.uuid, "GPU-0000aaaa");
    EXPECT_EQ(h200.pciBusId, "00000000:18:00.0");
    EXPECT_EQ(h200.memoryTotalBytes, 150754820096u);
    EXPECT_EQ(h200.memoryUsedBytes, 6442450944u);
    EXPECT_EQ(h200.utilizationPercent, 97u);
    EXPECT_EQ(h200.eccUncorrected, 5u);
    EXPECT_EQ(h200.nvlinkReplayErrors, 3 + 4);  // links 0 and 1 active
    EXPECT_EQ(h200.lastXid, -1);
    EXPECT_TRUE(h200.error.empty());

    const GpuDevice& h100 = snapshot.gpus[1];
    EXPECT_EQ(h100.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(h100.pciBusId, "00000000:2A:00.0");
    EXPECT_EQ(h100.eccUncorrected, 0u);      // not supported there
    EXPECT_EQ(h100.nvlinkReplayErrors, -1);  // no NVLink data
    EXPECT_EQ(h100.lastXid, 79);             // XID event delivered after registration

    ASSERT_EQ(snapshot.processes.size(), 4u);
    EXPECT_EQ(snapshot.processes[0].pid, 101);
    EXPECT_EQ(snapshot.processes[0].usedBytes, 1073741824u);
    EXPECT_EQ(snapshot.processes[2].pid, 103);
    EXPECT_EQ(snapshot.processes[2].usedBytes, 3221225472u);
    EXPECT_EQ(snapshot.processes[3].gpuIndex, 1u);
    EXPECT_EQ(snapshot.processes[3].pid, 201);
    EXPECT_EQ(snapshot.processes[3].usedBytes, 0u);  // NVML_VALUE_NOT_AVAILABLE

    // Clocks, clock event reasons and temperature (docs/diagnosis.md "GPU clocks").
    EXPECT_EQ(h200.smClockMHz, 345u);
    EXPECT_EQ(h200.smClockMaxMHz, 1980u);
    EXPECT_EQ(h200.clockEventReasons, 0x1);
    EXPECT_EQ(h200.temperatureC, 34);
    EXPECT_EQ(h100.smClockMHz, 1980u);
    EXPECT_EQ(h100.clockEventReasons, 0);
    EXPECT_EQ(h100.temperatureC, 56);

    // The XID stays reported on later samples.
    EXPECT_EQ(queryGpusFrom(fakeNvml(1)).gpus[1].lastXid, 79);
}

TEST(GpuInventory, ConfidentialComputeDriverGenerationUses32ByteEntries) {
    const GpuSnapshot snapshot = queryGpusFrom(fakeNvml(2));
    ASSERT_TRUE(snapshot.unavailableReason.empty()) << snapshot.unavailableReason;
    ASSERT_EQ(snapshot.processes.size(), 4u);
    EXPECT_EQ(snapshot.processes[1].pid, 102);
    EXPECT_EQ(snapshot.processes[1].usedBytes, 2147483648u);
    EXPECT_EQ(snapshot.processes[2].pid, 103);
}

TEST(GpuInventory, ClockReasonsFromTheNameBeforeNvml124) {
    // This generation exports nvmlDeviceGetCurrentClocksThrottleReasons only.
    const GpuSnapshot snapshot = queryGpusFrom(fakeNvml(2));
    ASSERT_EQ(snapshot.gpus.size(), 2u);
    EXPECT_EQ(snapshot.gpus[0].clockEventReasons, 0x1);
    EXPECT_EQ(snapshot.gpus[1].clockEventReasons, 0x44);
    EXPECT_EQ(snapshot.gpus[1].smClockMaxMHz, 1980u);
}

TEST(GpuInventory, InitFailureAndNoDevices) {
    const GpuSnapshot noDriver = queryGpusFrom(fakeNvml(3));
    EXPECT_TRUE(noDriver.gpus.empty());
    EXPECT_EQ(noDriver.unavailableReason,
              "NVML unavailable: nvmlInit_v2 failed: Driver Not Loaded (code 9)");

    const GpuSnapshot none = queryGpusFrom(fakeNvml(4));
    EXPECT_TRUE(none.gpus.empty());
    EXPECT_EQ(none.unavailableReason, "no GPU: NVML reports 0 devices");
}

}  // namespace
}  // namespace runplane::compute
