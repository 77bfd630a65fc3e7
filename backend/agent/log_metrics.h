#pragma once
// Log-derived telemetry: classifies one line of a run's stdout/stderr (formats in
// frameworks.md §5 and docs/daemon.md) into metric samples and events. Pure functions, no I/O,
// no protobuf, so they are unit-tested on the frameworks' real lines.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace runplane::agent {

/// One numeric value from a log line: series name (the framework's key, e.g. "train/loss",
/// "eval/gsm8k"), value and step (the line's id; -1 when the line carries none).
struct LogMetric {
    std::string series;
    double value = 0.0;
    std::int64_t step = -1;
};

enum class LogEventKind { Phase, NcclWarning, NcclError, Info };

/// An event seen in a line. attrs: phase lines carry phase (+ timer, edge); NCCL lines carry
/// match (the text that matched).
struct LogEvent {
    LogEventKind kind = LogEventKind::Info;
    std::string message;
    std::map<std::string, std::string> attrs;
};

/// What one line yielded. progress is true for metric lines, phase markers and timer lines (the
/// stall detector's notion of "the run is moving"). warning is set when a line looked like a
/// metric line but its payload did not parse (the column is named).
struct ParsedLogLine {
    std::vector<LogMetric> metrics;
    std::vector<LogEvent> events;
    bool progress = false;
    std::string warning;
};

/// Classifies one line (without its newline). Handles the Ray `(Actor pid=N) ` prefix, the
/// slime/miles logger prefixes, ANSI colour codes and Ray's `[repeated Nx across cluster]`.
ParsedLogLine parseLogLine(std::string_view line);

/// Maps a framework timer name to a phase ("update_weights" -> "weight_sync"); "" when the
/// timer does not mark a phase.
std::string phaseForTimer(std::string_view timer);

}  // namespace runplane::agent
