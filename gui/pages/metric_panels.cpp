#include "gui/pages/metric_panels.h"

#include <QGridLayout>
#include <QScrollArea>
#include <QVBoxLayout>

#include "gui/models/metric_views.h"
#include "gui/pages/plot_builders.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/stable_colors.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {
constexpr int kPanelColumns = 2;
constexpr int kPanelHeight = 260;
}  // namespace

StepPlan showMetricGroup(TimeSeriesPlot& plot, const std::vector<const PointSeries*>& series,
                         metrics::Kind kind, const MetricXAxis& x) {
    QStringList names;
    for (const PointSeries* m : series) {
        names << m->name;
    }
    StepPlan steps = planStepAxis(names, x.axis, x.mapping);
    std::vector<PlotSeries> out;
    int i = 0;
    for (size_t k = 0; k < series.size(); ++k) {
        const PointSeries* m = series[k];
        PlotSeries p{m->name, seriesColor(i++), m->t, m->value, {}, {}};
        if (!x.wallTime) {
            if (!steps.include[k]) {
                continue;
            }
            seriesOnAxis(*m, steps, x.mapping, p.t, p.value);
        }
        p.style = PlotSeries::Style::Line;
        out.push_back(std::move(p));
    }
    const std::string_view unit = metrics::axisLabel(kind);
    plot.setXAxisKind(x.wallTime ? XAxisKind::WallClock : XAxisKind::Number);
    plot.setYIncludesZero(kind == metrics::Kind::Bytes);
    plot.setAxisLabels(x.wallTime ? QString() : steps.xLabel,
                       QString::fromUtf8(unit.data(), static_cast<qsizetype>(unit.size())));
    plot.setSeries(std::move(out));
    return steps;
}

std::vector<PlotSeries> compareSeries(const CompareData& data, const QString& metric,
                                      CompareAxis axis, double weight,
                                      std::vector<QColor>* colors) {
    std::vector<PlotSeries> series;
    // A run's colour follows its id, not the order it was selected in (stable_colors.h).
    QStringList ids;
    for (const CompareRun& r : data.runs) {
        ids << r.run.id;
    }
    const std::vector<QColor> runColors = stableColors(ids);
    for (size_t i = 0; i < data.runs.size(); ++i) {
        const CompareRun& r = data.runs[i];
        const QColor color = runColors[i];
        if (colors != nullptr) {
            colors->push_back(color);
        }
        const CurveXY c = metricCurve(r, metric, axis);
        const QString label = r.run.name.isEmpty() ? r.run.id : r.run.name;
        if (weight > 0) {
            PlotSeries raw{label + QObject::tr(" (raw)"), color, c.x, c.y, {}, {}};
            raw.style = PlotSeries::Style::Points;
            raw.faint = true;
            raw.inLegend = false;
            series.push_back(std::move(raw));
            PlotSeries smooth{label, color, c.x, emaSmooth(c.x, c.y, weight), {}, {}};
            smooth.raw = c.y;  // the hover shows both
            smooth.lineWidth = 2.2;
            series.push_back(std::move(smooth));
        } else {
            PlotSeries raw{label, color, c.x, c.y, {}, {}};
            raw.lineWidth = 1.8;
            series.push_back(std::move(raw));
        }
    }
    return series;
}

MetricPanelsView::MetricPanelsView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    auto* inner = new QWidget(scroll);
    m_grid = new QGridLayout(inner);
    scroll->setWidget(inner);
    layout->addWidget(scroll);
}

void MetricPanelsView::setMetrics(const std::vector<PointSeries>& series, const MetricXAxis& x) {
    const std::vector<MetricPanel> panels = metricPanels(series);
    // Reuse the plots (keeps their zoom across refreshes); add or drop the difference.
    while (m_plots.size() > panels.size()) {
        delete m_plots.back();
        m_plots.pop_back();
    }
    while (m_plots.size() < panels.size()) {
        auto* plot = new TimeSeriesPlot(m_grid->parentWidget());
        plot->setFollowWindow(0);
        plot->setMinimumHeight(kPanelHeight);
        const int at = static_cast<int>(m_plots.size());
        m_grid->addWidget(plot, at / kPanelColumns, at % kPanelColumns);
        m_plots.push_back(plot);
    }
    m_titles.clear();
    for (size_t p = 0; p < panels.size(); ++p) {
        std::vector<const PointSeries*> members;
        for (const PointSeries& s : series) {
            if (panels[p].names.contains(s.name) && metricInfo(s).kind == panels[p].kind) {
                members.push_back(&s);
            }
        }
        m_plots[p]->setTitle(panels[p].title);
        showMetricGroup(*m_plots[p], members, panels[p].kind, x);
        m_titles << panels[p].title;
    }
}

}  // namespace runplane::gui
