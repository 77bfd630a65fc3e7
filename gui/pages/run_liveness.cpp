#include "gui/pages/run_liveness.h"

#include <QCoreApplication>
#include <QDateTime>

#include <algorithm>

#include "gui/widgets/series_gaps.h"

namespace runplane::gui {

static_assert(kSilentIntervals == kGapIntervals, "one rule for gaps and silent runs");

namespace {

// The snapshot's clock: its newest node sample and the widest sample interval.
RunTelemetryClock clockOf(const RunSnapshot& s) {
    RunTelemetryClock c{s.run.state, s.run.startT, 0, 0};
    for (const std::vector<PointSeries>* group : {&s.hostMemory, &s.gpuMemory, &s.processRss}) {
        for (const PointSeries& p : *group) {
            if (!p.t.empty()) {
                c.lastSampleT = std::max(c.lastSampleT, p.t.back());
                c.sampleInterval = std::max(c.sampleInterval, sampleInterval(p.t));
            }
        }
    }
    return c;
}

}  // namespace

std::optional<double> telemetrySilentSince(const RunSnapshot& s, double now) {
    const RunTelemetryClock c = clockOf(s);
    const double threshold = std::max(kMinSilentSeconds, kSilentIntervals * c.sampleInterval);
    // A snapshot of an older range (the user zoomed into the past) says nothing about now.
    if (s.t1 > 0 && s.t1 + threshold < now) {
        return std::nullopt;
    }
    return silentSince(c, now);
}

QString liveStateText(const RunSnapshot& s, double now) {
    const QString state = stateName(s.run.state);
    return telemetrySilentSince(s, now) ? liveText(state, clockOf(s), now) : state;
}

}  // namespace runplane::gui
