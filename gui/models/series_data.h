#pragma once
// Value types the GUI's data workers produce from the run history and hand to the GUI thread.
// Times are seconds since the Unix epoch (double), values in the series' unit (bytes for
// memory). Plain data: cheap to move, safe to share as shared_ptr<const T> across threads.

#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/metrics/metric_kind.h"
#include "common/telemetry/event_kind.h"
#include "common/telemetry/series.h"

namespace runplane::gui {

/// The history's nanoseconds since the epoch -> the seconds these types hold.
inline double nsToSeconds(std::int64_t ns) {
    return static_cast<double>(ns) * 1e-9;
}

/// One series, ready to plot: per point the value line and the min–max band of its interval.
/// When the history decimated the range, each point is one bucket: t = bucket middle,
/// value = last sample, min/max = the bucket's extremes (so a one-sample spike stays visible).
struct PointSeries {
    QString nodeId;
    QString runId;
    QString name;  // history series name, e.g. "host.mem.used_bytes", "eval/gsm8k"
    QString unit;
    std::vector<double> t;
    std::vector<double> value;
    std::vector<double> min;
    std::vector<double> max;
    std::vector<double> step;  // metric step, -1 for sampled series
    bool decimated = false;
    std::int64_t sourceCount = 0;
    /// Set when the run's recipe overrides this series' kind (analysis.metric_kinds).
    std::optional<metrics::MetricInfo> info;

    bool empty() const { return t.empty(); }
    double lastT() const { return t.empty() ? 0 : t.back(); }
};

/// A shaded phase interval of a run (from PHASE events: each lasts until the next one).
struct PhaseInterval {
    QString phase;
    QString nodeId;
    double t0 = 0;
    double t1 = 0;
};

/// True when `kind` (an event's stored spelling, as EventRow::kind holds it) is `expected`.
inline bool isKind(const QString& kind, telemetry::EventKind expected) {
    return kind == QLatin1String(telemetry::toString(expected));
}

/// One event as the GUI lists it.
struct EventRow {
    double t = 0;
    QString nodeId;
    QString runId;
    QString kind;  // "phase", "nccl_warning", "nccl_error", "stall", "memory_alarm", ...
    QString message;
};

/// Horizontal lines drawn on host-memory plots, all about this run. 0 means "not known".
struct MemoryLines {
    double ramBytes = 0;    // host RAM of the node (smallest over the run's nodes): a reference
    double alarmBytes = 0;  // the daemon's --mem-alarm-bytes (from its memory_alarm events),
                            // else the run's plan (hostAlarmBytes); 0 = no alarm configured
    double healthyLowBytes = 0;   // the plan's band: lowest planned per-node phase peak ...
    double healthyHighBytes = 0;  // ... to the highest (0 without a resolvable recipe)
    double plannedPeakBytes = 0;  // the planner's per-node peak for the run's recipe
    struct PlannedPhase {
        QString phase;     // "load", "rollout", "train", "weight_sync"
        double bytes = 0;  // planned peak per node in that phase (max over nodes)
    };
    std::vector<PlannedPhase> plannedPhases;
    QString source;  // where the values came from, in words
};

/// Per node: host-memory peak of a run and how long it stayed above the alarm line.
struct NodePeakRow {
    QString nodeId;
    double peakBytes = 0;
    double peakT = 0;
    QString phase;  // phase in force at the peak ("" when unknown)
    double secondsAboveAlarm = 0;
};

}  // namespace runplane::gui
