#include "gui/models/ray_membership_model.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <map>

namespace runplane::gui {
namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

// The Cluster page's colour for a failed state (node_table_model.cpp).
const QColor kStranger(0xC6, 0x28, 0x28);
const QColor kQuiet(140, 140, 140);

}  // namespace

RayMembershipModel::RayMembershipModel(QObject* parent) : QAbstractTableModel(parent) {}

void RayMembershipModel::setMembership(std::vector<control::NodeMembership> nodes) {
    beginResetModel();
    m_nodes = std::move(nodes);
    m_rows.clear();
    // the expected cluster: the GCS the most nodes joined, the first seen on a tie
    const auto order = control::membershipClusters(m_nodes);
    std::map<std::string, int> members;
    for (const auto& n : m_nodes) {
        std::vector<std::string> seen;
        for (const auto& r : n.raylets) {
            if (std::find(seen.begin(), seen.end(), r.gcsAddress) == seen.end()) {
                seen.push_back(r.gcsAddress);
                ++members[r.gcsAddress];
            }
        }
    }
    std::string expected;
    int best = 0;
    for (const auto& gcs : order) {
        if (members[gcs] > best) {
            best = members[gcs];
            expected = gcs;
        }
    }
    m_expected = q(expected);
    for (const auto& n : m_nodes) {
        if (!n.reachable) {
            m_rows.push_back({q(n.address), QStringLiteral("-"), QStringLiteral("-"),
                              QStringLiteral("-"), QStringLiteral("-"),
                              tr("daemon lost: %1").arg(q(n.error)), false, true});
            continue;
        }
        if (n.raylets.empty()) {
            m_rows.push_back({q(n.address), QStringLiteral("-"), QStringLiteral("-"),
                              QStringLiteral("-"), QStringLiteral("-"),
                              tr("no raylet: not in a Ray cluster"), false, true});
            continue;
        }
        for (const auto& r : n.raylets) {
            Row row{q(n.address),
                    QString::number(r.pid),
                    r.nodeIp.empty() ? QStringLiteral("?") : q(r.nodeIp),
                    r.gcsAddress.empty() ? QStringLiteral("?") : q(r.gcsAddress),
                    r.clusterId.empty() ? QStringLiteral("-") : q(r.clusterId),
                    {},
                    r.gcsAddress != expected,
                    false};
            row.verdict = row.stranger
                              ? tr("stranger: joined GCS %1, not %2").arg(row.gcs, m_expected)
                              : tr("member of GCS %1").arg(row.gcs);
            m_rows.push_back(std::move(row));
        }
    }
    endResetModel();
}

int RayMembershipModel::strangerCount() const {
    return static_cast<int>(
        std::count_if(m_rows.begin(), m_rows.end(), [](const Row& r) { return r.stranger; }));
}

QString RayMembershipModel::summary() const {
    const auto clusters = control::membershipClusters(m_nodes);
    const QString nodes = tr("%1 node(s)").arg(m_nodes.size());
    if (clusters.empty()) {
        return tr("%1: no node is in a Ray cluster").arg(nodes);
    }
    if (clusters.size() == 1) {
        return tr("%1: one Ray cluster, GCS %2").arg(nodes, m_expected);
    }
    return tr("%1: %2 Ray clusters; expected GCS %3, %4 stranger raylet(s) in red")
        .arg(nodes)
        .arg(clusters.size())
        .arg(m_expected)
        .arg(strangerCount());
}

int RayMembershipModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RayMembershipModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RayMembershipModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(m_rows.size()) ||
        index.column() >= ColumnCount) {
        return {};
    }
    const Row& r = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
        case Qt::DisplayRole:
        case Qt::ToolTipRole:
            switch (index.column()) {
                case NodeColumn:
                    return r.node;
                case PidColumn:
                    return r.pid;
                case NodeIpColumn:
                    return r.nodeIp;
                case GcsColumn:
                    return r.gcs;
                case ClusterIdColumn:
                    return r.clusterId;
                case VerdictColumn:
                    return r.verdict;
                default:
                    return {};
            }
        case Qt::ForegroundRole:
            if (r.stranger) {
                return QBrush(kStranger);
            }
            return r.lost ? QVariant(QBrush(kQuiet)) : QVariant();
        case StrangerRole:
            return r.stranger;
        default:
            return {};
    }
}

QVariant RayMembershipModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
        case NodeColumn:
            return tr("Node");
        case PidColumn:
            return tr("Raylet pid");
        case NodeIpColumn:
            return tr("Node IP");
        case GcsColumn:
            return tr("GCS");
        case ClusterIdColumn:
            return tr("Cluster id");
        case VerdictColumn:
            return tr("Membership");
        default:
            return {};
    }
}

}  // namespace runplane::gui
