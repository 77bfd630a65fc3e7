#pragma once
// RunsPage (issue 10): the run history list (filter by text and state, sort by any column) and
// the live view of the selected run (RunView). Every history read runs on a HistoryReader
// worker; a running run is re-read once a second while its view follows the stream (only what
// changed since the last read: SeriesCache), a zoom asks for the zoomed range at the plot's
// pixel width. GUI thread only.

#include <QString>

#include <memory>

#include "gui/pages/page.h"

class QAction;
class QComboBox;
class QLineEdit;
class QLabel;
class QTableView;
class QTimer;

namespace runplane::gui {

class ColumnFitter;
class HistoryReader;
class RunAnnotationsBar;
class RunDropImport;
class RunFilterProxy;
class RunListModel;
class RunView;
class SeriesCache;

class RunsPage : public Page {
    Q_OBJECT
  public:
    explicit RunsPage(const QString& historyPath, QWidget* parent = nullptr);
    ~RunsPage() override;

    /// Re-reads the run list now (also done every few seconds).
    void refreshRuns();
    /// Selects a run in the list (and loads its view).
    bool selectRun(const QString& runId);
    QString selectedRunId() const { return m_selected; }

    RunListModel* runsModel() const { return m_runs; }
    RunFilterProxy* runsProxy() const { return m_proxy; }
    RunView* runView() const { return m_view; }
    int snapshotsApplied() const { return m_snapshotsApplied; }
    int runListsApplied() const { return m_listsApplied; }
    /// The banner above the list: empty history ("run `make demo`…") or why the history could
    /// not be read (its path and the SQLite error); "" when hidden.
    QString bannerText() const;

    QAction* standardAction(Action action) const override;
    void saveWorkspace(QSettings& settings) const override;
    void restoreWorkspace(QSettings& settings) override;
    QLineEdit* filterEdit() const { return m_filter; }
    QTableView* table() const { return m_table; }
    /// Tags and note of the selected run (issue 49).
    RunAnnotationsBar* annotations() const { return m_annotations; }
    /// Files dropped on the page are imported (issue 49, run_drop_import.h).
    RunDropImport* dropImport() const { return m_dropImport; }

  private:
    void requestSnapshot(double lo, double hi, int pixels);
    void onSelectionChanged();

    std::unique_ptr<HistoryReader> m_reader;
    RunListModel* m_runs = nullptr;
    RunFilterProxy* m_proxy = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_state = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_banner = nullptr;
    QString m_historyPath;
    RunView* m_view = nullptr;
    RunAnnotationsBar* m_annotations = nullptr;
    RunDropImport* m_dropImport = nullptr;
    QTimer* m_listTimer = nullptr;
    QTimer* m_liveTimer = nullptr;
    ColumnFitter* m_fitter = nullptr;  // the list's columns fitted to its width (issue 46)
    QString m_selected;
    std::shared_ptr<SeriesCache> m_cache;  // the selected run's earlier reads (worker-side)
    QString m_cacheRun;
    double m_rangeLo = 0;
    double m_rangeHi = 0;
    int m_rangePixels = 1200;
    bool m_snapshotInFlight = false;
    int m_snapshotsApplied = 0;
    int m_listsApplied = 0;
    QAction* m_find = nullptr;
};

}  // namespace runplane::gui
