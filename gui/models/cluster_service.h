#pragma once
// ClusterService: the GUI's handle on runplane_control's Controller. Adds and removes daemon
// addresses and lets the controller ingest their telemetry into the history in the background.
// Every controller call runs on this service's worker thread; the controller's callbacks (on its
// ingest threads) are coalesced and handed to the GUI thread by queued calls, then re-emitted as
// signals carrying plain values. The GUI thread never waits on the network.
//
// Diagnoses (issue #44, docs/diagnosis.md "Triggers"): like `runplanectl watch`, the service
// hands every ingested batch to a control::DiagnosisTrigger (a run's first stall, a run ending
// failed) and checks the runs it has seen for a phase overrun every phaseCheckSeconds; each
// diagnosis runs on a thread of the trigger's own, is stored with the run, and its verdict comes
// back as runDiagnosed on the GUI thread.
//
// Ownership: owns the Controller and the DiagnosisTrigger (created and destroyed on the worker
// thread; destroying the trigger waits for the diagnoses under way, each bounded).
// Thread-safety: a QObject of the GUI thread; call its methods from there.

#include <QObject>
#include <QString>
#include <QStringList>

class QTimer;

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "backend/control/node_client.h"
#include "gui/models/node_table_model.h"
#include "gui/models/serial_worker.h"

namespace runplane::control {
class Controller;
class DiagnosisTrigger;
struct NodeView;
struct TelemetryUpdate;
}  // namespace runplane::control

namespace runplane::gui {

class ClusterService : public QObject {
    Q_OBJECT
  public:
    /// `alertsFile`: the rules file the controller sends alerts by (docs/alerts.md); "" = the
    /// default one when it exists.
    explicit ClusterService(const QString& historyPath, const QString& alertsFile = QString(),
                            QObject* parent = nullptr);
    const QString& alertsFile() const { return m_alertsFile; }
    ~ClusterService() override;

    const QString& historyPath() const { return m_historyPath; }
    /// Starts connecting to (and ingesting) a daemon. Result: nodeChanged, or errorOccurred.
    void addNode(const QString& address);
    /// Stops ingesting that daemon (the join happens on the worker). Result: nodeRemoved.
    void removeNode(const QString& address);
    /// Drops every node and reconnects later addNode calls with these TLS / token settings and
    /// telemetry rate (0: the daemon's default): the controller is rebuilt on the worker, and
    /// late status updates of the old one are dropped (no nodeRemoved for the dropped nodes).
    void setConnection(const control::NodeClientOptions& options, double sampleHz);
    const control::NodeClientOptions& clientOptions() const { return m_options; }
    /// securityText (cluster_connection.h) of an address under the current options.
    QString securityOf(const QString& address) const;

    /// Automatic diagnoses (default on): stall and failure triggers, and the phase-overrun check
    /// every periodSeconds (default 60, as `runplanectl watch --phase-check-seconds`) with the
    /// margin marginSeconds (default 600, `--phase-margin`). Applies to the controller made by
    /// the next setConnection (and to the phase timer at once).
    void setDiagnosis(bool on, double periodSeconds = 60, double marginSeconds = 600);
    bool diagnosisOn() const { return m_diagnose; }

    /// Converts a controller view into a table row (exposed for tests).
    static NodeRow toRow(const control::NodeView& view);

  signals:
    void nodeChanged(const runplane::gui::NodeRow& row);
    void nodeRemoved(const QString& address);
    /// New telemetry is committed to the history (coalesced: at most one per event-loop turn).
    /// `latestUsed` maps node id -> (host.mem.used_bytes, t seconds) of the newest sample.
    void telemetryCommitted();
    /// The newest host.mem.used_bytes of the daemon at `address` (t in seconds).
    void memorySample(const QString& address, double usedBytes, double t);
    void errorOccurred(const QString& address, const QString& message);
    /// A diagnosis of a run started by a trigger ("stall", "failed", "phase_overrun"); why:
    /// the overrun's line for a phase overrun, else empty.
    void diagnosisStarted(const QString& runId, const QString& trigger, const QString& why);
    /// It finished: ok with the verdict's headline (stored with the run), or the error.
    void runDiagnosed(const QString& runId, const QString& trigger, bool ok,
                      const QString& headlineOrError);

  private:
    void createController(const control::NodeClientOptions& options, double sampleHz,
                          std::uint64_t generation, bool diagnose,
                          double phaseMargin);  // worker thread
    void onTelemetry(const control::TelemetryUpdate& update, std::uint64_t generation,
                     control::DiagnosisTrigger* trigger);
    void checkPhases();  // GUI thread: posts the check to the worker
    void onNodeStatus(const control::NodeView& view, std::uint64_t generation);
    void deliverPending();

    QString m_historyPath;
    QString m_alertsFile;  // set once, before the worker's first task
    // Filled by ingest threads, drained on the GUI thread.
    std::mutex m_pendingMutex;
    std::map<QString, NodeRow> m_pendingRows;
    std::map<QString, std::pair<double, double>> m_pendingMemory;
    bool m_pendingTelemetry = false;
    QStringList m_removed;  // GUI thread: late status updates for these addresses are dropped
    std::atomic<bool> m_deliveryQueued{false};
    control::NodeClientOptions m_options;        // GUI thread copy of the controller's options
    std::atomic<std::uint64_t> m_generation{0};  // bumped by setConnection

    bool m_diagnose = true;  // GUI thread
    double m_phaseMargin = 600;
    QTimer* m_phaseTimer = nullptr;

    std::shared_ptr<control::DiagnosisTrigger> m_trigger;  // worker thread (its callbacks: any)
    std::shared_ptr<control::Controller> m_controller;     // used on the worker thread only
    std::uint64_t m_controllerGeneration = 0;              // worker thread: m_controller's
    SerialWorker m_worker;                                 // declared last: joined first
};

}  // namespace runplane::gui
