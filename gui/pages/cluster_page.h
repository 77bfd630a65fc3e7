#pragma once
// ClusterPage (issue 2): add/remove daemon addresses, the node table, and a live plot of host
// memory per node read back from the history. Network work goes through ClusterService (worker
// + controller threads), history reads through a HistoryReader (worker); the plot redraws on its
// coalescing timer. GUI thread only; owns its service, reader, model and widgets.

#include <QString>
#include <QStringList>

#include <memory>

#include "gui/pages/page.h"

class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;
class QLabel;

namespace runplane::gui {

class ClusterService;
class HistoryReader;
class NodeTableModel;
class TimeSeriesPlot;
struct NodeRow;

class ClusterPage : public Page {
    Q_OBJECT
  public:
    /// `historyPath`: where the controller stores telemetry (and where the plot reads it).
    explicit ClusterPage(const QString& historyPath, QWidget* parent = nullptr);
    ~ClusterPage() override;

    /// Same as typing the address and pressing Add. Returns false (with a status message) for a
    /// malformed or duplicate address.
    bool addAddress(const QString& address);
    void removeAddress(const QString& address);
    QStringList addresses() const;

    NodeTableModel* model() const { return m_model; }
    TimeSeriesPlot* memoryPlot() const { return m_plot; }
    /// Number of history queries whose answer was applied to the plot (tests).
    int appliedQueries() const { return m_appliedQueries; }
    /// Seconds of history the plot follows (default 10 minutes).
    void setFollowWindow(double seconds);

  signals:
    /// The set of addresses changed (the app saves it in the settings).
    void addressesChanged(const QStringList& addresses);

  private:
    void onNodeChanged(const NodeRow& row);
    void requestPlotData();
    void removeSelected();

    std::unique_ptr<ClusterService> m_service;
    std::unique_ptr<HistoryReader> m_reader;
    NodeTableModel* m_model = nullptr;
    QLineEdit* m_addressEdit = nullptr;
    QPushButton* m_addButton = nullptr;
    QPushButton* m_removeButton = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_summary = nullptr;
    TimeSeriesPlot* m_plot = nullptr;
    QTimer* m_refreshTimer = nullptr;
    double m_followWindow = 600;
    double m_frozenLo = 0;  // visible range while follow mode is off
    double m_frozenHi = 0;
    int m_frozenPixels = 1000;
    bool m_queryInFlight = false;
    bool m_queryWanted = false;
    int m_appliedQueries = 0;
};

}  // namespace runplane::gui
