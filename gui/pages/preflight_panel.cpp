#include "gui/pages/preflight_panel.h"

#include <QBrush>
#include <QColor>
#include <QLabel>
#include <QTableView>

#include <cstdlib>

#include "gui/pages/off_gui_thread.h"

namespace runplane::gui {
namespace {

QString mark(control::CheckState s) {
    switch (s) {
        case control::CheckState::Pass:
            return QStringLiteral("PASS");
        case control::CheckState::Warn:
            return QStringLiteral("WARN");
        case control::CheckState::Fail:
            return QStringLiteral("FAIL");
        case control::CheckState::Skip:
            return QStringLiteral("skip");
        case control::CheckState::Unspecified:
            break;
    }
    return QStringLiteral("-");
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

void PreflightTableModel::setTable(control::PreflightTable table) {
    beginResetModel();
    m_table = std::move(table);
    m_ids = m_table.checkIds();
    endResetModel();
}

int PreflightTableModel::columnOf(const std::string& checkId) const {
    for (std::size_t i = 0; i < m_ids.size(); ++i) {
        if (m_ids[i] == checkId) {
            return FirstCheckColumn + static_cast<int>(i);
        }
    }
    return -1;
}

QString PreflightTableModel::summary() const {
    const auto failures = m_table.failures();
    QString out = tr("%1 node(s): %2 failed check(s)")
                      .arg(m_table.rows.size())
                      .arg(static_cast<qsizetype>(failures.size()));
    for (const auto& c : m_table.clusterChecks) {
        if (c.status != control::CheckState::Pass) {
            out += QStringLiteral("; %1 %2: %3").arg(q(c.id), mark(c.status), q(c.message));
        }
    }
    return out;
}

int PreflightTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_table.rows.size());
}

int PreflightTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : FirstCheckColumn + static_cast<int>(m_ids.size());
}

QVariant PreflightTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case NodeColumn:
            return tr("Node");
        case HostColumn:
            return tr("Host");
        case GpuColumn:
            return tr("GPUs (UUID)");
        default:
            break;
    }
    const auto i = static_cast<std::size_t>(section - FirstCheckColumn);
    return i < m_ids.size() ? QVariant(q(m_ids[i])) : QVariant();
}

QVariant PreflightTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) {
        return {};
    }
    const control::PreflightRow& row = m_table.rows[static_cast<std::size_t>(index.row())];
    if (index.column() < FirstCheckColumn) {
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole) {
            return {};
        }
        switch (index.column()) {
            case NodeColumn:
                return q(row.address);
            case HostColumn:
                return row.reachable
                           ? q(row.hostname)
                           : (role == Qt::ToolTipRole ? q(row.error) : tr("(daemon lost)"));
            default: {
                QStringList uuids;
                for (const auto& u : row.gpuUuids) {
                    uuids << q(u);
                }
                return row.gpuUuids.empty() ? QVariant(row.reachable ? tr("none") : QString())
                                            : QVariant(QStringLiteral("%1: %2")
                                                           .arg(uuids.size())
                                                           .arg(uuids.join(QStringLiteral(", "))));
            }
        }
    }
    const std::string& id = m_ids[static_cast<std::size_t>(index.column() - FirstCheckColumn)];
    const control::CheckState worst = row.worst(id);
    if (role == Qt::DisplayRole) {
        return mark(worst);
    }
    if (role == Qt::ToolTipRole) {
        QStringList lines;
        for (const auto& c : row.checks) {
            if (c.id == id) {
                lines << QStringLiteral("%1: %2%3")
                             .arg(mark(c.status), q(c.message),
                                  c.detail.empty() ? QString()
                                                   : QStringLiteral(" (%1)").arg(q(c.detail)));
            }
        }
        return lines.join(QLatin1Char('\n'));
    }
    if (role == Qt::BackgroundRole) {
        if (worst == control::CheckState::Fail) {
            return QBrush(QColor(0xf4, 0xc7, 0xc3));
        }
        if (worst == control::CheckState::Warn) {
            return QBrush(QColor(0xfc, 0xe8, 0xb2));
        }
    }
    return {};
}

control::PreflightSpec clusterPreflightSpec(int nodeCount) {
    control::PreflightSpec spec;
    spec.multiNode = nodeCount > 1;
    for (const char* name : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR"}) {
        if (const char* value = std::getenv(name); value != nullptr) {
            spec.env[name] = value;
        }
    }
    if (auto it = spec.env.find("MASTER_ADDR"); it != spec.env.end()) {
        spec.masterAddr = it->second;
    }
    return spec;
}

PreflightPanel::PreflightPanel(QWidget* parent)
    : NodeCheckPanel({tr("Preflight:"), tr("Preflight"),
                      tr("Run every daemon's preflight checks (as `runplanectl dispatch "
                         "preflight` does) with this environment's NCCL_SOCKET_IFNAME, "
                         "GLOO_SOCKET_IFNAME and MASTER_ADDR"),
                      true},
                     parent) {
    m_model = new PreflightTableModel(this);
    setModel(m_model);
}

bool PreflightPanel::refresh(const QStringList& addresses,
                             const control::NodeClientOptions& options,
                             const control::PreflightSpec& spec) {
    if (!beginAsking(addresses.size())) {
        return false;
    }
    // blocking gRPC calls off the GUI thread; the answer comes back by value
    runOffGuiThread(
        this,
        [list = addressList(addresses), options, spec] {
            return control::preflightAll(list, spec, options);
        },
        [](PreflightPanel* panel, auto table) { panel->apply(std::move(table)); });
    return true;
}

void PreflightPanel::apply(control::PreflightTable table) {
    m_model->setTable(std::move(table));
    finishAsking(m_model->summary());
}

}  // namespace runplane::gui
