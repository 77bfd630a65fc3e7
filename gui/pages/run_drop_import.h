#pragma once
// RunDropImport (issue 49): files dropped on the Runs or Compare page are imported into the
// history as `runplanectl import-runs PATH…` does (db/imports: findImportSources,
// readImportSource, storeImportedRun; docs/imports.md): TensorBoard event files or folders,
// W&B offline run folders, CSV and JSON-lines files. The import runs on the page's HistoryReader
// worker (the paths go to it as values, one line per run or error comes back as values); the
// report label says what was imported, what was already there, and each error with its file.
// GUI thread only.

#include <QObject>
#include <QString>
#include <QStringList>

class QLabel;
class QMimeData;
class QWidget;

namespace runplane::gui {

class HistoryReader;

class RunDropImport : public QObject {
    Q_OBJECT
  public:
    /// Makes `target` accept drops of local files (an event filter on it); `reader` must outlive
    /// this object. The report label is a child of `target`, for the page to place.
    RunDropImport(QWidget* target, HistoryReader* reader);

    /// The local files and folders of a drop ("" entries and non-file URLs left out).
    static QStringList localPaths(const QMimeData* mime);
    /// Imports these paths (what a drop does).
    void importPaths(const QStringList& paths);

    QLabel* reportLabel() const { return m_report; }
    /// The last import's lines ("imported …", "already imported: …", or an error naming the
    /// file), and how many imports finished.
    QStringList lastReport() const { return m_lines; }
    bool lastOk() const { return m_ok; }
    int importsDone() const { return m_done; }

  signals:
    /// An import finished: `ok` false when some path or run failed. The page re-reads its list.
    void imported(const QStringList& lines, bool ok);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    QWidget* m_target;
    HistoryReader* m_reader;
    QLabel* m_report = nullptr;
    QStringList m_lines;
    bool m_ok = true;
    int m_seq = 0;
    int m_done = 0;
};

}  // namespace runplane::gui
