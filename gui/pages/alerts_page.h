#pragma once
// AlertsPage (issue #48, docs/gui.md "Alerts"): the alert settings as the CLI and the GUI's
// controller use them. The rules file (path editable, default ~/.config/runplane/alerts.yaml):
// its destinations by name and type (never a URL or token) and its rules; per rule the last
// deliveries from the history's alert tables (state, attempts, last result), the sender holding
// the lease and the pending count; "Send test" sends one test message to each destination (as
// `runplanectl alerts test`) and shows per destination what came back, or the error.
// Every file read, history read and send runs on a SerialWorker of the page's own; only values
// cross to the GUI thread. The deliveries are read again every few seconds while the page is
// shown. GUI thread only.

#include <QString>

#include <memory>

#include "gui/models/alerts_data.h"
#include "gui/pages/page.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;
class QTimer;

namespace runplane::gui {

class SerialWorker;

class AlertsPage : public Page {
    Q_OBJECT
  public:
    /// alertsFile empty: the default rules file.
    explicit AlertsPage(const QString& historyPath, const QString& alertsFile = QString(),
                        QWidget* parent = nullptr);
    ~AlertsPage() override;

    /// Reads the rules file (the path in the field) and the deliveries again.
    void reload();
    /// Reads the deliveries again.
    void refreshDeliveries();
    /// What the button does: one test message to each destination.
    void sendTest();
    void setAlertsFile(const QString& path);
    QString alertsFile() const;

    QLabel* fileStatus() const { return m_fileStatus; }
    QLabel* senderStatus() const { return m_senderStatus; }
    QLabel* testStatus() const { return m_testStatus; }
    QTableWidget* destinationsTable() const { return m_destinations; }
    QTableWidget* rulesTable() const { return m_rules; }
    QTableWidget* deliveriesTable() const { return m_deliveries; }
    QPushButton* testButton() const { return m_test; }
    bool isTesting() const { return m_testing; }
    int configsApplied() const { return m_configs; }
    int statusesApplied() const { return m_statuses; }
    int testsDone() const { return m_tests; }
    /// Every cell of the three tables and the three status lines (tests: a secret never shows).
    QString shownText() const;

  protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;

  private:
    void applyConfig(AlertsConfig config);
    void applyStatus(AlertsStatus status);
    void applyTest(AlertsTestOutcome outcome);
    void fillRules();
    void fillDeliveries();

    QString m_historyPath;
    AlertsConfig m_config;
    AlertsStatus m_status;
    bool m_testing = false;
    int m_configs = 0;
    int m_statuses = 0;
    int m_tests = 0;
    QLineEdit* m_path = nullptr;
    QLabel* m_fileStatus = nullptr;
    QLabel* m_senderStatus = nullptr;
    QLabel* m_testStatus = nullptr;
    QLabel* m_deliveriesTitle = nullptr;
    QPushButton* m_test = nullptr;
    QTableWidget* m_destinations = nullptr;
    QTableWidget* m_rules = nullptr;
    QTableWidget* m_deliveries = nullptr;
    QTimer* m_timer = nullptr;
    std::unique_ptr<SerialWorker> m_reads;
    std::unique_ptr<SerialWorker> m_sends;
};

}  // namespace runplane::gui
