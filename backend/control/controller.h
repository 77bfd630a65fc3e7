#pragma once
// Controller: the client side of a Runplane cluster. Holds one NodeClient and one
// TelemetryIngestor per daemon address, writes everything into one history file (telemetry
// through one HistoryWriter shared by the ingestors), and submits
// runs (StartRun on the node + a run record with recipe snapshot and provenance in the history).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/control/node_client.h"
#include "backend/control/node_types.h"
#include "backend/control/retention_pruner.h"
#include "backend/control/telemetry_ingestor.h"
#include "common/result.h"
#include "db/history/history.h"

namespace runplane::alerts {
class AlertSender;
}

namespace runplane::control {

struct ControllerOptions {
    std::string historyPath;
    NodeClientOptions client;
    double sampleHz = 0;
    bool ingestTelemetry = true;  // start a TelemetryIngestor for every added node
    /// With ingestTelemetry: apply the history's retention policy at start and then this often
    /// (RetentionPruner, docs/history.md "Retention"); zero: never prune online.
    std::chrono::milliseconds pruneInterval = std::chrono::hours(1);
    /// The history writer's settings (history_writer.h); its historyPath is historyPath above.
    HistoryWriterOptions writer;
    /// With ingestTelemetry: send alerts for what the history stores (docs/alerts.md) by this
    /// rules file; "" the default one when it exists; nullopt: no alerts.
    std::optional<std::string> alertsFile;
};

/// One node as the controller sees it (a value snapshot).
struct NodeView {
    std::string address;
    IngestorStatus ingest;  // state, last error, node inventory once known
};

/// Callbacks run on ingest threads; they must return quickly (post to your own thread).
struct ControllerCallbacks {
    std::function<void(const TelemetryUpdate&)> onTelemetry;
    std::function<void(const NodeView&)> onNodeStatus;
    /// Which samples onTelemetry gets (IngestorCallbacks::liveSample; empty: every one).
    std::function<bool(const std::string& series, const RunId& runId)> liveSample;
};

/// What submitRun() needs: the run on one node (multi-node dispatch comes with Ray bring-up).
struct SubmitSpec {
    std::string address;
    StartRunSpec run;            // run.runId empty: one is generated
    std::string name;            // history label; defaults to the run id
    std::string provenanceJson;  // argv/env/versions/git rev; "{}" when empty
};

/// Manages several nodes. Thread-safe: every method may be called from any thread. addNode and
/// removeNode do no network I/O on the caller's thread except removeNode's join of the ingest
/// thread (bounded by one RPC round trip); submitRun/stopRun/syncRuns block for RPCs (at most
/// the client's call timeout each), so GUI code calls them from a worker.
class Controller {
  public:
    explicit Controller(ControllerOptions options, ControllerCallbacks callbacks = {});
    ~Controller();
    Controller(const Controller&) = delete;
    Controller& operator=(const Controller&) = delete;

    /// Adds a daemon address and starts ingesting it. Error for a malformed or duplicate address.
    Status addNode(const std::string& address);
    /// Stops ingesting that address and forgets it. Error when unknown.
    Status removeNode(const std::string& address);
    std::vector<NodeView> nodes() const;
    /// The client of an added node (shared; stays valid after removeNode).
    std::shared_ptr<NodeClient> client(const std::string& address) const;

    /// StartRun on spec.address (added or not), then records the run in the history (state from
    /// the daemon's answer, recipe snapshot, provenance, node). When StartRun fails nothing is
    /// recorded and the error names the address.
    Result<db::RunRecord> submitRun(const SubmitSpec& spec);
    /// StopRun on the node and records the resulting state.
    Result<RunStatusInfo> stopRun(const std::string& address, const RunId& runId,
                                  double graceSeconds);
    /// ListRuns on a node and updates the state of the runs the history knows.
    Result<std::vector<RunStatusInfo>> syncRuns(const std::string& address);

    /// Stops every ingestor (joins their threads).
    void stopAll();
    /// What the shared history writer did so far (zeros without telemetry ingest).
    HistoryWriterStats writerStats() const;
    const ControllerOptions& options() const { return m_options; }
    /// Why alerts are not sent although a rules file was asked for ("" when they are, or none
    /// was asked for).
    std::string alertsError() const { return m_alertsError; }

  private:
    struct Node;
    void startAlerts();
    ControllerOptions m_options;
    ControllerCallbacks m_callbacks;
    mutable std::mutex m_mutex;
    std::map<std::string, std::unique_ptr<Node>> m_nodes;
    std::unique_ptr<RetentionPruner> m_pruner;
    std::shared_ptr<HistoryWriter> m_writer;  // shared by the ingestors (history_writer.h)
    std::unique_ptr<alerts::AlertSender> m_alerts;
    std::string m_alertsError;
};

}  // namespace runplane::control
