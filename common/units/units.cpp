#include "common/units/units.h"

#include <cmath>
#include <cstdio>

namespace runplane::units {

std::string formatBytes(double bytes) {
    if (std::isnan(bytes)) {
        return "nan";
    }
    const double size = std::fabs(bytes);
    char text[48];
    if (size >= 100 * kBytesPerGB) {
        std::snprintf(text, sizeof text, "%.1f GB", bytes / kBytesPerGB);
    } else if (size >= kBytesPerGB) {
        std::snprintf(text, sizeof text, "%.2f GB", bytes / kBytesPerGB);
    } else if (size >= 1e6) {
        std::snprintf(text, sizeof text, "%.0f MB", bytes / 1e6);
    } else if (size >= 1e3) {
        std::snprintf(text, sizeof text, "%.0f kB", bytes / 1e3);
    } else {
        std::snprintf(text, sizeof text, "%.0f B", bytes);
    }
    return text;
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
