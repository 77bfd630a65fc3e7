// The Diagnosis tab's per-node lines for GPU clocks and the last output per role (issue #44,
// docs/diagnosis.md "GPU clocks", "Last output per role"): the H100 host's NVML values and a
// node whose trainer went quiet while its rollout printed.
#include <gtest/gtest.h>

#include "backend/diagnosis/diagnosis.h"
#include "gui/models/diagnosis_data.h"

using namespace runplane;
using namespace runplane::gui;

TEST(DiagnosisLines, GpuClocksAndTheLastOutputPerRole) {
    diagnosis::NodeDiagnosis n;
    n.nodeId = "gpu-host";
    n.tUnixNs = 1'800'000'000'000'000'000LL;
    n.gpus = nlohmann::json::array({{{"index", 0},
                                     {"sm_clock_mhz", 1980},
                                     {"sm_clock_max_mhz", 1980},
                                     {"clock_event_reasons", 0},
                                     {"temperature_c", 56}},
                                    {{"index", 1},
                                     {"sm_clock_mhz", 990},
                                     {"sm_clock_max_mhz", 1980},
                                     {"clock_event_reasons", 0x40},
                                     {"temperature_c", 92}}});
    diagnosis::RoleOutput trainer{"trainer",
                                  "MegatronTrainRayActor pid 812",
                                  "stdout",
                                  "Timer actor_train start",
                                  n.tUnixNs - 14 * 60'000'000'000LL,
                                  "line"};
    diagnosis::RoleOutput rollout{"rollout",      "SGLangEngine pid 913",      "stdout",
                                  "Decode batch", n.tUnixNs - 2'000'000'000LL, "stream"};
    n.roleOutput = {trainer, rollout};
    const NodeDiagnosisLines lines = nodeLines(n);
    ASSERT_EQ(lines.gpuClocks.size(), 2);
    EXPECT_EQ(
        lines.gpuClocks[0],
        QStringLiteral("GPU 0: SM clock 1980 of 1980 MHz (100%), no clock event reason, 56 C"));
    EXPECT_EQ(
        lines.gpuClocks[1],
        QStringLiteral("GPU 1: SM clock 990 of 1980 MHz (50%), hw_thermal_slowdown (thermal), "
                       "92 C (throttled)"));
    ASSERT_EQ(lines.lastOutput.size(), 2);
    EXPECT_EQ(
        lines.lastOutput[0],
        QStringLiteral("trainer (MegatronTrainRayActor pid 812, stdout): `Timer actor_train start` "
                       "14 min ago"));
    EXPECT_EQ(lines.lastOutput[1],
              QStringLiteral("rollout (SGLangEngine pid 913, stdout): `Decode batch` 2 s ago"));
    // Nothing read: no lines.
    EXPECT_TRUE(nodeLines(diagnosis::NodeDiagnosis{}).gpuClocks.isEmpty());
    EXPECT_TRUE(nodeLines(diagnosis::NodeDiagnosis{}).lastOutput.isEmpty());
}
