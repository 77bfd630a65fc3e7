#pragma once
// HistoryWriter: the one thread that writes node telemetry into a history file (issue #20,
// docs/performance.md "Load"). Node streams decode and plan their batches on their own threads
// and hand them over as values; the writer owns the only write connection and commits every
// batch waiting at that moment in one transaction (History::ingestMany), each with its node's
// cursor. A caller's batch counts as stored only once that transaction committed, so a node
// acknowledges (its daemon trims) only then; a failed transaction leaves every node's cursor
// where it was and each caller resends from there.
//
// Backpressure: the queue holds at most options.queueRecords records (any one batch is admitted
// into an empty queue, so a batch larger than the bound still gets through). A caller whose
// batch does not fit waits, and while it waits its stream is not read: the records stay in the
// daemon's spool instead of in this process.
//
// Thread-safety: every method may be called from any thread. A Lane is one caller's handle (one
// node stream); its cancel() wakes that caller's wait from another thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/common/result.h"
#include "db/history/history.h"

namespace runplane::control {

struct HistoryWriterOptions {
    std::string historyPath;
    /// Records queued at most, all callers together.
    std::size_t queueRecords = 131072;
    /// Records per transaction at most: bounds how long stop() waits for the one in flight.
    std::size_t transactionRecords = 65536;
    /// Least time from one commit to the next transaction: batches that arrive meanwhile share
    /// it (fewer, larger transactions; each batch waits at most this long more).
    std::chrono::milliseconds commitInterval{200};
    /// While another connection holds the write lock ("database is locked"), a transaction is
    /// retried for this long before its callers are told; stop() interrupts the retrying.
    std::chrono::milliseconds busyRetry{5000};
    /// SQLite busy timeout of the writer's connection (one wait of the retry above).
    int busyTimeoutMs = 250;
};

/// A run-state change reported by a node (run_state / process_exit event), applied to the run
/// record right after the batch that carried it committed.
struct RunStateChange {
    std::string runId;
    db::RunState state = db::RunState::Running;
    std::int64_t tNs = 0;  // the event's time; the end time when the state is final
    std::string message;
};

struct HistoryWriterStats {
    std::uint64_t transactions = 0;        // committed
    std::uint64_t failedTransactions = 0;  // rolled back (every batch in it told)
    std::uint64_t batches = 0;             // committed
    std::uint64_t records = 0;             // samples + events handed in with committed batches
    std::size_t queuedRecords = 0;         // now
    std::size_t maxQueuedRecords = 0;      // the most ever queued at once
    std::size_t maxTransactionBatches = 0;
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
    // Waits for admission, queues the job and waits until the writer finished it. False when
    // the lane was cancelled or the writer stopped before the job was taken.
    bool submit(Lane& lane, const std::shared_ptr<Job>& job);
    void runBatches(std::vector<std::shared_ptr<Job>>& jobs);
    Result<std::vector<db::IngestResult>> commit(std::vector<db::IngestBatch>& batches);
    void cancel(Lane& lane);

    HistoryWriterOptions m_options;
    std::unique_ptr<db::History> m_history;  // used by the writer thread only
    mutable std::mutex m_mutex;
    std::condition_variable m_work;   // the writer waits for jobs
    std::condition_variable m_space;  // callers wait for room in the queue
    std::condition_variable m_done;   // callers wait for their job
    std::deque<std::shared_ptr<Job>> m_queue;
    std::size_t m_queuedRecords = 0;
    bool m_stopping = false;
    HistoryWriterStats m_stats;
    std::thread m_thread;
};

/// One caller's handle (it keeps the writer alive). Not copyable.
class HistoryWriter::Lane {
  public:
    ~Lane();
    Lane(const Lane&) = delete;
    Lane& operator=(const Lane&) = delete;

    /// Stores the batch in the next transaction; after the commit, applies `runs`. Blocks while
    /// the queue is full, then until the transaction ended. Fails with the transaction's error,
    /// or when cancel() / the writer's stop came first (nothing of the batch was stored then).
    Result<db::IngestResult> ingest(db::IngestBatch batch, std::vector<RunStateChange> runs = {});
    /// Runs `op` on the writer's connection between two transactions and returns its status
    /// (session set-up: upsertNode, the cursor, node resets). `op` runs on the writer thread
    /// while the caller waits, so it may use the caller's locals.
    Status execute(const std::function<Status(db::History&)>& op);
    /// Wakes a waiting call from another thread; it fails unless the writer already took its
    /// job (then it returns once that job is done). Later calls fail until reset().
    void cancel();
    void reset();

  private:
    friend class HistoryWriter;
    explicit Lane(std::shared_ptr<HistoryWriter> writer) : m_writer(std::move(writer)) {}
    std::shared_ptr<HistoryWriter> m_writer;
    bool m_cancelled = false;        // under the writer's mutex
    std::shared_ptr<Job> m_current;  // the job this lane waits for, under the writer's mutex
};

}  // namespace runplane::control
