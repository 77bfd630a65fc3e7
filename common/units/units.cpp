#include "common/units/units.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>

namespace runplane::units {

namespace {

// One step of a unit ladder: from `from` (absolute value) up, value / unit printed with `format`.
struct Step {
    double from;
    double unit;
    const char* format;
};

// The first step whose `from` the value reaches (steps from the largest down; the last one's
// `from` is 0).
std::string formatScaled(double value, std::initializer_list<Step> steps) {
    if (std::isnan(value)) {
        return "nan";
    }
    for (const Step& step : steps) {
        if (std::fabs(value) >= step.from || step.from == 0) {
            char text[48];
            std::snprintf(text, sizeof text, step.format, value / step.unit);
            return text;
        }
    }
    return {};
}

}  // namespace

std::string formatBytes(double bytes) {
    return formatScaled(bytes, {{100 * kBytesPerGB, kBytesPerGB, "%.1f GB"},
                                {kBytesPerGB, kBytesPerGB, "%.2f GB"},
                                {1e6, 1e6, "%.0f MB"},
                                {1e3, 1e3, "%.0f kB"},
                                {0, 1, "%.0f B"}});
}

std::string formatCount(double count) {
    return formatScaled(count, {{100e9, 1e9, "%.1f B"},
                                {1e9, 1e9, "%.2f B"},
                                {1e6, 1e6, "%.1f M"},
                                {1e3, 1e3, "%.1f K"},
                                {0, 1, "%.0f"}});
}

std::string formatDuration(double seconds) {
    if (seconds < 0 || std::isnan(seconds)) {
        return "-";
    }
    const auto total = static_cast<long long>(seconds + 0.5);
    char text[32];
    if (total >= 3600) {
        std::snprintf(text, sizeof text, "%lldh %02lldm", total / 3600, (total % 3600) / 60);
    } else if (total >= 60) {
        std::snprintf(text, sizeof text, "%lldm %02llds", total / 60, total % 60);
    } else {
        std::snprintf(text, sizeof text, "%llds", total);
    }
    return text;
}

}  // namespace runplane::units
