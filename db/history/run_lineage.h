#pragma once
// Run lineage (issue 49, docs/history.md "Run lineage"): which run a run resumed from a checkpoint
// of, or forked from, and at which step. History::setRunParent / runParent store one link per
// run; this header walks the links and finds a launch's parent from its argv (the checkpoint it
// loads, in a known run's save folder). Plain C++: no Qt, no gRPC.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "db/history/history.h"

namespace runplane::db {

/// Links followed at most (a longer chain is cut there).
inline constexpr std::size_t kMaxLineageDepth = 64;

/// The run's ancestors, nearest first: [its parent link, the parent's parent link, ...]. A cycle
/// (which setRunParent refuses) ends the walk.
Result<std::vector<History::RunParent>> lineageChain(History& history, const RunId& runId);

/// The step of a Megatron checkpoint folder name (`iter_0000200` -> 200); nullopt otherwise.
std::optional<std::int64_t> checkpointStepOf(const std::string& component);

/// What a launch's argv says about checkpoints (a table of flags, kCheckpointFlags in
/// run_lineage_detect.cpp): the folder it loads, the folder it saves to, the step it picks.
/// Paths are made absolute against `workdir` (when relative and workdir is absolute) and
/// lexically normal; a load path ending in `iter_N` is its folder, with step N.
struct LaunchCheckpoints {
    std::string load;  // "" when the argv loads no checkpoint
    std::string save;
    std::optional<std::int64_t> step;
};
LaunchCheckpoints launchCheckpoints(const std::vector<std::string>& argv,
                                    const std::string& workdir);

/// The parent a launch names by its checkpoint: the most recently started run (other than
/// `child`) whose save folder is the folder the launch loads. Kind `resume` when the launch saves
/// into that same folder (it continues the run), else `fork`; step: the launch's own step flag,
/// else the `iter_N` it loads, else the folder's `latest_checkpointed_iteration.txt` when this
/// machine can read it, else -1. nullopt when the argv loads nothing or no known run saved there.
std::optional<History::RunParent> detectParent(const std::vector<RunRecord>& runs,
                                               const std::string& child,
                                               const std::vector<std::string>& argv,
                                               const std::string& workdir);

/// "RUN" or "RUN@STEP" (the --resumes / --forks / runs parent syntax): {run, step (-1 when
/// absent)}; an error names a bad step.
Result<std::pair<std::string, std::int64_t>> parseRunAtStep(const std::string& text);

}  // namespace runplane::db
