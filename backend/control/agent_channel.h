#pragma once
// The one channel rule of the control library's own stubs (the Ray RPCs of dispatch, Diagnose),
// private to runplane_control: the bearer token checked before gRPC sees it, plaintext only to
// loopback, TLS when a root certificate is given (with the client certificate for mutual TLS),
// every file through the credential reader.

#include <memory>
#include <string>

#include "backend/control/node_client.h"
#include "common/result.h"
#include "runplane/v1/agent.grpc.pb.h"

namespace runplane::control {

/// maxReceiveBytes > 0 raises gRPC's reply limit (a diagnosis can be large).
Result<std::unique_ptr<v1::Agent::Stub>> makeAgentStub(const std::string& address,
                                                       const NodeClientOptions& options,
                                                       int maxReceiveBytes = 0);

}  // namespace runplane::control
