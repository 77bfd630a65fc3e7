#pragma once
// AddClusterDialog (issue 18): "Add cluster…" on the Cluster page. The user lists the daemons
// (one per line: HOST:PORT [NAME [ROLE]]), the CA bundle, an optional client certificate and key
// (mutual TLS), a token FILE (a token is never typed in), a TLS server name override and a
// default telemetry rate. "Test connection" calls GetNode on every node from a worker thread
// (never the GUI thread) and shows each node's answer or its full error. "Save" writes the
// profile as YAML into clusterProfileDir() (the file `runplanectl --cluster NAME` reads) and
// reads it back with the CLI's loader before reporting success.
//
// Ownership: owns its widgets and its SerialWorker (joined in the destructor, bounded by one
// GetNode deadline per node). GUI thread only.

#include <QDialog>
#include <QString>

#include "backend/control/cluster_profile.h"
#include "common/result.h"
#include "gui/models/serial_worker.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace runplane::gui {

class AddClusterDialog : public QDialog {
    Q_OBJECT
  public:
    explicit AddClusterDialog(QWidget* parent = nullptr);
    ~AddClusterDialog() override;

    // The fields (tests fill them like a user would).
    QLineEdit* nameEdit() const { return m_name; }
    QPlainTextEdit* nodesEdit() const { return m_nodes; }
    QLineEdit* caEdit() const { return m_ca; }
    QLineEdit* certEdit() const { return m_cert; }
    QLineEdit* keyEdit() const { return m_key; }
    QLineEdit* tokenFileEdit() const { return m_tokenFile; }
    QLineEdit* serverNameEdit() const { return m_serverName; }
    QDoubleSpinBox* telemetryHzEdit() const { return m_hz; }
    QPushButton* testButton() const { return m_test; }
    QPushButton* saveButton() const { return m_save; }
    /// One row per node of the last test: node, result (tooltip: the whole text).
    QTableWidget* results() const { return m_results; }

    /// The profile the fields describe, with absolute paths; or an error naming the field, e.g.
    /// "Nodes, line 2: 'h' is not HOST:PORT".
    Result<control::ClusterProfile> profile() const;
    /// clusterProfileDir()/NAME.yaml.
    QString profilePath() const;
    /// Writes the profile (replace: overwrite an existing file) and loads it back; the path.
    Result<QString> save(bool replace);

    /// Starts the test on the worker; testFinished() when every node answered or failed.
    void testConnection();
    bool testRunning() const { return m_testRunning; }

  signals:
    void testFinished();
    void saved(const QString& path);

  private:
    void showError(const QString& message);
    void onSaveClicked();

    QLineEdit* m_name = nullptr;
    QPlainTextEdit* m_nodes = nullptr;
    QLineEdit* m_ca = nullptr;
    QLineEdit* m_cert = nullptr;
    QLineEdit* m_key = nullptr;
    QLineEdit* m_tokenFile = nullptr;
    QLineEdit* m_serverName = nullptr;
    QDoubleSpinBox* m_hz = nullptr;
    QPushButton* m_test = nullptr;
    QPushButton* m_save = nullptr;
    QTableWidget* m_results = nullptr;
    QLabel* m_message = nullptr;
    bool m_testRunning = false;
    SerialWorker m_worker;  // declared last: joined first
};

}  // namespace runplane::gui
