#include "gui/pages/run_liveness.h"

#include <QCoreApplication>
#include <QDateTime>

#include <algorithm>

#include "gui/widgets/series_gaps.h"

namespace runplane::gui {

std::optional<double> telemetrySilentSince(const RunSnapshot& s, double now) {
    if (s.run.state != telemetry::RunState::Running) {
        return std::nullopt;
    }
    double last = 0;
    double interval = 0;
    for (const std::vector<PointSeries>* group : {&s.hostMemory, &s.gpuMemory, &s.processRss}) {
        for (const PointSeries& p : *group) {
            if (!p.t.empty()) {
                last = std::max(last, p.t.back());
                interval = std::max(interval, sampleInterval(p.t));
            }
        }
    }
    const double threshold = std::max(kMinSilentSeconds, kGapIntervals * interval);
    // A snapshot of an older range (the user zoomed into the past) says nothing about now.
    if (s.t1 > 0 && s.t1 + threshold < now) {
        return std::nullopt;
    }
    const double since = last > 0 ? last : s.run.startT;
    if (since <= 0 || now - since <= threshold) {
        return std::nullopt;
    }
    return since;
}

QString liveStateText(const RunSnapshot& s, double now) {
    const QString state = stateName(s.run.state);
    const std::optional<double> silent = telemetrySilentSince(s, now);
    if (!silent) {
        return state;
    }
    const QString at = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(*silent * 1000))
                           .toString(QStringLiteral("HH:mm"));
    return state + QStringLiteral(" · ") +
           QCoreApplication::translate("RunView", "daemon unreachable since %1").arg(at);
}

}  // namespace runplane::gui
