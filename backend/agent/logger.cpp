#include "backend/agent/logger.h"

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace runplane::agent {

Result<LogLevel> parseLogLevel(const std::string& name) {
    if (name == "debug") {
        return LogLevel::Debug;
    }
    if (name == "info") {
        return LogLevel::Info;
    }
    if (name == "warn" || name == "warning") {
        return LogLevel::Warning;
    }
    if (name == "error") {
        return LogLevel::Error;
    }
    return Error{"--log-level: '" + name + "' is not one of debug, info, warn, error"};
}

Result<LogOutputFormat> parseLogFormat(const std::string& name) {
    if (name == "auto") {
        return LogOutputFormat::Auto;
    }
    if (name == "text") {
        return LogOutputFormat::Text;
    }
    if (name == "journald") {
        return LogOutputFormat::Journald;
    }
    return Error{"--log-format: '" + name + "' is not one of auto, text, journald"};
}

bool stderrIsJournal() {
    const char* stream = std::getenv("JOURNAL_STREAM");
    if (stream == nullptr) {
        return false;
    }
    unsigned long long dev = 0, ino = 0;
    if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) {
        return false;
    }
    struct stat st {};
    return ::fstat(2, &st) == 0 && static_cast<unsigned long long>(st.st_dev) == dev &&
           static_cast<unsigned long long>(st.st_ino) == ino;
}

int journalPriority(LogLevel level) {
    switch (level) {
        case LogLevel::Debug:
            return 7;
        case LogLevel::Info:
            return 6;
        case LogLevel::Warning:
            return 4;
        case LogLevel::Error:
            return 3;
    }
    return 6;
}

namespace {

spdlog::level::level_enum spdlogLevel(LogLevel level) {
    switch (level) {
        case LogLevel::Debug:
            return spdlog::level::debug;
        case LogLevel::Info:
            return spdlog::level::info;
        case LogLevel::Warning:
            return spdlog::level::warn;
        case LogLevel::Error:
            return spdlog::level::err;
    }
    return spdlog::level::info;
}

// The level words the daemon has always written (spdlog's own are "warning", "error").
class LevelWord final : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const std::string_view word = msg.level == spdlog::level::debug  ? "DEBUG"
                                      : msg.level == spdlog::level::info ? "INFO"
                                      : msg.level == spdlog::level::warn ? "WARN"
                                                                         : "ERROR";
        dest.append(word.data(), word.data() + word.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<LevelWord>();
    }
};

}  // namespace

StderrLogger::StderrLogger(LogLevel minLevel, LogOutputFormat format, std::string program)
    : m_minLevel(minLevel),
      m_journald(format == LogOutputFormat::Journald ||
                 (format == LogOutputFormat::Auto && stderrIsJournal())) {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    m_logger = std::make_shared<spdlog::logger>(program, sink);
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc,
                                                                 std::string("\n"));
    if (m_journald) {
        // The priority prefix is part of the message (below); journald supplies time and pid.
        formatter->set_pattern("%v");
    } else {
        formatter->add_flag<LevelWord>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %n[%P] %* %v");
    }
    m_logger->set_formatter(std::move(formatter));
    m_logger->set_level(spdlog::level::trace);
    m_logger->flush_on(spdlog::level::trace);
}

StderrLogger::~StderrLogger() = default;

void StderrLogger::log(LogLevel level, std::string_view message) {
    if (level < m_minLevel) {
        return;
    }
    if (m_journald) {
        m_logger->log(spdlogLevel(level), "<{}>{}", journalPriority(level), message);
    } else {
        m_logger->log(spdlogLevel(level), "{}", message);
    }
}

}  // namespace runplane::agent
