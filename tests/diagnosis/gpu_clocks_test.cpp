// GPU clocks in a diagnosis (issue #44, docs/diagnosis.md "GPU clocks"): NVML's clock event
// reason bits named, the throttled rule, and the verdict's gpu_throttled finding naming the rank.
// The values are the ones public `nvidia-smi -q` pastes show (each case names its issue): CI has
// no GPU, so the decision is tested from recorded values; the real read is on the GPU host
// (docs/results/2026-12-06-diagnosis-daemon-h100.md).
#include <gtest/gtest.h>

#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/gpu_clocks.h"

using namespace runplane::diagnosis;
using nlohmann::json;

namespace {

json gpu(unsigned index, std::int64_t sm, std::int64_t smMax, std::int64_t reasons, int temp,
         std::vector<std::int64_t> pids = {}) {
    json procs = json::array();
    for (auto p : pids) {
        procs.push_back({{"pid", p}, {"used_bytes", 1 << 30}});
    }
    return {{"index", index},
            {"name", "NVIDIA H100 80GB HBM3"},
            {"sm_clock_mhz", sm},
            {"sm_clock_max_mhz", smMax},
            {"clock_event_reasons", reasons},
            {"temperature_c", temp},
            {"run_processes", procs}};
}

}  // namespace

TEST(GpuClocks, ReasonBitsAreNamedAndUnknownBitsKept) {
    // open_clip#703 (a training that froze): "SW Power Cap : Active", every other reason not.
    EXPECT_EQ(clockReasonNames(0x4), std::vector<std::string>{"sw_power_cap"});
    // perses#613 at P8, 37 C: "Idle : Active".
    EXPECT_EQ(clockReasonNames(0x1), std::vector<std::string>{"gpu_idle"});
    EXPECT_EQ(clockReasonNames(0x48),
              (std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown"}));
    EXPECT_EQ(clockReasonNames(0x1000), std::vector<std::string>{"0x1000"});
    EXPECT_TRUE(clockReasonNames(-1).empty());
    EXPECT_TRUE(clockReasonNames(0).empty());
}

TEST(GpuClocks, ThrottledOnlyByHeatPowerOrHardwareSlowdown) {
    // gpustat#135: SM 2025 of 2100 MHz with no reason: not throttled.
    auto s = gpuClockState(gpu(0, 2025, 2100, 0, 60));
    EXPECT_TRUE(s.known);
    EXPECT_FALSE(s.throttled);
    EXPECT_EQ(s.text, "SM clock 2025 of 2100 MHz (96%), no clock event reason, 60 C");
    // Idle (perses#613) and an applications-clocks setting are not a lag cause.
    EXPECT_FALSE(gpuClockState(gpu(0, 345, 1980, 0x1, 37)).throttled);
    EXPECT_FALSE(gpuClockState(gpu(0, 1410, 1980, 0x2, 50)).throttled);
    // SW power cap (open_clip#703), thermal, power brake: throttled, each cause named.
    s = gpuClockState(gpu(3, 1005, 1980, 0x4, 71));
    EXPECT_TRUE(s.throttled);
    EXPECT_EQ(s.causes, std::vector<std::string>{"sw_power_cap (power)"});
    s = gpuClockState(gpu(3, 990, 1980, 0x48, 91));
    EXPECT_TRUE(s.throttled);
    EXPECT_EQ(s.text,
              "SM clock 990 of 1980 MHz (50%), hw_slowdown (hardware), hw_thermal_slowdown "
              "(thermal), 91 C");
    EXPECT_TRUE(gpuClockState(gpu(0, 1200, 1980, 0x80, 60)).throttled);
    EXPECT_TRUE(gpuClockState(gpu(0, 1200, 1980, 0x20, 88)).throttled);
    // The H100 host (docs/results/2026-12-06-diagnosis-daemon-h100.md): idle before the job
    // (nvidia-smi: 345 of 1980 MHz, reasons 0x1, 34 C), then under a matmul load as the daemon's
    // NVML read it (1980 of 1980 MHz, reasons 0, 56 C; 679 W): neither is throttled.
    s = gpuClockState(gpu(0, 345, 1980, 0x1, 34));
    EXPECT_FALSE(s.throttled);
    EXPECT_EQ(s.text, "SM clock 345 of 1980 MHz (17%), gpu_idle (idle), 34 C");
    s = gpuClockState(gpu(0, 1980, 1980, 0, 56));
    EXPECT_FALSE(s.throttled);
    EXPECT_EQ(s.text, "SM clock 1980 of 1980 MHz (100%), no clock event reason, 56 C");
    // Not read (an old driver, --no-gpu): unknown, never throttled.
    s = gpuClockState(gpu(0, 0, 0, -1, -1));
    EXPECT_FALSE(s.known);
    EXPECT_FALSE(s.throttled);
    EXPECT_EQ(s.text, "clock event reasons not read");
    EXPECT_FALSE(gpuClockState(json::array()).known);
}

TEST(GpuClocks, AThrottledGpuIsALaggingRankCauseInTheVerdict) {
    NodeDiagnosis n;
    n.hostname = "gpu-a";
    n.processes = {{812, "python train.py", 3, 3}, {811, "python train.py", 2, 2}};
    n.gpus = json::array({gpu(2, 1980, 1980, 0, 62, {811}), gpu(3, 990, 1980, 0x40, 92, {812})});
    const Verdict v = judge({n});
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.front().kind, "gpu_throttled");
    EXPECT_EQ(v.findings.front().text,
              "GPU 3 on gpu-a (rank 3, pid 812) is throttled: SM clock 990 of 1980 MHz (50%), "
              "hw_thermal_slowdown (thermal), 92 C");
    EXPECT_EQ(v.findings.size(), 1u);  // GPU 2 at full clock says nothing
    EXPECT_NE(v.headline.find("GPU 3 on gpu-a (rank 3, pid 812) is throttled"), std::string::npos);

    // Beside the stack outlier it is the second part of the headline (the why of the lag).
    NodeDiagnosis m = n;
    for (std::int64_t pid : {811, 812}) {
        ProcessStacks st;
        st.pid = pid;
        ThreadStack t;
        t.threadName = "MainThread";
        t.frames = {{pid == 812 ? "all_gather_into_tensor" : "barrier", "distributed.py", 10}};
        st.threads = {t};
        m.stacks.push_back(st);
    }
    m.processes.push_back({813, "python train.py", 4, 4});
    ProcessStacks third = m.stacks[0];
    third.pid = 813;
    m.stacks.push_back(third);
    const Verdict w = judge({m});
    ASSERT_GE(w.findings.size(), 2u);
    EXPECT_EQ(w.findings[0].kind, "stack_outlier");
    EXPECT_EQ(w.findings[1].kind, "gpu_throttled");
    EXPECT_NE(w.headline.find("; GPU 3 on gpu-a (rank 3, pid 812) is throttled"), std::string::npos)
        << w.headline;
    // The text form lists each GPU's clocks.
    RunDiagnosis d;
    d.runId = "r";
    d.nodes = {m};
    d.verdict = w;
    const std::string text = formatDiagnosis(d);
    EXPECT_NE(text.find("GPU 3: SM clock 990 of 1980 MHz (50%), hw_thermal_slowdown (thermal), "
                        "92 C (throttled)"),
              std::string::npos)
        << text;
}
