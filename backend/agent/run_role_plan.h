#pragma once
// A run's memory plan by process role, as StartRun hands it to the daemon (issue 43,
// docs/daemon.md "Planned roles"): planned bytes per (role, phase) on this node, and the run's own
// role-table rows (tried before the daemon's while the run lives). Validated here once, at
// StartRun and when a run record is re-read; the collector only reads it. Pure; thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

struct PlannedRoleRow {
    std::string role;   // [a-z][a-z0-9_]{0,31}: trainer, rollout, ray, page_cache, a site's own
    std::string phase;  // one of kPlanPhases
    double bytes = 0;   // finite, >= 0
    std::string components;  // printable, at most 200 bytes
};

struct RunRolePlan {
    std::vector<PlannedRoleRow> planned;  // at most 256 rows, one per (role, phase)
    std::string roleRows;                 // role-table rows, at most 64 KiB; "" none
    bool empty() const { return planned.empty() && roleRows.empty(); }
};

/// The plan's phases, as the planner and the phase events spell them.
inline constexpr std::string_view kPlanPhases[] = {"load", "rollout", "train", "weight_sync"};

/// The request's planned_roles and role_rows, checked: an error names the field and the index
/// (`planned_roles[3].phase: ...`, `role_rows:2: ...`).
Result<RunRolePlan> runRolePlanOf(const v1::StartRunRequest& request);

/// Checks a plan read back from a run record (the same rules as runRolePlanOf).
Status validateRunRolePlan(const RunRolePlan& plan);

}  // namespace runplane::agent
