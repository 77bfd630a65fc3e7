#pragma once
// The memory plan of a run's recipe snapshot (issue 43): parsed with the planner against the model
// catalog of a recipes directory (given, or the one next to the executable). Shared by
// `runplanectl watch`'s role alarms and `runplanectl plan --from-run`. Thread-safe (pure).

#include <optional>
#include <string>

#include "backend/plan/planner.h"

namespace runplane::cli {

/// The recipes directory: `given`, else the one next to the running executable; empty (with the
/// reason in `why`) when neither is found.
std::string recipesDirOr(const std::string& given, std::string& why);

/// The plan of `recipeYaml`; nullopt (with the reason in `why`) when there is no snapshot, it does
/// not parse, or the catalog cannot be read.
std::optional<plan::Plan> planOfSnapshot(const std::string& recipeYaml,
                                         const std::string& recipesDir, std::string& why);

/// The plan's phase of a phase event's name ("load", "rollout", "train", "weight_sync");
/// nullopt for names the plan has no phase for (eval, a site's own markers).
std::optional<plan::Phase> planPhaseNamed(const std::string& name);

}  // namespace runplane::cli

#include <cstdint>
#include <vector>

#include "db/history/history.h"

namespace runplane::cli {

/// A phase's time window on one node, from a run's phase events (docs/daemon.md, "Events"): a
/// timer's start and end bound it; a marker ("[runplane-phase] NAME") lasts until the next phase
/// event (or the run's end).
struct PhaseWindow {
    plan::Phase phase = plan::Phase::Load;
    std::int64_t t0Ns = 0, t1Ns = 0;
};
std::vector<PhaseWindow> phaseWindowsOf(db::History& history, const db::RunRecord& run,
                                        const std::string& node);

/// The largest value of a node-level series in [t0, t1]; -1 when it has no sample there.
double seriesPeakIn(db::History& history, const std::string& node, const std::string& name,
                    std::int64_t t0Ns, std::int64_t t1Ns);

}  // namespace runplane::cli
