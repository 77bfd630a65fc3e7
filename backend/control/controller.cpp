#include "backend/control/controller.h"

#include "backend/alerts/sender.h"
#include "backend/control/ingest_batch.h"
#include "common/clock.h"
#include "common/json_text.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

namespace runplane::control {

namespace {

using clock::unixNowNs;

std::string generateRunId() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    std::random_device device;
    char suffix[8];
    std::snprintf(suffix, sizeof suffix, "%04x", device() & 0xffffu);
    return std::string("run-") + stamp + "-" + suffix;
}

}  // namespace

struct Controller::Node {
    std::shared_ptr<NodeClient> client;
    std::unique_ptr<TelemetryIngestor> ingestor;
};

Controller::Controller(ControllerOptions options, ControllerCallbacks callbacks)
    : m_options(std::move(options)), m_callbacks(std::move(callbacks)) {
    if (m_options.ingestTelemetry && !m_options.historyPath.empty() &&
        m_options.pruneInterval.count() > 0) {
        PrunerOptions prune;
        prune.historyPath = m_options.historyPath;
        prune.interval = m_options.pruneInterval;
        m_pruner = std::make_unique<RetentionPruner>(std::move(prune));
        m_pruner->start();
    }
    if (m_options.ingestTelemetry && !m_options.historyPath.empty()) {
        // One writer for every node (history_writer.h). Should it not open, each ingestor tries
        // on its own and reports why it cannot.
        HistoryWriterOptions writer = m_options.writer;
        writer.historyPath = m_options.historyPath;
        if (auto opened = HistoryWriter::open(writer); opened.ok()) {
            m_writer = *opened;
        }
    }
    if (m_options.ingestTelemetry && !m_options.historyPath.empty() && m_options.alertsFile) {
        startAlerts();
    }
}

void Controller::startAlerts() {
    const bool given = !m_options.alertsFile->empty();
    const std::string path = given ? *m_options.alertsFile : alerts::defaultAlertsPath();
    std::error_code ec;
    if (!given && !std::filesystem::exists(path, ec)) {
        return;  // no rules file: nothing is sent
    }
    auto rules = alerts::loadAlertRules(path);
    if (!rules.ok()) {
        m_alertsError = rules.error();
        return;
    }
    alerts::SenderOptions sender;
    sender.historyPath = m_options.historyPath;
    sender.rules = std::move(*rules);
    m_alerts = std::make_unique<alerts::AlertSender>(std::move(sender));
    if (Status s = m_alerts->start(); !s.ok()) {
        m_alertsError = s.error();
        m_alerts.reset();
    }
}

Controller::~Controller() {
    if (m_alerts) {
        m_alerts->stop();
    }
    stopAll();
    if (m_writer) {
        m_writer->stop();
    }
    if (m_pruner) {
        m_pruner->stop();
    }
}

Status Controller::addNode(const std::string& address) {
    auto client = NodeClient::create(address, m_options.client);
    if (!client.ok()) {
        return Error{client.error()};
    }
    auto node = std::make_unique<Node>();
    node->client = *client;
    {
        std::lock_guard lock(m_mutex);
        if (m_nodes.count(address)) {
            return Error{address + " is already added"};
        }
    }
    if (m_options.ingestTelemetry) {
        IngestorOptions ingest;
        ingest.address = address;
        ingest.historyPath = m_options.historyPath;
        ingest.writer = m_writer;
        ingest.sampleHz = m_options.sampleHz;
        ingest.client = m_options.client;
        ingest.consumerRole = "controller";
        IngestorCallbacks callbacks;
        callbacks.onTelemetry = m_callbacks.onTelemetry;
        callbacks.liveSample = m_callbacks.liveSample;
        if (m_callbacks.onNodeStatus) {
            auto onNode = m_callbacks.onNodeStatus;
            callbacks.onStatus = [onNode, address](const IngestorStatus& status) {
                onNode(NodeView{address, status});
            };
        }
        node->ingestor = std::make_unique<TelemetryIngestor>(ingest, std::move(callbacks));
        if (Status s = node->ingestor->start(); !s.ok()) {
            return s;
        }
    }
    std::lock_guard lock(m_mutex);
    if (m_nodes.count(address)) {
        return Error{address + " is already added"};  // lost a race; `node` stops its ingestor
    }
    m_nodes.emplace(address, std::move(node));
    return {};
}

Status Controller::removeNode(const std::string& address) {
    std::unique_ptr<Node> node;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_nodes.find(address);
        if (it == m_nodes.end()) {
            return Error{address + " is not a node of this controller"};
        }
        node = std::move(it->second);
        m_nodes.erase(it);
    }
    if (node->ingestor) {
        node->ingestor->stop();  // outside the lock: joins the ingest thread
    }
    return {};
}

std::vector<NodeView> Controller::nodes() const {
    std::lock_guard lock(m_mutex);
    std::vector<NodeView> out;
    for (const auto& [address, node] : m_nodes) {
        NodeView view{address, {}};
        if (node->ingestor) {
            view.ingest = node->ingestor->status();
        } else {
            view.ingest.address = address;
        }
        out.push_back(std::move(view));
    }
    return out;
}

std::shared_ptr<NodeClient> Controller::client(const std::string& address) const {
    std::lock_guard lock(m_mutex);
    auto it = m_nodes.find(address);
    return it == m_nodes.end() ? nullptr : it->second->client;
}

Result<db::RunRecord> Controller::submitRun(const SubmitSpec& spec) {
    std::shared_ptr<NodeClient> nodeClient = client(spec.address);
    if (!nodeClient) {
        auto created = NodeClient::create(spec.address, m_options.client);
        if (!created.ok()) {
            return Error{created.error()};
        }
        nodeClient = *created;
    }
    auto history = db::History::open(m_options.historyPath);
    if (!history.ok()) {
        return Error{history.error()};
    }
    auto node = nodeClient->getNode();
    if (!node.ok()) {
        return Error{node.error()};
    }
    StartRunSpec run = spec.run;
    if (run.runId.empty()) {
        run.runId = RunId{generateRunId()};
    }
    const db::RunId runId = run.runId;
    if (auto existing = (*history)->run(runId);
        existing.ok() && *existing && (*existing)->state != db::RunState::Running) {
        return Error{(*history)->path() + ": run id '" + run.runId.value() +
                     "' already exists and has ended; choose another id"};
    }
    auto started = nodeClient->startRun(run);
    if (!started.ok()) {
        return Error{started.error()};
    }
    db::RunRecord record;
    record.id = runId;
    record.name = spec.name.empty() ? run.runId.value() : spec.name;
    record.recipeYaml = run.recipeYaml;
    // Provenance: what the caller recorded, plus the daemon that runs it.
    auto provenance = nlohmann::json::parse(
        spec.provenanceJson.empty() ? std::string("{}") : spec.provenanceJson, nullptr, false);
    if (!provenance.is_object()) {
        provenance = nlohmann::json{{"caller", spec.provenanceJson}};
    }
    provenance["daemon"] = {{"address", spec.address},
                            {"node_id", node->nodeId.value()},
                            {"hostname", node->hostname},
                            {"version", node->daemonVersion},
                            {"protocol_version", node->protocolVersion},
                            {"kernel", node->kernel}};
    record.provenanceJson = json_text::dump(provenance);
    record.state = telemetry::historyState(started->state);
    record.startedNs = started->startedNs ? started->startedNs : unixNowNs();
    record.endedNs = started->endedNs;
    record.nodes = {node->nodeId.value()};
    record.message = started->message;
    if (Status s = (*history)->upsertRun(record); !s.ok()) {
        return Error{"run " + run.runId.value() + " started on " + spec.address +
                     " but could not be recorded: " + s.error()};
    }
    // A fast run may have ended, and its run-state event been ingested, before the record
    // existed: apply the latest such event now (later ones are applied by the ingest).
    db::EventFilter filter;
    filter.runId = runId;
    filter.kind = toString(EventKindInfo::RunState);
    if (auto events = (*history)->listEvents(filter); events.ok() && !events->empty()) {
        const db::EventRecord& latest = events->back();
        if (auto state = runStateFromAttrs(latest.attrs)) {
            const bool ended = *state != db::RunState::Running;
            if ((*history)
                    ->updateRunState(runId, *state, ended ? latest.tNs : 0, latest.message)
                    .ok()) {
                record.state = *state;
                record.endedNs = ended ? latest.tNs : record.endedNs;
                record.message = latest.message;
            }
        }
    }
    return record;
}

Result<RunStatusInfo> Controller::stopRun(const std::string& address, const RunId& runId,
                                          double graceSeconds) {
    std::shared_ptr<NodeClient> nodeClient = client(address);
    if (!nodeClient) {
        auto created = NodeClient::create(address, m_options.client);
        if (!created.ok()) {
            return Error{created.error()};
        }
        nodeClient = *created;
    }
    auto stopped = nodeClient->stopRun(runId, graceSeconds);
    if (!stopped.ok()) {
        return stopped;
    }
    auto history = db::History::open(m_options.historyPath);
    if (history.ok()) {
        (void)(*history)->updateRunState(runId, telemetry::historyState(stopped->state),
                                         stopped->endedNs, stopped->message);
    }
    return stopped;
}

Result<std::vector<RunStatusInfo>> Controller::syncRuns(const std::string& address) {
    std::shared_ptr<NodeClient> nodeClient = client(address);
    if (!nodeClient) {
        auto created = NodeClient::create(address, m_options.client);
        if (!created.ok()) {
            return Error{created.error()};
        }
        nodeClient = *created;
    }
    auto runs = nodeClient->listRuns();
    if (!runs.ok()) {
        return runs;
    }
    auto history = db::History::open(m_options.historyPath);
    if (!history.ok()) {
        return Error{history.error()};
    }
    for (const auto& run : *runs) {
        const db::RunId& runId = run.runId;
        auto known = (*history)->run(runId);
        if (known.ok() && *known) {
            (void)(*history)->updateRunState(runId, telemetry::historyState(run.state), run.endedNs,
                                             run.message);
        }
    }
    return runs;
}

void Controller::stopAll() {
    std::map<std::string, std::unique_ptr<Node>> nodes;
    {
        std::lock_guard lock(m_mutex);
        nodes.swap(m_nodes);
    }
    // Every ingestor is told first, then each joined: they end side by side, not one by one.
    for (auto& [address, node] : nodes) {
        if (node->ingestor) {
            node->ingestor->requestStop();
        }
    }
    for (auto& [address, node] : nodes) {
        if (node->ingestor) {
            node->ingestor->stop();
        }
    }
}

HistoryWriterStats Controller::writerStats() const {
    return m_writer ? m_writer->stats() : HistoryWriterStats{};
}

}  // namespace runplane::control
