#include "gui/pages/compare_grid.h"

#include <QGridLayout>
#include <QScrollArea>
#include <QVBoxLayout>

#include "gui/pages/metric_panels.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {
constexpr int kGridColumns = 3;
constexpr int kGridPanelHeight = 260;
}  // namespace

QStringList gridMetrics(const CompareData& data, const QStringList& extra) {
    QStringList out;
    for (const QString& m : data.metricNames) {
        if (m.startsWith(QStringLiteral("eval/"))) {
            out << m;
        }
    }
    for (const QString& m : extra) {
        if (!out.contains(m) && data.metricNames.contains(m)) {
            out << m;
        }
    }
    return out;
}

CompareGridView::CompareGridView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    auto* inner = new QWidget(scroll);
    m_grid = new QGridLayout(inner);
    scroll->setWidget(inner);
    layout->addWidget(scroll);
}

void CompareGridView::setData(const CompareData& data, const QStringList& extraMetrics,
                              CompareAxis axis, double weight) {
    m_metrics = gridMetrics(data, extraMetrics);
    while (m_plots.size() > static_cast<size_t>(m_metrics.size())) {
        delete m_plots.back();
        m_plots.pop_back();
    }
    while (m_plots.size() < static_cast<size_t>(m_metrics.size())) {
        auto* plot = new TimeSeriesPlot(m_grid->parentWidget());
        plot->setFollowWindow(0);
        plot->setMinimumHeight(kGridPanelHeight);
        plot->setLegendVisible(m_plots.empty());  // one legend (the first panel's) is enough
        const int at = static_cast<int>(m_plots.size());
        m_grid->addWidget(plot, at / kGridColumns, at % kGridColumns);
        connect(plot, &TimeSeriesPlot::visibleRangeChanged, this,
                [this, plot](double lo, double hi, int) { syncRange(plot, lo, hi); });
        connect(plot, &TimeSeriesPlot::hovered, this, &CompareGridView::syncHover);
        m_plots.push_back(plot);
    }
    for (qsizetype i = 0; i < m_metrics.size(); ++i) {
        TimeSeriesPlot* plot = m_plots[static_cast<size_t>(i)];
        const QString& metric = m_metrics[i];
        plot->setTitle(metric);
        plot->setXAxisKind(axis == CompareAxis::WallTime ? XAxisKind::ElapsedSeconds
                                                         : XAxisKind::Number);
        plot->setYIncludesZero(false);
        plot->setAxisLabels(compareXLabel(data, metric, axis), metric);
        plot->setSeries(compareSeries(data, metric, axis, weight));
        plot->setFollowing(true);
    }
}

void CompareGridView::syncRange(TimeSeriesPlot* from, double lo, double hi) {
    for (TimeSeriesPlot* p : m_plots) {
        if (p != from) {
            p->setVisibleRange(lo, hi);  // does not emit: no echo
        }
    }
}

void CompareGridView::syncHover(double x) {
    for (TimeSeriesPlot* p : m_plots) {
        p->setCursorX(x);
    }
}

}  // namespace runplane::gui
