#pragma once
// ComparePage (issue 10): pick 2–10 runs, overlay one metric by step / relative step / wall time
// with optional EMA smoothing (raw points faint), a legend in each run's colour, the recipe diff
// (only differing fields, highlighted) with peak host memory per run, and export of the plot
// (PNG, SVG) and the data (CSV). History reads run on a HistoryReader worker. GUI thread only.

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

#include "gui/models/compare_data.h"
#include "gui/pages/page.h"

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTimer;

namespace runplane::gui {

class ColumnFitter;
class CompareGridView;
class CompareModel;
class HistoryReader;
class RunFilterProxy;
class RunAnnotationsBar;
class RunDropImport;
class RunListModel;
class TimeSeriesPlot;

class ComparePage : public Page {
    Q_OBJECT
  public:
    explicit ComparePage(const QString& historyPath, QWidget* parent = nullptr);
    ~ComparePage() override;

    void refreshRuns();
    /// Selects these runs in the list (2–10 are compared; others are refused with a message).
    bool selectRuns(const QStringList& runIds);
    void setMetric(const QString& metric);
    void setAxis(CompareAxis axis);
    /// EMA weight in [0, 0.99]; 0 = raw only.
    void setSmoothing(double weight);

    /// Baseline (issue 49): the run every other run's deltas are taken against ("" = none).
    /// Kept by id across selections; applies while that run is among the compared ones.
    void setBaselineRun(const QString& runId);
    QString baselineRunId() const { return m_baselineId; }
    /// The step of the "Δ at step" row (none = no such row).
    void setDeltaStep(std::optional<double> step);
    /// Draws run − baseline curves instead of the overlay (needs a baseline among the runs).
    void setDifferenceCurves(bool on);

    /// Grouping (issue 49): "" = each run its own curve; kGroupByTags or a recipe field path
    /// (compare_groups.h) = one mean curve with a min–max band per group on the overlay.
    void setGroupBy(const QString& key);
    QString groupBy() const { return m_groupBy; }
    /// What the current runs can be grouped by (the box's entries after "(none)").
    QStringList groupByKeys() const;

    /// The metrics grid (issue 49): every eval metric plus these others, one panel each.
    void setGridExtraMetrics(const QStringList& metrics);
    /// Shows the grid tab (true) or the one-metric overlay (false).
    void showGrid(bool grid);
    CompareGridView* grid() const { return m_grid; }
    /// Tags and note of the selected runs (issue 49).
    RunAnnotationsBar* annotations() const { return m_annotations; }
    /// Files dropped on the page are imported (issue 49, run_drop_import.h).
    RunDropImport* dropImport() const { return m_dropImport; }

    bool exportPng(const QString& path);
    bool exportSvg(const QString& path);
    bool exportCsv(const QString& path);

    RunListModel* runsModel() const { return m_runs; }
    CompareModel* compareModel() const { return m_compare; }
    TimeSeriesPlot* plot() const { return m_plot; }
    const CompareData& data() const { return m_data; }
    QString metric() const;
    CompareAxis axis() const;
    double smoothing() const;
    QStringList selectedRunIds() const { return m_selectedIds; }

    QAction* standardAction(Action action) const override;
    void saveWorkspace(QSettings& settings) const override;
    void restoreWorkspace(QSettings& settings) override;
    int comparisonsApplied() const { return m_applied; }
    int runListsApplied() const { return m_listsApplied; }

  private:
    void onSelectionChanged();
    void fillBaselineCombo();
    void fillGroupCombo();
    void updateAnnotations();
    void showRunsMenu(const QPoint& pos);
    void redraw();
    QString exportDialog(const QString& filter, const QString& suffix);

    std::unique_ptr<HistoryReader> m_reader;
    RunListModel* m_runs = nullptr;
    RunFilterProxy* m_proxy = nullptr;
    CompareModel* m_compare = nullptr;
    QLineEdit* m_filter = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_selectionLabel = nullptr;
    QComboBox* m_metricCombo = nullptr;
    QComboBox* m_axisCombo = nullptr;
    QDoubleSpinBox* m_smoothing = nullptr;
    QComboBox* m_baselineCombo = nullptr;
    QSpinBox* m_deltaStep = nullptr;
    QCheckBox* m_diffCurves = nullptr;
    QTabWidget* m_views = nullptr;
    CompareGridView* m_grid = nullptr;
    QLineEdit* m_gridExtra = nullptr;
    QString m_baselineId;
    QComboBox* m_groupCombo = nullptr;
    RunAnnotationsBar* m_annotations = nullptr;
    RunDropImport* m_dropImport = nullptr;
    QString m_groupBy;
    TimeSeriesPlot* m_plot = nullptr;
    QTableView* m_diffView = nullptr;
    QTimer* m_listTimer = nullptr;
    CompareData m_data;
    QStringList m_selectedIds;
    int m_applied = 0;
    int m_listsApplied = 0;
    QStringList m_pendingSelection;    // restored before the run list arrived
    QString m_pendingMetric;           // restored before the comparison arrived
    ColumnFitter* m_fitter = nullptr;  // the run list's columns fitted to its width (issue 46)
    QAction* m_find = nullptr;
};

}  // namespace runplane::gui
