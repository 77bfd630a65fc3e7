#pragma once
// Presentation mapping of the planner's output for the Design page: the memory plan as stacked
// budget bars (per node vs host RAM + alarm line; per GPU class vs HBM) and the topology as a
// coloured nodes × GPUs grid. Pure functions over values; cheap enough for every edit.

#include <QString>

#include <vector>

#include "backend/plan/memory_model.h"
#include "backend/plan/rules.h"
#include "backend/plan/topology.h"
#include "gui/widgets/budget_types.h"

namespace runplane::gui {

/// Host memory per node and phase. Nodes with identical budgets are merged ("nodes 1–15").
BudgetChartData hostBudgetChart(const plan::MemoryPlan& memory);
/// Device memory per GPU class and phase, against the GPU's HBM.
BudgetChartData gpuBudgetChart(const plan::MemoryPlan& memory);

enum class TopologyColor { TpGroup, PpStage, EpGroup, DpRank, Engine };
/// "TP group", "PP stage", ...
QString toString(TopologyColor mode);
/// Why the parallel layout is invalid (the error findings of the layout rules: cluster size and
/// GPU budget, trainer grids, engine divisibility, recipe limits), one "rule: message" per line;
/// "" when it is valid. The Design page then draws no topology and shows this instead.
QString invalidLayoutReason(const std::vector<plan::Finding>& findings);
TopologyData topologyGrid(const plan::Topology& topology, TopologyColor mode);

}  // namespace runplane::gui
