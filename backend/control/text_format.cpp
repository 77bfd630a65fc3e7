#include "backend/control/text_format.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace runplane::control {

std::string formatBytes(double bytes) {
    if (std::isnan(bytes)) {
        return "nan";
    }
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int unit = 0;
    double value = bytes;
    while (std::fabs(value) >= 1024.0 && unit < 5) {
        value /= 1024.0;
        ++unit;
    }
    char text[32];
    if (unit == 0) {
        std::snprintf(text, sizeof text, "%.0f B", value);
    } else {
        std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
    }
    return text;
}

namespace {
std::tm localTm(std::int64_t unixNs) {
    const std::time_t seconds = static_cast<std::time_t>(unixNs / 1'000'000'000);
    std::tm tm{};
    localtime_r(&seconds, &tm);
    return tm;
}
}  // namespace

std::string formatLocalTime(std::int64_t unixNs) {
    if (unixNs == 0) {
        return "-";
    }
    const std::tm tm = localTm(unixNs);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return text;
}

std::string formatTimeOfDay(std::int64_t unixNs) {
    const std::tm tm = localTm(unixNs);
    char text[32];
    std::strftime(text, sizeof text, "%H:%M:%S", &tm);
    char out[48];
    std::snprintf(out, sizeof out, "%s.%03d", text, static_cast<int>((unixNs / 1'000'000) % 1000));
    return out;
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

}  // namespace runplane::control
