#pragma once
// Conversions between protocol messages and the plain value types of node_types.h (private to
// runplane_control; the only place besides node_client.cpp that sees protobuf types).

#include <map>
#include <optional>
#include <string>

#include "backend/control/node_types.h"
#include "runplane/v1/agent.pb.h"

namespace runplane::control {

NodeSummary fromProto(const v1::NodeInfo& info, const std::string& address);
RunStatusInfo fromProto(const v1::RunStatus& status);
PreflightResult fromProto(const v1::PreflightReport& report, const std::string& address);
NcclLibrarySummary fromProto(const v1::NcclLibrary& library);
TelemetryBatchInfo fromProto(const v1::TelemetryBatch& batch);

/// The node's run state a run_state event names in its "state" attribute: the protocol enum's
/// name as the daemon writes it ("RUN_STATE_FAILED"); nullopt for anything else.
std::optional<NodeRunState> runStateFromName(const std::string& name);

/// The run state a run_state event reports: its typed run_state, or, when that is unset (a
/// daemon or spool record from before the field), attrs["state"] read by runStateFromName.
/// nullopt when neither names a run state (a memory alarm's "raised" is none). attrs is the event's
/// attribute map as converted; a typed state missing from it is added as attrs["state"] (the stored
/// form).
std::optional<NodeRunState> runStateOf(const v1::Event& event,
                                       std::map<std::string, std::string>& attrs);

v1::StartRunRequest toProto(const StartRunSpec& spec);
v1::PreflightRequest toProto(const PreflightSpec& spec);

}  // namespace runplane::control
