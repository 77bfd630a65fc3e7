#pragma once
// PreflightPanel (issue 47, "Bring-up that proves who joined"): the Cluster page's per-node
// preflight table, the same node x check table `runplanectl dispatch preflight` prints
// (control::preflightAll): one row per daemon with its hostname, the GPU UUIDs it sees, and one
// column per check (net.ifname says which interfaces NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
// select, net.master_addr whether MASTER_ADDR is reachable from that host, ray.installed, ...;
// the cell's tooltip is the check's sentence), and a summary line with the cross-node checks
// (ray.same_version, gpu.distinct). refresh() asks every daemon at once on a background thread;
// the table crosses back to the GUI thread as a value and is applied only if the panel still
// exists.

#include <QAbstractTableModel>
#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

#include "backend/control/dispatch.h"
#include "gui/pages/node_check_panel.h"

namespace runplane::gui {

/// The table as a Qt model: Node, Host, GPUs, then one column per check id (first-seen order).
class PreflightTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column { NodeColumn = 0, HostColumn = 1, GpuColumn = 2, FirstCheckColumn = 3 };
    using QAbstractTableModel::QAbstractTableModel;

    void setTable(control::PreflightTable table);
    const control::PreflightTable& table() const { return m_table; }
    /// The column of a check id, or -1.
    int columnOf(const std::string& checkId) const;
    /// "N node(s): K failed check(s)" then every cluster check that is not PASS.
    QString summary() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    control::PreflightTable m_table;
    std::vector<std::string> m_ids;
};

/// The spec the page asks with: a multi-node run when there is more than one node, and the
/// NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and MASTER_ADDR of this process's environment (what a
/// run launched from here would be given).
control::PreflightSpec clusterPreflightSpec(int nodeCount);

class PreflightPanel : public NodeCheckPanel {
    Q_OBJECT
  public:
    explicit PreflightPanel(QWidget* parent = nullptr);

    /// Asks the daemons at `addresses`; a call while one is in flight is dropped (false).
    bool refresh(const QStringList& addresses, const control::NodeClientOptions& options,
                 const control::PreflightSpec& spec);
    PreflightTableModel* model() const { return m_model; }

    /// Shows `table` (what refresh() applies when the daemons answered).
    void apply(control::PreflightTable table);

  private:
    PreflightTableModel* m_model = nullptr;
};

}  // namespace runplane::gui
