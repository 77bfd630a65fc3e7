#pragma once
// Metric plots that keep one unit per axis (common/metrics/metric_kind.h):
//   showMetricGroup  draws series of one kind on a plot (the eval plot: score kind only), the
//                    y axis labelled with the kind; shared by the Runs page and the reports.
//   MetricPanelsView a grid of automatic panels, one per prefix group and kind, as W&B lays out
//                    its automatic panels ("eval · score", "eval · tokens", "perf · time", ...).
// GUI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

#include "common/metrics/metric_kind.h"
#include "gui/models/compare_data.h"
#include "gui/models/series_data.h"
#include "gui/models/step_axis.h"
#include "gui/widgets/plot_types.h"

class QGridLayout;

namespace runplane::gui {

class TimeSeriesPlot;

/// The x axis of a run's metric plots: wall time, or steps on the asked step axis converted by
/// the run's step mapping (gui/models/step_axis.h).
struct MetricXAxis {
    bool wallTime = false;
    StepAxis axis = StepAxis::Rollout;
    StepMapping mapping;
};

/// Draws `series` (one kind) on `x`; returns where the steps landed (label, series left out).
StepPlan showMetricGroup(TimeSeriesPlot& plot, const std::vector<const PointSeries*>& series,
                         metrics::Kind kind, const MetricXAxis& x);

/// The Compare overlay of one metric: per run (colour i) the raw points faint under the
/// spacing-aware debiased EMA (raw kept for the hover), or the raw line when weight is 0.
/// `colors` receives each run's colour. Shared by the Compare page and the headless comparison.
std::vector<PlotSeries> compareSeries(const CompareData& data, const QString& metric,
                                      CompareAxis axis, double weight,
                                      std::vector<QColor>* colors = nullptr);

class MetricPanelsView : public QWidget {
    Q_OBJECT
  public:
    explicit MetricPanelsView(QWidget* parent = nullptr);

    /// Rebuilds the grid from the run's metric series (distinct names by panel).
    void setMetrics(const std::vector<PointSeries>& series, const MetricXAxis& x);
    int panelCount() const { return static_cast<int>(m_plots.size()); }
    TimeSeriesPlot* panel(int i) const { return m_plots[static_cast<size_t>(i)]; }
    QStringList titles() const { return m_titles; }

  private:
    QGridLayout* m_grid = nullptr;
    std::vector<TimeSeriesPlot*> m_plots;
    QStringList m_titles;
};

}  // namespace runplane::gui
