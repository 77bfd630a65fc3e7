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

/// The kinds a log line can raise (docs/daemon.md "Log formats" lists each with its attrs).
enum class LogEventKind {
    Phase,
    NcclWarning,
    NcclError,
    Info,
    CudaOom,
    RayOom,
    HostOom,
    WeightSyncFailure,
    BatchMismatch,
    NanLoss,
    SkippedIteration,
    Crash
};

/// An event seen in a line. attrs: phase lines carry phase (+ timer, edge); NCCL lines carry
/// match (the text that matched); the failure kinds carry the numbers a person would quote
/// (cuda_oom: gpu, tried_bytes, capacity_bytes, free_bytes, ...). `message` is one line that
/// says what happened ("CUDA OOM on GPU 3: tried 61.34 GiB, 27.07 GiB free").
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
    /// The line ends inside a record (a dict cut at its end, a Megatron record without its
    /// closing `|`): a LogReader joins it with the next line before reading it.
    bool incomplete = false;
};

/// Classifies one line (without its newline), on its own: no record joined across lines, no
/// traceback context. Handles the Ray `(Actor pid=N) ` prefix, the slime/miles logger prefixes,
/// ANSI colour codes and Ray's `[repeated Nx across cluster]`.
ParsedLogLine parseLogLine(std::string_view line);

/// Reads one log stream line by line, with what spans lines: a record the terminal or the
/// framework wrapped (a Megatron `iteration` record without its closing `|`, a `step N: {` dict
/// cut in the middle, a verl record cut inside a key) is joined with the next line; Ray's memory
/// monitor message (`Task was killed ...` then `Memory on the node ...`) becomes one event; the
/// last exception line of a Python traceback is a `crash` event; a failure told again a few lines
/// later (log_event_folds.h) stays one event. Memory is bounded: at most one pending record of at
/// most kMaxJoinBytes, one held event.
class LogReader {
  public:
    static constexpr std::size_t kMaxJoinBytes = 256 * 1024;

    ParsedLogLine feed(std::string_view line);
    /// The end of the stream: what is still pending (a record never completed, a held event).
    ParsedLogLine finish();

  private:
    std::string m_pending;  // a record waiting for its continuation line
    int m_pendingKind = 0;  // lines joined into m_pending so far
    // The process (Ray actor, pid, rank) whose traceback the stream is inside.
    std::string m_tracebackActor;
    std::int64_t m_tracebackPid = -1;
    std::int64_t m_tracebackRank = -1;
    bool m_inTraceback = false;
    std::string m_rayletIp;  // the previous line was the raylet's, from this node
    bool m_prevRaylet = false;
    LogEvent m_heldRayOom;        // the `Task was killed` event, until its details arrive
    int m_heldLines = -1;         // lines left before the held event goes out as it is
    std::string m_prevNcclError;  // code:rank:process of the previous line's NCCL error, or ""
    // One failure, one event (log_event_folds.h): a first telling held for its row's window.
    LogEvent m_foldHeld;
    int m_foldRow = -1;  // the eventFolds() row of m_foldHeld; -1 = none held
    int m_foldLeft = 0;  // non-empty lines left in its window
    void releaseHeld(ParsedLogLine& out);
    void foldRestatements(ParsedLogLine& out, bool blank);
};

/// Maps a framework timer name to a phase ("update_weights" -> "weight_sync"); "" when the
/// timer does not mark a phase.
std::string phaseForTimer(std::string_view timer);

}  // namespace runplane::agent
