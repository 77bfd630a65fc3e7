#include "backend/agent/run_role_plan.h"

#include <cmath>
#include <set>
#include <utility>

#include "backend/agent/process_roles.h"

namespace runplane::agent {
namespace {

constexpr std::size_t kMaxPlannedRows = 256;
constexpr std::size_t kMaxRoleRowsBytes = 64 * 1024;
constexpr std::size_t kMaxComponentsBytes = 200;
constexpr double kMaxPlannedBytes = 1e15;  // 1 PB: far beyond any node's memory

bool validRoleName(std::string_view r) {
    if (r.empty() || r.size() > 32 || r.front() < 'a' || r.front() > 'z') {
        return false;
    }
    for (char c : r) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            return false;
        }
    }
    return true;
}

bool knownPhase(std::string_view p) {
    for (std::string_view k : kPlanPhases) {
        if (p == k) {
            return true;
        }
    }
    return false;
}

}  // namespace

Status validateRunRolePlan(const RunRolePlan& plan) {
    if (plan.planned.size() > kMaxPlannedRows) {
        return Error{"planned_roles: " + std::to_string(plan.planned.size()) +
                     " rows; at most 256 (one per role and phase)"};
    }
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t i = 0; i < plan.planned.size(); ++i) {
        const PlannedRoleRow& row = plan.planned[i];
        const std::string at = "planned_roles[" + std::to_string(i) + "]";
        if (!validRoleName(row.role)) {
            return Error{at + ".role '" + printableTitle(row.role, 40) +
                         "': expected [a-z][a-z0-9_]{0,31}"};
        }
        if (!knownPhase(row.phase)) {
            return Error{at + ".phase '" + printableTitle(row.phase, 40) +
                         "': expected load, rollout, train or weight_sync"};
        }
        if (!std::isfinite(row.bytes) || row.bytes < 0 || row.bytes > kMaxPlannedBytes) {
            return Error{at + ".planned_bytes: expected a finite number of bytes, 0 to 1e15"};
        }
        if (row.components.size() > kMaxComponentsBytes) {
            return Error{at + ".components: over 200 bytes"};
        }
        if (!seen.emplace(row.role, row.phase).second) {
            return Error{at + ": role '" + row.role + "' in phase '" + row.phase +
                         "' is planned twice"};
        }
    }
    if (plan.roleRows.size() > kMaxRoleRowsBytes) {
        return Error{"role_rows: over 64 KiB; a run's role rows are a few lines"};
    }
    if (!plan.roleRows.empty()) {
        auto parsed = RoleTable::parse(plan.roleRows, "role_rows");
        if (!parsed) {
            return Error{parsed.error()};
        }
    }
    return {};
}

Result<RunRolePlan> runRolePlanOf(const v1::StartRunRequest& request) {
    RunRolePlan plan;
    if (static_cast<std::size_t>(request.planned_roles_size()) > kMaxPlannedRows) {
        return Error{"planned_roles: " + std::to_string(request.planned_roles_size()) +
                     " rows; at most 256 (one per role and phase)"};
    }
    for (const auto& p : request.planned_roles()) {
        plan.planned.push_back({p.role(), p.phase(), p.planned_bytes(), p.components()});
    }
    plan.roleRows = request.role_rows();
    if (Status s = validateRunRolePlan(plan); !s.ok()) {
        return Error{s.error()};
    }
    for (auto& row : plan.planned) {
        row.components = printableTitle(row.components, kMaxComponentsBytes);
    }
    return plan;
}

}  // namespace runplane::agent
