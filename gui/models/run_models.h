#pragma once
// Item models of the Runs and Compare pages: the run history list (with a filter/sort proxy) and
// the per-node peaks table. Fed with values from history_queries; no I/O here.
// GUI thread only. Checked with QAbstractItemModelTester in tests/gui.

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QString>

#include <vector>

#include "gui/models/run_data.h"

namespace runplane::gui {

/// The run's status line from its newest stored diagnosis (issue 44), "" when it has none:
/// "Diagnosis (stall, 2026-12-06 14:02:11): rank 3 (pid 4103 on gpu-0) in ..., 63 ranks in
/// barrier". The Status and Diagnosis tooltips and the run view's header show it.
QString diagnosisText(const RunRow& run);

/// The history list: one row per run, newest first as the history returns them.
class RunListModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        NameColumn,
        StateColumn,
        RecipeColumn,
        NodesColumn,
        StartColumn,
        DurationColumn,
        PeakColumn,
        EvalColumn,
        CauseColumn,      // why it failed, in one line (as `runplanectl runs` CAUSE)
        DiagnosisColumn,  // the newest stored diagnosis' verdict (`runplanectl runs` DIAGNOSIS)
        ColumnCount
    };
    /// AnnotationRole: the run's tags and note as one searchable text (issue 49).
    enum Role { RunIdRole = Qt::UserRole + 1, StateRole, SortRole, AnnotationRole };

    explicit RunListModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// Replaces the rows, keeping unchanged runs in place (updates in place when the set of run
    /// ids is the same, so selections survive a refresh).
    void setRuns(std::vector<RunRow> runs);
    const RunRow* run(const QString& runId) const;
    int indexOf(const QString& runId) const;
    const std::vector<RunRow>& runs() const { return m_runs; }
    /// Time used for the duration of running runs (tests pin it).
    void setNow(double now) { m_now = now; }

  private:
    QString evalText(const RunRow& run) const;
    std::vector<RunRow> m_runs;
    double m_now = 0;
};

/// Filters the run list by free text (name, recipe, nodes, id) and by state; sorts by SortRole.
class RunFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
  public:
    explicit RunFilterProxy(QObject* parent = nullptr);
    void setText(const QString& text);
    /// "" = every state.
    void setState(const QString& state);

  protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

  private:
    QString m_text;
    QString m_state;
};

/// Per node of one run: peak host memory, when, in which phase, time above the alarm line.
class PeaksModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column { NodeColumn, PeakColumn, WhenColumn, PhaseColumn, AboveColumn, ColumnCount };

    explicit PeaksModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void setPeaks(std::vector<NodePeakRow> peaks, double alarmBytes, double runStartT);

  private:
    std::vector<NodePeakRow> m_peaks;
    double m_alarmBytes = 0;
    double m_runStartT = 0;
};

/// "612.4 GB" / "12.50 GB" / "512 MB": units::formatBytes (decimal units, as the CLI).
QString formatGB(double bytes);
/// "1h 05m", "3m 20s", "12s": units::formatDuration, as the CLI.
QString formatSeconds(double seconds);

}  // namespace runplane::gui
