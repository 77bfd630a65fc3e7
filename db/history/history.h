#pragma once
// The run history: one SQLite file (WAL) holding runs with their recipe snapshot and provenance,
// nodes, telemetry series, samples, events and the per-node ingest cursor. The schema is
// versioned and migrated forward on open (docs/history.md). Plain value types only: no Qt, no
// gRPC, no protobuf, so the controller, the CLI and GUI workers share it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/ids.h"
#include "common/result.h"
#include "common/telemetry/run_state.h"
#include "common/telemetry/series.h"

namespace runplane::sqlite {
class Database;
}

namespace runplane::db {

/// The schema version this build writes. Opening a file with a newer version is refused.
inline constexpr int kSchemaVersion = 10;

/// Bound on a run's stored output per stream (the tail is kept), 16 MiB.
inline constexpr std::uint64_t kRunLogMaxBytes = 16ull << 20;

/// What the history holds of a run's stream.
struct RunLogText {
    std::string text;               // the bytes from firstOffset to endOffset
    std::uint64_t firstOffset = 0;  // > the asked offset when older bytes were dropped by the bound
    std::uint64_t endOffset = 0;
    bool truncated = false;  // bytes before firstOffset existed but are no longer stored
    /// Ranges [from, to) inside firstOffset..endOffset that were never stored (a chunk the
    /// daemon no longer had when the recorder resumed); `text` joins the stored bytes around
    /// them, so a reader shows each hole where it is (issue 41).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> missing;
    std::uint64_t missingBytes() const {
        std::uint64_t n = 0;
        for (const auto& [from, to] : missing) {
            n += to - from;
        }
        return n;
    }
    /// Where each hole falls in `text`: the byte index of text at which range missing[i] is.
    std::vector<std::size_t> missingAt;
    /// `text` with a line at each hole: "[runplane: N bytes missing here (bytes A..B were not
    /// stored)]" (docs/history.md, "Run output").
    std::string shown() const;
};

/// Bound on the diagnoses kept per run (issue #44): past it the oldest go (the newest stays).
inline constexpr std::uint64_t kDiagnosisMaxBytesPerRun = 8ull << 20;

/// One stored diagnosis of a run (docs/diagnosis.md): its verdict's headline and the whole
/// document as JSON text.
struct DiagnosisRecord {
    std::int64_t id = 0;
    std::int64_t tNs = 0;
    std::string trigger;  // on_demand, stall, failed, phase_overrun
    std::string headline;
    std::string json;
};

/// Lifecycle of a run as the history records it (common/telemetry/run_state.h). "DaemonLost"
/// (the daemon could not tell what happened) and "Failed" (the run exited non-zero) are distinct
/// on purpose. toString gives the stored spelling, runStateFromString reads it back.
/// The typed ids of common/ids.h, as the history API takes them (db::RunId, db::NodeId).
using runplane::NodeId;
using runplane::RunId;
using telemetry::RunState;
using telemetry::runStateFromString;
using telemetry::toString;

/// One run: what was launched (recipe snapshot, provenance), where, and how it ended.
struct RunRecord {
    RunId id;                    // unique; also the daemon-side run id
    std::string name;            // human label
    std::string recipeYaml;      // snapshot of the recipe as submitted
    std::string provenanceJson;  // {"argv":[...],"env":{...},"versions":{...},"git_rev":"..."}
    RunState state = RunState::Running;
    std::int64_t startedNs = 0;      // Unix ns
    std::int64_t endedNs = 0;        // Unix ns; 0 while running
    std::vector<std::string> nodes;  // node ids (or addresses when the node id is unknown)
    std::string message;             // last status message (exit code, signal, reason)
    bool pinned = false;             // retention keeps everything of a pinned run
};

/// One node daemon the history has seen.
struct NodeRecord {
    NodeId nodeId;        // the daemon's stable node id (its spool identity)
    std::string address;  // host:port it was last reached at
    std::string hostname;
    std::string infoJson;  // inventory snapshot (arch, cores, RAM, GPUs, NCCL libs, versions)
    std::int64_t lastSeenNs = 0;
};

/// A telemetry series: (node, run, name) is unique; node-level series have an empty runId.
struct SeriesInfo {
    std::int64_t id = 0;
    NodeId nodeId;
    RunId runId;       // empty for a node-level series
    std::string name;  // e.g. "host.mem.used_bytes", "eval/gsm8k"
    std::string unit;  // e.g. "bytes", "" for dimensionless metrics
    std::int64_t count = 0;
    std::int64_t firstNs = 0;
    std::int64_t lastNs = 0;
};

/// Filter for listSeries(); empty fields match everything.
struct SeriesFilter {
    NodeId nodeId;
    std::optional<RunId> runId;  // an empty id selects node-level series only
    std::string name;            // exact name, or a prefix when it ends with '*'
};

/// A stored sample: value is the last reading of its interval, min/max the extremes inside it.
struct SeriesPoint {
    std::int64_t tNs = 0;
    double value = 0;
    double min = 0;
    double max = 0;
    std::int64_t step = -1;
};

/// A decimation bucket over [t0Ns, t1Ns): the first and last samples, the extremes (over the
/// samples' own min/max) and when they occurred, and how many samples fell in it.
struct SeriesBucket {
    std::int64_t t0Ns = 0;
    std::int64_t t1Ns = 0;
    SeriesPoint first;
    SeriesPoint last;
    double min = 0;
    std::int64_t minTNs = 0;
    double max = 0;
    std::int64_t maxTNs = 0;
    std::int64_t count = 0;
};

/// A range query over one series.
struct SeriesQuery {
    std::int64_t seriesId = 0;
    std::int64_t t0Ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t t1Ns = std::numeric_limits<std::int64_t>::max();  // inclusive
    int maxBuckets = 2000;
    /// > 0: always bucketed, on the grid of this width (cells [k*w, (k+1)*w), maxBuckets not
    /// used), so that reads of one growing series on one width agree bucket by bucket: a
    /// follower re-reads only from its last bucket (db::followBucketWidth picks such a width).
    std::int64_t bucketWidthNs = 0;
};

/// Result of querySeries(). When the range holds at most 4 x maxBuckets samples they are all
/// returned (decimated = false, buckets empty). Otherwise the range is split into maxBuckets
/// equal time buckets (formula in docs/history.md) and points holds, per non-empty bucket and in
/// time order, the distinct samples among {first, min, max, last}: a one-sample spike survives
/// any zoom level.
struct SeriesPoints {
    std::vector<SeriesPoint> points;
    std::vector<SeriesBucket> buckets;
    bool decimated = false;
    std::int64_t sourceCount = 0;  // samples in the range before decimation
};

/// An event's attributes: name -> JSON value. A string map (the daemon's attributes are strings
/// on the wire) is the common case, but a caller passes a bool, a number or a nested object as
/// that value (a dispatch step's "ok": false, an NCCL probe summary's "ranks": 8 and its
/// "nccl_env" object), and reads back exactly the value it stored. A map rather than a bare
/// nlohmann::json so that the type says "an object, keyed by name": an attribute set can never
/// be an array or a number. Only the history turns it into text (events.attrs_json: the
/// compact JSON object, keys sorted; docs/history.md, "Event attributes") and back; nobody
/// outside db/history writes or parses that text.
using EventAttrs = std::map<std::string, nlohmann::json>;

/// The attributes of a string map (the wire's map<string, string>).
EventAttrs eventAttrs(const std::map<std::string, std::string>& strings);

/// The text of one attribute: a string as it is, any other value as its compact JSON text
/// (`false`, `8`, `{"NCCL_DEBUG":"WARN"}`); empty when the attribute is absent.
std::string attrText(const EventAttrs& attrs, std::string_view name);

/// An event (phase change, NCCL warning, stall, alarm, exit, gap, ...).
struct EventRecord {
    NodeId nodeId;
    std::optional<std::uint64_t> seq;  // the daemon's seq; empty for controller-made events
    std::int64_t tNs = 0;
    RunId runId;
    std::string kind;  // "phase", "nccl_warning", "nccl_error", "stall", "memory_alarm",
                       // "process_exit", "gap", "run_state", "info"
    std::string message;
    EventAttrs attrs;
};

/// Filter for listEvents(); empty fields match everything. Results are ordered by time.
struct EventFilter {
    NodeId nodeId;
    std::optional<RunId> runId;
    std::string kind;
    std::int64_t t0Ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t t1Ns = std::numeric_limits<std::int64_t>::max();
    int limit = 10000;
};

/// One sample as it arrives from a node's telemetry stream.
struct IngestSample {
    std::uint64_t seq = 0;
    std::int64_t tNs = 0;
    RunId runId;  // empty: a node-level sample
    std::string series;
    std::string unit;
    double value = 0;
    double min = 0;
    double max = 0;
    std::int64_t step = -1;
};

/// One event as it arrives; seq 0 marks an event the controller made itself (a detected gap).
struct IngestEvent {
    std::uint64_t seq = 0;
    std::int64_t tNs = 0;
    RunId runId;  // empty: a node-level event
    std::string kind;
    std::string message;
    EventAttrs attrs;
};

/// What one telemetry batch contributes, committed atomically with the node's cursor.
struct IngestBatch {
    NodeId nodeId;
    /// The daemon's spool incarnation these seqs belong to (0: from before incarnations).
    std::uint64_t incarnation = 0;
    std::vector<IngestSample> samples;
    std::vector<IngestEvent> events;
    /// The cursor after this batch: everything through this seq is accounted for (stored, or
    /// recorded as a gap). The stored cursor never moves backwards.
    std::uint64_t throughSeq = 0;
};

/// Where ingest of a node stands: its most recent spool incarnation and that one's cursor.
struct NodeCursor {
    std::uint64_t incarnation = 0;
    std::uint64_t lastSeq = 0;
};

struct IngestResult {
    std::uint64_t cursor = 0;  // the node's stored cursor after the commit
    std::size_t samplesInserted = 0;
    std::size_t eventsInserted = 0;
    std::size_t duplicatesSkipped = 0;  // records at or below the old cursor, or already stored
};

/// Last and best value of one metric series of a run. Best is the maximum for "eval/*" series
/// (accuracies) and the minimum for series whose name contains "loss"; otherwise the maximum.
struct MetricSummary {
    NodeId nodeId;
    std::string series;
    double last = 0;
    std::int64_t lastStep = -1;
    std::int64_t lastNs = 0;
    double best = 0;
    std::int64_t bestStep = -1;
    std::int64_t bestNs = 0;
};

/// The highest value (over the samples' max) of one series per node in a time window.
struct NodePeak {
    NodeId nodeId;
    std::string series;
    double peak = 0;
    std::int64_t peakNs = 0;
};

/// How long the history keeps what (docs/history.md, "Retention"). Stored in the file's
/// settings table; events, eval/* series and pinned runs are kept whatever the policy says.
struct RetentionPolicy {
    int rawDays = 14;      // raw samples and the 1 s / 8 s rollup cells
    int rollupDays = 365;  // rollup cells of 64 s and coarser
};

/// Bounds of RetentionPolicy fields, checked by setRetention.
inline constexpr int kMaxRetentionDays = 36500;

struct PruneOptions {
    bool dryRun = false;     // count what would go; change nothing
    bool vacuum = false;     // VACUUM afterwards: rewrites the whole file (blocks writers)
    std::int64_t nowNs = 0;  // 0: the clock
    /// Prune by the clock even when it is ahead of the newest sample stored. Without it the
    /// horizon is measured from min(clock, newest sample), and a clock ahead of the newest sample
    /// by more than the raw horizon is refused (issue 41, docs/history.md "Retention").
    bool trustClock = false;
    int batchRows = 5000;  // rows deleted per transaction (ingest waits at most one batch)
    /// Called between batches with the mutex released; returning false stops the prune early
    /// (what was committed stays; the next prune continues).
    std::function<bool()> betweenBatches;
};

/// What a prune did (or, dry run, would do). Bytes are page_count x page_size of the file.
struct PruneReport {
    bool dryRun = false;
    bool complete = true;             // false: stopped early by betweenBatches
    std::int64_t rawCutoffNs = 0;     // raw samples before this were (would be) deleted
    std::int64_t rollupCutoffNs = 0;  // rollup cells before this were (would be) deleted
    std::int64_t newestSampleNs = 0;  // the newest sample stored (0: none, or trustClock)
    std::int64_t seriesPruned = 0;
    std::int64_t samplesDeleted = 0;
    std::int64_t fineRollupsDeleted = 0;  // 1 s / 8 s cells before the raw cutoff
    std::int64_t rollupsDeleted = 0;      // every level, before the rollup cutoff
    std::int64_t transactions = 0;
    std::int64_t bytesBefore = 0;
    std::int64_t bytesAfter = 0;
    std::int64_t freeBytesAfter = 0;  // free pages still inside the file (VACUUM returns them)
    std::int64_t rowsDeleted() const {
        return samplesDeleted + fineRollupsDeleted + rollupsDeleted;
    }
};

/// How to open a history file.
struct OpenOptions {
    bool readOnly = false;  // read-only: never creates or migrates; fails on an old schema
    int busyTimeoutMs = 5000;
    /// PRAGMA wal_autocheckpoint of this connection: -1 keeps SQLite's default (a PASSIVE
    /// checkpoint by the committing connection once the WAL passes 1,000 pages); 0 makes this
    /// connection never checkpoint on its own (another one calls checkpointWal, e.g. the
    /// controller's history writer, whose commits then never copy pages or fsync).
    int walAutoCheckpointPages = -1;
    /// synchronous=FULL (the default): a commit returns only once the WAL is fsynced, so a
    /// power cut keeps every transaction this connection committed (the controller's history
    /// writer acknowledges its commits to the daemons, which then drop the records). Every
    /// writer of one history must be durable: a NORMAL commit sits in the WAL unsynced, and if
    /// another connection's fsync then fails and the kernel drops those pages, the WAL index
    /// still points at frames the disk no longer holds and the history reads back malformed
    /// (`HistoryFaultTest.HistoryFsyncFailsAndLosesItsWrites`). false: NORMAL, for the A/B.
    bool durableCommits = true;
};

/// What one checkpointWal() did (sqlite3_wal_checkpoint_v2's counts).
struct WalCheckpoint {
    bool busy = false;         // another connection held a lock it needed: try again later
    int logFrames = 0;         // frames in the WAL
    int backfilledFrames = 0;  // of them copied into the database file (all of them, or up to
                               // the oldest reader's snapshot)
};

/// Whether an error of the history says the file itself is damaged (SQLite's "database disk
/// image is malformed" or "file is not a database", a damaged chunk, staged row or stored
/// output): retrying cannot help, and writing more into the file should stop (issue 41).
bool saysHistoryDamaged(std::string_view error);

/// Why this process cannot write the history at `path` and the files beside it ("" when it
/// can): a read-only file system, the file or its folder not writable. Names the path.
std::string historyWriteProblem(const std::string& path);

/// Who holds a lock the history's writers wait for: the exclusive flock on PATH-lock, SQLite's
/// write lock (byte 120 of PATH-shm) or a write lock on PATH itself, as /proc/locks lists them,
/// other processes only. One sentence per holder, "pid N (COMMAND LINE) holds WHAT"; empty
/// when none is found (or /proc/locks is unreadable).
std::vector<std::string> historyLockHolders(const std::string& path);

/// The run history in one SQLite file. Owns one connection. Every method may be called from any
/// thread: calls are serialised by an internal mutex. For parallelism open one History per
/// thread on the same path (WAL lets readers run while one writer commits), e.g. one per node
/// ingest thread and one in the GUI's reader worker. Errors name the file.
class History {
  public:
    /// Opens (creating if absent unless read-only) and migrates the file to kSchemaVersion.
    /// A file that is not a SQLite database, is damaged, or carries a newer schema version is an
    /// error naming the path; such a file is never modified.
    static Result<std::unique_ptr<History>> open(const std::string& path, OpenOptions options);
    static Result<std::unique_ptr<History>> open(const std::string& path) {
        return open(path, OpenOptions{});
    }
    ~History();
    History(const History&) = delete;
    History& operator=(const History&) = delete;

    const std::string& path() const { return m_path; }
    /// The schema version stored in the file.
    Result<int> schemaVersion();

    // ---- runs
    /// Inserts or replaces the run with this id.
    Status upsertRun(const RunRecord& run);
    /// Updates state, end time (0 keeps the stored one) and message of an existing run.
    Status updateRunState(const RunId& runId, RunState state, std::int64_t endedNs,
                          const std::string& message);
    Result<std::optional<RunRecord>> run(const RunId& runId);
    /// All runs, newest first.
    Result<std::vector<RunRecord>> listRuns();

    /// Pins (or unpins) a run: a pinned run's series and its nodes' samples during the run are
    /// never pruned. Error naming the run when there is no such run.
    Status setPinned(const RunId& runId, bool pinned);

    // ---- retention (docs/history.md, "Retention")
    Result<RetentionPolicy> retention();
    /// Stores the policy; days must be 1..kMaxRetentionDays and rawDays <= rollupDays.
    Status setRetention(const RetentionPolicy& policy);
    /// Applies the stored policy: deletes old raw samples and rollup cells in batches of
    /// options.batchRows, each in its own transaction, then reclaims the freed pages
    /// (incremental vacuum; a full VACUUM with options.vacuum).
    Result<PruneReport> prune(const PruneOptions& options);

    // ---- nodes
    Status upsertNode(const NodeRecord& node);
    Result<std::vector<NodeRecord>> listNodes();

    // ---- ingest
    /// Stores a batch and advances the node's cursor in one transaction. Idempotent by
    /// (node, incarnation, seq): records at or below the stored cursor, or already present, are
    /// skipped.
    Result<IngestResult> ingest(const IngestBatch& batch);
    /// Stores several batches (of one node or many) in one transaction: all of them with their
    /// cursors, or, when any fails or the commit does, none (every cursor stays where it was).
    /// One result per batch, in order.
    Result<std::vector<IngestResult>> ingestMany(std::span<const IngestBatch> batches);
    /// The cursor of the node's most recent incarnation: the last seq accounted for (0 when
    /// nothing was ingested yet).
    Result<std::uint64_t> ingestCursor(const NodeId& nodeId);
    /// Writes this connection's open chunks as sealed chunks and deletes the staged rows it
    /// wrote (one transaction; docs/history.md, "Chunks"). The destructor does the same.
    Status sealHeads();
    /// The node's most recent incarnation and its cursor; nullopt when nothing was ingested.
    Result<std::optional<NodeCursor>> latestCursor(const NodeId& nodeId);
    /// The node's spool was replaced: stores a "node_reset" event (attrs old/new incarnation,
    /// old last seq) and starts newIncarnation at cursor 0, in one transaction. The old
    /// incarnation's rows and cursor stay.
    Status recordNodeReset(const NodeId& nodeId, const NodeCursor& old,
                           std::uint64_t newIncarnation, const std::string& message);
    /// A cursor stored before incarnations existed (incarnation 0) continues as `incarnation`:
    /// the daemon's spool is the same file, it just reports its id now.
    Status adoptIncarnation(const NodeId& nodeId, std::uint64_t incarnation);

    /// The write-ahead log's size on disk (0 when there is none).
    std::int64_t walBytes() const;
    /// Copies the WAL into the file and empties it (PRAGMA wal_checkpoint(TRUNCATE)) without
    /// waiting: returns false (nothing lost, try again later) when a reader still needed the
    /// WAL or another connection held a lock. Under continuous writes with readers
    /// always overlapping, SQLite's automatic checkpoints copy the WAL but can never restart
    /// it, so it only grows; the controller's writer calls this when it passes a bound.
    Result<bool> truncateWal();
    /// A PASSIVE checkpoint without waiting: copies what it can of the WAL into the database
    /// file (never past a reader's snapshot) while the writer goes on committing. For a
    /// connection that checkpoints for another one (OpenOptions::walAutoCheckpointPages = 0).
    Result<WalCheckpoint> checkpointWal();

    // ---- queries
    /// Starts a read transaction: every query until endRead() sees the file as the first of
    /// them did (one WAL snapshot), so answers combined from several queries agree (e.g. a
    /// series' count from listSeries and the samples querySeries returns). Not for a connection
    /// that writes meanwhile. endRead() without beginRead() is a no-op.
    Status beginRead();
    Status endRead();
    Result<std::vector<SeriesInfo>> listSeries(const SeriesFilter& filter);
    /// The series id for (node, run, name), if it exists; an empty run id names a node-level
    /// series.
    Result<std::optional<std::int64_t>> findSeries(const NodeId& nodeId, const RunId& runId,
                                                   const std::string& name);
    /// Samples of one series in [t0Ns, t1Ns], decimated min/max-preservingly when there are
    /// more than 4 x maxBuckets of them (see SeriesPoints).
    Result<SeriesPoints> querySeries(const SeriesQuery& query);
    /// The same into `out`, keeping the capacity of out.points: a caller that re-reads (a plot
    /// redrawing, a bench) skips the kernel's zero-fill of a fresh ~40 MB vector per 1 M points.
    Status querySeries(const SeriesQuery& query, SeriesPoints& out);
    Result<std::vector<EventRecord>> listEvents(const EventFilter& filter);
    /// Last and best value of every "eval/*" series (or the given prefix) of a run.
    Result<std::vector<MetricSummary>> runMetrics(const RunId& runId,
                                                  const std::string& prefix = "eval/");
    /// Peak of a node-level series (default host memory used) per node in [t0Ns, t1Ns].
    Result<std::vector<NodePeak>> nodePeaks(const std::string& series, std::int64_t t0Ns,
                                            std::int64_t t1Ns);
    /// Peak host memory per node of a run, over the run's nodes and its time window.
    Result<std::vector<NodePeak>> runPeaks(
        const RunId& runId, const std::string& series = telemetry::series::kHostMemUsed);

    /// A run's output as the controller recorded it while the run streamed (run_logs.cpp).
    /// Appends the bytes the daemon sent at `offset` of `stream` ("stdout" or "stderr"); bytes
    /// already stored are skipped, so a resumed tail may resend. Past `maxBytesPerStream` the
    /// oldest chunks are deleted (the tail is what a user reads after a failure).
    Status appendRunLog(const RunId& runId, const std::string& stream, std::uint64_t offset,
                        std::string_view data, std::uint64_t maxBytesPerStream = kRunLogMaxBytes);
    /// The offset just past the stored bytes of the stream (0 when nothing is stored).
    Result<std::uint64_t> runLogEnd(const RunId& runId, const std::string& stream);
    /// The stored bytes of the stream from `fromOffset` on.
    Result<RunLogText> readRunLog(const RunId& runId, const std::string& stream,
                                  std::uint64_t fromOffset = 0);

    /// A run's diagnoses (run_diagnoses.cpp). Stores one; past maxBytesPerRun of JSON for the
    /// run the oldest are deleted (never the one just stored). Returns its id.
    Result<std::int64_t> addDiagnosis(const RunId& runId, std::int64_t tNs,
                                      const std::string& trigger, const std::string& headline,
                                      const std::string& json,
                                      std::uint64_t maxBytesPerRun = kDiagnosisMaxBytesPerRun);
    /// Newest first; with withJson false the documents are left out (a listing).
    Result<std::vector<DiagnosisRecord>> listDiagnoses(const RunId& runId, bool withJson = true);
    /// Tags and notes on runs (issue 49, run_annotations.cpp; docs/history.md "Run tags and
    /// notes"). Their tables (run_tags, run_notes) are created on the first write if missing, so
    /// no schema version is taken; reads of a history without them return none. A tag is 1–64
    /// characters without whitespace or commas; a note at most 64 KiB ("" removes it). Errors
    /// name an unknown run or a bad tag.
    Status addRunTag(const RunId& runId, const std::string& tag);
    /// False when the run did not have the tag.
    Result<bool> removeRunTag(const RunId& runId, const std::string& tag);
    Status setRunNote(const RunId& runId, const std::string& note, std::int64_t tNs);
    struct RunAnnotation {
        std::vector<std::string> tags;  // sorted
        std::string note;
    };
    /// Every annotated run: run id -> its tags and note.
    Result<std::vector<std::pair<std::string, RunAnnotation>>> runAnnotations();
    /// Lineage (issue 49, run_lineage.cpp; docs/history.md "Run lineage"): the run this one
    /// resumed from a checkpoint of, or forked from, and the parent's step it branched at (-1:
    /// the parent's end / unknown). Table run_lineage, created on the first write like the tags;
    /// a history without it has no lineage. Errors name an unknown run, a run made its own
    /// ancestor (a cycle), or a bad kind.
    struct RunParent {
        std::string runId;
        std::string parentId;
        std::string kind;  // "resume" or "fork"
        std::int64_t step = -1;
        std::string source;  // "flag" (--resumes/--forks), "argv" (detected), "user"
        std::int64_t tNs = 0;
    };
    Status setRunParent(const RunParent& parent);
    /// False when the run had no parent.
    Result<bool> clearRunParent(const RunId& runId);
    Result<std::optional<RunParent>> runParent(const RunId& runId);
    /// Every recorded parent link (for lists: children of a run, the runs table).
    Result<std::vector<RunParent>> runParents();
    // ---- integrity (issue 41, docs/history.md "Damaged, read-only or locked histories")
    /// PRAGMA quick_check: the first `maxProblems` problems SQLite finds; empty when intact.
    /// Reads the whole file (watch runs it once at start).
    Result<std::vector<std::string>> quickCheck(int maxProblems = 5);

  private:
    History(std::unique_ptr<sqlite::Database> db, std::string path);
    static Result<std::unique_ptr<History>> openFile(const std::string& path, OpenOptions options);
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    std::string m_path;
    std::mutex m_mutex;
};

}  // namespace runplane::db
