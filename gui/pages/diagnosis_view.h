#pragma once
// DiagnosisView: the Diagnosis tab of the run view (issue #44, docs/gui.md "Diagnosis tab"). Shows
// the run's diagnoses stored in the history (newest first, one chosen in a list): the verdict's
// headline, its findings and stack groups, and per node the NCCL RAS state, the stuck ranks,
// the top frames of each process's stack and the kernel log lines, or why a piece is missing.
// "Diagnose now" asks the run's daemons (control::diagnoseAcross) and stores the answer with the
// run (control::storeDiagnosis) on a worker thread; the button is off and a line says so while
// it runs, and a node that could not be asked is shown in red with the reason.
// Reads and the diagnosis run on two SerialWorkers of its own (a diagnosis of up to ~14 s never
// holds up a read); only values cross to the GUI thread. GUI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>

#include "gui/models/diagnosis_data.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTreeWidget;

namespace runplane::gui {

class SerialWorker;

class DiagnosisView : public QWidget {
    Q_OBJECT
  public:
    explicit DiagnosisView(QWidget* parent = nullptr);
    ~DiagnosisView() override;

    void setHistoryPath(const QString& path);
    /// The run shown (empty: none). `addresses` are its daemons as the run view knows them
    /// (empty entries are skipped; none at all: the history's). Reads its stored diagnoses.
    void setRun(const QString& runId, const QStringList& addresses);
    /// Reads the run's stored diagnoses again (also done each time the tab is shown).
    void reload();
    /// What the button does: asks the run's nodes and stores the diagnosis.
    void diagnoseNow();

    QString runId() const { return m_runId; }
    bool isDiagnosing() const { return m_diagnosing; }
    int storedCount() const { return static_cast<int>(m_stored.items.size()); }
    int loadsApplied() const { return m_loads; }
    int diagnosesDone() const { return m_done; }
    QPushButton* diagnoseButton() const { return m_button; }
    QComboBox* storedList() const { return m_list; }
    QString statusText() const;
    QString headlineText() const;
    QTreeWidget* findingsTree() const { return m_findings; }
    QTreeWidget* nodesTree() const { return m_nodes; }
    /// Every text of the findings and nodes trees, one item per line, indented by depth (tests,
    /// copy to an issue).
    QString shownText() const;

  signals:
    /// A diagnosis was asked and came back (stored or not).
    void diagnosed(const QString& runId);

  protected:
    void showEvent(QShowEvent* event) override;

  private:
    void applyStored(StoredDiagnoses stored);
    void applyOutcome(DiagnoseOutcome outcome);
    void showChosen();
    void showDiagnosis(const diagnosis::RunDiagnosis& d);
    void showEmpty(const QString& message);
    void setStatus(const QString& text, bool error);

    QString m_historyPath;
    QString m_runId;
    QStringList m_addresses;
    StoredDiagnoses m_stored;
    std::optional<diagnosis::RunDiagnosis> m_unstored;  // asked but could not be stored
    bool m_diagnosing = false;
    QString m_diagnosingRun;
    int m_loads = 0;
    int m_done = 0;
    QPushButton* m_button = nullptr;
    QLabel* m_status = nullptr;
    QComboBox* m_list = nullptr;
    QLabel* m_headline = nullptr;
    QTreeWidget* m_findings = nullptr;
    QTreeWidget* m_nodes = nullptr;
    std::unique_ptr<SerialWorker> m_reads;
    std::unique_ptr<SerialWorker> m_asks;
};

}  // namespace runplane::gui
