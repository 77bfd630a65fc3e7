#pragma once
// `runplanectl plan RECIPE --from-run RUN` (issue 43): a finished run's measured peak per role
// (from the history) beside this recipe's planned peak, the difference, and what the plan's fixed
// budgets would be if taken from that run (memory.process_host_gb, the Ray object store, the
// checkpoint's page cache), so the next plan is calibrated from history. docs/memory-model.md,
// "Calibrating from a run".

#include <string>

#include "backend/plan/planner.h"

namespace runplane::cli {

/// Prints the comparison (text, or JSON when `json`); returns the exit status: 0, or 2 when the
/// history or the run cannot be read (the reason on stderr).
int printPlanFromRun(const plan::Plan& plan, const plan::Recipe& recipe, const std::string& runId,
                     const std::string& historyPath, bool json);

}  // namespace runplane::cli
