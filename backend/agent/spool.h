#pragma once
// The daemon's durable telemetry spool: one SQLite file (WAL, synchronous=FULL) holding every
// sample and event with this node's sequence number, written before any client sees it.
// Sequence numbers start at 1, strictly increase, survive restarts (the next one is stored in
// the same transaction as the records) and are never reused. The spool is bounded: past
// maxBytes of record payload it drops the oldest records and appends an EVENT_GAP naming the
// dropped range. Each spool file has an incarnation id (random, made when the file is created)
// that tells a client whose seqs these are.
//
// Several watchers (the GUI, a CLI `watch`, a second desktop) each own a named cursor, kept in
// the spool: a record is trimmed only once every live cursor has acknowledged it. A cursor
// without a watch or an acknowledgement for `cursorIdleLimit` is dropped (an EVENT_INFO says so,
// with its position), and at most `maxCursors` exist (the least recently used goes first), so a
// watcher that never comes back cannot pin the spool forever; the size bound applies regardless.
//
// A roll-back of the file (its WAL truncated or deleted, or an older copy put back) would make
// seqs be issued twice in one incarnation. So the next seq is also kept apart, in
// <path>.highwater (written after each commit, no fsync: it can lag, never lead): when open()
// finds the file behind it, the seqs in between are never reused, an EVENT_GAP names them
// (why "spool_rolled_back") and rollbackNote() says so for the daemon's log.
//
// Thread-safety: every method may be called from any thread (one internal mutex, one connection).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "db/sqlite/sqlite.h"
#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

/// A counter the spool stores as decimal text (meta values, log offsets, gap attrs); nullopt for
/// anything else, so a damaged file gives a clear error instead of an exception out of stoull.
std::optional<std::uint64_t> parseSpoolCounter(const std::string& text);

struct SpoolOptions {
    std::string path;                       // e.g. <state-dir>/spool.sqlite
    std::uint64_t maxBytes = 256ull << 20;  // bound on stored record payload bytes
    std::size_t maxCursors = 32;            // named watcher cursors kept
    std::chrono::seconds cursorIdleLimit{24 * 3600};
    std::function<std::int64_t()> nowUnixMs{};  // tests; default: the system clock
};

/// One watcher's position.
struct SpoolCursor {
    std::string consumer;
    std::uint64_t ackedThrough = 0;
    std::int64_t updatedUnixMs = 0;
};

/// The cursor name of a client that gives none (protocol v1 clients before cursors existed).
inline constexpr const char* kDefaultConsumer = "default";

/// Wall-clock time stamps of spool records.
std::int64_t nowUnixNs();

/// Counters for logs, metrics and tests.
struct SpoolStats {
    std::uint64_t nextSeq = 1;
    std::uint64_t oldestKeptSeq = 0;  // 0 when empty
    std::uint64_t records = 0;
    std::uint64_t payloadBytes = 0;
    std::uint64_t droppedRecords = 0;  // ever, by the size bound
    std::uint64_t trimmedThrough = 0;  // highest acknowledged seq trimmed
    std::uint64_t textRepaired = 0;    // records stored with text made valid UTF-8 (this process)
    std::uint64_t unreadableSkipped = 0;  // damaged records read back as gap events (this process)
};

/// What read() returns in place of a stored record that cannot be parsed (damaged bytes, or a
/// non-UTF-8 string from a daemon before the text boundary): an EVENT_GAP with the record's own
/// seq, attrs first_seq = last_seq = seq, count 1, why "unreadable_record".
v1::TelemetryRecord unreadableRecordGap(std::uint64_t seq, int bytes);

/// See the file comment. Owns its SQLite connection.
class Spool {
  public:
    static Result<std::unique_ptr<Spool>> open(const SpoolOptions& options);

    /// Assigns consecutive seqs to `records` (in place), stores them and the `meta` key/values
    /// in one transaction. Returns the last seq assigned (0 when records is empty). If the bound
    /// is exceeded afterwards, the oldest records are dropped and an EVENT_GAP is appended.
    Result<std::uint64_t> append(std::vector<v1::TelemetryRecord>& records,
                                 const std::vector<std::pair<std::string, std::string>>& meta = {});

    /// Records that never reached the spool (dropped from a writer's in-memory backlog): burns
    /// `count` seqs and stores one EVENT_GAP naming them (attrs first_seq, last_seq, count), in one
    /// transaction. Returns the gap event's seq.
    Result<std::uint64_t> appendGap(std::uint64_t count, const std::string& why);

    /// After a failed write (disk full): checkpoint the WAL into the database and truncate it, so
    /// the space the failed transactions' frames took is given back. Errors are ignored (the
    /// next append reports the real problem).
    void reclaimWal();

    /// Records with seq >= fromSeq (0 = oldest kept), ascending, at most maxRecords. A record
    /// that cannot be parsed comes back as unreadableRecordGap(seq) instead of an error.
    Result<std::vector<v1::TelemetryRecord>> read(std::uint64_t fromSeq, std::size_t maxRecords);

    /// A watch by `consumer` starts at `fromSeq` (0 = oldest kept): creates its cursor just
    /// before fromSeq if it has none, so nothing it has not seen is trimmed under it; refreshes
    /// the cursor's time otherwise. Empty consumer = kDefaultConsumer.
    Status openCursor(const std::string& consumer, std::uint64_t fromSeq);

    /// `consumer` committed everything through `seq`: moves its cursor, drops idle cursors, and
    /// deletes the records every remaining cursor has acknowledged. Returns the highest seq
    /// trimmed so far. Acknowledging beyond what was issued is an error.
    Result<std::uint64_t> acknowledge(const std::string& consumer, std::uint64_t seq);
    Result<std::uint64_t> acknowledge(std::uint64_t seq) { return acknowledge("", seq); }

    /// Every cursor, by name.
    std::vector<SpoolCursor> cursors();

    /// A persisted key/value (log offsets, reported run states).
    std::optional<std::string> meta(const std::string& key);

    /// Random non-zero id created with the spool file and stored in it: a new spool (state
    /// directory replaced) has a new one, so clients never mix its seqs with the old spool's.
    std::uint64_t incarnation() const { return m_incarnation; }

    SpoolStats stats();
    std::uint64_t lastSeq();  // nextSeq - 1

    /// Non-empty when open() found the spool file behind its high-water mark (or a high-water
    /// mark of another incarnation): one sentence for the daemon's log.
    const std::string& rollbackNote() const { return m_rollbackNote; }

    ~Spool();
    Spool(const Spool&) = delete;
    Spool& operator=(const Spool&) = delete;

    /// Spool files whose wider mode open() tightened to 0600, one sentence each (logged once).
    const std::vector<std::string>& permissionNotes() const { return m_db->permissionNotes(); }

  private:
    Spool(std::unique_ptr<sqlite::Database> db, SpoolOptions options);
    Status load();
    Status loadIncarnation();
    Status enforceBound(std::vector<v1::TelemetryRecord>* appended);
    Status insertLocked(std::vector<v1::TelemetryRecord>& records);
    std::int64_t nowMs() const;
    Status dropCursorLocked(const SpoolCursor& cursor, const std::string& why,
                            std::vector<v1::TelemetryRecord>* notices);
    Status trimLocked(std::uint64_t through);
    Status insertNoticesLocked(std::vector<v1::TelemetryRecord>& notices);
    Status checkHighWater();
    void noteHighWaterLocked();

    std::mutex m_mutex;
    std::unique_ptr<sqlite::Database> m_db;
    SpoolOptions m_options;
    SpoolStats m_stats;
    std::uint64_t m_incarnation = 0;
    int m_highWaterFd = -1;
    std::uint64_t m_highWaterWritten = 0;
    std::string m_rollbackNote;
};

/// What to tell an operator when the spool file at `path` cannot be opened or read (damaged):
/// the file, and how to start again.
std::string spoolRecoveryAdvice(const std::string& path);

}  // namespace runplane::agent
