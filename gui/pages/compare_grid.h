#pragma once
// CompareGridView (issue 49): many metrics at once for the compared runs — one panel per metric
// (every eval/* metric, then the chosen others), each with its own y axis and the runs' curves
// as the Compare overlay draws them (compareSeries: colour per run, debiased EMA). Hover and zoom
// are synchronised: hovering one panel draws a cursor at the same x in every panel; a zoom or pan
// of one panel sets the same x-range on the others. Each panel has its own smoothing (issue 49):
// its EMA box either follows the page's weight ("page") or sets the panel's own, kept by metric
// across redraws. GUI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <map>
#include <optional>
#include <vector>

#include "gui/models/compare_data.h"

class QDoubleSpinBox;
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

    /// Rebuilds the panels (plots are reused, so a redraw keeps each panel's widget). `data`
    /// must stay alive until the next setData (a panel's smoothing box redraws from it); `weight`
    /// is the page's EMA weight, used by every panel without a smoothing of its own.
    void setData(const CompareData& data, const QStringList& extraMetrics, CompareAxis axis,
                 double weight);
    int panelCount() const { return static_cast<int>(m_plots.size()); }
    TimeSeriesPlot* panel(int i) const { return m_plots[static_cast<size_t>(i)]; }
    QStringList metrics() const { return m_metrics; }
    /// A panel's own EMA weight (nullopt: it follows the page's); the box shows and sets it.
    void setPanelSmoothing(int i, std::optional<double> weight);
    std::optional<double> panelSmoothing(int i) const;
    /// The weight the panel draws with now.
    double effectiveSmoothing(int i) const;
    /// Every panel's own EMA weight by metric, also of metrics not shown now (the workspace
    /// keeps them, docs/gui.md).
    const std::map<QString, double>& panelWeights() const { return m_ownWeight; }
    /// Replaces them (a weight outside [0, 0.99] or not finite is dropped); the panels redraw.
    void setPanelWeights(const std::map<QString, double>& weights);
    QDoubleSpinBox* smoothingBox(int i) const { return m_boxes[static_cast<size_t>(i)]; }
    /// Grouping (compare_groups.h): "" = a line per run; else every panel draws a mean line with
    /// its min–max band per group. Takes effect on the next setData.
    void setGroupBy(const QString& key) { m_groupBy = key; }

  private:
    void syncRange(TimeSeriesPlot* from, double lo, double hi);
    void syncHover(double x);
    void drawPanel(int i);
    void onBoxChanged(QDoubleSpinBox* box);

    QGridLayout* m_grid = nullptr;
    std::vector<TimeSeriesPlot*> m_plots;
    std::vector<QWidget*> m_cells;         // a panel: its EMA box above its plot
    std::vector<QDoubleSpinBox*> m_boxes;  // minimum = "page" (follow the page's weight)
    QStringList m_metrics;
    std::map<QString, double> m_ownWeight;  // metric -> the panel's own EMA weight
    const CompareData* m_data = nullptr;
    CompareAxis m_axis = CompareAxis::Step;
    double m_pageWeight = 0;
    QString m_groupBy;
};

}  // namespace runplane::gui
