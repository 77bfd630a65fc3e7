#pragma once
// HistoryWriter: the one thread that writes node telemetry into a history file (issue #20,
// docs/performance.md "Load"). Node streams decode and plan their batches on their own threads
// and hand them over as values (Lane::push returns at once); the writer owns the only write
// connection and commits every batch waiting at that moment in one transaction
// (History::ingestMany), a node's consecutive batches merged into one, each with its node's
// cursor. A batch counts as stored only once that transaction committed: the lane's committed
// cursor moves then, and only then may the node acknowledge it (its daemon trims). A failed
// transaction leaves every node's cursor where it was; the lanes in it fail (their later
// batches are dropped, not stored out of order) and their streams resume from the cursor.
//
// Backpressure: a lane may hold (queued or in the transaction) at most its share of
// options.queueRecords (the bound divided by the lanes open now), though one batch always fits
// an empty lane. push() waits while the share is full, and while it waits the node's stream is
// not read: the records stay in the daemon's spool instead of in this process.
//
// Thread-safety: every method may be called from any thread. A Lane is one caller's handle (one
// node stream); its cancel() wakes that caller's wait from another thread.

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "db/history/history.h"

namespace runplane::control {

struct HistoryWriterOptions {
    std::string historyPath;
    /// Records held at most (queued or being committed), all lanes together; each lane's share
    /// is this divided by the lanes open.
    std::size_t queueRecords = 262144;
    /// Records per transaction at most: bounds how long stop() waits for the one in flight.
    std::size_t transactionRecords = 131072;
    /// Least time from one commit to the next transaction: batches that arrive meanwhile share
    /// it (fewer, larger transactions; each batch waits at most this long more).
    std::chrono::milliseconds commitInterval{200};
    /// While another connection holds the write lock ("database is locked"), a transaction is
    /// retried for this long before its lanes fail; stop() interrupts the retrying.
    std::chrono::milliseconds busyRetry{5000};
    /// SQLite busy timeout of the writer's connection (one wait of the retry above).
    int busyTimeoutMs = 250;
    /// The WAL is emptied (History::truncateWal) after a commit that finds it past this many
    /// bytes, at most once per walCheckpointInterval: under continuous writes with readers
    /// always overlapping it otherwise only grows (docs/performance.md, "Load").
    std::int64_t walLimitBytes = 64LL << 20;
    std::chrono::milliseconds walCheckpointInterval{1000};
    /// WAL checkpoints on a thread of their own, through a connection of their own (a PASSIVE
    /// checkpoint after each commit, the truncation above too): the writer's connection then
    /// never checkpoints (wal_autocheckpoint=0), so a commit neither copies pages into the file
    /// nor waits for an fsync, and the next transaction can start while the copy runs. false:
    /// SQLite's automatic checkpoints inside the writer's commits, the truncation after them.
    bool checkpointThread = true;
    /// The writer's commits are durable (synchronous=FULL: the WAL is fsynced in each commit)
    /// before its lanes' cursors move, i.e. before a node is acknowledged and drops the records:
    /// a power cut of the controller's host then loses no acknowledged record
    /// (docs/reliability.md). false: synchronous=NORMAL (fsync at checkpoints only).
    bool durableCommits = true;
};

/// A run-state change reported by a node (run_state / process_exit event), applied to the run
/// record right after the batch that carried it committed.
struct RunStateChange {
    RunId runId;
    db::RunState state = db::RunState::Running;
    std::int64_t tNs = 0;  // the event's time; the end time when the state is final
    std::string message;
};

/// What a lane's committed batches did, cumulative since the lane was made.
struct LaneProgress {
    std::uint64_t cursor = 0;    // the node's stored cursor after the lane's last commit
    std::uint64_t inserted = 0;  // samples + events stored
    std::uint64_t duplicatesSkipped = 0;
    std::uint64_t commits = 0;
};

struct HistoryWriterStats {
    std::uint64_t transactions = 0;         // committed
    std::uint64_t failedTransactions = 0;   // rolled back (every lane in it failed)
    std::uint64_t batches = 0;              // pushed batches committed
    std::uint64_t records = 0;              // samples + events of the committed batches
    std::size_t heldRecords = 0;            // queued or being committed, now
    std::size_t maxHeldRecords = 0;         // the most ever held at once
    std::size_t maxTransactionBatches = 0;  // pushed batches in one transaction
    std::uint64_t walTruncations = 0;       // WAL emptied past walLimitBytes
    std::uint64_t walTruncationsBusy = 0;   // tried, a reader still needed it (tried again)
    /// Transactions by how long they took, from BEGIN to the end of COMMIT (the writer's part
    /// of a batch's ingest lag): [0] under 1 ms, [i] from 2^(i-1) to 2^i ms, the last one
    /// everything above.
    std::array<std::uint64_t, 16> transactionMs{};
    double transactionMsMax = 0;
    double transactionMsTotal = 0;
    std::uint64_t checkpoints = 0;      // PASSIVE checkpoints run by the checkpoint thread
    std::uint64_t checkpointsBusy = 0;  // of them found another checkpoint running
    double checkpointMsMax = 0;         // the longest checkpoint (passive + truncation)
    double checkpointMsTotal = 0;
};

class HistoryWriter : public std::enable_shared_from_this<HistoryWriter> {
  public:
    /// Opens the history (creating and migrating it) and starts the writer thread. The error
    /// names the file.
    static Result<std::shared_ptr<HistoryWriter>> open(HistoryWriterOptions options);
    ~HistoryWriter();
    HistoryWriter(const HistoryWriter&) = delete;
    HistoryWriter& operator=(const HistoryWriter&) = delete;

    struct Job;
    class Lane;
    /// A handle for one caller (one node stream).
    std::unique_ptr<Lane> lane();

    /// Ends the thread: the transaction in flight finishes, queued work is refused ("the history
    /// writer stopped"), later calls fail at once. Idempotent; the destructor calls it.
    void stop();
    HistoryWriterStats stats() const;
    const HistoryWriterOptions& options() const { return m_options; }

  private:
    explicit HistoryWriter(HistoryWriterOptions options);
    void loop();
    void runBatches(std::vector<std::shared_ptr<Job>>& jobs);
    void boundWal(db::History& history);  // empties the WAL past options.walLimitBytes
    void checkpointLoop();                // the checkpoint thread (options.checkpointThread)
    Result<std::vector<db::IngestResult>> commit(std::vector<db::IngestBatch>& batches);
    Status runOp(const std::function<Status(db::History&)>& op);
    void applyRuns(const std::vector<RunStateChange>& runs);
    void failLane(Lane& lane, const std::string& error);  // under m_mutex
    std::size_t shareLocked() const;

    HistoryWriterOptions m_options;
    std::unique_ptr<db::History> m_history;       // used by the writer thread only
    std::unique_ptr<db::History> m_checkpointer;  // used by the checkpoint thread only
    mutable std::mutex m_mutex;
    std::condition_variable m_work;       // the writer waits for jobs
    std::condition_variable m_space;      // lanes wait for room in their share
    std::condition_variable m_done;       // lanes wait for their jobs
    std::condition_variable m_committed;  // the checkpoint thread waits for commits
    std::deque<std::shared_ptr<Job>> m_queue;
    std::size_t m_heldRecords = 0;
    std::size_t m_lanes = 0;
    bool m_stopping = false;
    HistoryWriterStats m_stats;
    std::thread m_thread;
    std::thread m_checkpointThread;
};

/// One caller's handle (it keeps the writer alive). Not copyable; one node stream at a time.
class HistoryWriter::Lane {
  public:
    ~Lane();
    Lane(const Lane&) = delete;
    Lane& operator=(const Lane&) = delete;

    /// Queues the batch for the next transaction and returns; after it committed, `runs` are
    /// applied and `onCommitted` runs on the writer thread (keep it short). Waits only while the
    /// lane's share is full. Fails (nothing queued) once the lane failed, was cancelled, or the
    /// writer stopped: the caller resumes from the stored cursor after reset().
    Status push(db::IngestBatch batch, std::vector<RunStateChange> runs = {},
                std::function<void(const LaneProgress&)> onCommitted = {});
    /// Waits until none of this lane's batches is queued or being committed (after cancel():
    /// the queued ones are dropped, one being committed is waited for). The lane's failure, if
    /// it failed.
    Status flush();
    /// What the lane's commits did so far.
    LaneProgress progress() const;
    /// Runs `op` on the writer's connection between two transactions and returns its status
    /// (session set-up: upsertNode, the cursor, node resets); retried like a transaction while
    /// the history is busy, so it must be idempotent. `op` runs on the writer thread while the
    /// caller waits, so it may use the caller's locals.
    Status execute(const std::function<Status(db::History&)>& op);
    /// Wakes a waiting call from another thread and drops the lane's queued batches; later
    /// calls fail until reset().
    void cancel();
    /// Clears a failure or cancel for the next session (after flush()).
    void reset();

  private:
    friend class HistoryWriter;
    explicit Lane(std::shared_ptr<HistoryWriter> writer) : m_writer(std::move(writer)) {}
    std::shared_ptr<HistoryWriter> m_writer;
    // Under the writer's mutex.
    bool m_cancelled = false;
    std::optional<std::string> m_failure;
    std::size_t m_held = 0;  // records queued or being committed
    std::size_t m_jobs = 0;  // jobs queued or being committed
    LaneProgress m_progress;
};

}  // namespace runplane::control
