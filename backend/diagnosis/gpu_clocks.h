#pragma once
// GPU clocks in a diagnosis (issue #44, docs/diagnosis.md "GPU clocks"): NVML's clock event
// (throttle) reasons as names, and the rule that calls a GPU throttled — a lagging-rank cause:
// a rank whose GPU runs slowed by heat or a power limit reaches each collective late and its
// peers wait in it. Pure: the daemon reads the values (compute::GpuDevice), this judges them.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runplane::diagnosis {

/// One NVML clock event reason bit (nvmlClocksEventReason* / nvmlClocksThrottleReason*).
struct ClockReason {
    std::uint64_t bit;
    const char* name;  // "hw_thermal_slowdown"
    const char* kind;  // "thermal", "power", "hardware", "idle", "setting"
    bool slows;        // a cause of a lagging rank (thermal, power, hardware slowdown)
};

/// The table of reasons, in bit order.
const std::vector<ClockReason>& clockReasons();

/// The names of the bits set in `mask` (unknown bits as "0x..."); empty for -1 (not read).
std::vector<std::string> clockReasonNames(std::int64_t mask);

/// A GPU's clock state from its diagnosis JSON (gpus.devices[i]: sm_clock_mhz,
/// sm_clock_max_mhz, clock_event_reasons, temperature_c).
struct GpuClockState {
    bool known = false;               // the reasons were read
    bool throttled = false;           // a `slows` reason is set
    std::vector<std::string> causes;  // "hw_thermal_slowdown (thermal)" for each slowing reason
    std::string text;  // "SM clock 1005 of 1980 MHz (51%), hw_thermal_slowdown (thermal), 91 C"
};
GpuClockState gpuClockState(const nlohmann::json& gpu);

}  // namespace runplane::diagnosis
