#include "gui/pages/compare_delta_series.h"

#include <QObject>

#include "gui/models/compare_baseline.h"
#include "gui/widgets/palette.h"

namespace runplane::gui {

std::vector<PlotSeries> differenceSeries(const CompareData& data, const QString& metric,
                                         CompareAxis axis, int baseline, double weight,
                                         std::vector<QColor>* colors) {
    std::vector<PlotSeries> series;
    if (baseline < 0 || static_cast<size_t>(baseline) >= data.runs.size()) {
        return series;
    }
    const CompareRun& base = data.runs[static_cast<size_t>(baseline)];
    for (size_t i = 0; i < data.runs.size(); ++i) {
        const CompareRun& r = data.runs[i];
        const QColor color = seriesColor(static_cast<int>(i));
        if (colors != nullptr) {
            colors->push_back(color);
        }
        const QString label = r.run.name.isEmpty() ? r.run.id : r.run.name;
        if (static_cast<int>(i) == baseline) {
            const CurveXY b = metricCurve(base, metric, axis);
            if (!b.x.empty()) {
                PlotSeries zero{label + QObject::tr(" (baseline)"),
                                color,
                                {b.x.front(), b.x.back()},
                                {0.0, 0.0},
                                {},
                                {}};
                zero.lineWidth = 1.2;
                series.push_back(std::move(zero));
            }
            continue;
        }
        const CurveXY d = differenceCurve(r, base, metric, axis);
        PlotSeries line{QObject::tr("%1 − baseline").arg(label),        color, d.x,
                        weight > 0 ? emaSmooth(d.x, d.y, weight) : d.y, {},    {}};
        if (weight > 0) {
            line.raw = d.y;  // the hover shows both
        }
        line.lineWidth = 2.0;
        series.push_back(std::move(line));
    }
    return series;
}

}  // namespace runplane::gui
