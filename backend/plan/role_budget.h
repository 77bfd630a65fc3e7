#pragma once
// Plan beside measurement (issue 43): the memory plan's host components of one node and phase
// grouped by the process role that holds them (the daemon's roles, docs/daemon.md "Process
// roles"), set beside what the daemon measured per role, and the alarms that name the cause —
// two backups resident at once, checkpoint page cache left behind, a role over its budget — with
// thresholds taken from the plan. The mapping is a table (kRoleComponents); the rules are in
// docs/memory-model.md, "Plan beside measurement". Pure arithmetic; thread-safe.

#include <span>
#include <string>
#include <vector>

#include "backend/plan/memory_model.h"

namespace runplane::plan {

/// Which share of a component a role holds: all of it, or the process runtime of the trainer's
/// ranks / the engines' GPUs on the node (ProcessRuntime is `(ranks + egpus) x per process`).
enum class RoleShare { Whole, TrainerProcesses, EngineProcesses };

struct RoleComponent {
    const char* role;  // "trainer", "rollout", "ray", "page_cache"
    Component component;
    RoleShare share;
};

/// trainer -> its backups and copies + its runtime, rollout -> the weight mirror + its runtime,
/// ray -> the object store, page_cache -> the checkpoint page cache.
std::span<const RoleComponent> roleComponents();

/// What was measured on one node at one moment (or a phase's peak), bytes; < 0 = not measured.
struct RoleMeasured {
    double trainer = -1, rollout = -1, router = -1, ray = -1, driver = -1, other = -1;
    double objectStore = -1;  // role.ray.object_store_bytes
    double pageCache = -1;    // host.mem.page_cache_bytes
    double used = -1;         // host.mem.used_bytes
};

/// One line of plan beside measurement.
struct RoleLine {
    std::string role;  // trainer, rollout, ray (object store), page_cache
    double plannedBytes = 0;
    double measuredBytes = -1;  // -1: not measured
    std::string components;     // "trainer tms backup + process runtime (2 of 4)"
};

/// The lines for node `node` in `phase`, plus "unexplained": used memory no role explains
/// (used − Σ role RSS), when used and every role were measured.
std::vector<RoleLine> planBesideMeasured(const NodeMemory& node, Phase phase,
                                         const RoleMeasured& measured);

struct RoleAlarm {
    std::string kind;     // "two_backups", "page_cache", "role_over_budget"
    std::string role;     // the role (or "page_cache") whose memory raised it
    std::string message;  // names the cause, the node, the phase and the sizes
    double measuredBytes = 0;
    double thresholdBytes = 0;
};

struct RoleAlarmOptions {
    /// A role is over budget beyond planned x (1 + tolerance).
    double tolerance = 0.10;
    /// A backup (or the checkpoint's pages) counts as resident when at least this share of its
    /// planned size is measured beyond the phase's plan.
    double residentShare = 0.5;
};

/// The alarms for node `node` in `phase` (docs/memory-model.md, "Plan beside measurement").
std::vector<RoleAlarm> roleAlarms(const NodeMemory& node, Phase phase, const RoleMeasured& measured,
                                  const RoleAlarmOptions& options = {});

}  // namespace runplane::plan
