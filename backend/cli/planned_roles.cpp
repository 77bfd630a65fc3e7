#include "backend/cli/planned_roles.h"

#include "backend/cli/run_plan.h"
#include "backend/plan/role_budget.h"

namespace runplane::cli {

std::vector<control::StartRunSpec::PlannedRole> plannedRolesOf(const plan::NodeMemory& node) {
    std::vector<control::StartRunSpec::PlannedRole> out;
    for (plan::Phase phase : plan::kPhases) {
        for (const plan::RoleLine& line : plan::planBesideMeasured(node, phase, {})) {
            if (line.role == "unexplained") {  // a measurement's remainder, never planned
                continue;
            }
            out.push_back({line.role, std::string(plan::toString(phase)), line.plannedBytes,
                           line.components});
        }
    }
    return out;
}

std::vector<control::StartRunSpec::PlannedRole> plannedRolesOfSnapshot(
    const std::string& recipeYaml, const std::string& recipesDir, int node, std::string& why) {
    const auto p = planOfSnapshot(recipeYaml, recipesDir, why);
    if (!p) {
        return {};
    }
    if (!p->model) {
        why = "the recipe's model is not in the catalog";
        return {};
    }
    if (node < 0 || static_cast<std::size_t>(node) >= p->memory.nodes.size()) {
        why = "the plan has no node " + std::to_string(node);
        return {};
    }
    return plannedRolesOf(p->memory.nodes[static_cast<std::size_t>(node)]);
}

std::string roleRowsOf(const std::string& rowsFile, const plan::Recipe* recipe) {
    std::string rows = rowsFile;
    if (recipe == nullptr || recipe->analysis.roleRows.empty()) {
        return rows;
    }
    if (!rows.empty() && rows.back() != '\n') {
        rows += '\n';
    }
    rows += "# the recipe's analysis.role_rows\n";
    for (const std::string& row : recipe->analysis.roleRows) {
        rows += row;
        rows += '\n';
    }
    return rows;
}

}  // namespace runplane::cli
