#pragma once
// The daemon's diagnostic log: library code reports through this interface, never printf.
// The daemon main installs a sink that writes timestamped lines to stderr (journald picks them
// up under systemd). Thread-safe: log() may be called from any thread.

#include <string_view>

namespace runplane::agent {

enum class LogLevel { Debug, Info, Warning, Error };

/// A sink for diagnostic lines. Implementations must be thread-safe.
class Logger {
  public:
    virtual ~Logger() = default;
    virtual void log(LogLevel level, std::string_view message) = 0;
    void info(std::string_view m) { log(LogLevel::Info, m); }
    void warn(std::string_view m) { log(LogLevel::Warning, m); }
    void error(std::string_view m) { log(LogLevel::Error, m); }
};

/// Writes "2026-01-02T03:04:05.678Z runplaned[pid] LEVEL message" lines to stderr, one write
/// per line (atomic for lines under PIPE_BUF). Levels below `minLevel` are dropped.
class StderrLogger : public Logger {
  public:
    explicit StderrLogger(LogLevel minLevel = LogLevel::Info) : m_minLevel(minLevel) {}
    void log(LogLevel level, std::string_view message) override;

  private:
    LogLevel m_minLevel;
};

/// Discards everything (tests, benchmarks).
class NullLogger : public Logger {
  public:
    void log(LogLevel, std::string_view) override {}
};

}  // namespace runplane::agent
