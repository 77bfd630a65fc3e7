#pragma once
// Writes multi-node dispatch into the run history: the run record of a launch (head + workers,
// the multi-node environment and any overridden preflight failures in its provenance) and one
// event per finished dispatch step, so "what happened during bring-up" is kept with the run.

#include <string>
#include <vector>

#include "backend/control/dispatch.h"
#include "common/result.h"

namespace runplane::control {

/// The node id under which the controller's own dispatch events are stored (they carry no daemon
/// sequence number; the daemon address of each step is in the event's attrs as "node").
inline constexpr const char* kDispatchEventsNode = "controller";

/// What to record about a launch besides the result itself.
struct DispatchRecordSpec {
    std::string historyPath;
    std::string runName;                // empty: the run id
    std::string recipeYaml;             // snapshot, may be empty
    std::string provenanceJson = "{}";  // what the caller knows (argv, recipe path, git rev)
};

/// Records `result` of launchMultiNode(request): every finished step as an event
/// (kind "dispatch.<step>", message, attrs {node, ok}), and, when the launch started the head's
/// run, the run itself (state running, nodes = head then workers). A launch that did not start
/// is recorded as events only, under the request's run id. Nothing already stored is changed
/// other than this run's record.
Status recordLaunch(const DispatchRecordSpec& spec, const LaunchRequest& request,
                    const DispatchResult& result);

/// Records the steps of stopMultiNode as events of `runId`, and marks the run stopped when the
/// head's run was stopped (the StopRun step succeeded).
Status recordStop(const std::string& historyPath, const std::string& runId,
                  const StopResult& result);

}  // namespace runplane::control
