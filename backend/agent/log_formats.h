#pragma once
// The log formats the daemon reads (issue #42), one recognizer per format, listed in ONE table
// (kLogFormats in log_formats.cpp) that the classifier walks. Each row names a trigger, an RE2
// pattern; one RE2::Set over every trigger picks the candidate rows of a line in one pass, and
// only those rows' recognizers run. A format is added by adding a row, its recognizer (a small
// file under backend/agent/log_formats/) and its fixtures (tests/agent/fixtures/logs/<row>_*.log).
// Formats and their sources: docs/daemon.md "Log formats".

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend/agent/log_metrics.h"

namespace runplane::agent {

/// One line as a recognizer sees it: `text` is the line with ANSI colour codes (and their
/// remnants without the escape byte) removed; `body` is `text` after the process prefixes
/// (Ray's `(Actor pid=N, ip=X) `, torchrun's `[rankN]: `); the prefixes' values are kept.
struct LineView {
    std::string_view text;
    std::string_view body;
    std::string_view actor;  // Ray actor class ("SGLangEngine"), "raylet", or ""
    std::string_view ip;     // from Ray's prefix (`ip=`), or ""
    std::int64_t pid = -1;   // Ray prefix pid
    std::int64_t rank = -1;  // `[rankN]:` prefix
    bool joined = false;     // the text is a record joined from two lines (LogReader)
};

/// The label that keeps one engine's series apart from another's: the Ray actor pid, the
/// scheduler's DP/TP/PP/EP ranks of an SGLang prefix (`[time DP6 TP6]`) and vLLM's
/// `Engine 000:` id, joined with '.' ("pid4242.dp6.tp6"); "" when the line names none.
std::string engineLabel(const LineView& line);

/// "engine/<field>" or, with a label, "engine/<label>/<field>".
std::string engineSeries(const std::string& label, std::string_view field);

/// A recognizer: reads `line` into `out` (metrics, events, progress). Returns true when the line
/// was of its format (the walk then stops unless the row is `alsoOthers`).
using Recognize = bool (*)(const LineView& line, ParsedLogLine& out);

struct LogFormat {
    std::string_view name;     // "megatron_iteration"; fixtures are tests/.../logs/<name>*.log
    std::string_view trigger;  // RE2 pattern (unanchored), matched on LineView::body
    Recognize recognize;
    bool alsoOthers;  // keep walking after a match (events that ride on other lines)
};

/// The table (log_formats.cpp).
const std::vector<LogFormat>& logFormats();

// Recognizers, one per file under backend/agent/log_formats/.
bool recognizeSlimeDict(const LineView& line, ParsedLogLine& out);            // slime_dict.cpp
bool recognizeJsonLine(const LineView& line, ParsedLogLine& out);             // json_line.cpp
bool recognizeSglangBatch(const LineView& line, ParsedLogLine& out);          // engines.cpp
bool recognizeVllmStats(const LineView& line, ParsedLogLine& out);            // engines.cpp
bool recognizeMegatronIteration(const LineView& line, ParsedLogLine& out);    // megatron.cpp
bool recognizeMegatronBadGradNorm(const LineView& line, ParsedLogLine& out);  // megatron.cpp
bool recognizeMegatronTimers(const LineView& line, ParsedLogLine& out);       // megatron.cpp
bool recognizeVerlStep(const LineView& line, ParsedLogLine& out);             // verl.cpp
bool recognizeSlimeMemoryUsage(const LineView& line, ParsedLogLine& out);     // slime_memory.cpp
bool recognizePhaseMarker(const LineView& line, ParsedLogLine& out);          // markers.cpp
bool recognizeTimer(const LineView& line, ParsedLogLine& out);                // markers.cpp
bool recognizeEvalSkipped(const LineView& line, ParsedLogLine& out);          // markers.cpp
bool recognizeNccl(const LineView& line, ParsedLogLine& out);                 // nccl.cpp
bool recognizeCudaOom(const LineView& line, ParsedLogLine& out);              // oom.cpp
bool recognizeRayOomTask(const LineView& line, ParsedLogLine& out);           // oom.cpp
bool recognizeRayOomNode(const LineView& line, ParsedLogLine& out);           // oom.cpp
bool recognizeRayOomRaylet(const LineView& line, ParsedLogLine& out);         // oom.cpp
bool recognizeHostOomKernel(const LineView& line, ParsedLogLine& out);        // oom.cpp
bool recognizeHostOomShell(const LineView& line, ParsedLogLine& out);         // oom.cpp
bool recognizeHostOomSlurm(const LineView& line, ParsedLogLine& out);         // oom.cpp
bool recognizeWeightSyncFailure(const LineView& line, ParsedLogLine& out);    // failures.cpp
bool recognizeBatchMismatch(const LineView& line, ParsedLogLine& out);        // failures.cpp

/// Helpers shared by recognizers (log_formats.cpp).
namespace logfmt {
/// `hay.find(needle, from)`, 16 places at a time (SSE2: the needle's first and last byte
/// compared at once): std::string_view::find compares at every place the needle's first byte
/// occurs (every space, for " of which "), the hot spot of the recognizers.
std::size_t find(std::string_view hay, std::string_view needle, std::size_t from = 0);
std::string_view trim(std::string_view s);
/// The number right after `label` (spaces skipped) at or after `from`; false if none.
bool numberAfter(std::string_view text, std::string_view label, double& value, std::size_t from = 0,
                 std::size_t* end = nullptr);
/// Parses "61.34 GiB", "921.15 MiB", "0 bytes", "12.18GB" at s[0]: bytes; false if none.
bool parseSize(std::string_view s, double& bytes, std::size_t* used = nullptr);
/// "61.34 GiB" for a byte count (binary units, two decimals).
std::string formatSize(double bytes);
/// A number as printed in attributes: integers without a decimal point, else up to 6 digits.
std::string formatNumber(double v);
LogEvent makeEvent(LogEventKind kind, std::string message);
}  // namespace logfmt

}  // namespace runplane::agent
