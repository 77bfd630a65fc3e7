#include "backend/control/telemetry_ingestor.h"

#include "backend/control/run_log_recorder.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "backend/control/ingest_batch.h"
#include "common/clock.h"
#include "common/json_text.h"
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
TelemetryUpdate liveUpdate(const std::string& nodeId, const TelemetryBatchInfo& batch,
                           const BatchPlan& plan, std::uint64_t previous) {
    TelemetryUpdate out;
    out.nodeId = nodeId;
    for (const auto& sample : plan.batch.samples) {
        if (sample.seq > previous) {
            out.samples.push_back(LiveSample{
                sample.seq, sample.tNs, sample.runId,
                SampleInfo{sample.series, sample.value, sample.min, sample.max, sample.step}});
        }
    }
    for (const auto& record : batch.records) {
        if (record.isEvent && record.seq > previous) {
            out.events.push_back(LiveEvent{record.seq, record.tNs, record.runId,
                                           toString(record.event.kind), record.event.message,
                                           record.event.attrs});
        }
    }
    for (const auto& event : plan.batch.events) {
        if (event.seq == 0) {
            auto attrs = nlohmann::json::parse(event.attrsJson, nullptr, false);
            std::map<std::string, std::string> map;
            if (attrs.is_object()) {
                for (auto it = attrs.begin(); it != attrs.end(); ++it) {
                    if (it.value().is_string()) {
                        map[it.key()] = it.value().get<std::string>();
                    }
                }
            }
            out.events.push_back(
                LiveEvent{0, event.tNs, event.runId, event.kind, event.message, map});
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
    // Which incarnation and seq to resume from; records a node reset when the spool is new.
    Result<std::uint64_t> resumePoint(const NodeSummary& node, db::History& history, bool& reset);
    Status outOfRange(const NodeSummary& node, std::uint64_t cursor, const Status& error);
    bool handleBatch(const NodeSummary& node, TelemetryBatchInfo&& batch, std::uint64_t& expected,
                     Status& failure);
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
    if (Status s = attach(own); !s.ok()) {
        update([&](IngestorStatus& st) {
            st.state = IngestState::Failed;
            st.lastError = s.error();
        });
        return;
    }
    std::chrono::milliseconds backoff = options.backoffInitial;
    while (!stopping()) {
        fatal = false;
        Status result = session(backoff);
        if (stopping()) {
            break;
        }
        if (fatal) {
            update([&](IngestorStatus& s) {
                s.state = IngestState::Failed;
                s.lastError = result.error();
            });
            return;
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
        lane.reset();
    }
    if (own) {
        own->stop();
    }
    update([&](IngestorStatus& s) { s.state = IngestState::Stopped; });
}

Status TelemetryIngestor::Impl::session(std::chrono::milliseconds& backoff) {
    update([&](IngestorStatus& s) { s.state = IngestState::Connecting; });
    auto node = client->getNode();
    if (!node.ok()) {
        return Error{node.error()};
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
    if (!failure.ok()) {
        return failure;
    }
    if (code == RpcCode::OutOfRange) {
        return outOfRange(*node, *cursor, ended);
    }
    return ended;
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
        "node " + node.nodeId + " at " + options.address + " has a new spool (incarnation " +
        std::to_string(stored.incarnation) + " -> " + std::to_string(incarnation) +
        ": its state directory was replaced); seq " + std::to_string(stored.lastSeq) +
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
        const std::string message = "node " + node.nodeId + " at " + options.address +
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
    if (!batch.nodeId.empty() && batch.nodeId != node.nodeId) {
        failure = Error{"runplaned at " + options.address + " changed its node id from " +
                        node.nodeId + " to " + batch.nodeId + "; reconnecting"};
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
            if (auto state = runStateFromAttrs(record.event.attrs)) {
                runs.push_back(
                    RunStateChange{record.runId, *state, record.tNs, record.event.message});
            }
        }
    }
    // What live views get once the batch committed (the batch itself moves to the writer).
    TelemetryUpdate out;
    if (callbacks.onTelemetry) {
        out = liveUpdate(node.nodeId, batch, plan, previous);
        out.address = options.address;
    }
    const std::size_t gaps = plan.gaps;
    auto stored = lane->ingest(std::move(plan.batch), std::move(runs));
    if (!stored.ok()) {
        failure = Error{stored.error()};
        return false;
    }
    expected = stored->cursor + 1;
    if (runLogs) {
        for (const auto& record : batch.records) {
            if (!record.runId.empty()) {
                runLogs->noticeRun(record.runId);  // once per run: its output goes to the history
            }
        }
    }
    // Only now that the rows are committed may the daemon trim its spool.
    auto acked = client->ackTelemetry(stored->cursor);
    const std::size_t fresh = stored->samplesInserted + stored->eventsInserted;
    update(
        [&](IngestorStatus& s) {
            s.cursor = stored->cursor;
            s.recordsStored += fresh;
            s.duplicatesSkipped += stored->duplicatesSkipped;
            s.gapsRecorded += gaps;
            s.lastError = acked.ok() ? std::string() : acked.error();
        },
        /*force=*/false);
    if (callbacks.onTelemetry && (fresh > 0 || gaps > 0)) {
        out.cursor = stored->cursor;
        callbacks.onTelemetry(out);
    }
    return !stopping();
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
    m_impl->thread = std::thread([impl = m_impl.get()] { impl->run(); });
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
