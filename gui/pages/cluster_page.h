#pragma once
// ClusterPage (issue 2): add/remove daemon addresses, the node table, and a live plot of host
// memory per node read back from the history. Network work goes through ClusterService (worker
// + controller threads), history reads through a HistoryReader (worker); the plot redraws on its
// coalescing timer. GUI thread only; owns its service, reader, model and widgets.
// Issue 18: a cluster picker (profiles from clusterProfileDir() and ones given by path) and
// "Add cluster…" (AddClusterDialog); the chosen cluster's TLS / token settings are used for
// every daemon connection of the GUI (ClusterService and, through setActiveClientOptions, the
// Runs page's log tailer).

#include <QElapsedTimer>
#include <QString>
#include <QStringList>

#include <memory>

#include "common/result.h"
#include "gui/pages/page.h"

class QComboBox;
class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;
class QLabel;

namespace runplane::gui {

class AddClusterDialog;
class ClusterRolesPanel;
class ClusterService;
class HistoryReader;
class NodeOomPanel;
class NodeTableModel;
class RayMembershipPanel;
class PreflightPanel;
class TimeSeriesPlot;
struct NodeRow;

class ClusterPage : public Page {
    Q_OBJECT
  public:
    /// `historyPath`: where the controller stores telemetry (and where the plot reads it).
    /// `alertsFile`: the rules file the controller sends alerts by ("" = the default one).
    explicit ClusterPage(const QString& historyPath, const QString& alertsFile = QString(),
                         QWidget* parent = nullptr);
    ~ClusterPage() override;

    /// Same as typing the address and pressing Add. Returns false (with a status message) for a
    /// malformed or duplicate address.
    bool addAddress(const QString& address);
    void removeAddress(const QString& address);
    QStringList addresses() const;

    /// Switches to a cluster profile (NAME in clusterProfileDir() or a FILE; "" = none: plaintext,
    /// loopback only): drops the current daemons and connects to the profile's nodes with its
    /// TLS / token settings and telemetry rate. An error (naming the file, line and field, or
    /// the token file) leaves everything as it was and is also sent as a status message.
    Status useCluster(const QString& nameOrFile);
    /// The active cluster as given to useCluster ("" when none).
    const QString& currentCluster() const { return m_cluster; }
    /// Profiles outside clusterProfileDir() to list in the picker too (paths).
    void setExtraClusters(const QStringList& paths);
    /// Re-reads clusterProfileDir() into the picker.
    void refreshClusterList();
    QComboBox* clusterPicker() const { return m_clusterCombo; }
    /// Opens "Add cluster…" (non-modal); a saved cluster is listed and switched to.
    AddClusterDialog* openAddClusterDialog();

    NodeTableModel* model() const { return m_model; }
    QTableView* nodeTable() const { return m_table; }
    /// The GUI's controller (ingest and automatic diagnoses).
    ClusterService* service() const { return m_service.get(); }
    TimeSeriesPlot* memoryPlot() const { return m_plot; }
    /// The nodes' OOM events of the last 24 h, alert-level (issue 42).
    NodeOomPanel* oomAlerts() const { return m_oomPanel; }
    /// Issue 47: the Ray membership box (which cluster / GCS each node's raylets joined).
    RayMembershipPanel* membershipPanel() const { return m_membership; }
    /// issue 47: the per-node preflight table (preflight_panel.h).
    PreflightPanel* preflightPanel() const { return m_preflight; }
    /// Memory by role per node and per GPU (issue 43).
    ClusterRolesPanel* rolesPanel() const { return m_roles; }
    /// Number of history queries whose answer was applied to the plot (tests).
    int appliedQueries() const { return m_appliedQueries; }
    /// Seconds of history the plot follows (default 10 minutes).
    void setFollowWindow(double seconds);

  signals:
    /// The set of addresses changed (the app saves it in the settings).
    void addressesChanged(const QStringList& addresses);
    /// useCluster succeeded (the app remembers the choice).
    void clusterChanged(const QString& nameOrFile);
    /// The dialog saved a profile at this path.
    void clusterSaved(const QString& path);

  private:
    void onNodeChanged(const NodeRow& row);
    void relayoutTable();
    void requestPlotData();
    void requestOomAlerts();
    void removeSelected();

    std::unique_ptr<ClusterService> m_service;
    std::unique_ptr<HistoryReader> m_reader;
    NodeTableModel* m_model = nullptr;
    QComboBox* m_clusterCombo = nullptr;
    QPushButton* m_addClusterButton = nullptr;
    QLabel* m_clusterInfo = nullptr;
    QString m_cluster;
    QStringList m_extraClusters;
    QLineEdit* m_addressEdit = nullptr;
    QPushButton* m_addButton = nullptr;
    QPushButton* m_removeButton = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_summary = nullptr;
    TimeSeriesPlot* m_plot = nullptr;
    NodeOomPanel* m_oomPanel = nullptr;
    bool m_oomQueryInFlight = false;
    RayMembershipPanel* m_membership = nullptr;
    PreflightPanel* m_preflight = nullptr;
    ClusterRolesPanel* m_roles = nullptr;
    QTimer* m_refreshTimer = nullptr;
    QTimer* m_layoutTimer = nullptr;
    double m_followWindow = 600;
    double m_frozenLo = 0;  // visible range while follow mode is off
    double m_frozenHi = 0;
    int m_frozenPixels = 1000;
    QElapsedTimer m_lastQuery;  // since the last plot query was sent
    bool m_queryInFlight = false;
    bool m_queryWanted = false;
    int m_appliedQueries = 0;
};

}  // namespace runplane::gui
