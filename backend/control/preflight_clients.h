#pragma once
// Channels kept between preflights (issue 47: 64 daemons <= 500 ms). A preflight used to build a
// fresh gRPC channel per node and drop it after the one call: every round paid a TCP connect and
// the HTTP/2 set-up on both ends (and a TLS handshake off loopback), about two thirds of the
// controller's CPU per node. A pooled client is reused by the next preflight of the same address
// with the same options (token, TLS files and their size and mtime, call timeout); it is dropped
// after any failed call, so a daemon that was lost is reached through a fresh channel next time
// (never a cached "unavailable"), and after a minute unused, so idle connections do not stay
// open. A pooled connection that the daemon closed while no call ran (it restarted; a link was
// cut and came back) is only noticed by the next call, which fails at once as UNAVAILABLE: the
// caller then asks again once through a fresh channel (a deadline is never retried, so a silent
// node still costs one call timeout). At most kMaxPooledClients entries.

#include <cstddef>
#include <memory>
#include <string>

#include "backend/control/node_client.h"
#include "common/result.h"

namespace runplane::control {

inline constexpr std::size_t kMaxPooledClients = 1024;

/// The pooled client for address with these options, created (no network traffic) when absent;
/// *reused (when given) says whether it served an earlier call.
Result<std::shared_ptr<NodeClient>> pooledNodeClient(const std::string& address,
                                                     const NodeClientOptions& options,
                                                     bool* reused = nullptr);

/// Drops the pooled client (after a failed call): the next one builds a fresh channel.
void dropPooledNodeClient(const std::string& address, const NodeClientOptions& options);

/// How many clients the pool holds (tests).
std::size_t pooledNodeClientCount();

}  // namespace runplane::control
