#pragma once
// CompareGridView (issue 49): many metrics at once for the compared runs — one panel per metric
// (every eval/* metric, then the chosen others), each with its own y axis and the runs' curves
// as the Compare overlay draws them (compareSeries: colour per run, debiased EMA). Hover and zoom
// are synchronised: hovering one panel draws a cursor at the same x in every panel; a zoom or pan
// of one panel sets the same x-range on the others. GUI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

#include "gui/models/compare_data.h"

class QGridLayout;

namespace runplane::gui {

class TimeSeriesPlot;

/// The grid's metrics: every eval/* metric of `data` (its order), then each of `extra` that some
/// run recorded and is not already listed.
QStringList gridMetrics(const CompareData& data, const QStringList& extra);

class CompareGridView : public QWidget {
    Q_OBJECT
  public:
    explicit CompareGridView(QWidget* parent = nullptr);

    /// Rebuilds the panels (plots are reused, so a redraw keeps each panel's widget).
    void setData(const CompareData& data, const QStringList& extraMetrics, CompareAxis axis,
                 double weight);
    int panelCount() const { return static_cast<int>(m_plots.size()); }
    TimeSeriesPlot* panel(int i) const { return m_plots[static_cast<size_t>(i)]; }
    QStringList metrics() const { return m_metrics; }

  private:
    void syncRange(TimeSeriesPlot* from, double lo, double hi);
    void syncHover(double x);

    QGridLayout* m_grid = nullptr;
    std::vector<TimeSeriesPlot*> m_plots;
    QStringList m_metrics;
};

}  // namespace runplane::gui
