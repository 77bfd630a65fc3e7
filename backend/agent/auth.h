#pragma once
// Per-call authentication at the RPC edge. With a bearer token configured, every Agent call must
// carry `authorization: Bearer <token>` metadata; the comparison takes the same time whatever
// the mismatch. With mutual TLS the transport has already verified the client certificate.
//
// Repeated failures from one peer host lock that host out for a while (a back-off that doubles
// per lockout, docs/security.md), so a token cannot be guessed at line rate; during a lockout even
// the right token is refused. Refusals are logged with the peer and the method; calls refused
// during a lockout are not logged again (the lockout's own line says so), so a guessing peer
// writes at most `maxFailures` lines per lockout.
//
// Thread-safety: check() from any thread.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "backend/agent/logger.h"

namespace runplane::agent {

/// Constant-time equality for secrets: the time depends only on the lengths.
bool constantTimeEquals(std::string_view a, std::string_view b);

/// The host part of a gRPC peer string ("ipv4:127.0.0.1:5000" -> "127.0.0.1",
/// "ipv6:[::1]:5000" -> "::1"); other forms are returned whole.
std::string peerHost(std::string_view peer);

struct AuthThrottleOptions {
    int maxFailures = 10;                  // failures within `window` that start a lockout; 0 = off
    std::chrono::seconds window{60};       // failures older than this are forgotten
    std::chrono::seconds firstLockout{2};  // doubled for each further lockout of the host
    std::chrono::seconds maxLockout{300};
    std::size_t maxTrackedHosts = 4096;  // bound on memory; the stalest host is forgotten
};

/// Failure bookkeeping per peer host. Thread-safe.
class AuthThrottle {
  public:
    using Clock = std::function<std::chrono::steady_clock::time_point()>;
    explicit AuthThrottle(AuthThrottleOptions options = {}, Clock clock = {});

    /// Seconds left in the host's lockout (0 = not locked out).
    long lockedForSeconds(const std::string& host);
    /// Records a failure; returns true when this failure started a lockout.
    bool recordFailure(const std::string& host);
    /// A success forgets the host's failures (its lockout count stays).
    void recordSuccess(const std::string& host);
    std::size_t trackedHosts();

  private:
    struct HostState {
        int failures = 0;
        std::chrono::steady_clock::time_point windowStart;
        std::chrono::steady_clock::time_point lockedUntil;
        std::chrono::steady_clock::time_point lastSeen;
        int lockouts = 0;
    };
    std::chrono::steady_clock::time_point now() const;
    void evictIfFull();

    AuthThrottleOptions m_options;
    Clock m_clock;
    std::mutex m_mutex;
    std::map<std::string, HostState> m_hosts;
};

class Authenticator {
  public:
    Authenticator(std::optional<std::string> token, Logger& logger,
                  AuthThrottleOptions throttle = {});
    /// OK; UNAUTHENTICATED with a message that never echoes what the caller sent; or
    /// RESOURCE_EXHAUSTED while the caller's host is locked out after repeated failures.
    grpc::Status check(const grpc::CallbackServerContext* context, std::string_view method) const;
    /// The same decision for a peer string and the presented metadata value (tests, fuzzing).
    grpc::Status checkPresented(const std::string& peer,
                                std::optional<std::string_view> authorization,
                                std::string_view method) const;
    bool tokenRequired() const { return m_token.has_value(); }

  private:
    std::optional<std::string> m_token;
    Logger& m_logger;
    mutable AuthThrottle m_throttle;
};

}  // namespace runplane::agent
