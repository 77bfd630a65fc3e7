#pragma once
// net.master_addr.rank0 (issue 47, docs/dispatch.md "MASTER_ADDR"): each daemon's preflight
// reports its interface addresses and what MASTER_ADDR resolved to on its host; MASTER_ADDR must
// resolve, on every node, to an address of the rank-0 node (the first row: the head), or the
// workers would rendezvous with some other machine (a stale DNS name, another head's address).
// The rank-0 daemon's port is what every node connects to for net.master_addr.reachable
// (masterProbePort). Plain values, no gRPC.

#include <cstdint>
#include <string>
#include <vector>

#include "backend/control/node_types.h"

namespace runplane::control {

struct PreflightRow;

/// The port of a daemon address "host:port" / "[v6]:port"; 0 when it has none.
std::uint32_t daemonPortOf(const std::string& address);

/// The cross-node check over the rows (rows[0] is rank 0): PASS when every reachable row's
/// resolved MASTER_ADDR includes an address of rank 0; FAIL naming each node whose answer does
/// not, with rank 0's addresses; SKIP when rank 0 reported no addresses or no row resolved it
/// (daemons older than these fields, or MASTER_ADDR unset or loopback, FAILed elsewhere).
PreflightCheckInfo masterAddrRank0Check(const std::vector<PreflightRow>& rows);

}  // namespace runplane::control
