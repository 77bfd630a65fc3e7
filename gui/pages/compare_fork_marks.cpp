#include "gui/pages/compare_fork_marks.h"

#include <optional>
#include <set>
#include <utility>

#include "gui/models/step_axis.h"
#include "gui/widgets/stable_colors.h"

namespace runplane::gui {

namespace {

const PointSeries* seriesOf(const CompareRun& run, const QString& metric) {
    for (const PointSeries& s : run.metrics) {
        if (s.name == metric && !s.t.empty()) {
            return &s;
        }
    }
    return nullptr;
}

// The fork step on the axis, as metricCurve places a point of that step.
std::optional<double> forkX(const CompareRun& run, const PointSeries& s, std::int64_t forkStep,
                            CompareAxis axis) {
    const auto step = static_cast<double>(forkStep);
    switch (axis) {
        case CompareAxis::Step:
            return step;
        case CompareAxis::RelativeStep: {
            std::optional<double> first;
            for (size_t i = 0; i < s.step.size(); ++i) {
                if (s.step[i] >= 0 && (!first || s.step[i] < *first)) {
                    first = s.step[i];
                }
            }
            return first ? std::optional<double>(step - *first) : std::nullopt;
        }
        case CompareAxis::Rollout:
            return stepOnAxis(step, stepDomain(s.name), StepAxis::Rollout, run.steps);
        case CompareAxis::WallTime: {
            std::optional<std::pair<double, double>> at;  // (step, t) of the last point <= fork
            for (size_t i = 0; i < s.t.size() && i < s.step.size(); ++i) {
                if (s.step[i] >= 0 && s.step[i] <= step && (!at || s.step[i] >= at->first)) {
                    at = std::make_pair(s.step[i], s.t[i]);
                }
            }
            return at ? std::optional<double>(at->second - run.run.startT) : std::nullopt;
        }
    }
    return std::nullopt;
}

}  // namespace

std::vector<EventMarker> forkMarkers(const CompareData& data, const QString& metric,
                                     CompareAxis axis) {
    std::vector<EventMarker> out;
    QStringList ids;
    for (const CompareRun& r : data.runs) {
        ids << r.run.id;
    }
    const std::vector<QColor> colors = stableColors(ids);
    std::set<std::pair<QString, std::int64_t>> seen;
    for (size_t i = 0; i < data.runs.size(); ++i) {
        const CompareRun& run = data.runs[i];
        const PointSeries* s = seriesOf(run, metric);
        if (s == nullptr) {
            continue;
        }
        for (const LineageMark& m : run.lineage) {
            if (m.kind != QLatin1String("fork") || m.step < 0 ||
                !seen.insert({m.runId, m.step}).second) {
                continue;
            }
            const std::optional<double> x = forkX(run, *s, m.step, axis);
            if (!x) {
                continue;
            }
            QString child = m.runId;
            for (const CompareRun& other : data.runs) {
                if (other.run.id == m.runId && !other.run.name.isEmpty()) {
                    child = other.run.name;
                }
            }
            out.push_back(EventMarker{*x, QStringLiteral("fork: ") + child, colors[i]});
        }
    }
    return out;
}

}  // namespace runplane::gui
