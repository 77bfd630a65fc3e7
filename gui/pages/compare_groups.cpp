#include "gui/pages/compare_groups.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "gui/widgets/stable_colors.h"

namespace runplane::gui {

QStringList groupByKeys(const CompareData& data) {
    QStringList keys{kGroupByTags};
    for (const DiffRow& row : recipeDiff(data.runs)) {
        keys << row.field;
    }
    return keys;
}

namespace {

QString groupValue(const CompareRun& run, const QString& key) {
    if (key == kGroupByTags) {
        return run.run.tags.isEmpty()
                   ? QObject::tr("(untagged)")
                   : QObject::tr("tags: %1").arg(run.run.tags.join(QStringLiteral(", ")));
    }
    for (const auto& [field, value] : run.recipeFields) {
        if (field == key) {
            return key + QStringLiteral(" = ") + value;
        }
    }
    return key + QStringLiteral(" = (default)");
}

/// The run's value at x: exact at a point, linear between two, nullopt outside its range.
bool valueAt(const std::vector<double>& xs, const std::vector<double>& ys, double x, double* out) {
    if (xs.empty() || x < xs.front() || x > xs.back()) {
        return false;
    }
    const auto it = std::lower_bound(xs.begin(), xs.end(), x);
    const auto i = static_cast<size_t>(it - xs.begin());
    if (xs[i] == x) {
        *out = ys[i];
        return true;
    }
    const double x0 = xs[i - 1];
    const double x1 = xs[i];
    const double f = (x - x0) / (x1 - x0);
    *out = ys[i - 1] + f * (ys[i] - ys[i - 1]);
    return true;
}

}  // namespace

std::vector<RunGroup> groupRuns(const CompareData& data, const QString& key) {
    std::vector<RunGroup> groups;
    for (size_t i = 0; i < data.runs.size(); ++i) {
        const QString label = groupValue(data.runs[i], key);
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const RunGroup& g) { return g.label == label; });
        if (it == groups.end()) {
            groups.push_back(RunGroup{label, {}});
            it = groups.end() - 1;
        }
        it->runs.push_back(static_cast<int>(i));
    }
    return groups;
}

GroupCurve groupCurve(const CompareData& data, const RunGroup& group, const QString& metric,
                      CompareAxis axis, double weight) {
    struct Curve {
        std::vector<double> x;
        std::vector<double> y;
    };
    std::vector<Curve> curves;
    std::set<double> xs;
    for (int i : group.runs) {
        CurveXY c = metricCurve(data.runs[static_cast<size_t>(i)], metric, axis);
        // Finite points only: a NaN would poison the mean and the band.
        Curve kept;
        const std::vector<double> y = weight > 0 ? emaSmooth(c.x, c.y, weight) : c.y;
        for (size_t k = 0; k < c.x.size(); ++k) {
            if (std::isfinite(c.x[k]) && std::isfinite(y[k]) &&
                (kept.x.empty() || c.x[k] > kept.x.back())) {
                kept.x.push_back(c.x[k]);
                kept.y.push_back(y[k]);
                xs.insert(c.x[k]);
            }
        }
        if (!kept.x.empty()) {
            curves.push_back(std::move(kept));
        }
    }
    GroupCurve out;
    for (double x : xs) {
        double sum = 0;
        double lo = std::numeric_limits<double>::infinity();
        double hi = -std::numeric_limits<double>::infinity();
        int n = 0;
        for (const Curve& c : curves) {
            double v = 0;
            if (valueAt(c.x, c.y, x, &v)) {
                sum += v;
                lo = std::min(lo, v);
                hi = std::max(hi, v);
                ++n;
            }
        }
        if (n == 0) {
            continue;
        }
        out.x.push_back(x);
        out.mean.push_back(sum / n);
        out.min.push_back(lo);
        out.max.push_back(hi);
        out.count.push_back(n);
    }
    return out;
}

std::vector<PlotSeries> groupSeries(const CompareData& data, const QString& key,
                                    const QString& metric, CompareAxis axis, double weight,
                                    std::vector<QColor>* colors) {
    const std::vector<RunGroup> groups = groupRuns(data, key);
    QStringList labels;
    for (const RunGroup& g : groups) {
        labels << g.label;
    }
    const std::vector<QColor> groupColors = stableColors(labels);
    std::vector<PlotSeries> series;
    for (size_t i = 0; i < groups.size(); ++i) {
        GroupCurve c = groupCurve(data, groups[i], metric, axis, weight);
        if (colors != nullptr) {
            colors->push_back(groupColors[i]);
        }
        const size_t n = groups[i].runs.size();
        PlotSeries s{n == 1 ? QObject::tr("%1 (1 run)").arg(groups[i].label)
                            : QObject::tr("%1 (%2 runs)").arg(groups[i].label).arg(n),
                     groupColors[i],
                     std::move(c.x),
                     std::move(c.mean),
                     std::move(c.min),
                     std::move(c.max)};
        s.lineWidth = 2.2;
        series.push_back(std::move(s));
    }
    return series;
}

}  // namespace runplane::gui
