#pragma once
// Internal: the planner's steps with what an earlier step computed passed in, for planRecipe
// (rules.cpp). Each public entry point (planTopology, planMemory, validateResolved) computes the
// layout and the parameter counts itself and checks the recipe's (and the shape's) bounds
// before sizing anything from them; planRecipe checks the bounds once, computes the layout and
// the parameter counts once, and calls these.
//
// Precondition of every function here: checkRecipeLimits(recipe) (and checkShapeLimits(shape)
// where a shape is given) found nothing, and layout / params are computeLayout(recipe) /
// computeParams(shape).

#include <vector>

#include "backend/plan/memory_model.h"
#include "backend/plan/model_params.h"
#include "backend/plan/rules.h"
#include "backend/plan/topology.h"

namespace runplane::plan::detail {

/// Every GPU's coordinates from the layout alone.
Topology planTopologyWithin(const Layout& layout);
MemoryPlan planMemoryWithin(const Recipe& recipe, const ModelShape& shape, const Topology& topology,
                            const ModelParams& params);
std::vector<Finding> validateWithin(const Recipe& recipe, const ModelShape& shape,
                                    const MemoryPlan& memory, const Layout& layout,
                                    const ModelParams& params);

}  // namespace runplane::plan::detail
