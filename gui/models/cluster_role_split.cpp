#include "gui/models/cluster_role_split.h"

#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/telemetry/series.h"
#include "db/history/history.h"
#include "gui/models/qt_text.h"
#include "gui/models/role_memory.h"

namespace runplane::gui {

namespace {

namespace series = telemetry::series;

// The roles the run view's layer table names (a row's role is its series' "role.<role>.").
const std::set<std::string> kTableRoles{"trainer", "rollout", "router", "ray", "driver", "other"};

struct Latest {
    double value = 0;
    double t = 0;
};

// The newest sample of a listed series, if not older than sinceT.
std::optional<Latest> latestOf(db::History& history, const db::SeriesInfo& info, double sinceT) {
    const double t = static_cast<double>(info.lastNs) * 1e-9;
    if (info.count <= 0 || t < sinceT) {
        return std::nullopt;
    }
    db::SeriesQuery q;
    q.seriesId = info.id;
    q.t0Ns = info.lastNs;
    q.t1Ns = info.lastNs;
    auto points = history.querySeries(q);
    if (!points || points->points.empty()) {
        return std::nullopt;
    }
    return Latest{points->points.back().value, t};
}

// "role.<role>.<leaf>" -> role; "" when the name is not of that form.
std::string roleOfName(const std::string& name, const std::string& prefix,
                       const std::string& leaf) {
    if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + leaf.size() ||
        name.compare(name.size() - leaf.size(), leaf.size(), leaf) != 0) {
        return {};
    }
    const std::string role = name.substr(prefix.size(), name.size() - prefix.size() - leaf.size());
    return role.find('.') == std::string::npos ? role : std::string();
}

void addPart(RoleSplitRow& row, const QString& key, const QString& label, const Latest& v) {
    row.parts.push_back({key, label, roleColor(key), v.value});
    row.t = std::max(row.t, v.t);
}

}  // namespace

double RoleSplitRow::sum() const {
    double s = 0;
    for (const RoleSplitPart& p : parts) {
        s += p.bytes;
    }
    return s;
}

ClusterRoleSplit loadClusterRoleSplit(db::History& history, const QStringList& nodeIds,
                                      double sinceT) {
    ClusterRoleSplit out;
    for (const QString& node : nodeIds) {
        db::SeriesFilter filter;
        filter.nodeId = NodeId{node.toStdString()};
        filter.runId = RunId{};
        std::map<std::string, db::SeriesInfo> byName;
        for (const char* pattern : {series::kRolePattern, "host.mem.*", "gpu.*"}) {
            filter.name = pattern;
            auto listed = history.listSeries(filter);
            if (!listed) {
                out.error = qs(listed.error());
                continue;
            }
            for (const db::SeriesInfo& info : *listed) {
                if (info.name.find(".pid.") == std::string::npos) {  // not a process's own
                    byName[info.name] = info;
                }
            }
        }
        // The plan in force now: each live run's role.<role>.planned_bytes (run-level; sent
        // only while its phase lasts), summed over the node's runs per role.
        std::map<std::string, double> plannedNow;
        {
            db::SeriesFilter runs;
            runs.nodeId = NodeId{node.toStdString()};
            runs.name = series::kRolePattern;  // every run's, node-level ones skipped below
            auto listed = history.listSeries(runs);
            if (!listed) {
                out.error = qs(listed.error());
            } else {
                for (const db::SeriesInfo& info : *listed) {
                    const std::string role =
                        roleOfName(info.name, series::kRolePrefix, ".planned_bytes");
                    if (info.runId.empty() || role.empty()) {
                        continue;
                    }
                    if (auto v = latestOf(history, info, sinceT)) {
                        plannedNow[role] += v->value;
                    }
                }
            }
        }
        auto planOf = [&](RoleSplitRow& row, const std::string& planRole) {
            const auto it = plannedNow.find(planRole);
            if (!planRole.empty() && it != plannedNow.end() && !row.parts.empty()) {
                row.parts.back().plannedBytes = it->second;
            }
        };
        auto latest = [&](const std::string& name) -> std::optional<Latest> {
            const auto it = byName.find(name);
            return it == byName.end() ? std::nullopt : latestOf(history, it->second, sinceT);
        };

        // Host: the run view's layers, then the roles a role table added, before `other`.
        RoleSplitRow host;
        host.nodeId = node;
        host.label = node;
        std::vector<std::pair<std::string, Latest>> own;
        for (const auto& [name, info] : byName) {
            const std::string role = roleOfName(name, series::kRolePrefix, ".rss_bytes");
            if (!role.empty() && kTableRoles.count(role) == 0) {
                if (auto v = latestOf(history, info, sinceT)) {
                    own.emplace_back(role, *v);
                }
            }
        }
        for (const RoleLayerRow& r : roleLayerRows()) {
            if (QLatin1String(r.key) == QLatin1String("other")) {
                for (const auto& [role, v] : own) {
                    addPart(host, qs(role), qs(role), v);
                    planOf(host, role);  // a run's own role may be planned under its name
                }
            }
            if (auto v = latest(r.series)) {
                addPart(host, QLatin1String(r.key), QLatin1String(r.label), *v);
                planOf(host, r.budgetRole);
            }
        }
        if (auto v = latest(series::kHostMemTotal)) {
            host.capacityBytes = v->value;
        }
        if (auto v = latest(series::kHostMemUsed)) {
            host.usedBytes = v->value;
        }
        if (!host.parts.empty()) {
            out.hosts.push_back(std::move(host));
        }

        // GPUs: gpu.<i>.role.<role>.mem.used_bytes, the table's role order, then a site's own.
        std::map<int, std::map<std::string, Latest>> gpuRoles;
        for (const auto& [name, info] : byName) {
            if (name.rfind(series::kGpuPrefix, 0) != 0) {
                continue;
            }
            const std::size_t dot = name.find('.', 4);
            if (dot == std::string::npos) {
                continue;
            }
            bool ok = false;
            const int index = QString::fromStdString(name.substr(4, dot - 4)).toInt(&ok);
            const std::string role = roleOfName(name.substr(dot + 1), series::kRolePrefix,
                                                std::string(".") + series::kGpuMemUsed);
            if (!ok || role.empty()) {
                continue;
            }
            if (auto v = latestOf(history, info, sinceT)) {
                gpuRoles[index][role] = *v;
            }
        }
        for (const auto& [index, roles] : gpuRoles) {
            RoleSplitRow gpu;
            gpu.nodeId = node;
            gpu.gpu = index;
            gpu.label = QStringLiteral("%1 GPU %2").arg(node).arg(index);
            std::set<std::string> done;
            for (const RoleLayerRow& r : roleLayerRows()) {
                const std::string role = roleOfName(r.series, series::kRolePrefix, ".rss_bytes");
                if (role.empty() || QLatin1String(r.key) == QLatin1String("other")) {
                    continue;  // other goes last, after a site's own roles
                }
                if (const auto it = roles.find(role); it != roles.end()) {
                    addPart(gpu, QLatin1String(r.key), QLatin1String(r.label), it->second);
                    done.insert(role);
                }
            }
            for (const auto& [role, v] : roles) {
                if (done.count(role) == 0 && role != "other") {
                    addPart(gpu, qs(role), qs(role), v);
                }
            }
            if (const auto it = roles.find("other"); it != roles.end()) {
                addPart(gpu, QStringLiteral("other"), QStringLiteral("other"), it->second);
            }
            const std::string base = series::gpu(index, "");
            if (auto v = latest(base + series::kGpuMemTotal)) {
                gpu.capacityBytes = v->value;
            }
            if (auto v = latest(base + series::kGpuMemUsed)) {
                gpu.usedBytes = v->value;
            }
            out.gpus.push_back(std::move(gpu));
        }
    }
    return out;
}

}  // namespace runplane::gui
