#include "backend/plan/role_budget.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace runplane::plan {
namespace {

constexpr std::array<RoleComponent, 11> kRoleComponents{{
    {"trainer", Component::ProcessRuntime, RoleShare::TrainerProcesses},
    {"trainer", Component::TrainerBackup, RoleShare::Whole},
    {"trainer", Component::WeightsBackuper, RoleShare::Whole},
    {"trainer", Component::ReferenceCopy, RoleShare::Whole},
    {"trainer", Component::CpuAdamState, RoleShare::Whole},
    {"trainer", Component::CloneArena, RoleShare::Whole},
    {"trainer", Component::PinnedStaging, RoleShare::Whole},
    {"trainer", Component::DeviceStateInRam, RoleShare::Whole},
    {"rollout", Component::ProcessRuntime, RoleShare::EngineProcesses},
    {"rollout", Component::EngineMirror, RoleShare::Whole},
    {"ray", Component::RayObjectStore, RoleShare::Whole},
}};

const PhaseMemory& phaseOf(const NodeMemory& node, Phase phase) {
    return node.phases[static_cast<std::size_t>(phase)];
}

double shareOf(const NodeMemory& node, const PhaseMemory& pm, const RoleComponent& rc) {
    if (rc.share == RoleShare::Whole) {
        return pm.bytesOf(rc.component);
    }
    for (const MemoryItem& item : pm.items()) {
        if (item.component != rc.component) {
            continue;
        }
        const int processes = node.trainerRanks + node.engineGpus;
        if (processes <= 0 || item.count != processes) {
            // CPU-only runs: one process, the trainer's.
            return rc.share == RoleShare::TrainerProcesses ? item.bytes : 0.0;
        }
        const int mine =
            rc.share == RoleShare::TrainerProcesses ? node.trainerRanks : node.engineGpus;
        return item.unitBytes * mine;
    }
    return 0;
}

double plannedFor(const NodeMemory& node, Phase phase, std::string_view role) {
    const PhaseMemory& pm = phaseOf(node, phase);
    double sum = 0;
    for (const auto& rc : kRoleComponents) {
        if (role == rc.role) {
            sum += shareOf(node, pm, rc);
        }
    }
    return sum;
}

std::string componentsOf(const NodeMemory& node, Phase phase, std::string_view role) {
    const PhaseMemory& pm = phaseOf(node, phase);
    std::string out;
    for (const auto& rc : kRoleComponents) {
        if (role != rc.role || shareOf(node, pm, rc) <= 0) {
            continue;
        }
        out += (out.empty() ? "" : " + ") + std::string(toString(rc.component));
    }
    return out.empty() ? "nothing planned" : out;
}

double maxOver(const NodeMemory& node, Component c) {
    double m = 0;
    for (Phase p : kPhases) {
        m = std::max(m, phaseOf(node, p).bytesOf(c));
    }
    return m;
}

std::string where(const NodeMemory& node, Phase phase) {
    return std::string(" during ") + toString(phase) + " on node " + std::to_string(node.node);
}

}  // namespace

std::span<const RoleComponent> roleComponents() {
    return kRoleComponents;
}

std::vector<RoleLine> planBesideMeasured(const NodeMemory& node, Phase phase,
                                         const RoleMeasured& m) {
    std::vector<RoleLine> lines;
    lines.push_back({"trainer", plannedFor(node, phase, "trainer"), m.trainer,
                     componentsOf(node, phase, "trainer")});
    lines.push_back({"rollout", plannedFor(node, phase, "rollout"), m.rollout,
                     componentsOf(node, phase, "rollout")});
    lines.push_back(
        {"ray", plannedFor(node, phase, "ray"), m.objectStore, componentsOf(node, phase, "ray")});
    lines.push_back({"page_cache", phaseOf(node, phase).bytesOf(Component::PageCache), m.pageCache,
                     toString(Component::PageCache)});
    const double roles[] = {m.trainer, m.rollout, m.router, m.ray, m.driver, m.other};
    double sum = 0;
    bool all = m.used >= 0;
    for (double r : roles) {
        all = all && r >= 0;
        sum += std::max(r, 0.0);
    }
    lines.push_back({"unexplained", 0, all ? m.used - sum : -1,
                     "used memory (MemTotal - MemAvailable) that no role's RSS holds"});
    return lines;
}

std::vector<RoleAlarm> roleAlarms(const NodeMemory& node, Phase phase, const RoleMeasured& m,
                                  const RoleAlarmOptions& o) {
    std::vector<RoleAlarm> alarms;
    const PhaseMemory& pm = phaseOf(node, phase);

    // Two backups: both the trainer's backup and the engines' mirror are held, in a phase whose
    // plan holds at most one. What a side holds beyond its other planned components is its
    // backup; it counts as resident from residentShare of the planned backup on.
    const double backup = maxOver(node, Component::TrainerBackup);
    const double mirror = maxOver(node, Component::EngineMirror);
    const bool bothPlanned =
        pm.bytesOf(Component::TrainerBackup) > 0 && pm.bytesOf(Component::EngineMirror) > 0;
    if (backup > 0 && mirror > 0 && !bothPlanned && m.trainer >= 0 && m.rollout >= 0) {
        const double trainerHeld =
            m.trainer - (plannedFor(node, phase, "trainer") - pm.bytesOf(Component::TrainerBackup));
        const double engineHeld =
            m.rollout - (plannedFor(node, phase, "rollout") - pm.bytesOf(Component::EngineMirror));
        if (trainerHeld >= o.residentShare * backup && engineHeld >= o.residentShare * mirror) {
            const char* planHolds =
                pm.bytesOf(Component::TrainerBackup) > 0
                    ? "only the trainer backup"
                    : (pm.bytesOf(Component::EngineMirror) > 0 ? "only the engine mirror"
                                                               : "neither");
            alarms.push_back(
                {"two_backups", pm.bytesOf(Component::TrainerBackup) > 0 ? "rollout" : "trainer",
                 "during " + std::string(toString(phase)) + " both the trainer backup (≈ " +
                     formatGb(trainerHeld) + ") and the engine mirror (≈ " + formatGb(engineHeld) +
                     ") are resident on node " + std::to_string(node.node) +
                     ": two backups (the plan holds " + planHolds + " in this phase)",
                 trainerHeld + engineHeld, o.residentShare * (backup + mirror)});
        }
    }

    // Page cache: after load, the checkpoint's pages should be gone (unless the plan keeps them).
    const double checkpoint = phaseOf(node, Phase::Load).bytesOf(Component::PageCache);
    if (phase != Phase::Load && checkpoint > 0 && m.pageCache >= 0) {
        const double planned = pm.bytesOf(Component::PageCache);
        const double threshold = planned + o.residentShare * checkpoint;
        if (m.pageCache > threshold) {
            alarms.push_back(
                {"page_cache", "page_cache",
                 "page cache " + formatGb(m.pageCache) + where(node, phase) +
                     ": checkpoint pages were not dropped (plan: " + formatGb(planned) +
                     " in this phase; the checkpoint's pages are " + formatGb(checkpoint) + ")",
                 m.pageCache, threshold});
        }
    }

    // A role over its budget.
    struct Check {
        const char* role;
        double measured;
    };
    for (const Check& c :
         {Check{"trainer", m.trainer}, Check{"rollout", m.rollout}, Check{"ray", m.objectStore}}) {
        const double planned = plannedFor(node, phase, c.role);
        if (planned <= 0 || c.measured < 0) {
            continue;
        }
        const double threshold = planned * (1 + o.tolerance);
        if (c.measured > threshold) {
            alarms.push_back({"role_over_budget", c.role,
                              std::string(c.role) + " role " + formatGb(c.measured - planned) +
                                  " over its planned " + formatGb(planned) + " (" +
                                  componentsOf(node, phase, c.role) + ")" + where(node, phase),
                              c.measured, threshold});
        }
    }
    return alarms;
}

}  // namespace runplane::plan
