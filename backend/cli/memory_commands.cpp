// runplanectl memory RUN: a run's host memory by process role (issue 43), per node: the measured
// peak of each role's series over the run (role.<role>.rss_bytes, the object store, the page
// cache) beside the planned peak of the components that role holds (backend/plan/role_budget.h),
// from the recipe snapshot the run was submitted with. Exit 0; 2 when the history or the run
// cannot be read. docs/memory-model.md, "Plan beside measurement".

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "backend/cli/command_registry.h"
#include "backend/cli/run_plan.h"
#include "backend/control/history_location.h"
#include "backend/control/text_format.h"
#include "backend/plan/planner.h"
#include "backend/plan/role_budget.h"
#include "common/telemetry/series.h"
#include "db/history/history.h"

namespace {

using json = nlohmann::json;
namespace series = runplane::telemetry::series;

struct MemoryOptions {
    std::string run;
    std::string history;
    std::string recipesDir;
    bool json = false;
};

std::string gb(double bytes) {
    if (bytes < 0) {
        return "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
    return text;
}

void runMemory(const MemoryOptions& options, runplane::cli::CliContext& context) {
    runplane::db::OpenOptions open;
    open.readOnly = true;
    auto history = runplane::db::History::open(options.history, open);
    if (!history) {
        std::cerr << "runplanectl memory: " << history.error() << "\n";
        context.exitCode = 2;
        return;
    }
    auto run = (*history)->run(runplane::RunId{options.run});
    if (!run || !*run) {
        std::cerr << "runplanectl memory: no run '" << options.run << "' in " << options.history
                  << "\n";
        context.exitCode = 2;
        return;
    }
    const runplane::db::RunRecord& r = **run;
    std::string why;
    const auto plan = runplane::cli::planOfSnapshot(r.recipeYaml, options.recipesDir, why);

    // Measured: each series' peak per node over the run's window.
    struct Row {
        std::string role, measuredSeries, planRole;
    };
    const std::vector<Row> rows = {
        {"trainer", series::role("trainer", series::kRoleRss), "trainer"},
        {"rollout", series::role("rollout", series::kRoleRss), "rollout"},
        {"ray (object store)", series::role("ray", series::kRoleObjectStore), "ray"},
        {"page cache", series::kHostMemPageCache, "page_cache"},
        {"router", series::role("router", series::kRoleRss), ""},
        {"ray (processes)", series::role("ray", series::kRoleRss), ""},
        {"driver", series::role("driver", series::kRoleRss), ""},
        {"other", series::role("other", series::kRoleRss), ""},
    };
    std::map<std::string, std::map<std::string, double>> measured;  // node -> role -> peak
    for (const auto& row : rows) {
        auto peaks = (*history)->runPeaks(r.id, row.measuredSeries);
        if (!peaks) {
            continue;
        }
        for (const auto& p : *peaks) {
            measured[p.nodeId.value()][row.role] = p.peak;
        }
    }
    std::vector<std::string> nodes = r.nodes;
    for (const auto& [node, _] : measured) {
        if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
            nodes.push_back(node);
        }
    }
    json out = {{"run", r.id.value()}, {"nodes", json::array()}};
    if (!plan) {
        out["plan_missing"] = why;
    }
    std::vector<std::string> alarmLines;
    std::vector<std::vector<std::string>> table = {
        {"NODE", "ROLE", "MEASURED PEAK", "PLANNED PEAK", "DELTA", "PLANNED COMPONENTS"}};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        // The i-th node of the run is the plan's node i (Ray places by node order).
        const runplane::plan::NodeMemory* planned =
            plan && i < plan->memory.nodes.size() ? &plan->memory.nodes[i] : nullptr;
        json jn = {{"node_id", nodes[i]}, {"roles", json::array()}};
        for (const auto& row : rows) {
            double plannedPeak = -1;
            std::string components;
            if (planned != nullptr && !row.planRole.empty()) {
                for (runplane::plan::Phase phase : runplane::plan::kPhases) {
                    for (const auto& line :
                         runplane::plan::planBesideMeasured(*planned, phase, {})) {
                        if (line.role == row.planRole && line.plannedBytes > plannedPeak) {
                            plannedPeak = line.plannedBytes;
                            components = line.components;
                        }
                    }
                }
            }
            const auto& node = measured[nodes[i]];
            const auto it = node.find(row.role);
            const double m = it == node.end() ? -1 : it->second;
            if (m < 0 && plannedPeak <= 0) {
                continue;
            }
            const double delta = m >= 0 && plannedPeak >= 0 ? m - plannedPeak : 0;
            jn["roles"].push_back(
                {{"role", row.role},
                 {"measured_peak_bytes", m >= 0 ? json(m) : json(nullptr)},
                 {"planned_peak_bytes", plannedPeak >= 0 ? json(plannedPeak) : json(nullptr)},
                 {"components", components}});
            table.push_back({nodes[i], row.role, gb(m), gb(plannedPeak),
                             m >= 0 && plannedPeak >= 0 ? (delta >= 0 ? "+" : "") + gb(delta) : "-",
                             components});
        }
        // Alarms, phase by phase, from the role series' peaks inside each phase's window.
        jn["alarms"] = json::array();
        if (planned != nullptr) {
            for (const runplane::cli::PhaseWindow& w :
                 runplane::cli::phaseWindowsOf(**history, r, nodes[i])) {
                auto peak = [&](const std::string& name) {
                    return runplane::cli::seriesPeakIn(**history, nodes[i], name, w.t0Ns, w.t1Ns);
                };
                runplane::plan::RoleMeasured m;
                m.trainer = peak(series::role("trainer", series::kRoleRss));
                m.rollout = peak(series::role("rollout", series::kRoleRss));
                m.objectStore = peak(series::role("ray", series::kRoleObjectStore));
                m.pageCache = peak(series::kHostMemPageCache);
                for (const auto& a : runplane::plan::roleAlarms(*planned, w.phase, m)) {
                    jn["alarms"].push_back({{"kind", a.kind},
                                            {"role", a.role},
                                            {"phase", runplane::plan::toString(w.phase)},
                                            {"t0_ns", w.t0Ns},
                                            {"t1_ns", w.t1Ns},
                                            {"message", a.message}});
                    alarmLines.push_back(a.message);
                }
            }
        }
        out["nodes"].push_back(jn);
    }
    if (options.json) {
        std::cout << out.dump(2) << "\n";
        return;
    }
    if (!plan) {
        std::cout << "no plan (" << why << "): measured peaks only\n";
    }
    std::cout << runplane::control::formatTable(table, /*wide=*/true);
    // The same alarm in every window of a phase is printed once, with the count.
    std::vector<std::pair<std::string, int>> distinct;
    for (const auto& a : alarmLines) {
        auto it = std::find_if(distinct.begin(), distinct.end(),
                               [&](const auto& d) { return d.first == a; });
        if (it == distinct.end()) {
            distinct.emplace_back(a, 1);
        } else {
            ++it->second;
        }
    }
    for (const auto& [a, n] : distinct) {
        std::cout << "alarm: " << a << (n > 1 ? " (" + std::to_string(n) + " windows)" : "")
                  << "\n";
    }
}

const bool kMemoryGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto options = std::make_shared<MemoryOptions>();
        options->history = runplane::control::defaultHistoryPath();
        auto* cmd = app.add_subcommand(
            "memory", "A run's host memory by process role: measured peak beside the plan's");
        cmd->add_option("run", options->run, "Run id (see `runplanectl runs`)")->required();
        cmd->add_option("--history", options->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        cmd->add_option("--recipes", options->recipesDir,
                        "recipes directory holding models/ (default: next to the executable)");
        cmd->add_flag("--json", options->json, "Print JSON");
        cmd->callback([options, &context] { runMemory(*options, context); });
    });

}  // namespace
