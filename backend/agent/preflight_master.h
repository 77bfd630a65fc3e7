#pragma once
// MASTER_ADDR as each node sees it (issue 47; docs/dispatch.md, "MASTER_ADDR"): the name resolved
// on this node (getaddrinfo, bounded in time), and a TCP connection from this node to the rank-0
// daemon's own port at that address (ICMP needs privileges; the rank-0 daemon already listens, the
// run's master does not yet). The report also carries this node's interface addresses, so the
// controller can tell whether MASTER_ADDR is an address of the rank-0 node (net.master_addr.rank0).

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runplane/v1/agent.pb.h"

namespace runplane::agent {

/// Appends one check to the report (every preflight check is made so).
void addCheck(v1::PreflightReport& r, const std::string& id, v1::CheckStatus status,
              const std::string& message, const std::string& detail = "");

/// A numeric IPv4 or IPv6 address and a port as a socket address; false for anything else.
bool socketAddress(const std::string& address, int port, sockaddr_storage* out, socklen_t* len);

/// The numeric text of an AF_INET / AF_INET6 socket address.
std::string addressText(const sockaddr* sa);

/// What a name resolved to: numeric addresses (IPv4 first), or why not.
struct Resolved {
    std::vector<std::string> addresses;
    std::string error;  // "" when resolved
};

/// getaddrinfo(name) on a thread of its own, waited for at most `limit` (a resolver that hangs on
/// an unreachable DNS server costs `limit`, never more; its thread finishes on its own).
Resolved resolveBounded(const std::string& name, std::chrono::milliseconds limit);

/// A TCP connect to address:port within `limit`: "" when it connected, else why not.
std::string tcpConnect(const std::string& address, int port, std::chrono::milliseconds limit);

/// This node's interface addresses (getifaddrs; IPv4 and IPv6 without link-local), loopback
/// included.
std::vector<std::string> interfaceAddresses();

/// Adds net.master_addr.resolves and (when the request names the rank-0 daemon's port)
/// net.master_addr.reachable for MASTER_ADDR `master` (not empty, not a loopback literal), and
/// fills the report's master_addr_resolved. `resolve` resolves a name (empty: resolveBounded).
void checkMasterAddrPeer(v1::PreflightReport& r, const v1::PreflightRequest& req,
                         const std::string& master,
                         const std::function<Resolved(const std::string&)>& resolve = {});

}  // namespace runplane::agent
