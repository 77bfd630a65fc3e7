#pragma once
// Conversions between protocol messages and the plain value types of node_types.h (private to
// runplane_control; the only place besides node_client.cpp that sees protobuf types).

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

v1::StartRunRequest toProto(const StartRunSpec& spec);
v1::PreflightRequest toProto(const PreflightSpec& spec);

}  // namespace runplane::control
