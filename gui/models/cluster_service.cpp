#include "gui/models/cluster_service.h"

#include <QMetaObject>
#include <QTimer>

#include <algorithm>
#include <chrono>

#include "backend/control/controller.h"
#include "backend/control/diagnose.h"
#include "gui/models/cluster_connection.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {

ClusterService::ClusterService(const QString& historyPath, const QString& alertsFile,
                               QObject* parent)
    : QObject(parent), m_historyPath(historyPath), m_alertsFile(alertsFile) {
    m_worker.post(QStringLiteral("init"), [this] { createController({}, 0, 0, true, 600); });
    m_phaseTimer = new QTimer(this);
    m_phaseTimer->setInterval(60'000);
    connect(m_phaseTimer, &QTimer::timeout, this, &ClusterService::checkPhases);
    m_phaseTimer->start();
}

void ClusterService::setDiagnosis(bool on, double periodSeconds, double marginSeconds) {
    m_diagnose = on;
    m_phaseMargin = marginSeconds;
    m_phaseTimer->setInterval(static_cast<int>(std::max(0.05, periodSeconds) * 1000));
    if (on) {
        m_phaseTimer->start();
    } else {
        m_phaseTimer->stop();
    }
}

void ClusterService::checkPhases() {
    const std::uint64_t generation = m_generation;
    m_worker.post(QStringLiteral("phase check"), [this, generation] {
        if (!m_trigger) {
            return;
        }
        const std::int64_t nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
        for (const auto& [run, overrun] : m_trigger->checkPhases(nowNs)) {
            const QString runId = qs(run.value());
            const QString why = qs(control::DiagnosisTrigger::describe(overrun));
            QMetaObject::invokeMethod(
                this,
                [this, runId, why, generation] {
                    if (generation == m_generation) {
                        emit diagnosisStarted(runId, QStringLiteral("phase_overrun"), why);
                    }
                },
                Qt::QueuedConnection);
        }
    });
}

void ClusterService::createController(const control::NodeClientOptions& client, double sampleHz,
                                      std::uint64_t generation, bool diagnose, double phaseMargin) {
    if (m_controller) {
        m_controller->stopAll();  // joins the old ingest threads: no callback of theirs after this
        m_controller.reset();
    }
    m_trigger.reset();  // waits for its diagnoses under way (each bounded by its call deadline)
    if (diagnose) {
        // The same trigger as `runplanectl watch` (docs/diagnosis.md "Triggers"): the run's
        // nodes from the history, this connection's TLS / token settings.
        control::DiagnosisTrigger::Options d;
        d.historyPath = m_historyPath.toStdString();
        d.base.client = client;
        d.phaseRule.marginSeconds = phaseMargin;
        d.onDone = [this, generation](const RunId& run, const std::string& trigger,
                                      const Result<diagnosis::RunDiagnosis>& result) {
            const QString runId = qs(run.value());
            const QString name = qs(trigger);
            const bool ok = result.ok();
            const QString text = qs(ok ? result->verdict.headline : result.error());
            QMetaObject::invokeMethod(
                this,
                [this, runId, name, ok, text, generation] {
                    if (generation == m_generation) {
                        emit runDiagnosed(runId, name, ok, text);
                    }
                },
                Qt::QueuedConnection);
        };
        m_trigger = std::make_shared<control::DiagnosisTrigger>(std::move(d));
    }
    control::ControllerOptions options;
    options.historyPath = m_historyPath.toStdString();
    options.client = client;
    options.sampleHz = sampleHz;
    // --alerts FILE, else ~/.config/runplane/alerts.yaml when it exists.
    options.alertsFile = m_alertsFile.toStdString();
    control::ControllerCallbacks callbacks;
    callbacks.onTelemetry = [this, generation,
                             trigger = m_trigger](const control::TelemetryUpdate& u) {
        onTelemetry(u, generation, trigger.get());
    };
    callbacks.onNodeStatus = [this, generation](const control::NodeView& v) {
        onNodeStatus(v, generation);
    };
    // onTelemetry uses the nodes' own host memory only: the live copies of the rest are not
    // made (under load each batch's copy waits for its commit in the writer's queue).
    callbacks.liveSample = [](const std::string& series, const RunId& runId) {
        return runId.empty() && series == telemetry::series::kHostMemUsed;
    };
    m_controller = std::make_shared<control::Controller>(options, callbacks);
    m_controllerGeneration = generation;
}

void ClusterService::setConnection(const control::NodeClientOptions& options, double sampleHz) {
    m_options = options;
    const std::uint64_t generation = ++m_generation;
    {
        std::lock_guard lock(m_pendingMutex);
        m_pendingRows.clear();
    }
    m_worker.post(QStringLiteral("connection"), [this, options, sampleHz, generation,
                                                 diagnose = m_diagnose, margin = m_phaseMargin] {
        createController(options, sampleHz, generation, diagnose, margin);
    });
}

QString ClusterService::securityOf(const QString& address) const {
    return securityText(m_options, address);
}

ClusterService::~ClusterService() {
    // Stop the ingest threads on the worker (they may still post to this object, which is alive
    // until after the worker has joined; Qt discards whatever is still queued).
    m_worker.post(QStringLiteral("shutdown"), [this] {
        if (m_controller) {
            m_controller->stopAll();
        }
        m_controller.reset();
        m_trigger.reset();  // after the ingest threads that call it
    });
    m_worker.drain();
}

NodeRow ClusterService::toRow(const control::NodeView& view) {
    NodeRow row;
    row.address = qs(view.address);
    row.state = QString::fromLatin1(control::toString(view.ingest.state)).toLower();
    row.error = qs(view.ingest.lastError);
    row.recordsStored = view.ingest.recordsStored;
    row.reconnects = view.ingest.reconnects;
    if (const auto& n = view.ingest.node) {
        row.nodeId = qs(n->nodeId);
        row.incarnation = n->spoolIncarnation;
        row.hostname = qs(n->hostname);
        row.cpuArch = qs(n->cpuArch);
        row.cpuCores = static_cast<int>(n->cpuCores);
        row.ramBytes = static_cast<double>(n->hostRamBytes);
        row.kernel = qs(n->kernel);
        row.daemonVersion = qs(n->daemonVersion);
        row.gpuCount = static_cast<int>(n->gpus.size());
        if (n->gpus.empty()) {
            row.gpuText = n->gpusUnavailableReason.empty()
                              ? QStringLiteral("none")
                              : QStringLiteral("none: ") + qs(n->gpusUnavailableReason);
        } else {
            row.gpuText =
                QStringLiteral("%1 × %2").arg(n->gpus.size()).arg(qs(n->gpus.front().name));
        }
        QString selected;
        for (const auto& lib : n->ncclLibraries) {
            if (lib.selected) {
                selected = qs(lib.version.empty() ? lib.error : lib.version);
            }
        }
        if (n->ncclLibraries.empty()) {
            row.nccl = QStringLiteral("none found");
        } else {
            row.nccl = (selected.isEmpty() ? QStringLiteral("none selected") : selected) +
                       QStringLiteral(" (%1 found)").arg(n->ncclLibraries.size());
        }
    }
    return row;
}

void ClusterService::addNode(const QString& address) {
    m_removed.removeAll(address);
    const std::string addr = address.toStdString();
    m_worker.post(QStringLiteral("add ") + address, [this, addr, address] {
        if (!m_controller) {
            return;
        }
        const Status status = m_controller->addNode(addr);
        if (!status) {
            const QString message = qs(status.error());
            const std::uint64_t generation = m_controllerGeneration;
            QMetaObject::invokeMethod(
                this,
                [this, address, message, generation] {
                    if (generation == m_generation) {
                        emit errorOccurred(address, message);
                    }
                },
                Qt::QueuedConnection);
            return;
        }
        for (const control::NodeView& v : m_controller->nodes()) {
            if (v.address == addr) {
                onNodeStatus(v, m_controllerGeneration);
            }
        }
    });
}

void ClusterService::removeNode(const QString& address) {
    m_removed << address;
    const std::string addr = address.toStdString();
    m_worker.post(QStringLiteral("remove ") + address, [this, addr, address] {
        if (!m_controller) {
            return;
        }
        const Status status = m_controller->removeNode(addr);
        const QString message = status ? QString() : qs(status.error());
        QMetaObject::invokeMethod(
            this,
            [this, address, message] {
                if (!m_removed.contains(address)) {
                    return;  // added again meanwhile: that row is not the one removed
                }
                if (!message.isEmpty()) {
                    emit errorOccurred(address, message);
                }
                emit nodeRemoved(address);
            },
            Qt::QueuedConnection);
    });
}

void ClusterService::onTelemetry(const control::TelemetryUpdate& update, std::uint64_t generation,
                                 control::DiagnosisTrigger* trigger) {
    if (generation != m_generation) {
        return;  // a controller replaced by setConnection
    }
    if (trigger != nullptr) {
        // A run's first stall, a run ending failed: a diagnosis on the trigger's own thread.
        for (const auto& [run, name] : trigger->onLiveEvents(update.events)) {
            const QString runId = qs(run.value());
            const QString triggerName = qs(name);
            QMetaObject::invokeMethod(
                this,
                [this, runId, triggerName, generation] {
                    if (generation == m_generation) {
                        emit diagnosisStarted(runId, triggerName, QString());
                    }
                },
                Qt::QueuedConnection);
        }
    }
    {
        std::lock_guard lock(m_pendingMutex);
        m_pendingTelemetry = true;
        // Keyed by the daemon, not the node id two daemons may share (issue 46).
        const QString daemon = qs(update.address);
        for (const control::LiveSample& s : update.samples) {
            if (s.runId.empty() && s.sample.series == telemetry::series::kHostMemUsed) {
                m_pendingMemory[daemon] = {s.sample.value, static_cast<double>(s.tNs) * 1e-9};
            }
        }
    }
    if (!m_deliveryQueued.exchange(true)) {
        QMetaObject::invokeMethod(
            this, [this] { deliverPending(); }, Qt::QueuedConnection);
    }
}

void ClusterService::onNodeStatus(const control::NodeView& view, std::uint64_t generation) {
    if (generation != m_generation) {
        return;
    }
    {
        std::lock_guard lock(m_pendingMutex);
        m_pendingRows[qs(view.address)] = toRow(view);
    }
    if (!m_deliveryQueued.exchange(true)) {
        QMetaObject::invokeMethod(
            this, [this] { deliverPending(); }, Qt::QueuedConnection);
    }
}

void ClusterService::deliverPending() {
    std::map<QString, NodeRow> rows;
    std::map<QString, std::pair<double, double>> memory;
    bool telemetry = false;
    {
        std::lock_guard lock(m_pendingMutex);
        m_deliveryQueued = false;
        rows.swap(m_pendingRows);
        memory.swap(m_pendingMemory);
        telemetry = m_pendingTelemetry;
        m_pendingTelemetry = false;
    }
    for (const auto& [address, row] : rows) {
        if (!m_removed.contains(address)) {
            NodeRow r = row;
            r.security = securityOf(address);
            emit nodeChanged(r);
        }
    }
    for (const auto& [address, value] : memory) {
        emit memorySample(address, value.first, value.second);
    }
    if (telemetry) {
        emit telemetryCommitted();
    }
}

}  // namespace runplane::gui
