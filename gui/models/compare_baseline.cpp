#include "gui/models/compare_baseline.h"

#include <algorithm>
#include <cmath>

namespace runplane::gui {

namespace {

const MetricValue* findMetric(const CompareRun& run, const QString& metric) {
    for (const MetricValue& m : run.run.metrics) {
        if (m.name == metric) {
            return &m;
        }
    }
    return nullptr;
}

std::optional<double> minus(std::optional<double> a, std::optional<double> b) {
    if (!a || !b) {
        return std::nullopt;
    }
    return *a - *b;
}

}  // namespace

std::optional<double> valueAtStep(const CompareRun& run, const QString& metric, double step) {
    std::optional<double> out;
    for (const PointSeries& s : run.metrics) {
        if (s.name != metric) {
            continue;
        }
        for (size_t i = 0; i < s.value.size() && i < s.step.size(); ++i) {
            if (s.step[i] == step && std::isfinite(s.value[i])) {
                out = s.value[i];  // the last point at that step
            }
        }
    }
    return out;
}

std::vector<MetricDelta> baselineDeltas(const CompareData& data, const QString& metric,
                                        int baseline, std::optional<double> step) {
    std::vector<MetricDelta> out;
    if (baseline < 0 || static_cast<size_t>(baseline) >= data.runs.size()) {
        return out;
    }
    auto lastOf = [&](const CompareRun& r) -> std::optional<double> {
        const MetricValue* m = findMetric(r, metric);
        return m != nullptr && m->lastStep >= 0 ? std::optional<double>(m->last) : std::nullopt;
    };
    auto bestOf = [&](const CompareRun& r) -> std::optional<double> {
        const MetricValue* m = findMetric(r, metric);
        return m != nullptr && m->hasBest() && m->info.direction != metrics::Direction::None
                   ? std::optional<double>(m->best)
                   : std::nullopt;
    };
    auto atOf = [&](const CompareRun& r) -> std::optional<double> {
        return step ? valueAtStep(r, metric, *step) : std::nullopt;
    };
    const CompareRun& base = data.runs[static_cast<size_t>(baseline)];
    for (const CompareRun& r : data.runs) {
        out.push_back(MetricDelta{minus(lastOf(r), lastOf(base)), minus(bestOf(r), bestOf(base)),
                                  minus(atOf(r), atOf(base))});
    }
    return out;
}

CurveXY differenceCurve(const CompareRun& run, const CompareRun& baseline, const QString& metric,
                        CompareAxis axis) {
    const CurveXY r = metricCurve(run, metric, axis);
    const CurveXY b = metricCurve(baseline, metric, axis);
    CurveXY out;
    if (b.x.empty()) {
        return out;
    }
    for (size_t i = 0; i < r.x.size(); ++i) {
        const double x = r.x[i];
        if (x < b.x.front() || x > b.x.back()) {
            continue;
        }
        // First baseline point at or after x; an exact x uses the last point at that x.
        auto hi = std::lower_bound(b.x.begin(), b.x.end(), x);
        const size_t j = static_cast<size_t>(hi - b.x.begin());
        double base = 0;
        if (b.x[j] == x) {
            size_t k = j;
            while (k + 1 < b.x.size() && b.x[k + 1] == x) {
                ++k;
            }
            base = b.y[k];
        } else {
            const double x0 = b.x[j - 1];
            const double x1 = b.x[j];
            base = b.y[j - 1] + (b.y[j] - b.y[j - 1]) * (x - x0) / (x1 - x0);
        }
        out.x.push_back(x);
        out.y.push_back(r.y[i] - base);
    }
    return out;
}

QString formatDelta(std::optional<double> delta) {
    if (!delta || !std::isfinite(*delta)) {
        return QStringLiteral("–");
    }
    if (*delta == 0) {
        return QStringLiteral("0.0000");
    }
    return (*delta > 0 ? QStringLiteral("+") : QStringLiteral("−")) +
           QString::number(std::abs(*delta), 'f', 4);
}

int runIndex(const CompareData& data, const QString& runId) {
    for (size_t i = 0; i < data.runs.size(); ++i) {
        if (data.runs[i].run.id == runId) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

}  // namespace runplane::gui
