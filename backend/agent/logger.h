#pragma once
// The daemon's diagnostic log: library code reports through this interface, never printf.
// The daemon main installs a spdlog-backed sink on stderr in one of two formats:
//   text      "2026-01-02T03:04:05.678Z runplaned[pid] WARN message" (a terminal, a log file)
//   journald  "<4>message": the sd-daemon priority prefix, no timestamp or pid, which journald
//             adds itself, so `journalctl -p warning` filters by level (sd-daemon(3)).
// `auto` picks journald when stderr is the journal stream systemd announces in $JOURNAL_STREAM.
// Thread-safe: log() may be called from any thread.

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace spdlog {
class logger;
}

namespace runplane::agent {

enum class LogLevel { Debug, Info, Warning, Error };
/// How stderr lines are written (--log-format). Not `LogFormat`: that is the classifier's table row
/// (log_formats.h), and one name for two types in one namespace is an ODR hazard.
enum class LogOutputFormat { Auto, Text, Journald };

/// A sink for diagnostic lines. Implementations must be thread-safe.
class Logger {
  public:
    virtual ~Logger() = default;
    virtual void log(LogLevel level, std::string_view message) = 0;
    void info(std::string_view m) { log(LogLevel::Info, m); }
    void warn(std::string_view m) { log(LogLevel::Warning, m); }
    void error(std::string_view m) { log(LogLevel::Error, m); }
};

/// "debug|info|warn|error" and "auto|text|journald"; errors name the flag.
Result<LogLevel> parseLogLevel(const std::string& name);
Result<LogOutputFormat> parseLogFormat(const std::string& name);

/// True when stderr is the journal stream systemd passed ($JOURNAL_STREAM = "dev:inode" of fd 2).
bool stderrIsJournal();

/// The sd-daemon priority of a level: 7 debug, 6 info, 4 warning, 3 error.
int journalPriority(LogLevel level);

/// Writes each line to stderr through spdlog (one write per line). Levels below `minLevel` are
/// dropped.
class StderrLogger : public Logger {
  public:
    explicit StderrLogger(LogLevel minLevel = LogLevel::Info,
                          LogOutputFormat format = LogOutputFormat::Text,
                          std::string program = "runplaned");
    ~StderrLogger() override;
    void log(LogLevel level, std::string_view message) override;
    bool journald() const { return m_journald; }

  private:
    LogLevel m_minLevel;
    bool m_journald;
    std::shared_ptr<spdlog::logger> m_logger;
};

/// Discards everything (tests, benchmarks).
class NullLogger : public Logger {
  public:
    void log(LogLevel, std::string_view) override {}
};

}  // namespace runplane::agent
