#pragma once
// RunView: the live view of one run (right side of the Runs page). Draws a RunSnapshot:
//   Memory tab: host memory per node (bands, RAM/alarm/healthy/planned lines, phases, alarm
//               events) with the peaks table beside it; GPU memory per GPU; process-tree RSS.
//   NCCL tab:   version-gate verdict, probe busbw vs expected, warnings/errors/stalls on a
//   timeline. Metrics tab: the eval scores or any one series, by step or wall time, one unit per
//   axis. Panels tab: every series in automatic panels by prefix and kind. Log tab: the run's
//   stdout/stderr tail from its node (LogTailer), with a line filter. Diagnosis tab: the run's
//   stored diagnoses and "Diagnose now" (DiagnosisView, issue #44).
// It asks its owner for data (rangeRequested) and never reads the history itself.
// GUI thread only; owns its widgets and models.

#include <QString>
#include <QWidget>

#include <deque>
#include <memory>

#include "gui/models/run_data.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableView;
class QTableWidget;
class QTabWidget;

namespace runplane::gui {

class DiagnosisView;
class LogTailer;
class MetricPanelsView;
class PeaksModel;
class RunRoleTabs;
class TimeSeriesPlot;

class RunView : public QWidget {
    Q_OBJECT
  public:
    explicit RunView(QWidget* parent = nullptr);
    ~RunView() override;
    /// The history whose stored run output the Log tab shows when the daemon cannot answer.
    void setHistoryPath(const QString& path);

    /// Shows a snapshot. A snapshot of another run resets zoom and follow mode.
    void setSnapshot(std::shared_ptr<const RunSnapshot> snapshot);
    void clear(const QString& message);
    std::shared_ptr<const RunSnapshot> snapshot() const { return m_snapshot; }
    bool isFollowing() const;

    TimeSeriesPlot* hostMemoryPlot() const { return m_hostPlot; }
    TimeSeriesPlot* gpuMemoryPlot() const { return m_gpuPlot; }
    TimeSeriesPlot* rssPlot() const { return m_rssPlot; }
    TimeSeriesPlot* ncclPlot() const { return m_ncclPlot; }
    TimeSeriesPlot* metricsPlot() const { return m_metricsPlot; }
    MetricPanelsView* metricPanels() const { return m_panels; }
    PeaksModel* peaksModel() const { return m_peaks; }
    QTabWidget* tabs() const { return m_tabs; }
    DiagnosisView* diagnosisView() const { return m_diagnosis; }
    /// The header's text (rich text): name, state, recipe, ..., the diagnosis line (issue 44).
    QString headerText() const;
    /// Memory by role and phase lanes (run_role_tabs.h).
    RunRoleTabs* roleTabs() const { return m_roleTabs; }
    /// Shows the named metric (series name, or "eval/*" for the eval scores) in the Metrics tab;
    /// before the run's series arrive it is kept and applied when they do.
    void showMetric(const QString& name);
    QString metricKey() const;
    /// The Metrics/Panels x axis: 0 rollout, 1 optimizer step, 2 wall time.
    int metricAxisIndex() const;
    void setMetricAxisIndex(int index);
    /// Lines currently shown in the log panel (after the filter).
    QString logText() const;
    void setLogFilter(const QString& filter);

  signals:
    /// The user zoomed/panned (or asked to follow again: lo >= hi): re-query this range.
    void rangeRequested(double lo, double hi, int pixels);

  private:
    /// resetView: follow the data again (a new run or another metric); a refresh of the same
    /// metric keeps the user's zoom/pan.
    void applyMetrics(bool resetView = true);
    void applyNccl();
    void startLogTail();
    void appendLog(const QString& text);
    void rebuildLog();

    std::shared_ptr<const RunSnapshot> m_snapshot;
    QLabel* m_header = nullptr;
    QTabWidget* m_tabs = nullptr;
    TimeSeriesPlot* m_hostPlot = nullptr;
    TimeSeriesPlot* m_gpuPlot = nullptr;
    TimeSeriesPlot* m_rssPlot = nullptr;
    PeaksModel* m_peaks = nullptr;
    QTableView* m_peaksView = nullptr;
    QLabel* m_ncclVerdict = nullptr;
    QTableWidget* m_probes = nullptr;
    QTableWidget* m_ncclEvents = nullptr;
    TimeSeriesPlot* m_ncclPlot = nullptr;
    QComboBox* m_metricCombo = nullptr;
    QComboBox* m_metricAxis = nullptr;
    TimeSeriesPlot* m_metricsPlot = nullptr;
    MetricPanelsView* m_panels = nullptr;
    QComboBox* m_logNode = nullptr;
    QComboBox* m_logStream = nullptr;
    QLineEdit* m_logFilter = nullptr;
    QPlainTextEdit* m_log = nullptr;
    LogTailer* m_tailer = nullptr;
    DiagnosisView* m_diagnosis = nullptr;
    RunRoleTabs* m_roleTabs = nullptr;
    std::deque<QString> m_logLines;
    QString m_partialLine;
    QString m_runId;
    QString m_pendingMetric;  // showMetric() before the series arrived
};

}  // namespace runplane::gui
