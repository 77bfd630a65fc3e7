#pragma once
// Human formatting shared by runplanectl's tables and messages (plain strings, no locale).

#include <cstdint>
#include <string>

namespace runplane::control {

/// 1536 -> "1.5 KiB", 25769803776 -> "24.0 GiB" (powers of 1024, one decimal).
std::string formatBytes(double bytes);
/// Unix ns -> "2025-01-31 13:05:09" in local time; 0 -> "-".
std::string formatLocalTime(std::int64_t unixNs);
/// Local time of day with milliseconds: "13:05:09.250".
std::string formatTimeOfDay(std::int64_t unixNs);
/// Seconds -> "3h 05m", "4m 09s", "12s".
std::string formatDuration(double seconds);

}  // namespace runplane::control
