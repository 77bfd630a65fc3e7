#include "gui/models/node_table_model.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>

#include <algorithm>

namespace runplane::gui {

namespace {

QString gb(double bytes) {
    return QStringLiteral("%1 GB").arg(bytes / 1e9, 0, 'f', 1);
}

QColor stateColor(const QString& state) {
    if (state == QLatin1String("streaming")) {
        return QColor(0x2E, 0x7D, 0x32);
    }
    if (state == QLatin1String("failed") || state == QLatin1String("backoff")) {
        return QColor(0xC6, 0x28, 0x28);
    }
    return QColor(0x8A, 0x6D, 0x00);
}

// A memory value is stale once its daemon no longer streams (back-off, failed, stopped, a
// reconnect in progress): it is the last one measured, shown greyed with its age (issue 46).
bool staleMemory(const NodeRow& r) {
    return r.usedBytes >= 0 && r.state != QLatin1String("streaming");
}

// The GPUs cell says in a few words why a node has none; the daemon's whole reason (a loader's
// message, an NVML return code) is the cell's tooltip (issue 46). First matching row wins.
struct GpuReason {
    const char* contains;  // in the daemon's gpus_unavailable_reason
    const char* shown;
};
constexpr GpuReason kGpuReasons[] = {
    {"GPU telemetry disabled", "none (telemetry off)"}, {"cannot load", "none (no NVIDIA driver)"},
    {"reports 0 devices", "none (0 devices)"},          {"nvmlInit", "none (NVML failed to start)"},
    {"NVML unavailable", "none (NVML error)"},          {"no GPU found", "none"},
};

QString gpuCellText(const QString& gpuText) {
    static const QString kNone = QStringLiteral("none: ");
    if (!gpuText.startsWith(kNone)) {
        return gpuText;  // "8 × H100 80GB", "none"
    }
    for (const GpuReason& r : kGpuReasons) {
        if (gpuText.contains(QLatin1String(r.contains))) {
            return QString::fromLatin1(r.shown);
        }
    }
    return QStringLiteral("none (see tooltip)");
}

QString ageText(double seconds) {
    if (seconds < 90) {
        return QStringLiteral("%1 s").arg(std::max(0, static_cast<int>(seconds)));
    }
    if (seconds < 90 * 60) {
        return QStringLiteral("%1 min").arg(static_cast<int>(seconds / 60));
    }
    return QStringLiteral("%1 h").arg(seconds / 3600, 0, 'f', 1);
}

double nowSeconds() {
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
}

}  // namespace

NodeTableModel::NodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int NodeTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int NodeTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case AddressColumn:
            return tr("Address");
        case StateColumn:
            return tr("State");
        case SecurityColumn:
            return tr("Connection");
        case HostColumn:
            return tr("Host");
        case CpuColumn:
            return tr("CPU");
        case RamColumn:
            return tr("RAM");
        case MemUsedColumn:
            return tr("Memory used");
        case GpuColumn:
            return tr("GPUs");
        case NcclColumn:
            return tr("NCCL");
        case DaemonColumn:
            return tr("Daemon");
        case KernelColumn:
            return tr("Kernel");
        default:
            return {};
    }
}

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.parent().isValid() || index.row() < 0 ||
        index.row() >= rowCount() || index.column() < 0 || index.column() >= ColumnCount) {
        return {};
    }
    const NodeRow& r = m_rows[static_cast<size_t>(index.row())];
    switch (role) {
        case AddressRole:
            return r.address;
        case NodeIdRole:
            return r.nodeId;
        case StateRole:
            return r.state;
        case Qt::ToolTipRole:
            if (index.column() == MemUsedColumn && staleMemory(r) && r.lastSampleT > 0) {
                return tr("last measured at %1; the daemon is %2, so this value is not current")
                    .arg(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(r.lastSampleT * 1000))
                             .toString(QStringLiteral("HH:mm:ss")),
                         r.state);
            }
            if (!r.error.isEmpty() || index.column() == StateColumn ||
                index.column() == SecurityColumn) {
                QString tip = r.address + QStringLiteral(" — ") + r.state;
                if (!r.security.isEmpty()) {
                    tip += QStringLiteral("\n") + tr("connection: %1").arg(r.security);
                }
                if (!r.error.isEmpty()) {
                    tip += QStringLiteral("\n") + r.error;  // whole, never elided
                    if (r.security.startsWith(QLatin1String("plaintext")) && r.nodeId.isEmpty()) {
                        tip += QStringLiteral("\n") +
                               tr("(a daemon that requires TLS closes plaintext connections: "
                                  "choose its cluster, or Add cluster… with its CA)");
                    }
                }
                return tip;
            }
            if (index.column() == GpuColumn) {
                return r.gpuText;  // whole
            }
            if (index.column() == NcclColumn) {
                return data(index, Qt::DisplayRole);
            }
            if (index.column() == KernelColumn) {
                return r.kernel;  // whole uname
            }
            return {};
        case Qt::ForegroundRole:
            if (index.column() == StateColumn) {
                return QBrush(stateColor(r.state));
            }
            if (index.column() == MemUsedColumn && staleMemory(r)) {
                return QBrush(QColor(140, 140, 140));
            }
            return {};
        case Qt::TextAlignmentRole:
            if (index.column() == RamColumn || index.column() == MemUsedColumn) {
                return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
            }
            return {};
        case SortRole:
            if (index.column() == RamColumn) {
                return r.ramBytes;
            }
            if (index.column() == MemUsedColumn) {
                return r.usedBytes;
            }
            return data(index, Qt::DisplayRole);
        case Qt::DisplayRole:
            break;
        default:
            return {};
    }
    switch (index.column()) {
        case AddressColumn:
            return r.address;
        case StateColumn:
            return r.error.isEmpty() ? r.state : r.state + QStringLiteral(": ") + r.error;
        case SecurityColumn:
            return r.security;
        case HostColumn:
            return r.hostname;
        case CpuColumn:
            return r.cpuCores > 0 ? QStringLiteral("%1 × %2").arg(r.cpuCores).arg(r.cpuArch)
                                  : QString();
        case RamColumn:
            return r.ramBytes > 0 ? gb(r.ramBytes) : QString();
        case MemUsedColumn:
            if (staleMemory(r)) {
                return r.lastSampleT > 0
                           ? tr("%1 (stale, %2 ago)")
                                 .arg(gb(r.usedBytes), ageText(nowSeconds() - r.lastSampleT))
                           : tr("%1 (stale)").arg(gb(r.usedBytes));
            }
            return r.usedBytes >= 0 ? gb(r.usedBytes) : QString();
        case GpuColumn:
            return gpuCellText(r.gpuText);
        case NcclColumn:
            return r.nccl;
        case DaemonColumn:
            return r.daemonVersion;
        case KernelColumn:
            // "Linux 6.8.0-1015-gcp": system and release; the build line is in the tooltip.
            return r.kernel.section(QLatin1Char(' '), 0, 1);
        default:
            return {};
    }
}

int NodeTableModel::indexOf(const QString& address) const {
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].address == address) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

void NodeTableModel::upsert(const NodeRow& row) {
    const int i = indexOf(row.address);
    if (i < 0) {
        const int n = rowCount();
        beginInsertRows({}, n, n);
        m_rows.push_back(row);
        endInsertRows();
        return;
    }
    NodeRow& existing = m_rows[static_cast<size_t>(i)];
    const double used = existing.usedBytes;
    const double usedT = existing.lastSampleT;
    const NodeRow previous = existing;
    existing = row;
    if (existing.security.isEmpty()) {
        existing.security = previous.security;
    }
    if (existing.usedBytes < 0) {
        existing.usedBytes = used;
        existing.lastSampleT = usedT;
    }
    // An update without inventory (e.g. a reconnect in progress) keeps what we knew.
    if (existing.nodeId.isEmpty()) {
        const QString state = existing.state;
        const QString error = existing.error;
        existing = previous;
        existing.state = state;
        existing.error = error;
        if (!row.security.isEmpty()) {
            existing.security = row.security;
        }
        existing.recordsStored = row.recordsStored;
        existing.reconnects = row.reconnects;
    }
    emit dataChanged(index(i, 0), index(i, ColumnCount - 1));
}

void NodeTableModel::addPending(const QString& address, const QString& security) {
    if (indexOf(address) >= 0) {
        return;
    }
    NodeRow row;
    row.address = address;
    row.state = QStringLiteral("connecting");
    row.security = security;
    upsert(row);
}

void NodeTableModel::clear() {
    if (m_rows.empty()) {
        return;
    }
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

bool NodeTableModel::remove(const QString& address) {
    const int i = indexOf(address);
    if (i < 0) {
        return false;
    }
    beginRemoveRows({}, i, i);
    m_rows.erase(m_rows.begin() + i);
    endRemoveRows();
    return true;
}

void NodeTableModel::setMemoryUsed(const QString& address, double bytes, double t) {
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].address == address && t >= m_rows[i].lastSampleT) {
            m_rows[i].usedBytes = bytes;
            m_rows[i].lastSampleT = t;
            const QModelIndex cell = index(static_cast<int>(i), MemUsedColumn);
            emit dataChanged(cell, cell);
        }
    }
}

QStringList NodeTableModel::addresses() const {
    QStringList out;
    for (const NodeRow& r : m_rows) {
        out << r.address;
    }
    return out;
}

QStringList NodeTableModel::nodeIds() const {
    QStringList out;
    for (const NodeRow& r : m_rows) {
        if (!r.nodeId.isEmpty() && !out.contains(r.nodeId)) {
            out << r.nodeId;
        }
    }
    return out;
}

QString NodeTableModel::displayName(const QString& nodeId) const {
    for (const NodeRow& r : m_rows) {
        if (r.nodeId == nodeId) {
            return r.hostname.isEmpty()
                       ? r.address
                       : r.hostname + QStringLiteral(" (") + r.address + QStringLiteral(")");
        }
    }
    return nodeId;
}

QString NodeTableModel::displayNameOfAddress(const QString& address) const {
    const int i = indexOf(address);
    if (i < 0 || m_rows[static_cast<size_t>(i)].hostname.isEmpty()) {
        return address;
    }
    return m_rows[static_cast<size_t>(i)].hostname + QStringLiteral(" (") + address +
           QStringLiteral(")");
}

}  // namespace runplane::gui
