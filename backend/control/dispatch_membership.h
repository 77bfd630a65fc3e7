#pragma once
// Which Ray cluster each node belongs to (issue 47), for `runplanectl dispatch preflight`: every
// node's daemon is asked for the raylets its process table shows (RayStatus with raylets_only: no
// Python start), and each raylet's GCS address, node IP and cluster id are reported per node,
// with a summary of how many distinct clusters the nodes are in. Plain values; no gRPC here.

#include <string>
#include <vector>

#include "backend/control/dispatch.h"

namespace runplane::control {

struct NodeMembership {
    std::string address;  // the daemon's HOST:PORT
    bool reachable = false;
    std::string error;  // why not, when !reachable
    std::vector<RayletIdentity> raylets;
};

/// Asks every node at once (one thread per node, like preflight).
std::vector<NodeMembership> rayMembership(const std::vector<std::string>& addresses,
                                          const NodeClientOptions& options);

/// The distinct GCS addresses the nodes' raylets joined, in first-seen order.
std::vector<std::string> membershipClusters(const std::vector<NodeMembership>& nodes);

/// Text table: one line per raylet (a node without one says so), then a summary line.
std::string formatMembership(const std::vector<NodeMembership>& nodes);

/// Why a raylet already on the head host blocks a bring-up there, in words (dispatch refuses with
/// it): a head of its own on this host (a stale cluster of an earlier run, or another user's) or a
/// raylet that joined a GCS elsewhere (this host is a member of a stranger's cluster), with the
/// raylet's pid, GCS and cluster id and the fix.
std::string describeLocalRaylet(const RayletIdentity& raylet, const std::string& hostIp);

/// JSON array: [{"node", "reachable", "error"?, "raylets": [{"pid", "gcs_address", "node_ip",
/// "cluster_id"}]}].
std::string membershipToJson(const std::vector<NodeMembership>& nodes);

}  // namespace runplane::control
