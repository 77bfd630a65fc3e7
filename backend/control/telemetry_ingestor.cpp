#include "backend/control/telemetry_ingestor.h"

#include "backend/control/run_log_recorder.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend/control/host_reachability.h"
#include "backend/control/ingest_batch.h"
#include "common/clock.h"
#include "common/json_text.h"
#include "common/thread_role.h"
#include "db/history/history.h"

namespace runplane::control {

const char* toString(IngestState state) {
    switch (state) {
        case IngestState::Connecting:
            return "connecting";
        case IngestState::Streaming:
            return "streaming";
        case IngestState::Backoff:
            return "backoff";
        case IngestState::Stopped:
            return "stopped";
        case IngestState::Failed:
            return "failed";
    }
    return "unknown";
}

namespace {

using clock::unixNowNs;

// How long after a failed GetNode on a daemon that had answered the last one it is asked again:
// past the channel's longest reconnect backoff (1 s, node_client.cpp), so that the second answer
// comes from a fresh connection attempt.
constexpr std::chrono::milliseconds kRecheckAfter{1200};

std::string nodeInfoJson(const NodeSummary& node) {
    nlohmann::json j;
    j["hostname"] = node.hostname;
    j["cpu_arch"] = node.cpuArch;
    j["cpu_cores"] = node.cpuCores;
    j["host_ram_bytes"] = node.hostRamBytes;
    j["kernel"] = node.kernel;
    j["daemon_version"] = node.daemonVersion;
    j["protocol_version"] = node.protocolVersion;
    j["gpus_unavailable_reason"] = node.gpusUnavailableReason;
    j["gpus"] = nlohmann::json::array();
    for (const auto& gpu : node.gpus) {
        j["gpus"].push_back({{"index", gpu.index},
                             {"name", gpu.name},
                             {"uuid", gpu.uuid},
                             {"memory_total_bytes", gpu.memoryTotalBytes}});
    }
    j["nccl_libraries"] = nlohmann::json::array();
    for (const auto& lib : node.ncclLibraries) {
        j["nccl_libraries"].push_back({{"path", lib.path},
                                       {"source", lib.source},
                                       {"version", lib.version},
                                       {"error", lib.error},
                                       {"selected", lib.selected}});
    }
    return json_text::dump(j);
}

// The samples and events of a planned batch past `previous`, for live views.
TelemetryUpdate liveUpdate(const NodeId& nodeId, const TelemetryBatchInfo& batch,
                           const BatchPlan& plan, std::uint64_t previous,
                           const IngestorCallbacks& callbacks) {
    TelemetryUpdate out;
    out.nodeId = nodeId;
    for (const auto& sample : plan.batch.samples) {
        if (sample.seq <= previous) {
            continue;
        }
        ++out.newSamples;
        if (!callbacks.liveSample || callbacks.liveSample(sample.series, sample.runId)) {
            out.samples.push_back(
                LiveSample{sample.seq, sample.tNs, sample.runId,
                           SampleInfo{sample.series, sample.value, sample.min, sample.max,
                                      sample.step, telemetry::unitFromString(sample.unit)}});
        }
    }
    for (const auto& record : batch.records) {
        if (record.isEvent && record.seq > previous) {
            out.events.push_back(LiveEvent{record.seq, record.tNs, RunId{record.runId},
                                           toString(record.event.kind), record.event.message,
                                           db::eventAttrs(record.event.attrs)});
        }
    }
    for (const auto& event : plan.batch.events) {
        if (event.seq == 0) {
            out.events.push_back(
                LiveEvent{0, event.tNs, event.runId, event.kind, event.message, event.attrs});
        }
    }
    return out;
}

}  // namespace

struct TelemetryIngestor::Impl {
    IngestorOptions options;
    IngestorCallbacks callbacks;
    std::shared_ptr<NodeClient> client;
    StreamCanceller canceller;
    std::unique_ptr<RunLogRecorder> runLogs;  // set when options.recordRunLogs

    mutable std::mutex mutex;
    std::condition_variable wake;
    bool stopRequested = false;
    IngestorStatus status;
    std::thread thread;
    std::chrono::steady_clock::time_point lastStatusPush{};

    // The writer's lane, set by the ingest thread under `mutex` (stop() cancels its wait).
    std::unique_ptr<HistoryWriter::Lane> lane;
    // Ingest-thread state.
    std::uint64_t incarnation = 0;  // the spool incarnation of this session
    bool adoptLegacy = false;       // a pre-incarnation cursor awaits the first batch
    bool fatal = false;             // the last session's error will not go away by retrying
    bool unanswered = false;        // the last session's GetNode failed (nothing reached)
    std::unique_ptr<HostReachability> reach;  // host_unreachable / host_reachable events
    bool answeredBefore = false;  // the last session's GetNode got an answer (even a refusal)
    // The acknowledger: a thread that sends AckTelemetry for what the writer committed, so an
    // ack never waits for the stream's next message. Under `mutex`.
    std::thread acker;
    std::condition_variable ackWake;
    std::optional<std::uint64_t> ackWanted;  // committed, not yet acknowledged
    bool ackBusy = false;
    bool ackerStop = false;

    IngestorStatus snapshot() const {
        std::lock_guard lock(mutex);
        return status;
    }

    // Updates the status under the lock and reports it (outside the lock).
    template <typename Fn>
    void update(Fn&& change, bool force = true) {
        IngestorStatus copy;
        bool push = false;
        {
            std::lock_guard lock(mutex);
            const IngestState before = status.state;
            change(status);
            const auto now = std::chrono::steady_clock::now();
            push =
                force || status.state != before || now - lastStatusPush >= std::chrono::seconds(1);
            if (push) {
                lastStatusPush = now;
                copy = status;
            }
        }
        if (push && callbacks.onStatus) {
            callbacks.onStatus(copy);
        }
    }

    bool stopping() const {
        std::lock_guard lock(mutex);
        return stopRequested;
    }

    void run();
    // The stream's work: open the writer's lane (and the writer itself without options.writer).
    Status attach(std::shared_ptr<HistoryWriter>& own);
    // One connection attempt: GetNode, then stream until error or stop. Returns the error.
    Status session(std::chrono::milliseconds& backoff);
    // Stores a host_unreachable / host_reachable / host_refused event under the node (seq 0),
    // once per run active on it (eventPerRun), else once with no run.
    void recordReachability(std::optional<db::IngestEvent> event);
    // Which incarnation and seq to resume from; records a node reset when the spool is new.
    Result<std::uint64_t> resumePoint(const NodeSummary& node, db::History& history, bool& reset);
    Status outOfRange(const NodeSummary& node, std::uint64_t cursor, const Status& error);
    bool handleBatch(const NodeSummary& node, TelemetryBatchInfo&& batch, std::uint64_t& expected,
                     Status& failure);
    // On the writer thread, once a batch committed: the status and live views.
    void committed(const LaneProgress& progress, TelemetryUpdate* live, std::uint64_t gaps);
    void ackLoop();
    // At a session's end: every commit of it acknowledged (or, stopping, dropped) before the
    // next session may talk to a daemon that could be a new spool.
    void settleAcks();
};

Status TelemetryIngestor::Impl::attach(std::shared_ptr<HistoryWriter>& own) {
    std::shared_ptr<HistoryWriter> writer = options.writer;
    if (!writer) {
        HistoryWriterOptions w;
        w.historyPath = options.historyPath;
        auto opened = HistoryWriter::open(w);
        if (!opened.ok()) {
            return Error{opened.error()};
        }
        own = *opened;
        writer = own;
    }
    std::lock_guard lock(mutex);
    lane = writer->lane();
    if (stopRequested) {
        lane->cancel();
    }
    return {};
}

void TelemetryIngestor::Impl::run() {
    std::shared_ptr<HistoryWriter> own;
    // A history another connection is creating or migrating (watch's own pruner opens it at the
    // same moment) is busy for a moment: wait that out, saying so, instead of failing for good.
    for (std::chrono::milliseconds wait = options.backoffInitial;;
         wait = std::min(wait * 2, options.backoffMax)) {
        Status s = attach(own);
        if (s.ok()) {
            break;
        }
        const bool busy = s.code() == ErrorCode::Busy ||
                          s.error().find("database is locked") != std::string::npos;
        if (!busy || stopping()) {
            update([&](IngestorStatus& st) {
                st.state = busy ? IngestState::Stopped : IngestState::Failed;
                st.lastError = s.error();
            });
            return;
        }
        update([&](IngestorStatus& st) {
            st.state = IngestState::Backoff;
            st.lastError = s.error();
        });
        std::unique_lock lock(mutex);
        wake.wait_for(lock, wait, [&] { return stopRequested; });
    }
    {
        std::lock_guard lock(mutex);
        ackerStop = false;
        ackWanted.reset();
    }
    acker = std::thread([this] {
        threads::enterBackground("ingest-ack");
        ackLoop();
    });
    std::chrono::milliseconds backoff = options.backoffInitial;
    std::optional<std::string> failedWith;
    while (!stopping()) {
        fatal = false;
        Status result = session(backoff);
        if (stopping()) {
            break;
        }
        // A damaged history fails every write to come, or worse takes them where it is
        // damaged: stop writing into it (issue 41).
        const bool damaged = !result.ok() && db::saysHistoryDamaged(result.error());
        if (fatal || damaged) {
            failedWith = damaged ? options.historyPath + ": the history is damaged (" +
                                       result.error() + "); stopped writing into it"
                                 : result.error();
            break;
        }
        if (unanswered && !result.ok()) {
            // Refused credentials: the host answered, so it is reachable (host_reachability.h).
            const bool refused = refusedByHost(result.failure());
            recordReachability(refused ? reach->refused(result.error(), unixNowNs())
                                       : reach->failed(result.error(), unixNowNs()));
        }
        update([&](IngestorStatus& s) {
            s.state = IngestState::Backoff;
            s.lastError = result.ok() ? std::string("stream ended") : result.error();
            ++s.reconnects;
        });
        std::unique_lock lock(mutex);
        wake.wait_for(lock, backoff, [&] { return stopRequested; });
        backoff = std::min(backoff * 2, options.backoffMax);
    }
    {
        std::lock_guard lock(mutex);
        lane.reset();  // flushed: no commit (and so no ack request) of this lane follows
        ackerStop = true;
    }
    ackWake.notify_all();
    acker.join();
    if (own) {
        own->stop();
    }
    update([&](IngestorStatus& s) {
        s.state = failedWith ? IngestState::Failed : IngestState::Stopped;
        if (failedWith) {
            s.lastError = *failedWith;
        }
    });
}

Status TelemetryIngestor::Impl::session(std::chrono::milliseconds& backoff) {
    update([&](IngestorStatus& s) { s.state = IngestState::Connecting; });
    auto node = client->getNode();
    if (!node.ok() && !refusedByHost(node.failure()) && answeredBefore) {
        // The first call after a broken connection can fail with the channel's cached error
        // (gRPC holds TRANSIENT_FAILURE until a call starts the reconnect): ask once more, a
        // moment later, before a daemon restarted meanwhile is taken for a lost host.
        std::unique_lock lock(mutex);
        wake.wait_for(lock, kRecheckAfter, [&] { return stopRequested; });
        lock.unlock();
        if (!stopping()) {
            node = client->getNode();
        }
    }
    answeredBefore = node.ok() || refusedByHost(node.failure());
    unanswered = !node.ok();
    if (!node.ok()) {
        return node.failure();  // with its code: Unauthenticated is a refusal, not a loss
    }
    if (node->nodeId.empty()) {
        return Error{"runplaned at " + options.address + " reported no node id"};
    }
    db::NodeRecord record{node->nodeId, options.address, node->hostname, nodeInfoJson(*node),
                          unixNowNs()};
    Result<std::uint64_t> cursor = Error{"no cursor"};
    bool reset = false;
    Status prepared = lane->execute([&](db::History& history) -> Status {
        if (Status s = history.upsertNode(record); !s.ok()) {
            return s;
        }
        cursor = resumePoint(*node, history, reset);
        return cursor.ok() ? Status{} : Status{Error{cursor.error()}};
    });
    if (!prepared.ok()) {
        return prepared;
    }
    recordReachability(reach->heard(node->nodeId.value(), node->hostname, unixNowNs()));
    update([&](IngestorStatus& s) {
        s.nodeResets += reset ? 1 : 0;
        s.node = *node;
        s.cursor = *cursor;
        s.spoolIncarnation = incarnation;
    });
    // Nothing stored yet from this node: start at the oldest record the daemon keeps.
    std::uint64_t expected = *cursor == 0 ? 0 : *cursor + 1;
    Status failure;
    bool streaming = false;
    RpcCode code = RpcCode::Ok;
    Status ended = client->watchTelemetry(
        expected, options.sampleHz,
        [&](TelemetryBatchInfo&& batch) {
            reach->touch(unixNowNs());
            if (!streaming) {
                streaming = true;
                backoff = options.backoffInitial;
                update([&](IngestorStatus& s) {
                    s.state = IngestState::Streaming;
                    s.lastError.clear();
                });
            }
            return handleBatch(*node, std::move(batch), expected, failure);
        },
        &canceller, incarnation, &code);
    // The batches still in the writer are committed (or fail) before the session ends: the
    // next one resumes from the stored cursor. On stop, no last ack: the daemon may be gone.
    Status flushed = lane->flush();
    settleAcks();
    if (!stopping()) {
        lane->reset();
    }
    if (!failure.ok()) {
        return failure;
    }
    if (!flushed.ok()) {
        return flushed;
    }
    if (code == RpcCode::OutOfRange) {
        return outOfRange(*node, *cursor, ended);
    }
    return ended;
}

void TelemetryIngestor::Impl::recordReachability(std::optional<db::IngestEvent> event) {
    if (!event || !lane) {
        return;
    }
    db::IngestBatch batch;
    batch.nodeId = NodeId{reach->nodeId()};
    batch.incarnation = incarnation;
    // Best effort: a history that cannot take it fails the next batch too, and says so there.
    (void)lane->execute([&](db::History& history) -> Status {
        auto runs = history.listRuns();
        batch.events =
            eventPerRun(*event, runs.ok() ? activeRunsOn(*runs, reach->nodeId(), options.address)
                                          : std::vector<RunId>{});
        auto stored = history.ingest(batch);
        return stored.ok() ? Status{} : Status{Error{stored.error()}};
    });
}

Result<std::uint64_t> TelemetryIngestor::Impl::resumePoint(const NodeSummary& node,
                                                           db::History& history, bool& reset) {
    incarnation = node.spoolIncarnation;
    adoptLegacy = false;
    auto latest = history.latestCursor(node.nodeId);
    if (!latest.ok()) {
        return Error{latest.error()};
    }
    if (!*latest) {
        return std::uint64_t{0};  // nothing stored from this node yet
    }
    const db::NodeCursor stored = **latest;
    if (stored.incarnation == incarnation) {
        return stored.lastSeq;
    }
    if (stored.incarnation == 0) {
        // Stored before incarnations existed: most likely the same spool, which now says its
        // id. Adopted with the first batch; OUT_OF_RANGE proves otherwise (outOfRange()).
        adoptLegacy = true;
        return stored.lastSeq;
    }
    const std::string message =
        "node " + node.nodeId.value() + " at " + options.address +
        " has a new spool (incarnation " + std::to_string(stored.incarnation) + " -> " +
        std::to_string(incarnation) + ": its state directory was replaced); seq " +
        std::to_string(stored.lastSeq) +
        " of the old spool was the last stored, the new one is ingested from its first record";
    if (Status s = history.recordNodeReset(node.nodeId, stored, incarnation, message); !s.ok()) {
        return Error{s.error()};
    }
    reset = true;
    return std::uint64_t{0};
}

Status TelemetryIngestor::Impl::outOfRange(const NodeSummary& node, std::uint64_t cursor,
                                           const Status& error) {
    if (adoptLegacy && incarnation != 0) {
        // The pre-incarnation cursor was not this spool's: a reset after all.
        const std::string message = "node " + node.nodeId.value() + " at " + options.address +
                                    " has a new spool (its state directory was replaced; it "
                                    "ends before seq " +
                                    std::to_string(cursor + 1) + " stored earlier)";
        if (Status s = lane->execute([&](db::History& history) {
                return history.recordNodeReset(node.nodeId, db::NodeCursor{0, cursor}, incarnation,
                                               message);
            });
            !s.ok()) {
            return s;
        }
        update([&](IngestorStatus& s) { ++s.nodeResets; });
        return Error{message + "; reconnecting"};
    }
    // Same incarnation (or a daemon too old to say): retrying cannot help.
    fatal = true;
    return Error{error.error() + (incarnation == 0
                                      ? "; this daemon predates spool incarnations, so the "
                                        "history cannot tell its new spool from the old one: "
                                        "upgrade runplaned"
                                      : "")};
}

bool TelemetryIngestor::Impl::handleBatch(const NodeSummary& node, TelemetryBatchInfo&& batch,
                                          std::uint64_t& expected, Status& failure) {
    if (!batch.nodeId.empty() && batch.nodeId != node.nodeId.value()) {
        failure = Error{"runplaned at " + options.address + " changed its node id from " +
                        node.nodeId.value() + " to " + batch.nodeId + "; reconnecting"};
        return false;
    }
    if (batch.spoolIncarnation != 0 && batch.spoolIncarnation != incarnation) {
        failure = Error{"runplaned at " + options.address + " changed its spool incarnation from " +
                        std::to_string(incarnation) + " to " +
                        std::to_string(batch.spoolIncarnation) + "; reconnecting"};
        return false;
    }
    if (adoptLegacy) {
        if (Status s = lane->execute([&](db::History& history) {
                return history.adoptIncarnation(node.nodeId, incarnation);
            });
            !s.ok()) {
            failure = s;
            return false;
        }
        adoptLegacy = false;
    }
    BatchPlan plan = planBatch(node.nodeId, batch, expected, unixNowNs());
    plan.batch.incarnation = incarnation;
    if (options.deriveEvents) {  // seq 0: stored with the batch, delivered live as gaps are
        auto derived = options.deriveEvents(plan.batch);
        plan.batch.events.insert(plan.batch.events.end(), std::make_move_iterator(derived.begin()),
                                 std::make_move_iterator(derived.end()));
    }
    const std::uint64_t previous = expected == 0 ? 0 : expected - 1;
    // Run state changes reported by the daemon update the run records we know (the writer
    // applies them once the batch committed).
    std::vector<RunStateChange> runs;
    for (const auto& record : batch.records) {
        if (!record.isEvent || record.runId.empty() || record.seq <= previous) {
            continue;
        }
        if (record.event.kind == EventKindInfo::RunState ||
            record.event.kind == EventKindInfo::ProcessExit) {
            if (auto state = runStateOf(record.event)) {
                runs.push_back(
                    RunStateChange{RunId{record.runId}, *state, record.tNs, record.event.message});
            }
        }
    }
    // What live views get once the batch committed (the batch itself moves to the writer).
    std::shared_ptr<TelemetryUpdate> live;
    if (callbacks.onTelemetry) {
        live = std::make_shared<TelemetryUpdate>(
            liveUpdate(node.nodeId, batch, plan, previous, callbacks));
        live->address = options.address;
    }
    const std::uint64_t gaps = plan.gaps;
    const std::uint64_t next = plan.nextExpected;
    // Handed over; this returns at once unless the node's share of the writer's queue is full
    // (then the stream waits, unread). A commit that failed shows here and ends the session.
    Status pushed = lane->push(std::move(plan.batch), std::move(runs),
                               [this, live, gaps](const LaneProgress& progress) {
                                   committed(progress, live.get(), gaps);
                               });
    if (!pushed.ok()) {
        failure = pushed;
        return false;
    }
    expected = next;
    if (runLogs) {
        for (const auto& record : batch.records) {
            if (!record.runId.empty()) {
                runLogs->noticeRun(record.runId);  // once per run: its output goes to the history
            }
        }
    }
    return !stopping();
}

void TelemetryIngestor::Impl::committed(const LaneProgress& progress, TelemetryUpdate* live,
                                        std::uint64_t gaps) {
    {
        std::lock_guard lock(mutex);
        ackWanted = progress.cursor;
    }
    ackWake.notify_all();
    update(
        [&](IngestorStatus& s) {
            s.cursor = progress.cursor;
            s.recordsStored = progress.inserted;
            s.duplicatesSkipped = progress.duplicatesSkipped;
            s.gapsRecorded += gaps;
        },
        /*force=*/false);
    if (live != nullptr && (live->newSamples > 0 || !live->events.empty())) {
        live->cursor = progress.cursor;
        callbacks.onTelemetry(*live);
    }
}

void TelemetryIngestor::Impl::ackLoop() {
    std::unique_lock lock(mutex);
    while (true) {
        ackWake.wait(lock, [&] { return ackerStop || ackWanted.has_value(); });
        if (ackerStop) {
            return;
        }
        const std::uint64_t cursor = *ackWanted;
        ackWanted.reset();
        ackBusy = true;
        lock.unlock();
        // Only now that the rows are committed may the daemon trim its spool.
        auto acked = client->ackTelemetry(cursor);
        update([&](IngestorStatus& s) { s.lastError = acked.ok() ? std::string() : acked.error(); },
               /*force=*/false);
        lock.lock();
        ackBusy = false;
        ackWake.notify_all();
    }
}

void TelemetryIngestor::Impl::settleAcks() {
    std::unique_lock lock(mutex);
    if (stopRequested) {
        ackWanted.reset();
    }
    ackWake.wait(lock, [&] { return (!ackWanted && !ackBusy) || ackerStop; });
}

TelemetryIngestor::TelemetryIngestor(IngestorOptions options, IngestorCallbacks callbacks)
    : m_options(std::move(options)), m_impl(std::make_unique<Impl>()) {
    if (m_options.client.consumer.empty() && !m_options.historyPath.empty()) {
        m_options.client.consumer =
            defaultConsumerName(m_options.consumerRole, m_options.historyPath);
    }
    m_impl->options = m_options;
    m_impl->callbacks = std::move(callbacks);
    m_impl->status.address = m_options.address;
    m_impl->reach = std::make_unique<HostReachability>(m_options.address);
}

TelemetryIngestor::~TelemetryIngestor() {
    stop();
}

Status TelemetryIngestor::start() {
    std::lock_guard lock(m_impl->mutex);
    if (m_impl->thread.joinable()) {
        return Error{"telemetry ingest for " + m_options.address + " is already running"};
    }
    if (m_options.historyPath.empty()) {
        return Error{"telemetry ingest for " + m_options.address + ": no history file given"};
    }
    auto client = NodeClient::create(m_options.address, m_options.client);
    if (!client.ok()) {
        return Error{client.error()};
    }
    m_impl->client = *client;
    if (m_options.recordRunLogs) {
        m_impl->runLogs = std::make_unique<RunLogRecorder>(*client, m_options.historyPath);
    }
    m_impl->stopRequested = false;
    m_impl->canceller.reset();
    m_impl->status.state = IngestState::Connecting;
    m_impl->thread = std::thread([impl = m_impl.get()] {
        threads::enterBackground("ingest");
        impl->run();
    });
    return {};
}

void TelemetryIngestor::requestStop() {
    {
        std::lock_guard lock(m_impl->mutex);
        m_impl->stopRequested = true;
        if (m_impl->lane) {
            m_impl->lane->cancel();  // a batch waiting for the writer gives up (unless taken)
        }
    }
    m_impl->canceller.cancel();
    m_impl->wake.notify_all();
}

void TelemetryIngestor::stop() {
    requestStop();
    if (m_impl->thread.joinable()) {
        m_impl->thread.join();
    }
    if (m_impl->runLogs) {
        m_impl->runLogs->stop();
    }
}

IngestorStatus TelemetryIngestor::status() const {
    return m_impl->snapshot();
}

}  // namespace runplane::control
