#include "gui/pages/node_oom_alerts.h"

#include <QDateTime>

#include <algorithm>

#include "common/telemetry/event_kind.h"
#include "db/history/history.h"
#include "gui/models/qt_text.h"
#include "gui/widgets/palette.h"

namespace runplane::gui {

NodeOomResult loadNodeOomAlerts(db::History& history, const QStringList& nodeIds, double t0) {
    NodeOomResult out;
    std::vector<NodeOomAlert> all;
    for (const QString& node : nodeIds) {
        for (telemetry::EventKind kind :
             {telemetry::EventKind::CudaOom, telemetry::EventKind::RayOom,
              telemetry::EventKind::HostOom}) {
            db::EventFilter filter;
            filter.nodeId = NodeId{node.toStdString()};
            filter.kind = telemetry::toString(kind);
            filter.t0Ns = static_cast<std::int64_t>(t0 * 1e9);
            filter.limit = 1000;
            auto events = history.listEvents(filter);
            if (!events) {
                out.error = qs(events.error());
                return out;
            }
            for (const db::EventRecord& e : *events) {
                QString message = qs(db::attrText(e.attrs, telemetry::attr::kSummary));
                if (message.isEmpty()) {
                    message = qs(e.message);
                }
                all.push_back({node, qs(e.kind), message, static_cast<double>(e.tNs) / 1e9});
            }
        }
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const NodeOomAlert& a, const NodeOomAlert& b) { return a.t > b.t; });
    out.total = static_cast<int>(all.size());
    if (all.size() > static_cast<std::size_t>(kOomAlertMax)) {
        all.resize(static_cast<std::size_t>(kOomAlertMax));
    }
    out.alerts = std::move(all);
    return out;
}

NodeOomPanel::NodeOomPanel(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("nodeOomAlerts"));
    setTextFormat(Qt::PlainText);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setWordWrap(true);
    setStyleSheet(QStringLiteral("color: %1; font-weight: bold").arg(errorColor().name()));
    hide();
}

void NodeOomPanel::setAlerts(const NodeOomResult& result,
                             const std::function<QString(const QString&)>& displayName) {
    m_count = result.total;
    m_lines.clear();
    for (const NodeOomAlert& a : result.alerts) {
        const QString when = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(a.t * 1000))
                                 .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        m_lines << QStringLiteral("⚠ %1 %2 · %3").arg(displayName(a.nodeId), when, a.message);
    }
    if (result.total > static_cast<int>(result.alerts.size())) {
        m_lines << tr("… and %1 more OOM event(s) in the last 24 h")
                       .arg(result.total - static_cast<int>(result.alerts.size()));
    }
    setText(m_lines.join(QLatin1Char('\n')));
    setVisible(!m_lines.isEmpty());
}

}  // namespace runplane::gui
