#include "backend/control/history_writer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <unordered_map>

#include "common/thread_role.h"

namespace runplane::control {

namespace {

using SteadyClock = std::chrono::steady_clock;

// SQLITE_BUSY / SQLITE_LOCKED (the sqlite wrapper's ErrorCode::Busy): another connection holds
// the write lock, so trying again can succeed.
bool isBusy(ErrorCode code) {
    return code == ErrorCode::Busy;
}

// A busy error given up on, with who holds the lock (issue 41: say what a writer waits for).
Error busyWithHolders(const Error& error, const std::string& path) {
    std::string holders;
    for (const std::string& h : db::historyLockHolders(path)) {
        holders += (holders.empty() ? "" : "; ") + h;
    }
    return Error{error.message + (holders.empty() ? std::string(" (held by another connection)")
                                                  : " (" + holders + ")"),
                 error.code};
}

constexpr const char* kStopped = "the history writer stopped; the batch was not stored";
constexpr const char* kCancelled = "ingest stopped; the batch was not stored";

}  // namespace

struct HistoryWriter::Job {
    Lane* lane = nullptr;  // the lane outlives its jobs (~Lane cancels and flushes)
    // A batch, or (op set) an operation between transactions.
    db::IngestBatch batch;
    std::vector<RunStateChange> runs;
    std::size_t records = 0;
    std::function<void(const LaneProgress&)> onCommitted;
    const std::function<Status(db::History&)>* op = nullptr;
    // Under the writer's mutex.
    bool taken = false;  // the writer has it: its lane waits until done
    bool done = false;
    std::string refused;  // set (with done) when it was dropped instead of committed
    Status opStatus;      // written by the writer thread before done
};

Result<std::shared_ptr<HistoryWriter>> HistoryWriter::open(HistoryWriterOptions options) {
    if (options.historyPath.empty()) {
        return Error{"the history writer needs a history file"};
    }
    db::OpenOptions open;
    open.busyTimeoutMs = options.busyTimeoutMs;
    open.durableCommits = options.durableCommits;
    if (options.checkpointThread) {
        open.walAutoCheckpointPages = 0;  // the checkpoint thread's connection does it
    }
    auto history = db::History::open(options.historyPath, open);
    if (!history.ok()) {
        return Error{history.error()};
    }
    std::unique_ptr<db::History> checkpointer;
    if (options.checkpointThread) {
        db::OpenOptions second;
        second.busyTimeoutMs = options.busyTimeoutMs;
        second.walAutoCheckpointPages = 0;
        auto opened = db::History::open(options.historyPath, second);
        if (!opened.ok()) {
            return Error{opened.error()};
        }
        checkpointer = std::move(*opened);
    }
    std::shared_ptr<HistoryWriter> writer(new HistoryWriter(std::move(options)));
    writer->m_history = std::move(*history);
    writer->m_checkpointer = std::move(checkpointer);
    writer->m_thread = std::thread([raw = writer.get()] {
        threads::enterBackground("history-writer");
        raw->loop();
    });
    if (writer->m_checkpointer) {
        writer->m_checkpointThread = std::thread([raw = writer.get()] {
            threads::enterBackground("history-ckpt");
            raw->checkpointLoop();
        });
    }
    return writer;
}

HistoryWriter::HistoryWriter(HistoryWriterOptions options) : m_options(std::move(options)) {}

HistoryWriter::~HistoryWriter() {
    stop();
}

std::unique_ptr<HistoryWriter::Lane> HistoryWriter::lane() {
    std::lock_guard lock(m_mutex);
    ++m_lanes;
    return std::unique_ptr<Lane>(new Lane(shared_from_this()));
}

void HistoryWriter::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_work.notify_all();
    m_space.notify_all();
    m_done.notify_all();
    m_committed.notify_all();
    if (m_thread.joinable() && m_thread.get_id() != std::this_thread::get_id()) {
        m_thread.join();
    }
    if (m_checkpointThread.joinable() &&
        m_checkpointThread.get_id() != std::this_thread::get_id()) {
        m_checkpointThread.join();
    }
}

HistoryWriterStats HistoryWriter::stats() const {
    std::lock_guard lock(m_mutex);
    HistoryWriterStats out = m_stats;
    out.heldRecords = m_heldRecords;
    return out;
}

std::size_t HistoryWriter::shareLocked() const {
    return std::max<std::size_t>(1, m_options.queueRecords / std::max<std::size_t>(1, m_lanes));
}

namespace {

// Marks a batch job finished (committed, failed or dropped) in its lane's and the writer's
// counts; under the writer's mutex.
void finish(HistoryWriter::Job& job, std::size_t& heldRecords, std::size_t& laneHeld,
            std::size_t& laneJobs, const std::string& refused) {
    job.done = true;
    job.refused = refused;
    heldRecords -= job.records;
    laneHeld -= job.records;
    --laneJobs;
}

}  // namespace

void HistoryWriter::failLane(Lane& lane, const std::string& error) {
    if (!lane.m_failure) {
        lane.m_failure = error;
    }
    // Its later batches must not be stored past the hole the failed one leaves.
    for (auto it = m_queue.begin(); it != m_queue.end();) {
        Job& job = **it;
        if (job.lane == &lane && job.op == nullptr) {
            finish(job, m_heldRecords, lane.m_held, lane.m_jobs, error);
            it = m_queue.erase(it);
        } else {
            ++it;
        }
    }
}

void HistoryWriter::loop() {
    std::unique_lock lock(m_mutex);
    auto lastCommit = SteadyClock::time_point{};
    auto nextWalCheck = SteadyClock::time_point{};
    auto opQueued = [&] {
        return std::any_of(m_queue.begin(), m_queue.end(),
                           [](const auto& job) { return job->op != nullptr; });
    };
    while (true) {
        m_work.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
        if (m_stopping) {
            break;
        }
        if (!opQueued()) {
            // Let more batches arrive: they share the transaction.
            m_work.wait_until(lock, lastCommit + m_options.commitInterval,
                              [&] { return m_stopping || opQueued(); });
            if (m_stopping) {
                break;
            }
        }
        std::vector<std::shared_ptr<Job>> ops;
        std::vector<std::shared_ptr<Job>> batches;
        std::size_t records = 0;
        // A lane whose batch waits for the next transaction gives none of its later ones to
        // this one: a later batch committed first would move the cursor past the waiting one,
        // whose records would then be skipped as already stored.
        std::vector<const Lane*> deferred;
        for (auto it = m_queue.begin(); it != m_queue.end();) {
            Job& job = **it;
            const bool fits =
                batches.empty() || records + job.records <= m_options.transactionRecords;
            if (job.op == nullptr && (!fits || std::find(deferred.begin(), deferred.end(),
                                                         job.lane) != deferred.end())) {
                deferred.push_back(job.lane);
                ++it;
                continue;
            }
            job.taken = true;
            (job.op ? ops : batches).push_back(*it);
            records += job.records;
            it = m_queue.erase(it);
        }
        lock.unlock();
        for (const auto& job : ops) {
            job->opStatus = runOp(*job->op);
        }
        if (!batches.empty()) {
            runBatches(batches);
        }
        lock.lock();
        for (const auto& job : ops) {
            job->done = true;
        }
        if (!batches.empty()) {
            lastCommit = SteadyClock::now();
        }
        m_done.notify_all();
        m_space.notify_all();
        if (!batches.empty() && !m_checkpointer && lastCommit >= nextWalCheck) {
            nextWalCheck = lastCommit + m_options.walCheckpointInterval;
            lock.unlock();
            boundWal(*m_history);
            lock.lock();
        }
    }
    // Stopping: what is still queued is refused (its callers resend it next session).
    for (const auto& job : m_queue) {
        if (job->op != nullptr) {
            job->done = true;
            job->refused = kStopped;
        } else {
            finish(*job, m_heldRecords, job->lane->m_held, job->lane->m_jobs, kStopped);
        }
    }
    m_queue.clear();
    lock.unlock();
    m_done.notify_all();
    m_space.notify_all();
}

Result<std::vector<db::IngestResult>> HistoryWriter::commit(std::vector<db::IngestBatch>& batches) {
    const auto start = SteadyClock::now();
    while (true) {
        auto results = m_history->ingestMany(batches);
        if (results.ok() || !isBusy(results.code())) {
            return results;
        }
        if (SteadyClock::now() - start >= m_options.busyRetry) {
            return busyWithHolders(results.failure(), m_options.historyPath);
        }
        std::unique_lock lock(m_mutex);
        if (m_work.wait_for(lock, std::chrono::milliseconds(20), [&] { return m_stopping; })) {
            return results;
        }
    }
}

Status HistoryWriter::runOp(const std::function<Status(db::History&)>& op) {
    // As commit(): a busy lock is waited out in short steps (the op is idempotent).
    const auto start = SteadyClock::now();
    while (true) {
        Status status = op(*m_history);
        if (status.ok() || !isBusy(status.code())) {
            return status;
        }
        if (SteadyClock::now() - start >= m_options.busyRetry) {
            return busyWithHolders(status.failure(), m_options.historyPath);
        }
        std::unique_lock lock(m_mutex);
        if (m_work.wait_for(lock, std::chrono::milliseconds(20), [&] { return m_stopping; })) {
            return status;
        }
    }
}

void HistoryWriter::applyRuns(const std::vector<RunStateChange>& runs) {
    for (const RunStateChange& change : runs) {
        const bool ended = change.state != db::RunState::Running;
        std::int64_t endedNs = ended ? change.tNs : 0;
        // The node's wall clock may have stepped back since the run started (NTP, an
        // operator): a run never ends before it started (docs/reliability.md).
        if (auto known = m_history->run(change.runId); ended && known.ok() && *known) {
            endedNs = std::max(endedNs, (*known)->startedNs);
        }
        (void)m_history->updateRunState(change.runId, change.state, endedNs, change.message);
    }
}

void HistoryWriter::checkpointLoop() {
    std::unique_lock lock(m_mutex);
    std::uint64_t seen = 0;
    auto nextWalCheck = SteadyClock::time_point{};
    while (true) {
        m_committed.wait(lock, [&] { return m_stopping || m_stats.transactions != seen; });
        if (m_stopping) {
            break;
        }
        seen = m_stats.transactions;
        lock.unlock();
        const auto start = SteadyClock::now();
        // Errors show again on the writer's next transaction; a busy one is tried after the
        // next commit.
        auto done = m_checkpointer->checkpointWal();
        if (start >= nextWalCheck) {
            nextWalCheck = start + m_options.walCheckpointInterval;
            boundWal(*m_checkpointer);
        }
        const double ms =
            std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
        lock.lock();
        ++m_stats.checkpoints;
        if (!done.ok() || done->busy) {
            ++m_stats.checkpointsBusy;
        }
        m_stats.checkpointMsMax = std::max(m_stats.checkpointMsMax, ms);
        m_stats.checkpointMsTotal += ms;
    }
}

void HistoryWriter::boundWal(db::History& history) {
    if (m_options.walLimitBytes <= 0 || history.walBytes() <= m_options.walLimitBytes) {
        return;
    }
    // Errors other than a reader in the way show again on the next transaction; not here.
    auto emptied = history.truncateWal();
    std::lock_guard lock(m_mutex);
    if (emptied.ok() && *emptied) {
        ++m_stats.walTruncations;
    } else {
        ++m_stats.walTruncationsBusy;
    }
}

void HistoryWriter::runBatches(std::vector<std::shared_ptr<Job>>& jobs) {
    // A lane's batches (in the order pushed) merge into one: each series' open chunk is then
    // rewritten once per transaction, not once per daemon message.
    struct Group {
        Lane* lane;
        std::vector<Job*> jobs;
    };
    std::vector<Group> groups;
    std::unordered_map<Lane*, std::size_t> groupOf;
    for (const auto& job : jobs) {
        auto [it, added] = groupOf.try_emplace(job->lane, groups.size());
        if (added) {
            groups.push_back(Group{job->lane, {}});
        }
        groups[it->second].jobs.push_back(job.get());
    }
    std::vector<db::IngestBatch> batches;
    batches.reserve(groups.size());
    for (const Group& group : groups) {
        db::IngestBatch merged = std::move(group.jobs.front()->batch);
        for (std::size_t i = 1; i < group.jobs.size(); ++i) {
            db::IngestBatch& next = group.jobs[i]->batch;
            std::move(next.samples.begin(), next.samples.end(), std::back_inserter(merged.samples));
            std::move(next.events.begin(), next.events.end(), std::back_inserter(merged.events));
            merged.throughSeq = std::max(merged.throughSeq, next.throughSeq);
        }
        batches.push_back(std::move(merged));
    }
    const auto started = SteadyClock::now();
    auto results = commit(batches);
    const double tookMs =
        std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count();
    std::vector<std::optional<db::IngestResult>> stored(groups.size());
    std::vector<std::string> errors(groups.size(), results.ok() ? "" : results.error());
    if (results.ok()) {
        for (std::size_t i = 0; i < groups.size(); ++i) {
            stored[i] = (*results)[i];
        }
    } else if (groups.size() > 1 && !isBusy(results.code())) {
        // One node's batch may be the cause (a damaged chunk of its series): each alone, so the
        // others are stored. Two failures in a row mean the history itself fails: the rest are
        // told at once instead of each waiting for its own failure.
        int failuresInARow = 0;
        for (std::size_t i = 0; i < groups.size() && failuresInARow < 2; ++i) {
            std::vector<db::IngestBatch> alone;
            alone.push_back(std::move(batches[i]));
            auto one = commit(alone);
            if (one.ok()) {
                stored[i] = one->front();
                failuresInARow = 0;
            } else {
                errors[i] = one.error();
                ++failuresInARow;
            }
        }
    }
    std::size_t committedJobs = 0;
    std::uint64_t committedRecords = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        Group& group = groups[i];
        if (!stored[i]) {
            std::lock_guard lock(m_mutex);
            failLane(*group.lane, errors[i]);
            continue;
        }
        for (Job* job : group.jobs) {
            applyRuns(job->runs);
        }
        LaneProgress progress;
        {
            std::lock_guard lock(m_mutex);
            LaneProgress& p = group.lane->m_progress;
            p.cursor = stored[i]->cursor;  // a new incarnation starts low again
            p.inserted += stored[i]->samplesInserted + stored[i]->eventsInserted;
            p.duplicatesSkipped += stored[i]->duplicatesSkipped;
            ++p.commits;
            progress = p;
        }
        for (Job* job : group.jobs) {
            committedRecords += job->records;
            if (job->onCommitted) {
                job->onCommitted(progress);
            }
        }
        committedJobs += group.jobs.size();
    }
    std::lock_guard lock(m_mutex);
    for (const auto& job : jobs) {
        if (!job->done) {
            finish(*job, m_heldRecords, job->lane->m_held, job->lane->m_jobs,
                   job->lane->m_failure ? *job->lane->m_failure : std::string());
        }
    }
    if (results.ok()) {
        ++m_stats.transactions;
        std::size_t bin = 0;
        while (bin + 1 < m_stats.transactionMs.size() &&
               tookMs >= std::ldexp(1.0, static_cast<int>(bin))) {
            ++bin;
        }
        ++m_stats.transactionMs[bin];
        m_stats.transactionMsMax = std::max(m_stats.transactionMsMax, tookMs);
        m_stats.transactionMsTotal += tookMs;
        m_committed.notify_one();
    } else {
        ++m_stats.failedTransactions;
    }
    m_stats.batches += committedJobs;
    m_stats.records += committedRecords;
    m_stats.maxTransactionBatches = std::max(m_stats.maxTransactionBatches, jobs.size());
}

HistoryWriter::Lane::~Lane() {
    cancel();
    (void)flush();
    std::lock_guard lock(m_writer->m_mutex);
    --m_writer->m_lanes;
}

Status HistoryWriter::Lane::push(db::IngestBatch batch, std::vector<RunStateChange> runs,
                                 std::function<void(const LaneProgress&)> onCommitted) {
    HistoryWriter& w = *m_writer;
    auto job = std::make_shared<Job>();
    job->lane = this;
    job->records = batch.samples.size() + batch.events.size();
    job->batch = std::move(batch);
    job->runs = std::move(runs);
    job->onCommitted = std::move(onCommitted);
    std::unique_lock lock(w.m_mutex);
    auto refused = [&] { return w.m_stopping || m_cancelled || m_failure.has_value(); };
    // One batch always fits an empty lane; otherwise it waits for room in the share.
    w.m_space.wait(
        lock, [&] { return refused() || m_held == 0 || m_held + job->records <= w.shareLocked(); });
    if (m_failure) {
        return Error{*m_failure};
    }
    if (w.m_stopping || m_cancelled) {
        return Error{w.m_stopping ? kStopped : kCancelled};
    }
    w.m_queue.push_back(job);
    m_held += job->records;
    ++m_jobs;
    w.m_heldRecords += job->records;
    w.m_stats.maxHeldRecords = std::max(w.m_stats.maxHeldRecords, w.m_heldRecords);
    w.m_work.notify_one();
    return {};
}

Status HistoryWriter::Lane::flush() {
    HistoryWriter& w = *m_writer;
    std::unique_lock lock(w.m_mutex);
    w.m_done.wait(lock, [&] { return m_jobs == 0; });
    if (m_failure) {
        return Error{*m_failure};
    }
    return {};
}

LaneProgress HistoryWriter::Lane::progress() const {
    std::lock_guard lock(m_writer->m_mutex);
    return m_progress;
}

Status HistoryWriter::Lane::execute(const std::function<Status(db::History&)>& op) {
    HistoryWriter& w = *m_writer;
    auto job = std::make_shared<Job>();
    job->lane = this;
    job->op = &op;
    std::unique_lock lock(w.m_mutex);
    auto refused = [&] { return w.m_stopping || m_cancelled; };
    if (refused()) {
        return Error{w.m_stopping ? kStopped : kCancelled};
    }
    w.m_queue.push_back(job);
    w.m_work.notify_one();
    w.m_done.wait(lock, [&] { return job->done || (!job->taken && refused()); });
    if (!job->done) {
        // Cancelled while still queued: it leaves the queue untouched by the writer.
        if (auto it = std::find(w.m_queue.begin(), w.m_queue.end(), job); it != w.m_queue.end()) {
            w.m_queue.erase(it);
        }
        return Error{w.m_stopping ? kStopped : kCancelled};
    }
    if (!job->refused.empty()) {
        return Error{job->refused};
    }
    return job->opStatus;
}

void HistoryWriter::Lane::cancel() {
    HistoryWriter& w = *m_writer;
    {
        std::lock_guard lock(w.m_mutex);
        m_cancelled = true;
        // Queued batches are dropped; one being committed finishes (flush() waits for it).
        for (auto it = w.m_queue.begin(); it != w.m_queue.end();) {
            Job& job = **it;
            if (job.lane == this && job.op == nullptr) {
                finish(job, w.m_heldRecords, m_held, m_jobs, kCancelled);
                it = w.m_queue.erase(it);
            } else {
                ++it;
            }
        }
    }
    w.m_space.notify_all();
    w.m_done.notify_all();
}

void HistoryWriter::Lane::reset() {
    std::lock_guard lock(m_writer->m_mutex);
    m_cancelled = false;
    m_failure.reset();
}

}  // namespace runplane::control
