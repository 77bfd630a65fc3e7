#include "gui/pages/compare_grid.h"

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "gui/pages/compare_fork_marks.h"
#include "gui/pages/compare_groups.h"
#include "gui/pages/metric_panels.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {
constexpr int kGridColumns = 3;
constexpr int kGridPanelHeight = 260;
constexpr double kFollowPage = -0.01;  // the box's minimum: "page"
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
    m_data = &data;
    m_axis = axis;
    m_pageWeight = weight;
    m_metrics = gridMetrics(data, extraMetrics);
    while (m_plots.size() > static_cast<size_t>(m_metrics.size())) {
        delete m_cells.back();
        m_cells.pop_back();
        m_plots.pop_back();
        m_boxes.pop_back();
    }
    while (m_plots.size() < static_cast<size_t>(m_metrics.size())) {
        auto* cell = new QWidget(m_grid->parentWidget());
        auto* cellLayout = new QVBoxLayout(cell);
        cellLayout->setContentsMargins(0, 0, 0, 0);
        cellLayout->setSpacing(0);
        auto* top = new QHBoxLayout;
        top->addStretch(1);
        top->addWidget(new QLabel(tr("EMA:"), cell));
        auto* box = new QDoubleSpinBox(cell);
        box->setRange(kFollowPage, 0.99);
        box->setSingleStep(0.1);
        box->setDecimals(2);
        box->setSpecialValueText(tr("page"));
        box->setValue(kFollowPage);
        box->setToolTip(tr("This panel's EMA weight (docs/gui.md); \"page\" follows the page's"));
        top->addWidget(box);
        cellLayout->addLayout(top);
        auto* plot = new TimeSeriesPlot(cell);
        plot->setFollowWindow(0);
        plot->setMinimumHeight(kGridPanelHeight);
        plot->setLegendVisible(m_plots.empty());  // one legend (the first panel's) is enough
        cellLayout->addWidget(plot, 1);
        const int at = static_cast<int>(m_plots.size());
        m_grid->addWidget(cell, at / kGridColumns, at % kGridColumns);
        connect(plot, &TimeSeriesPlot::visibleRangeChanged, this,
                [this, plot](double lo, double hi, int) { syncRange(plot, lo, hi); });
        connect(plot, &TimeSeriesPlot::hovered, this, &CompareGridView::syncHover);
        connect(box, &QDoubleSpinBox::valueChanged, this, [this, box] { onBoxChanged(box); });
        m_cells.push_back(cell);
        m_plots.push_back(plot);
        m_boxes.push_back(box);
    }
    for (int i = 0; i < static_cast<int>(m_metrics.size()); ++i) {
        QDoubleSpinBox* box = m_boxes[static_cast<size_t>(i)];
        const auto own = m_ownWeight.find(m_metrics[i]);
        const QSignalBlocker block(box);
        box->setValue(own != m_ownWeight.end() ? own->second : kFollowPage);
        drawPanel(i);
    }
}

void CompareGridView::drawPanel(int i) {
    TimeSeriesPlot* plot = m_plots[static_cast<size_t>(i)];
    const QString& metric = m_metrics[i];
    plot->setTitle(metric);
    plot->setXAxisKind(m_axis == CompareAxis::WallTime ? XAxisKind::ElapsedSeconds
                                                       : XAxisKind::Number);
    plot->setYIncludesZero(false);
    plot->setAxisLabels(compareXLabel(*m_data, metric, m_axis), metric);
    plot->setSeries(m_groupBy.isEmpty()
                        ? compareSeries(*m_data, metric, m_axis, effectiveSmoothing(i))
                        : groupSeries(*m_data, m_groupBy, metric, m_axis, effectiveSmoothing(i)));
    plot->setEvents(forkMarkers(*m_data, metric, m_axis));
    plot->setFollowing(true);
}

void CompareGridView::onBoxChanged(QDoubleSpinBox* box) {
    const auto it = std::find(m_boxes.begin(), m_boxes.end(), box);
    if (it == m_boxes.end() || m_data == nullptr) {
        return;
    }
    const int i = static_cast<int>(it - m_boxes.begin());
    if (box->value() <= kFollowPage) {
        m_ownWeight.erase(m_metrics[i]);
    } else {
        m_ownWeight[m_metrics[i]] = box->value();
    }
    drawPanel(i);
}

void CompareGridView::setPanelSmoothing(int i, std::optional<double> weight) {
    m_boxes[static_cast<size_t>(i)]->setValue(weight ? *weight : kFollowPage);  // redraws
}

void CompareGridView::setPanelWeights(const std::map<QString, double>& weights) {
    m_ownWeight.clear();
    for (const auto& [metric, w] : weights) {
        if (std::isfinite(w) && w >= 0 && w <= 0.99) {
            m_ownWeight[metric] = w;
        }
    }
    if (m_data == nullptr) {
        return;  // the next setData shows them
    }
    for (int i = 0; i < static_cast<int>(m_metrics.size()); ++i) {
        const auto own = m_ownWeight.find(m_metrics[i]);
        const QSignalBlocker block(m_boxes[static_cast<size_t>(i)]);
        m_boxes[static_cast<size_t>(i)]->setValue(own != m_ownWeight.end() ? own->second
                                                                           : kFollowPage);
        drawPanel(i);
    }
}

std::optional<double> CompareGridView::panelSmoothing(int i) const {
    const auto it = m_ownWeight.find(m_metrics[i]);
    return it == m_ownWeight.end() ? std::nullopt : std::optional<double>(it->second);
}

double CompareGridView::effectiveSmoothing(int i) const {
    return panelSmoothing(i).value_or(m_pageWeight);
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
