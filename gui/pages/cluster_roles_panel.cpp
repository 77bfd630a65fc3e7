#include "gui/pages/cluster_roles_panel.h"

#include <QDateTime>
#include <QVBoxLayout>

#include "db/history/history.h"
#include "gui/models/cluster_role_split.h"
#include "gui/models/history_reader.h"
#include "gui/widgets/role_split_bars.h"

namespace runplane::gui {

namespace {

QString gb(double bytes) {
    return QString::number(bytes / 1e9, 'f', bytes >= 100e9 ? 0 : 1);
}

// A row as a bar: the role parts, and on a host the used memory no role's RSS explains.
SplitBar barOf(const RoleSplitRow& row, const QString& label) {
    SplitBar bar;
    bar.label = label;
    double over = 0;  // what the parts hold beyond their plans
    for (const RoleSplitPart& p : row.parts) {
        bar.segments.push_back({p.label, p.color, p.bytes, p.plannedBytes});
        if (p.overPlan()) {
            over += p.bytes - p.plannedBytes;
        }
    }
    bar.capacity = row.capacityBytes;
    if (row.usedBytes >= 0 && row.capacityBytes > 0) {
        bar.note = QObject::tr("%1 of %2 GB used").arg(gb(row.usedBytes), gb(row.capacityBytes));
    } else if (row.usedBytes >= 0) {
        bar.note = QObject::tr("%1 GB used").arg(gb(row.usedBytes));
    }
    if (over > 0) {
        bar.note += (bar.note.isEmpty() ? QString() : QStringLiteral(", ")) +
                    QObject::tr("%1 GB over plan").arg(gb(over));
    }
    return bar;
}

}  // namespace

ClusterRolesPanel::ClusterRolesPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_host = new RoleSplitBars(this);
    m_host->setTitle(tr("Host memory by role per node (newest sample)"));
    m_host->setPlaceholder(tr("No memory-by-role samples yet"));
    m_gpu = new RoleSplitBars(this);
    m_gpu->setTitle(tr("GPU memory by role per GPU (newest sample)"));
    m_gpu->setPlaceholder(tr("No GPU memory by role (no GPU, or no process on one)"));
    layout->addWidget(m_host);
    layout->addWidget(m_gpu);
    layout->addStretch(1);
}

void ClusterRolesPanel::request(HistoryReader& reader, const QStringList& nodeIds,
                                std::function<QString(const QString&)> displayName, double window) {
    if (m_inFlight) {
        return;  // the page asks again at its next refresh
    }
    m_inFlight = true;
    const double since = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3 - window;
    reader.run(
        QStringLiteral("cluster-roles"), this,
        [nodeIds, since](db::History& history) {
            return loadClusterRoleSplit(history, nodeIds, since);
        },
        [this, displayName = std::move(displayName)](Result<ClusterRoleSplit> result) {
            m_inFlight = false;
            if (!result) {
                m_host->setPlaceholder(QString::fromStdString(result.error()));
                return;
            }
            showSplit(*result, displayName);
            ++m_applied;
        });
}

void ClusterRolesPanel::showSplit(const ClusterRoleSplit& split,
                                  const std::function<QString(const QString&)>& displayName) {
    auto name = [&](const QString& node) { return displayName ? displayName(node) : node; };
    std::vector<SplitBar> hosts;
    for (const RoleSplitRow& row : split.hosts) {
        hosts.push_back(barOf(row, name(row.nodeId)));
    }
    std::vector<SplitBar> gpus;
    for (const RoleSplitRow& row : split.gpus) {
        gpus.push_back(barOf(row, tr("%1 GPU %2").arg(name(row.nodeId)).arg(row.gpu)));
    }
    if (hosts.empty()) {
        m_host->setPlaceholder(split.error.isEmpty() ? tr("No memory-by-role samples yet")
                                                     : split.error);
    } else {
        m_host->setBars(std::move(hosts));
    }
    if (gpus.empty()) {
        m_gpu->setPlaceholder(tr("No GPU memory by role (no GPU, or no process on one)"));
    } else {
        m_gpu->setBars(std::move(gpus));
    }
}

}  // namespace runplane::gui
