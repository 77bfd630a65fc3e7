#include "gui/models/run_silence.h"

#include <QCoreApplication>
#include <QDateTime>

#include <algorithm>
#include <map>

#include "common/telemetry/series.h"
#include "db/history/history.h"

namespace runplane::gui {

std::optional<double> silentSince(const RunTelemetryClock& clock, double now) {
    if (clock.state != telemetry::RunState::Running) {
        return std::nullopt;
    }
    const double threshold = std::max(kMinSilentSeconds, kSilentIntervals * clock.sampleInterval);
    const double since = clock.lastSampleT > 0 ? clock.lastSampleT : clock.startT;
    if (since <= 0 || now - since <= threshold) {
        return std::nullopt;
    }
    return since;
}

QString liveText(const QString& state, const RunTelemetryClock& clock, double now) {
    const std::optional<double> silent = silentSince(clock, now);
    if (!silent) {
        return state;
    }
    const QString at = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(*silent * 1000))
                           .toString(QStringLiteral("HH:mm"));
    return state + QStringLiteral(" · ") +
           QCoreApplication::translate("RunView", "daemon unreachable since %1").arg(at);
}

RunTelemetryClock clockOf(const RunRow& row) {
    return RunTelemetryClock{row.state, row.startT, row.lastSampleT, row.sampleInterval};
}

void fillTelemetryClocks(db::History& history, std::vector<RunRow>& rows) {
    if (std::none_of(rows.begin(), rows.end(),
                     [](const RunRow& r) { return r.state == telemetry::RunState::Running; })) {
        return;
    }
    db::SeriesFilter filter;
    filter.runId = RunId();  // node-level
    filter.name = telemetry::series::kHostMemUsed;
    auto listed = history.listSeries(filter);
    if (!listed) {
        return;  // unknown: the rows stay as the history states them
    }
    std::map<QString, const db::SeriesInfo*> byNode;
    for (const db::SeriesInfo& info : *listed) {
        byNode[QString::fromStdString(info.nodeId.value())] = &info;
    }
    for (RunRow& row : rows) {
        if (row.state != telemetry::RunState::Running) {
            continue;
        }
        for (const QString& node : row.nodes) {
            const auto it = byNode.find(node);
            if (it == byNode.end() || it->second->count == 0) {
                continue;
            }
            const db::SeriesInfo& info = *it->second;
            row.lastSampleT = std::max(row.lastSampleT, static_cast<double>(info.lastNs) * 1e-9);
            if (info.count > 1) {
                row.sampleInterval =
                    std::max(row.sampleInterval, static_cast<double>(info.lastNs - info.firstNs) *
                                                     1e-9 / static_cast<double>(info.count - 1));
            }
        }
    }
}

}  // namespace runplane::gui
