#pragma once
// TelemetryIngestor: one background thread per node that streams the daemon's telemetry into the
// run history, exactly once. The thread decodes and plans each batch and hands it to the history
// writer (history_writer.h: one thread and one write connection, shared by a controller's
// ingestors), which commits it together with the node's cursor, in one SQLite transaction with
// other nodes' batches; only then is it acknowledged to the daemon (which may then trim its
// spool). While the batch waits, the stream is not read (backpressure). After a
// disconnect or a daemon restart it reconnects with exponential backoff and resumes from
// cursor + 1; records at or below the cursor are never stored twice. A hole in the sequence
// (the daemon no longer holds what we asked for, or a record is missing) is stored as an explicit
// "gap" event with attrs first_seq/last_seq, never skipped silently. A daemon whose spool is a new
// incarnation (state directory replaced: seqs start again at 1) is recorded as a "node_reset"
// event and ingested from its first record; both incarnations stay in the history, apart.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/control/history_writer.h"
#include "backend/control/node_client.h"
#include "backend/control/node_types.h"
#include "common/result.h"

namespace runplane::control {

struct IngestorOptions {
    std::string address;      // host:port of the daemon
    std::string historyPath;  // the SQLite history file
    /// The writer that stores the batches (a controller's, shared by its ingestors); empty: the
    /// ingestor opens one of its own on historyPath.
    std::shared_ptr<HistoryWriter> writer;
    double sampleHz = 0;       // requested host sampling rate (0 = daemon default)
    NodeClientOptions client;  // client.consumer empty: defaultConsumerName(consumerRole, ...)
    std::string consumerRole = "ingest";
    bool recordRunLogs = true;  // keep each run's stdout/stderr in the history (run_log_recorder.h)
    /// Events the controller derives from a batch before it is stored (seq 0, committed with the
    /// batch and delivered to onTelemetry with it), e.g. `runplanectl watch`'s role alarms
    /// (issue 43). Runs on the ingest thread; empty: none.
    std::function<std::vector<db::IngestEvent>(const db::IngestBatch&)> deriveEvents;
    std::chrono::milliseconds backoffInitial{200};
    std::chrono::milliseconds backoffMax{5000};
};

enum class IngestState {
    Connecting,  // asking GetNode / opening the stream
    Streaming,   // receiving batches
    Backoff,     // waiting before the next attempt; lastError says why
    Stopped,     // stop() was called (or never started)
    Failed,      // will not retry: the history cannot be opened/written or wrong protocol
};
const char* toString(IngestState state);

/// A snapshot of one ingestor, delivered as a value.
struct IngestorStatus {
    std::string address;
    IngestState state = IngestState::Stopped;
    std::string lastError;            // human sentence; empty when healthy
    std::optional<NodeSummary> node;  // set once GetNode answered
    std::uint64_t cursor = 0;         // last seq committed to the history
    std::uint64_t recordsStored = 0;  // since start()
    std::uint64_t duplicatesSkipped = 0;
    std::uint64_t gapsRecorded = 0;
    std::uint64_t reconnects = 0;
    std::uint64_t spoolIncarnation = 0;  // of the daemon's spool being ingested
    std::uint64_t nodeResets = 0;        // new spool incarnations met (state dir replaced)
};

/// One sample that has just been committed, for live views.
struct LiveSample {
    std::uint64_t seq = 0;
    std::int64_t tNs = 0;
    RunId runId;  // empty: a node-level sample
    SampleInfo sample;
};

/// One event that has just been committed (including controller-made "gap" events, seq 0).
struct LiveEvent {
    std::uint64_t seq = 0;
    std::int64_t tNs = 0;
    RunId runId;  // empty: a node-level event
    std::string kind;
    std::string message;
    db::EventAttrs attrs;  // as the history stores them
};

/// What one committed batch contributed: delivered after the commit, so a listener that reads
/// the history sees these rows.
struct TelemetryUpdate {
    std::string address;
    NodeId nodeId;
    std::vector<LiveSample> samples;  // those IngestorCallbacks::liveSample asked for
    std::vector<LiveEvent> events;
    std::uint64_t cursor = 0;
    std::size_t newSamples = 0;  // samples the batch stored, asked for or not
};

/// Callbacks run on the ingest thread; they must return quickly (copy and post to your own
/// thread, e.g. a queued Qt signal). Either may be empty.
struct IngestorCallbacks {
    std::function<void(const TelemetryUpdate&)> onTelemetry;
    std::function<void(const IngestorStatus&)> onStatus;
    /// Which samples onTelemetry gets (series name, run id; empty: every one). A batch's live
    /// copy is held until its commit, so under load, with the writer's queue full, a listener
    /// that needs few series keeps that copy small (docs/performance.md, "Load").
    std::function<bool(const std::string& series, const RunId& runId)> liveSample;
};

/// Streams one daemon into the history on a thread of its own. Owns that thread (and, without
/// options.writer, a writer of its own). Thread-safe: start/stop/status may be called from any
/// thread; stop() (and the destructor) cancels the stream and joins, returning within about one RPC
/// round trip.
class TelemetryIngestor {
  public:
    explicit TelemetryIngestor(IngestorOptions options, IngestorCallbacks callbacks = {});
    ~TelemetryIngestor();
    TelemetryIngestor(const TelemetryIngestor&) = delete;
    TelemetryIngestor& operator=(const TelemetryIngestor&) = delete;

    /// Validates the address and starts the thread. Connection problems do not fail start():
    /// they show in status() and the ingestor keeps retrying.
    Status start();
    /// Cancels the stream and joins the thread. Idempotent.
    void stop();
    /// stop() without the join: the thread ends soon (many ingestors stop side by side).
    void requestStop();
    IngestorStatus status() const;
    const IngestorOptions& options() const { return m_options; }

  private:
    struct Impl;
    IngestorOptions m_options;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace runplane::control
