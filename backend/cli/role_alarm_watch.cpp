#include "backend/cli/role_alarm_watch.h"

#include <algorithm>
#include <chrono>

#include "backend/cli/run_plan.h"
#include "backend/control/ingest_batch.h"
#include "common/telemetry/event_kind.h"
#include "common/telemetry/series.h"

namespace runplane::cli {
namespace {

namespace series = telemetry::series;

/// The node-level series the alarms read, and where each lands in RoleMeasured.
struct Reading {
    std::string series;
    double plan::RoleMeasured::*field;
};

const std::vector<Reading>& readings() {
    static const std::vector<Reading> rows = {
        {series::role("trainer", series::kRoleRss), &plan::RoleMeasured::trainer},
        {series::role("rollout", series::kRoleRss), &plan::RoleMeasured::rollout},
        {series::role("router", series::kRoleRss), &plan::RoleMeasured::router},
        {series::role("ray", series::kRoleRss), &plan::RoleMeasured::ray},
        {series::role("driver", series::kRoleRss), &plan::RoleMeasured::driver},
        {series::role("other", series::kRoleRss), &plan::RoleMeasured::other},
        {series::role("ray", series::kRoleObjectStore), &plan::RoleMeasured::objectStore},
        {series::kHostMemPageCache, &plan::RoleMeasured::pageCache},
        {series::kHostMemUsed, &plan::RoleMeasured::used},
    };
    return rows;
}

bool isRead(const std::string& name) {
    const auto& rows = readings();
    return std::any_of(rows.begin(), rows.end(),
                       [&](const Reading& r) { return r.series == name; });
}

std::int64_t steadyNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// A run whose plan is not in the history yet (watched before it was submitted here) is looked up
/// again at most this often.
constexpr std::int64_t kLookUpAgainNs = 10'000'000'000;

/// A run whose node says no phases reads the run's phase events from the history this often.
constexpr std::int64_t kFollowPhaseNs = 2'000'000'000;

/// A phase event's edge applied to the phase in progress: a start sets it (eval and unknown
/// names: no plan phase), the end of the phase in progress clears it.
void applyPhaseEdge(const db::EventAttrs& attrs, std::optional<plan::Phase>& current) {
    const auto phase = planPhaseNamed(db::attrText(attrs, telemetry::attr::kPhase));
    if (db::attrText(attrs, "edge") != "end") {
        current = phase;
    } else if (current && phase && *current == *phase) {
        current.reset();
    }
}

}  // namespace

RoleAlarmWatch::RoleAlarmWatch(RoleAlarmWatchOptions options) : m_options(std::move(options)) {
    m_options.sustainSamples = std::max(1, m_options.sustainSamples);
}

RoleAlarmWatch::~RoleAlarmWatch() = default;

void RoleAlarmWatch::lookUpPlan(const std::string& nodeId, const std::string& runId, Run& run,
                                std::int64_t nowNs) {
    if (run.planned && (run.node || nowNs - run.lookedUpNs < kLookUpAgainNs)) {
        return;
    }
    run.planned = true;
    run.lookedUpNs = nowNs;
    if (history() == nullptr) {
        return;
    }
    auto record = m_history->run(RunId{runId});
    if (!record || !*record) {
        return;
    }
    std::string why;
    auto p = planOfSnapshot((*record)->recipeYaml, m_options.recipesDir, why);
    if (!p || p->memory.nodes.empty()) {
        run.lookedUpNs = nowNs + 1'000'000 * kLookUpAgainNs;  // a snapshot does not change
        return;
    }
    // The i-th node of the run is the plan's node i (Ray places by node order); a node the run
    // record does not list (submitted elsewhere) is the plan's first.
    const auto& nodes = (*record)->nodes;
    const auto at = std::find(nodes.begin(), nodes.end(), nodeId);
    const std::size_t i = at == nodes.end() ? 0 : static_cast<std::size_t>(at - nodes.begin());
    if (i < p->memory.nodes.size()) {
        run.node = p->memory.nodes[i];
    }
}

db::History* RoleAlarmWatch::history() {
    if (!m_history) {
        db::OpenOptions open;
        open.readOnly = true;
        auto h = db::History::open(m_options.historyPath, open);
        if (!h) {
            return nullptr;
        }
        m_history = std::move(*h);
    }
    return m_history.get();
}

void RoleAlarmWatch::followPhase(const std::string& runId, Run& run, std::int64_t nowNs) {
    if (run.phaseHere || (run.phaseReadNs != 0 && nowNs - run.phaseReadNs < kFollowPhaseNs) ||
        history() == nullptr) {
        return;
    }
    run.phaseReadNs = nowNs;
    db::EventFilter f;
    f.runId = RunId{runId};
    f.kind = telemetry::toString(telemetry::EventKind::Phase);
    f.t0Ns = run.phaseCursorNs;
    auto events = m_history->listEvents(f);
    if (!events) {
        return;  // busy or damaged: tried again later
    }
    for (const auto& e : *events) {
        applyPhaseEdge(e.attrs, run.phase);
        run.phaseCursorNs = e.tNs + 1;
    }
}

void RoleAlarmWatch::evaluate(const std::string& nodeId, Node& node, std::int64_t tNs,
                              std::vector<db::IngestEvent>& out) {
    plan::RoleMeasured m;
    bool any = false;
    for (const Reading& r : readings()) {
        auto it = node.values.find(r.series);
        if (it != node.values.end()) {
            m.*r.field = it->second;
            any = any || r.series != series::kHostMemUsed;
        }
    }
    if (!any) {
        return;
    }
    const std::int64_t now = steadyNs();
    for (auto& [runId, run] : node.runs) {
        lookUpPlan(nodeId, runId, run, now);
        followPhase(runId, run, now);
        if (!run.node || !run.phase) {
            run.streak.clear();
            continue;
        }
        const plan::Phase phase = *run.phase;
        std::map<std::string, int> streak;
        const auto lines = plan::planBesideMeasured(*run.node, phase, m);
        for (const plan::RoleAlarm& a : plan::roleAlarms(*run.node, phase, m, m_options.alarm)) {
            const std::string key = a.kind + "/" + a.role + "/" + plan::toString(phase);
            const int n = run.streak.count(key) ? run.streak[key] + 1 : 1;
            streak[key] = n;
            if (n != m_options.sustainSamples) {
                continue;  // not yet sustained, or already recorded in this episode
            }
            double planned = -1;
            for (const plan::RoleLine& l : lines) {
                if (l.role == a.role) {
                    planned = l.plannedBytes;
                }
            }
            db::IngestEvent e;
            e.seq = 0;
            e.tNs = tNs;
            e.runId = RunId{runId};
            e.kind = telemetry::toString(telemetry::EventKind::MemoryAlarm);
            e.message = a.message;
            e.attrs = {{telemetry::attr::kState, "raised"},
                       {"source", "plan"},
                       {"cause", a.kind},
                       {"role", a.role},
                       {"node", nodeId},
                       {"plan_node", run.node->node},
                       {telemetry::attr::kPhase, plan::toString(phase)},
                       {"measured_bytes", a.measuredBytes},
                       {"limit_bytes", a.thresholdBytes},
                       {"sustained_reports", m_options.sustainSamples}};
            if (planned >= 0) {
                e.attrs["planned_bytes"] = planned;
            }
            out.push_back(std::move(e));
        }
        run.streak = std::move(streak);  // an alarm not raised now ends its episode
    }
}

std::vector<db::IngestEvent> RoleAlarmWatch::onBatch(const db::IngestBatch& batch) {
    std::lock_guard lock(m_mutex);
    std::vector<db::IngestEvent> out;
    const std::string nodeId = batch.nodeId.value();
    Node& node = m_nodes[nodeId];
    // Samples and events in the daemon's order (seq): a phase starts before the reports in it.
    struct Item {
        std::uint64_t seq;
        const db::IngestSample* sample;
        const db::IngestEvent* event;
    };
    std::vector<Item> items;
    for (const auto& s : batch.samples) {
        if (s.runId.empty() && isRead(s.series)) {
            items.push_back({s.seq, &s, nullptr});
        }
    }
    for (const auto& e : batch.events) {
        if (!e.runId.empty() && e.seq != 0) {
            items.push_back({e.seq, nullptr, &e});
        }
    }
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.seq < b.seq; });
    std::int64_t pendingT = 0;
    for (const Item& item : items) {
        if (item.sample != nullptr) {
            if (pendingT != 0 && item.sample->tNs != pendingT) {
                evaluate(nodeId, node, pendingT, out);
            }
            pendingT = item.sample->tNs;
            node.values[item.sample->series] = item.sample->value;
            continue;
        }
        const db::IngestEvent& e = *item.event;
        if (e.kind == telemetry::toString(telemetry::EventKind::Phase)) {
            Run& run = node.runs[e.runId.value()];
            if (!run.phaseHere) {
                run.phaseHere = true;  // this node's own phases from now on, not the history's
                run.phase.reset();
            }
            applyPhaseEdge(e.attrs, run.phase);
        } else if (e.kind == telemetry::toString(telemetry::EventKind::RunState) ||
                   e.kind == telemetry::toString(telemetry::EventKind::ProcessExit)) {
            const auto state = control::runStateFromAttrs(e.attrs);
            if (state && *state != db::RunState::Running) {
                node.runs.erase(e.runId.value());
            } else if (state) {
                node.runs[e.runId.value()];  // a run on this node, phases said here or not
            }
        }
    }
    if (pendingT != 0) {
        evaluate(nodeId, node, pendingT, out);
    }
    return out;
}

}  // namespace runplane::cli
