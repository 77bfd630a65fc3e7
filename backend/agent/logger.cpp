#include "backend/agent/logger.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <string>

namespace runplane::agent {

void StderrLogger::log(LogLevel level, std::string_view message) {
    if (level < m_minLevel) {
        return;
    }
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char stamp[96];
    std::snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms));
    const char* name = level == LogLevel::Debug     ? "DEBUG"
                       : level == LogLevel::Info    ? "INFO"
                       : level == LogLevel::Warning ? "WARN"
                                                    : "ERROR";
    std::string line = std::string(stamp) + " runplaned[" + std::to_string(::getpid()) + "] " +
                       name + " " + std::string(message) + "\n";
    [[maybe_unused]] auto n = ::write(2, line.data(), line.size());
}

}  // namespace runplane::agent
