#pragma once
// RayMembershipModel (issue 47): the Cluster page's "Ray membership" table -- which Ray cluster
// each node's raylets belong to, from the same data `runplanectl dispatch preflight` prints
// (control::rayMembership, docs/dispatch.md). One row per raylet: node, raylet pid, node IP, GCS
// address, cluster id, verdict; a node without a raylet, or whose daemon is lost, gets one row
// saying so. The expected cluster is the GCS most nodes joined (on a tie, the one seen first:
// the first address, where the head is listed); a raylet in any other cluster is a stranger, its
// row drawn red. Never does I/O itself. GUI thread only.

#include <QAbstractTableModel>
#include <QString>

#include <vector>

#include "backend/control/dispatch_membership.h"

namespace runplane::gui {

class RayMembershipModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        NodeColumn,
        PidColumn,
        NodeIpColumn,
        GcsColumn,
        ClusterIdColumn,
        VerdictColumn,
        ColumnCount
    };
    enum Role { StrangerRole = Qt::UserRole + 1 };

    explicit RayMembershipModel(QObject* parent = nullptr);

    void setMembership(std::vector<control::NodeMembership> nodes);
    const std::vector<control::NodeMembership>& membership() const { return m_nodes; }
    /// The GCS most nodes joined ("" when no node is in a cluster).
    const QString& expectedGcs() const { return m_expected; }
    /// Rows whose raylet joined another GCS than expectedGcs().
    int strangerCount() const;
    /// One line: "3 node(s): one Ray cluster, GCS ..." or "... 1 stranger(s) in ...".
    QString summary() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  private:
    struct Row {
        QString node;
        QString pid;
        QString nodeIp;
        QString gcs;
        QString clusterId;
        QString verdict;
        bool stranger = false;
        bool lost = false;
    };
    std::vector<control::NodeMembership> m_nodes;
    std::vector<Row> m_rows;
    QString m_expected;
};

}  // namespace runplane::gui
