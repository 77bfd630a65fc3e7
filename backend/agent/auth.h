#pragma once
// Per-call authentication at the RPC edge. With a bearer token configured, every Agent call must
// carry `authorization: Bearer <token>` metadata; the comparison takes the same time whatever
// the mismatch. With mutual TLS the transport has already verified the client certificate.
// Refusals are logged with the peer and the method.
//
// Thread-safety: check() from any thread (immutable after construction).

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>
#include <string_view>

#include "backend/agent/logger.h"

namespace runplane::agent {

/// Constant-time equality for secrets: the time depends only on the lengths.
bool constantTimeEquals(std::string_view a, std::string_view b);

class Authenticator {
  public:
    Authenticator(std::optional<std::string> token, Logger& logger);
    /// OK, or UNAUTHENTICATED with a message that never echoes what the caller sent.
    grpc::Status check(const grpc::CallbackServerContext* context, std::string_view method) const;
    bool tokenRequired() const { return m_token.has_value(); }

  private:
    std::optional<std::string> m_token;
    Logger& m_logger;
};

}  // namespace runplane::agent
