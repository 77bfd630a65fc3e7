#include "gui/models/daemon_memory.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "common/telemetry/series.h"
#include "db/history/history.h"
#include "db/history/history_sql.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {

namespace {

// Samples of one daemon's spool incarnation: the newest `limit` in [t0Ns, t1Ns], time ordered.
Result<PointSeries> incarnationSamples(db::History& history, const db::SeriesInfo& info,
                                       std::uint64_t incarnation, std::int64_t t0Ns,
                                       std::int64_t t1Ns, std::size_t limit) {
    const std::string sql =
        "SELECT t_ns, value, min, max FROM samples WHERE series_id = " + std::to_string(info.id) +
        " AND incarnation = " + std::to_string(static_cast<std::int64_t>(incarnation)) +
        " AND t_ns >= " + std::to_string(t0Ns) + " AND t_ns <= " + std::to_string(t1Ns) +
        " ORDER BY t_ns DESC LIMIT " + std::to_string(limit);
    db::SqlQueryOptions options;
    options.maxRows = limit;
    auto rows = db::queryHistorySql(history.path(), sql, options);
    if (!rows) {
        return Error{rows.error()};
    }
    PointSeries s;
    s.nodeId = qs(info.nodeId);
    s.name = qs(info.name);
    s.unit = qs(info.unit);
    for (auto it = rows->rows.rbegin(); it != rows->rows.rend(); ++it) {
        const auto num = [](const nlohmann::json& v) {
            return v.is_number() ? v.get<double>() : std::nan("");
        };
        s.t.push_back(num((*it)[0]) * 1e-9);
        s.value.push_back(num((*it)[1]));
        s.min.push_back(num((*it)[2]));
        s.max.push_back(num((*it)[3]));
        s.step.push_back(-1);
    }
    s.sourceCount = static_cast<std::int64_t>(s.t.size());
    return s;
}

}  // namespace

NodeMemoryResult loadDaemonHostMemory(db::History& history, const std::vector<DaemonKey>& daemons,
                                      double t0, double t1, int maxBuckets) {
    NodeMemoryResult result;
    std::map<QString, int> daemonsOfNode;
    for (const DaemonKey& d : daemons) {
        if (!d.nodeId.isEmpty()) {
            ++daemonsOfNode[d.nodeId];
        }
    }
    // The series of shared node ids (one listing for all).
    std::map<NodeId, db::SeriesInfo> shared;
    if (std::any_of(daemonsOfNode.begin(), daemonsOfNode.end(),
                    [](const auto& n) { return n.second > 1; })) {
        db::SeriesFilter filter;
        filter.runId = RunId();
        filter.name = telemetry::series::kHostMemUsed;
        auto listed = history.listSeries(filter);
        if (!listed) {
            result.error = qs(listed.error());
            return result;
        }
        for (const db::SeriesInfo& info : *listed) {
            shared.emplace(info.nodeId, info);
        }
    }
    const std::size_t limit =
        static_cast<std::size_t>(std::max(kHostMemoryMinBuckets, maxBuckets)) * 4;
    for (const DaemonKey& d : daemons) {
        if (d.nodeId.isEmpty()) {
            continue;
        }
        if (daemonsOfNode[d.nodeId] == 1 || d.incarnation == 0) {
            NodeMemoryResult one =
                loadNodeHostMemory(history, QStringList{d.nodeId}, t0, t1, maxBuckets);
            if (!one.error.isEmpty()) {
                result.error = one.error;
                return result;
            }
            for (size_t i = 0; i < one.series.size(); ++i) {
                one.series[i].nodeId = d.address;
                result.series.push_back(std::move(one.series[i]));
                result.ramBytes.push_back(one.ramBytes[i]);
            }
            continue;
        }
        const auto it = shared.find(NodeId{d.nodeId.toStdString()});
        if (it == shared.end()) {
            continue;
        }
        auto s = incarnationSamples(history, it->second, d.incarnation,
                                    static_cast<std::int64_t>(t0 * 1e9),
                                    static_cast<std::int64_t>(t1 * 1e9), limit);
        if (!s) {
            result.error = qs(s.error());
            return result;
        }
        if (s->t.empty()) {
            continue;
        }
        s->nodeId = d.address;
        result.series.push_back(std::move(*s));
        result.ramBytes.push_back(0);
    }
    return result;
}

}  // namespace runplane::gui
