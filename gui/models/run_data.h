#pragma once
// Value types for the Runs and Compare pages and the headless report: one row per run for the
// history list, and a snapshot of everything the live view of one run draws. Built by
// history_queries on a worker thread; handed to the GUI as shared_ptr<const RunSnapshot>.

#include <QString>
#include <QStringList>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/metrics/metric_kind.h"
#include "common/telemetry/run_state.h"
#include "gui/models/series_data.h"

namespace runplane::gui {

struct RunRoleData;  // gui/models/role_memory.h

/// Last and best value of one metric of a run; best follows the metric's direction
/// (common/metrics/metric_kind.h) and is absent (bestStep -1) when it has none.
struct MetricValue {
    QString name;  // "eval/gsm8k"
    double last = 0;
    std::int64_t lastStep = -1;
    double best = 0;
    std::int64_t bestStep = -1;
    metrics::MetricInfo info;

    bool hasBest() const { return bestStep >= 0 && !std::isnan(best); }
};

/// A run state's stored spelling ("daemon_lost") as a QString: the Runs filter's key (also kept
/// in the settings) and the reports' text.
inline QString stateName(telemetry::RunState state) {
    const std::string_view s = telemetry::toString(state);
    return QString::fromLatin1(s.data(), static_cast<qsizetype>(s.size()));
}

/// One run in the history list.
struct RunRow {
    QString id;
    QString name;
    telemetry::RunState state = telemetry::RunState::Running;
    QString recipe;  // recipe label (name or model) from the snapshot
    QStringList nodes;
    double startT = 0;  // seconds since the epoch
    double endT = 0;    // 0 while running
    QString message;
    QString cause;                     // why it failed, in one line (db::runCause), "" = none
    QString causeKind;                 // the cause's event kind ("cuda_oom")
    QString diagnosis;                 // issue 44: the newest stored diagnosis' headline, "" = none
    QString diagnosisTrigger;          // its trigger (stall, failed, phase_overrun, on_demand)
    double diagnosisT = 0;             // when it was taken (seconds since the epoch)
    std::vector<NodePeakRow> peaks;    // peak host memory per node
    std::vector<MetricValue> metrics;  // classified with the recipe's analysis.metric_kinds
    QString primaryMetric;             // the recipe's analysis.primary_metric ("" = default)
    QStringList tags;                  // issue 49: the run's tags (history run_tags), sorted
    QString note;                      // issue 49: the run's note (history run_notes)
    /// issue 46: a running run's newest node sample (s, 0 = none) and its nodes' sample
    /// interval (s): whether its daemon is unreachable (run_silence.h), as its header says.
    double lastSampleT = 0;
    double sampleInterval = 0;

    double durationSeconds(double now) const { return (endT > 0 ? endT : now) - startT; }
    double maxPeakBytes() const {
        double m = 0;
        for (const auto& p : peaks) {
            m = p.peakBytes > m ? p.peakBytes : m;
        }
        return m;
    }
};

/// NCCL health of a run: which library its nodes load, the version gate, probe results and the
/// NCCL warning / error / stall events.
struct NcclHealth {
    struct NodeLibrary {
        QString nodeId;
        QString path;
        QString version;
        int versionCode = 0;
    };
    std::vector<NodeLibrary> libraries;
    int gateVersionCode = 23007;  // 2.30.7 for cross-node CUDA-graph rollout; 0 = no gate
    QString verdict;              // "pass", "fail", "unknown"
    QString verdictText;
    struct Probe {
        QString nodeId;
        QString collective;
        double bytes = 0;
        double busbwGbps = 0;
        double expectedGbps = 0;
    };
    std::vector<Probe> probes;
    std::vector<EventRow> events;  // nccl_warning, nccl_error, stall
};

/// Everything the live view of one run shows, for one time range.
struct RunSnapshot {
    RunRow run;
    QStringList nodeAddresses;  // parallel to run.nodes: last known daemon address ("" unknown)
    QString recipeYaml;
    double t0 = 0;  // the range that was queried
    double t1 = 0;
    std::vector<PointSeries> hostMemory;  // node-level "host.mem.used_bytes", one per node
    std::vector<PointSeries> gpuMemory;   // "gpu.N.mem.used_bytes", one per node and GPU
    std::vector<PointSeries> processRss;  // the run's process tree RSS per node
    std::vector<PointSeries> metrics;     // every other series of the run (eval/*, train/*, ...)
    std::vector<PhaseInterval> phases;
    std::vector<EventRow> events;  // all events of the run in the range
    MemoryLines lines;
    std::vector<NodePeakRow> peaks;
    NcclHealth nccl;
    /// Memory by role, failure markers, phase lanes (issues 42, 43).
    std::shared_ptr<const RunRoleData> roles;
    QStringList warnings;  // what could not be loaded, in words
    QString error;         // non-empty: nothing could be loaded
};

}  // namespace runplane::gui
