#include "backend/control/history_writer.h"

#include <algorithm>
#include <optional>

namespace runplane::control {

namespace {

using SteadyClock = std::chrono::steady_clock;

// SQLITE_BUSY / SQLITE_LOCKED as the sqlite wrapper words them: another connection holds the
// write lock, so trying again can succeed.
bool isBusy(const std::string& error) {
    return error.find("database is locked") != std::string::npos ||
           error.find("database table is locked") != std::string::npos ||
           error.find("busy") != std::string::npos;
}

constexpr const char* kStopped = "the history writer stopped; the batch was not stored";
constexpr const char* kCancelled = "ingest stopped; the batch was not stored";

}  // namespace

struct HistoryWriter::Job {
    // A batch, or (op set) an operation between transactions.
    db::IngestBatch batch;
    std::vector<RunStateChange> runs;
    std::size_t records = 0;
    const std::function<Status(db::History&)>* op = nullptr;
    // Under the writer's mutex.
    bool taken = false;  // the writer has it: the caller waits until done
    bool done = false;
    std::string refused;  // set (with done) when the writer stopped before taking it
    // Written by the writer thread before done.
    std::optional<Result<db::IngestResult>> result;
    Status opStatus;
};

Result<std::shared_ptr<HistoryWriter>> HistoryWriter::open(HistoryWriterOptions options) {
    if (options.historyPath.empty()) {
        return Error{"the history writer needs a history file"};
    }
    db::OpenOptions open;
    open.busyTimeoutMs = options.busyTimeoutMs;
    auto history = db::History::open(options.historyPath, open);
    if (!history.ok()) {
        return Error{history.error()};
    }
    std::shared_ptr<HistoryWriter> writer(new HistoryWriter(std::move(options)));
    writer->m_history = std::move(*history);
    writer->m_thread = std::thread([raw = writer.get()] { raw->loop(); });
    return writer;
}

HistoryWriter::HistoryWriter(HistoryWriterOptions options) : m_options(std::move(options)) {}

HistoryWriter::~HistoryWriter() {
    stop();
}

std::unique_ptr<HistoryWriter::Lane> HistoryWriter::lane() {
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
    if (m_thread.joinable() && m_thread.get_id() != std::this_thread::get_id()) {
        m_thread.join();
    }
}

HistoryWriterStats HistoryWriter::stats() const {
    std::lock_guard lock(m_mutex);
    HistoryWriterStats out = m_stats;
    out.queuedRecords = m_queuedRecords;
    return out;
}

void HistoryWriter::cancel(Lane& lane) {
    {
        std::lock_guard lock(m_mutex);
        lane.m_cancelled = true;
    }
    m_space.notify_all();
    m_done.notify_all();
}

bool HistoryWriter::submit(Lane& lane, const std::shared_ptr<Job>& job) {
    std::unique_lock lock(m_mutex);
    auto refused = [&] { return m_stopping || lane.m_cancelled; };
    // Any batch fits an empty queue; otherwise it waits for room (its stream is not read).
    m_space.wait(lock, [&] {
        return refused() || m_queuedRecords == 0 ||
               m_queuedRecords + job->records <= m_options.queueRecords;
    });
    if (refused()) {
        job->refused = m_stopping ? kStopped : kCancelled;
        return false;
    }
    m_queue.push_back(job);
    m_queuedRecords += job->records;
    m_stats.maxQueuedRecords = std::max(m_stats.maxQueuedRecords, m_queuedRecords);
    lane.m_current = job;
    m_work.notify_one();
    m_done.wait(lock, [&] { return job->done || (!job->taken && refused()); });
    lane.m_current.reset();
    if (job->done) {
        return job->refused.empty();
    }
    // Cancelled while still queued: it leaves the queue untouched by the writer.
    if (auto it = std::find(m_queue.begin(), m_queue.end(), job); it != m_queue.end()) {
        m_queue.erase(it);
        m_queuedRecords -= job->records;
    }
    job->refused = m_stopping ? kStopped : kCancelled;
    lock.unlock();
    m_space.notify_all();
    return false;
}

void HistoryWriter::loop() {
    std::unique_lock lock(m_mutex);
    auto lastCommit = SteadyClock::time_point{};
    while (true) {
        m_work.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
        if (m_stopping) {
            break;
        }
        const bool opWaiting = std::any_of(m_queue.begin(), m_queue.end(),
                                           [](const auto& job) { return job->op != nullptr; });
        if (!opWaiting) {
            // Let more batches arrive: they share the transaction.
            m_work.wait_until(lock, lastCommit + m_options.commitInterval, [&] {
                return m_stopping || std::any_of(m_queue.begin(), m_queue.end(),
                                                 [](const auto& job) { return job->op; });
            });
            if (m_stopping) {
                break;
            }
        }
        std::vector<std::shared_ptr<Job>> ops;
        std::vector<std::shared_ptr<Job>> batches;
        std::size_t records = 0;
        for (auto it = m_queue.begin(); it != m_queue.end();) {
            Job& job = **it;
            const bool fits =
                batches.empty() || records + job.records <= m_options.transactionRecords;
            if (job.op == nullptr && !fits) {
                ++it;
                continue;
            }
            job.taken = true;
            m_queuedRecords -= job.records;
            (job.op ? ops : batches).push_back(*it);
            records += job.op ? 0 : job.records;
            it = m_queue.erase(it);
        }
        lock.unlock();
        m_space.notify_all();
        for (const auto& job : ops) {
            job->opStatus = (*job->op)(*m_history);
        }
        if (!batches.empty()) {
            runBatches(batches);
        }
        lock.lock();
        for (const auto& job : ops) {
            job->done = true;
        }
        for (const auto& job : batches) {
            job->done = true;
        }
        if (!batches.empty()) {
            lastCommit = SteadyClock::now();
        }
        m_done.notify_all();
    }
    // Stopping: what is still queued is refused (its callers resend it next session).
    for (const auto& job : m_queue) {
        job->done = true;
        job->refused = kStopped;
    }
    m_queue.clear();
    m_queuedRecords = 0;
    lock.unlock();
    m_done.notify_all();
    m_space.notify_all();
}

Result<std::vector<db::IngestResult>> HistoryWriter::commit(std::vector<db::IngestBatch>& batches) {
    const auto start = SteadyClock::now();
    while (true) {
        auto results = m_history->ingestMany(batches);
        if (results.ok() || !isBusy(results.error()) ||
            SteadyClock::now() - start >= m_options.busyRetry) {
            return results;
        }
        std::unique_lock lock(m_mutex);
        if (m_work.wait_for(lock, std::chrono::milliseconds(20), [&] { return m_stopping; })) {
            return results;
        }
    }
}

void HistoryWriter::runBatches(std::vector<std::shared_ptr<Job>>& jobs) {
    std::vector<db::IngestBatch> batches;
    batches.reserve(jobs.size());
    for (const auto& job : jobs) {
        batches.push_back(std::move(job->batch));
    }
    auto results = commit(batches);
    std::vector<bool> committed(jobs.size(), results.ok());
    if (results.ok()) {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            jobs[i]->result = (*results)[i];
        }
    } else if (jobs.size() > 1 && !isBusy(results.error())) {
        // One batch may be the cause (a damaged chunk of its series): each alone, so the
        // others are stored. Two failures in a row mean the history itself fails: the rest are
        // told at once instead of each waiting for its own failure.
        int failuresInARow = 0;
        Status last = Error{results.error()};
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            if (failuresInARow >= 2) {
                jobs[i]->result = Error{last.error()};
                continue;
            }
            std::vector<db::IngestBatch> alone;
            alone.push_back(std::move(batches[i]));
            auto one = commit(alone);
            if (one.ok()) {
                jobs[i]->result = one->front();
                committed[i] = true;
                failuresInARow = 0;
            } else {
                jobs[i]->result = Error{one.error()};
                last = Error{one.error()};
                ++failuresInARow;
            }
        }
    } else {
        for (const auto& job : jobs) {
            job->result = Error{results.error()};
        }
    }
    std::size_t ok = 0;
    std::uint64_t records = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (!committed[i]) {
            continue;
        }
        ++ok;
        records += jobs[i]->records;
        for (const RunStateChange& change : jobs[i]->runs) {
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
    std::lock_guard lock(m_mutex);
    if (results.ok()) {
        ++m_stats.transactions;
    } else {
        ++m_stats.failedTransactions;
        m_stats.transactions += ok;  // the batches stored one by one
    }
    m_stats.batches += ok;
    m_stats.records += records;
    m_stats.maxTransactionBatches = std::max(m_stats.maxTransactionBatches, jobs.size());
}

HistoryWriter::Lane::~Lane() = default;

Result<db::IngestResult> HistoryWriter::Lane::ingest(db::IngestBatch batch,
                                                     std::vector<RunStateChange> runs) {
    auto job = std::make_shared<Job>();
    job->records = batch.samples.size() + batch.events.size();
    job->batch = std::move(batch);
    job->runs = std::move(runs);
    if (!m_writer->submit(*this, job)) {
        return Error{job->refused};
    }
    return std::move(*job->result);
}

Status HistoryWriter::Lane::execute(const std::function<Status(db::History&)>& op) {
    auto job = std::make_shared<Job>();
    job->op = &op;
    if (!m_writer->submit(*this, job)) {
        return Error{job->refused};
    }
    return job->opStatus;
}

void HistoryWriter::Lane::cancel() {
    m_writer->cancel(*this);
}

void HistoryWriter::Lane::reset() {
    std::lock_guard lock(m_writer->m_mutex);
    m_cancelled = false;
}

}  // namespace runplane::control
