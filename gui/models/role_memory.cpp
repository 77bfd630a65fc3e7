#include "gui/models/role_memory.h"

#include <QHash>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "backend/plan/catalog.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/recipe.h"
#include "backend/plan/role_budget.h"
#include "common/telemetry/event_kind.h"
#include "common/telemetry/series.h"
#include "common/units/units.h"
#include "gui/models/history_queries.h"
#include "gui/models/qt_text.h"
#include "gui/models/run_derivations.h"

namespace runplane::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bottom to top: what the plan holds first, then what it does not explain. Colours: Okabe–Ito
// (distinguishable with common colour blindness), one per role, never reused by another.
constexpr std::array<RoleLayerRow, 8> kRows{{
    {"trainer", "trainer", "role.trainer.rss_bytes", "role.trainer.processes", "trainer", 0x0072B2},
    {"rollout", "rollout engines", "role.rollout.rss_bytes", "role.rollout.processes", "rollout",
     0xE69F00},
    {"router", "router", "role.router.rss_bytes", "role.router.processes", "", 0xCC79A7},
    {"object_store", "Ray object store", "role.ray.object_store_bytes", "", "ray", 0x56B4E9},
    {"ray", "Ray workers", "role.ray.rss_bytes", "role.ray.processes", "", 0x009E73},
    {"driver", "driver", "role.driver.rss_bytes", "role.driver.processes", "", 0xD55E00},
    {"page_cache", "page cache", "host.mem.page_cache_bytes", "", "page_cache", 0xF0E442},
    {"other", "other", "role.other.rss_bytes", "role.other.processes", "", 0x999999},
}};

QString attrOf(const db::EventRecord& e, const char* key) {
    return qs(db::attrText(e.attrs, key));
}

// The value of `s` in force at time t: its last point at or before t, else its first.
double valueAt(const PointSeries& s, double t) {
    if (s.t.empty()) {
        return kNaN;
    }
    const auto it = std::upper_bound(s.t.begin(), s.t.end(), t + 1e-6);
    const std::size_t i = it == s.t.begin() ? 0 : static_cast<std::size_t>(it - s.t.begin()) - 1;
    return s.value[i];
}

std::optional<plan::Phase> planPhase(const QString& name) {
    for (plan::Phase p : plan::kPhases) {
        if (name == QLatin1String(plan::toString(p))) {
            return p;
        }
    }
    return std::nullopt;
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

QString seconds(double s) {
    return s >= 120 ? QString::number(s / 60, 'f', 1) + QStringLiteral(" min")
                    : QString::number(s, 'f', 0) + QStringLiteral(" s");
}

}  // namespace

std::span<const RoleLayerRow> roleLayerRows() {
    return kRows;
}

QColor roleColor(const QString& key) {
    for (const RoleLayerRow& r : kRows) {
        if (key == QLatin1String(r.key)) {
            return QColor(QRgb(r.rgb));
        }
    }
    // A role the table does not know: a hue from its name (qHash with a fixed seed), never the
    // table's grey.
    const auto h = static_cast<int>(qHash(key, 0x5eed) % 360U);
    return QColor::fromHsv(h, 160, 190);
}

double NodeRoleStack::top(std::size_t k, std::size_t i) const {
    double sum = 0;
    for (std::size_t j = 0; j <= k && j < layers.size(); ++j) {
        const double v = i < layers[j].bytes.size() ? layers[j].bytes[i] : kNaN;
        sum += std::isnan(v) ? 0 : v;
    }
    return sum;
}

double NodeRoleStack::budgetTop(std::size_t k, std::size_t i) const {
    if (k >= layers.size() || i >= layers[k].budget.size() || std::isnan(layers[k].budget[i])) {
        return kNaN;
    }
    double sum = 0;
    for (std::size_t j = 0; j <= k; ++j) {
        const double b = i < layers[j].budget.size() ? layers[j].budget[i] : kNaN;
        const double v = std::isnan(b) ? layers[j].bytes[i] : b;
        sum += std::isnan(v) ? 0 : v;
    }
    return sum;
}

int NodeRoleStack::layerAt(double x, double y, std::size_t* pointIndex) const {
    if (t.empty() || layers.empty() || y < 0) {
        return -1;
    }
    const auto it = std::lower_bound(t.begin(), t.end(), x);
    std::size_t i = static_cast<std::size_t>(it - t.begin());
    if (i == t.size() || (i > 0 && x - t[i - 1] < t[i] - x)) {
        i = i == 0 ? 0 : i - 1;
    }
    if (pointIndex != nullptr) {
        *pointIndex = i;
    }
    for (std::size_t k = 0; k < layers.size(); ++k) {
        if (y < top(k, i)) {
            return static_cast<int>(k);
        }
    }
    return -1;
}

QString NodeRoleStack::hoverText(double x, double y,
                                 const std::vector<PhaseInterval>& phases) const {
    std::size_t i = 0;
    const int k = layerAt(x, y, &i);
    if (k < 0) {
        return {};
    }
    const RoleLayer& l = layers[static_cast<std::size_t>(k)];
    QString text = nodeId + QStringLiteral(" · ") + l.label + QStringLiteral(": ") +
                   qs(units::formatBytes(l.bytes[i]));
    if (i < l.processes.size() && !std::isnan(l.processes[i])) {
        const auto n = static_cast<long long>(l.processes[i]);
        text +=
            QStringLiteral(", %1 process%2").arg(n).arg(n == 1 ? QString() : QStringLiteral("es"));
    }
    if (i < l.budget.size() && !std::isnan(l.budget[i])) {
        const QString phase = phaseAt(phases, t[i]);
        text += QStringLiteral(" (plan %1%2)")
                    .arg(qs(units::formatBytes(l.budget[i])),
                         phase.isEmpty() ? QString() : QStringLiteral(" in ") + phase);
    }
    return text;
}

bool isAlertFailure(const QString& kind) {
    using telemetry::EventKind;
    for (EventKind k : {EventKind::CudaOom, EventKind::RayOom, EventKind::HostOom, EventKind::Crash,
                        EventKind::NcclError, EventKind::WeightSyncFailure}) {
        if (isKind(kind, k)) {
            return true;
        }
    }
    return false;
}

std::vector<FailureMarker> failureMarkers(const std::vector<db::EventRecord>& events) {
    std::vector<FailureMarker> out;
    for (const db::EventRecord& e : events) {
        const QString kind = qs(e.kind);
        if (!isAlertFailure(kind)) {
            continue;
        }
        QString message = attrOf(e, telemetry::attr::kSummary);
        if (message.isEmpty()) {
            message = qs(e.message);
        }
        out.push_back({nsToSeconds(e.tNs), qs(e.nodeId), kind, message});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const FailureMarker& a, const FailureMarker& b) { return a.t < b.t; });
    return out;
}

std::vector<PhaseLane> phaseLanes(const std::vector<db::EventRecord>& events, double endT) {
    std::vector<const db::EventRecord*> phaseEvents;
    for (const db::EventRecord& e : events) {
        if (e.kind == telemetry::toString(telemetry::EventKind::Phase) &&
            !db::attrText(e.attrs, telemetry::attr::kPhase).empty()) {
            phaseEvents.push_back(&e);
        }
    }
    std::stable_sort(phaseEvents.begin(), phaseEvents.end(),
                     [](const auto* a, const auto* b) { return a->tNs < b->tNs; });
    // A lane per (node, rank, actor, pid); ordered by node, then rank and pid as numbers.
    using Key = std::tuple<QString, long long, QString, long long>;
    std::map<Key, PhaseLane> lanes;
    for (const db::EventRecord* e : phaseEvents) {
        const QString rank = attrOf(*e, "rank");
        const QString actor = attrOf(*e, "actor");
        const QString pid = attrOf(*e, "pid");
        const Key key{qs(e->nodeId), rank.isEmpty() ? -1 : rank.toLongLong(), actor,
                      pid.isEmpty() ? -1 : pid.toLongLong()};
        PhaseLane& lane = lanes[key];
        if (lane.label.isEmpty()) {
            lane.nodeId = qs(e->nodeId);
            lane.rank = rank;
            lane.actor = actor;
            lane.pid = pid;
            lane.label = lane.nodeId;
            if (!rank.isEmpty()) {
                lane.label += QStringLiteral(" rank ") + rank;
            }
            if (!actor.isEmpty()) {
                lane.label += QLatin1Char(' ') + actor;
            }
            if (!pid.isEmpty()) {
                lane.label += QStringLiteral(" pid ") + pid;
            }
            if (rank.isEmpty() && actor.isEmpty() && pid.isEmpty()) {
                lane.label += QStringLiteral(" run");
            }
        }
        const double t = nsToSeconds(e->tNs);
        const QString phase = attrOf(*e, telemetry::attr::kPhase);
        const QString edge = attrOf(*e, "edge");
        LaneSpan* last = lane.spans.empty() ? nullptr : &lane.spans.back();
        if (edge == QLatin1String("end")) {
            // A timer's end closes its own phase; the process is between phases until the next.
            if (last != nullptr && last->open && last->phase == phase) {
                last->t1 = t;
                last->open = false;
            }
            continue;
        }
        if (last != nullptr && last->open) {
            last->t1 = t;
            last->open = false;
        }
        if (phase != QLatin1String("done")) {
            lane.spans.push_back({phase, t, endT, true});
        }
    }
    // A lane stuck in a phase: its open span has lasted beyond twice the median of that phase's
    // closed spans over all lanes.
    std::map<QString, std::vector<double>> closed;
    for (const auto& [key, lane] : lanes) {
        for (const LaneSpan& s : lane.spans) {
            if (!s.open) {
                closed[s.phase].push_back(s.t1 - s.t0);
            }
        }
    }
    std::vector<PhaseLane> out;
    for (auto& [key, lane] : lanes) {
        if (!lane.spans.empty() && lane.spans.back().open) {
            LaneSpan& s = lane.spans.back();
            s.t1 = std::max(s.t1, s.t0);
            const auto it = closed.find(s.phase);
            const double m = it == closed.end() ? 0 : median(it->second);
            if (m > 0 && s.t1 - s.t0 > 2 * m) {
                lane.stuck = true;
                lane.note = QStringLiteral("stuck in %1 for %2 (median %3)")
                                .arg(s.phase, seconds(s.t1 - s.t0), seconds(m));
            }
        }
        out.push_back(std::move(lane));
    }
    return out;
}

std::shared_ptr<const RunRoleData> loadRunRoleData(db::History& history, const RoleQuery& q,
                                                   const std::vector<db::EventRecord>& events,
                                                   const plan::ModelCatalog* catalog,
                                                   SeriesCache* cache) {
    auto data = std::make_shared<RunRoleData>();
    data->failures = failureMarkers(events);
    data->lanes = phaseLanes(events, q.endT);

    // Every role series of every node in one listing; page cache per node beside it.
    db::SeriesFilter filter;
    filter.runId = RunId{};
    filter.name = telemetry::series::kRolePattern;
    auto roleSeries = history.listSeries(filter);
    if (!roleSeries) {
        data->warnings << qs(roleSeries.error());
        return data;
    }
    std::map<QString, std::map<std::string, db::SeriesInfo>> byNode;
    for (const db::SeriesInfo& info : *roleSeries) {
        const QString node = qs(info.nodeId);
        if (q.nodes.contains(node)) {
            byNode[node][info.name] = info;
        }
    }
    if (byNode.empty()) {
        return data;
    }
    db::SeriesFilter cacheFilter;
    cacheFilter.runId = RunId{};
    cacheFilter.name = telemetry::series::kHostMemPageCache;
    if (auto pc = history.listSeries(cacheFilter)) {
        for (const db::SeriesInfo& info : *pc) {
            const QString node = qs(info.nodeId);
            if (byNode.count(node) != 0) {
                byNode[node][info.name] = info;
            }
        }
    }

    // The plan of the run's recipe: plan node i is the run's i-th node.
    std::optional<plan::MemoryPlan> memory;
    if (catalog != nullptr && !q.recipeYaml.trimmed().isEmpty()) {
        if (auto recipe = plan::parseRecipe(q.recipeYaml.toStdString(), "recipe snapshot")) {
            if (auto shape = plan::resolveModel(*recipe, *catalog)) {
                memory = plan::planMemory(*recipe, *shape);
            }
        }
    }

    // The role series of all the run's nodes share one budget of points, as the run's own
    // series do (runSeriesBuckets): a 256-node run reads fewer buckets per series.
    std::size_t count = 0;
    for (const auto& [node, named] : byNode) {
        count += named.size();
    }
    const int buckets = runSeriesBuckets(q.maxBuckets, count);
    auto load = [&](const db::SeriesInfo& info) -> Result<PointSeries> {
        return cache != nullptr ? cache->load(history, info, q.t0, q.t1, buckets)
                                : loadSeries(history, info, q.t0, q.t1, buckets);
    };
    for (qsizetype n = 0; n < q.nodes.size(); ++n) {
        const auto it = byNode.find(q.nodes[n]);
        if (it == byNode.end()) {
            continue;
        }
        const auto& named = it->second;
        NodeRoleStack stack;
        stack.nodeId = q.nodes[n];
        struct Loaded {
            QString key, label;
            QColor color;
            PointSeries bytes;
            std::optional<PointSeries> processes;
            std::string budgetRole;
        };
        std::vector<Loaded> loaded;
        auto add = [&](const QString& key, const QString& label, const std::string& seriesName,
                       const std::string& processesName, const std::string& budgetRole) {
            const auto s = named.find(seriesName);
            if (s == named.end()) {
                return;
            }
            auto points = load(s->second);
            if (!points) {
                data->warnings << qs(points.error());
                return;
            }
            if (points->empty()) {
                return;
            }
            Loaded l{key, label, roleColor(key), std::move(*points), std::nullopt, budgetRole};
            if (const auto p = named.find(processesName); p != named.end()) {
                if (auto pp = load(p->second)) {
                    l.processes = std::move(*pp);
                }
            }
            loaded.push_back(std::move(l));
        };
        std::vector<std::string> known;
        for (const RoleLayerRow& r : kRows) {
            add(QLatin1String(r.key), QString::fromUtf8(r.label), r.series, r.processes,
                r.budgetRole);
            known.emplace_back(r.series);
        }
        // Roles of the daemon's --role-table that the table does not list, above "other".
        const std::string prefix = telemetry::series::kRolePrefix;
        const std::string rss = std::string(".") + telemetry::series::kRoleRss;
        for (const auto& [name, info] : named) {
            if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + rss.size() ||
                name.compare(name.size() - rss.size(), rss.size(), rss) != 0) {
                continue;
            }
            const std::string role =
                name.substr(prefix.size(), name.size() - prefix.size() - rss.size());
            if (role.find('.') != std::string::npos ||
                std::find(known.begin(), known.end(), name) != known.end()) {
                continue;  // an engine's own RSS (role.rollout.engine.N...) is inside rollout
            }
            add(qs(role), qs(role), name, prefix + role + "." + telemetry::series::kRoleProcesses,
                "");
        }
        if (loaded.empty()) {
            continue;
        }
        // One grid: the times of the layer with the most points; the others as in force then.
        const auto widest = std::max_element(
            loaded.begin(), loaded.end(),
            [](const Loaded& a, const Loaded& b) { return a.bytes.t.size() < b.bytes.t.size(); });
        stack.t = widest->bytes.t;
        const plan::NodeMemory* planNode =
            memory && n < static_cast<qsizetype>(memory->nodes.size())
                ? &memory->nodes[static_cast<std::size_t>(n)]
                : nullptr;
        // The plan's bytes per (role, phase) on this node.
        std::map<std::pair<std::string, plan::Phase>, double> planned;
        if (planNode != nullptr) {
            for (plan::Phase p : plan::kPhases) {
                for (const plan::RoleLine& line :
                     plan::planBesideMeasured(*planNode, p, plan::RoleMeasured{})) {
                    planned[{line.role, p}] = line.plannedBytes;
                }
            }
        }
        for (Loaded& l : loaded) {
            RoleLayer layer;
            layer.key = l.key;
            layer.label = l.label;
            layer.color = l.color;
            for (double t : stack.t) {
                layer.bytes.push_back(valueAt(l.bytes, t));
                layer.processes.push_back(l.processes ? valueAt(*l.processes, t) : kNaN);
                double b = kNaN;
                if (!l.budgetRole.empty() && planNode != nullptr) {
                    if (const auto phase = planPhase(phaseAt(q.phases, t))) {
                        const auto pl = planned.find({l.budgetRole, *phase});
                        b = pl == planned.end() ? kNaN : pl->second;
                    }
                }
                layer.budget.push_back(b);
            }
            stack.layers.push_back(std::move(layer));
        }
        data->nodes.push_back(std::move(stack));
    }
    return data;
}

}  // namespace runplane::gui
