#include "backend/diagnosis/gpu_clocks.h"

#include <cstdio>

namespace runplane::diagnosis {

const std::vector<ClockReason>& clockReasons() {
    // Bits as nvml.h defines them (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*).
    static const std::vector<ClockReason> table = {
        {0x1, "gpu_idle", "idle", false},
        {0x2, "applications_clocks_setting", "setting", false},
        {0x4, "sw_power_cap", "power", true},
        {0x8, "hw_slowdown", "hardware", true},
        {0x10, "sync_boost", "setting", false},
        {0x20, "sw_thermal_slowdown", "thermal", true},
        {0x40, "hw_thermal_slowdown", "thermal", true},
        {0x80, "hw_power_brake_slowdown", "power", true},
        {0x100, "display_clock_setting", "setting", false},
    };
    return table;
}

std::vector<std::string> clockReasonNames(std::int64_t mask) {
    std::vector<std::string> out;
    if (mask < 0) {
        return out;
    }
    auto rest = static_cast<std::uint64_t>(mask);
    for (const auto& r : clockReasons()) {
        if ((rest & r.bit) != 0) {
            out.emplace_back(r.name);
            rest &= ~r.bit;
        }
    }
    if (rest != 0) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(rest));
        out.emplace_back(hex);
    }
    return out;
}

namespace {

std::int64_t intField(const nlohmann::json& j, const char* key, std::int64_t missing) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : missing;
}

}  // namespace

GpuClockState gpuClockState(const nlohmann::json& gpu) {
    GpuClockState s;
    if (!gpu.is_object()) {
        return s;
    }
    const std::int64_t mask = intField(gpu, "clock_event_reasons", -1);
    const std::int64_t sm = intField(gpu, "sm_clock_mhz", 0);
    const std::int64_t smMax = intField(gpu, "sm_clock_max_mhz", 0);
    const std::int64_t temp = intField(gpu, "temperature_c", -1);
    std::string text;
    if (sm > 0) {
        text = "SM clock " + std::to_string(sm) + " MHz";
        if (smMax > 0) {
            text = "SM clock " + std::to_string(sm) + " of " + std::to_string(smMax) + " MHz (" +
                   std::to_string(sm * 100 / smMax) + "%)";
        }
    }
    if (mask >= 0) {
        s.known = true;
        std::vector<std::string> all;
        auto rest = static_cast<std::uint64_t>(mask);
        for (const auto& r : clockReasons()) {
            if ((rest & r.bit) == 0) {
                continue;
            }
            const std::string named = std::string(r.name) + " (" + r.kind + ")";
            all.push_back(named);
            if (r.slows) {
                s.throttled = true;
                s.causes.push_back(named);
            }
        }
        std::string reasons;
        for (const auto& a : all) {
            reasons += (reasons.empty() ? "" : ", ") + a;
        }
        text += (text.empty() ? "" : ", ") +
                (reasons.empty() ? std::string("no clock event reason") : reasons);
    } else {
        text += (text.empty() ? "" : ", ") + std::string("clock event reasons not read");
    }
    if (temp >= 0) {
        text += ", " + std::to_string(temp) + " C";
    }
    s.text = text;
    return s;
}

}  // namespace runplane::diagnosis
