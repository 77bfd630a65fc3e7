#include "backend/cli/plan_from_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "backend/cli/run_plan.h"
#include "backend/control/text_format.h"
#include "backend/plan/role_budget.h"
#include "common/telemetry/series.h"
#include "db/history/history.h"

namespace runplane::cli {
namespace {

using json = nlohmann::json;
namespace series = telemetry::series;

std::string gb(double bytes) {
    if (bytes < 0) {
        return "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.3f GB", bytes / 1e9);
    return text;
}

/// One row of the comparison: a measured series and the plan line (role_budget.h) it faces.
struct Row {
    std::string role;
    std::string series;
    std::string planRole;  // empty: nothing planned for it
};

std::vector<Row> rows() {
    return {
        {"trainer", series::role("trainer", series::kRoleRss), "trainer"},
        {"rollout", series::role("rollout", series::kRoleRss), "rollout"},
        {"ray (object store)", series::role("ray", series::kRoleObjectStore), "ray"},
        {"page cache", series::kHostMemPageCache, "page_cache"},
        {"router", series::role("router", series::kRoleRss), ""},
        {"ray (processes)", series::role("ray", series::kRoleRss), ""},
        {"driver", series::role("driver", series::kRoleRss), ""},
        {"other", series::role("other", series::kRoleRss), ""},
    };
}

double plannedIn(const plan::NodeMemory& node, plan::Phase phase, const std::string& role) {
    for (const auto& line : plan::planBesideMeasured(node, phase, {})) {
        if (line.role == role) {
            return line.plannedBytes;
        }
    }
    return 0;
}

/// The processes of `role` on the node, and the runtime the plan gives them in total.
int processesOf(const plan::NodeMemory& node, const std::string& role) {
    if (node.trainerRanks + node.engineGpus <= 0) {
        return role == "trainer" ? 1 : 0;  // CPU-only: one process, the trainer's
    }
    return role == "trainer" ? node.trainerRanks : node.engineGpus;
}

/// What one GPU process's host runtime measured in this run: per phase, the role's measured peak
/// less its other planned components, over its processes; the largest over the phases (a fixed
/// budget covers the peak). basis: where it came from.
struct RuntimeEstimate {
    double bytes = -1;
    std::string basis;
};

}  // namespace

int printPlanFromRun(const plan::Plan& p, const plan::Recipe& recipe, const std::string& runId,
                     const std::string& historyPath, bool asJson) {
    db::OpenOptions open;
    open.readOnly = true;
    auto history = db::History::open(historyPath, open);
    if (!history) {
        std::cerr << "runplanectl plan --from-run: " << history.error() << "\n";
        return 2;
    }
    auto run = (*history)->run(RunId{runId});
    if (!run || !*run) {
        std::cerr << "runplanectl plan --from-run: no run '" << runId << "' in " << historyPath
                  << "\n";
        return 2;
    }
    const db::RunRecord& r = **run;
    std::map<std::string, std::map<std::string, double>> measured;  // node -> row -> peak
    for (const Row& row : rows()) {
        if (auto peaks = (*history)->runPeaks(r.id, row.series)) {
            for (const auto& pk : *peaks) {
                measured[pk.nodeId.value()][row.role] = pk.peak;
            }
        }
    }
    std::vector<std::string> nodes = r.nodes;
    for (const auto& [node, _] : measured) {
        if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
            nodes.push_back(node);
        }
    }
    const double runtimePlanned = recipe.memory.processHostGb * 1e9;
    RuntimeEstimate runtime;
    double storePeak = -1;
    json out = {{"run", r.id.value()}, {"nodes", json::array()}};
    std::vector<std::vector<std::string>> table = {
        {"NODE", "ROLE", "PLANNED PEAK", "MEASURED PEAK", "DELTA"}};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        // The i-th node of the run faces the plan's node i (Ray places by node order).
        const plan::NodeMemory* planned = i < p.memory.nodes.size() ? &p.memory.nodes[i] : nullptr;
        json jn = {{"node_id", nodes[i]}, {"roles", json::array()}};
        const auto& m = measured[nodes[i]];
        for (const Row& row : rows()) {
            double plannedPeak = -1;
            if (planned != nullptr && !row.planRole.empty()) {
                for (plan::Phase phase : plan::kPhases) {
                    plannedPeak = std::max(plannedPeak, plannedIn(*planned, phase, row.planRole));
                }
            }
            const auto it = m.find(row.role);
            const double got = it == m.end() ? -1 : it->second;
            if (got < 0 && plannedPeak <= 0) {
                continue;
            }
            const bool both = got >= 0 && plannedPeak >= 0;
            jn["roles"].push_back(
                {{"role", row.role},
                 {"planned_peak_bytes", plannedPeak >= 0 ? json(plannedPeak) : json(nullptr)},
                 {"measured_peak_bytes", got >= 0 ? json(got) : json(nullptr)},
                 {"delta_bytes", both ? json(got - plannedPeak) : json(nullptr)}});
            table.push_back(
                {nodes[i], row.role, gb(plannedPeak), gb(got),
                 both ? (got >= plannedPeak ? "+" : "-") + gb(std::abs(got - plannedPeak)) : "-"});
            if (row.planRole == "ray" && got >= 0) {
                storePeak = std::max(storePeak, got);
            }
        }
        out["nodes"].push_back(jn);
        if (planned == nullptr) {
            continue;
        }
        // The per-process runtime this run implies, role by role, phase by phase.
        const auto windows = phaseWindowsOf(**history, r, nodes[i]);
        for (const std::string role : {"trainer", "rollout"}) {
            const int n = processesOf(*planned, role);
            if (n <= 0) {
                continue;
            }
            const std::string name = series::role(role, series::kRoleRss);
            auto consider = [&](double peak, plan::Phase phase, const std::string& where) {
                if (peak < 0) {
                    return;
                }
                const double others = plannedIn(*planned, phase, role) - n * runtimePlanned;
                const double per = (peak - std::max(others, 0.0)) / n;
                if (per > runtime.bytes) {
                    runtime.bytes = per;
                    runtime.basis = role + " on " + nodes[i] + " " + where + ": " + gb(peak) +
                                    " measured, " + gb(std::max(others, 0.0)) +
                                    " of it planned as other components, over " +
                                    std::to_string(n) + " process" + (n == 1 ? "" : "es");
                }
            };
            for (const PhaseWindow& w : windows) {
                consider(seriesPeakIn(**history, nodes[i], name, w.t0Ns, w.t1Ns), w.phase,
                         std::string("during ") + plan::toString(w.phase));
            }
            if (windows.empty()) {
                // No phase events: the run's peak against the phase that plans the most.
                plan::Phase most = plan::Phase::Load;
                for (plan::Phase phase : plan::kPhases) {
                    if (plannedIn(*planned, phase, role) > plannedIn(*planned, most, role)) {
                        most = phase;
                    }
                }
                const auto it = m.find(role);
                consider(it == m.end() ? -1 : it->second, most,
                         std::string("over the run (no phase events; against ") +
                             plan::toString(most) + ")");
            }
        }
    }
    json calibration = json::object();
    calibration["memory.process_host_gb"] = {
        {"planned", recipe.memory.processHostGb},
        {"from_run", runtime.bytes >= 0 ? json(std::max(runtime.bytes, 0.0) / 1e9) : json(nullptr)},
        {"basis", runtime.basis}};
    calibration["cluster.ray_object_store_max_gb"] = {
        {"planned", recipe.cluster.rayObjectStoreMaxGb},
        {"from_run", storePeak >= 0 ? json(storePeak / 1e9) : json(nullptr)},
        {"basis", "the object store's measured peak (role.ray.object_store_bytes)"}};
    calibration["memory.allocator_fragmentation"] = {
        {"planned", recipe.memory.allocatorFragmentation},
        {"from_run", nullptr},
        {"basis", "GPU allocator slack: host memory by role does not measure it"}};
    out["calibration"] = calibration;
    if (asJson) {
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    std::cout << "run " << r.id.value() << " (" << historyPath
              << "): measured peak by role beside this recipe's plan\n";
    std::cout << runplane::control::formatTable(table, /*wide=*/true);
    std::cout << "fixed budgets taken from this run:\n";
    for (const auto& [field, c] : calibration.items()) {
        char planned[32];
        std::snprintf(planned, sizeof planned, "%.3f", c["planned"].get<double>());
        std::string from = "not measured";
        if (!c["from_run"].is_null()) {
            char text[32];
            std::snprintf(text, sizeof text, "%.3f", c["from_run"].get<double>());
            from = text;
        }
        std::cout << "  " << field << ": planned " << planned << ", from this run " << from << " — "
                  << c["basis"].get<std::string>() << "\n";
    }
    return 0;
}

}  // namespace runplane::cli
