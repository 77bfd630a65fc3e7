#include "backend/control/dispatch_membership.h"

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>

namespace runplane::control {

std::vector<NodeMembership> rayMembership(const std::vector<std::string>& addresses,
                                          const NodeClientOptions& options) {
    std::vector<std::future<Result<RayClusterInfo>>> pending;
    pending.reserve(addresses.size());
    for (const auto& address : addresses) {
        pending.push_back(std::async(std::launch::async, [&options, address] {
            return rayStatus(address, options, /*rayletsOnly=*/true);
        }));
    }
    std::vector<NodeMembership> out;
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        auto status = pending[i].get();
        NodeMembership m;
        m.address = addresses[i];
        m.reachable = status.ok();
        if (status.ok()) {
            m.raylets = status->localRaylets;
        } else {
            m.error = status.error();
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::string describeLocalRaylet(const RayletIdentity& raylet, const std::string& hostIp) {
    const std::string gcs = raylet.gcsAddress.empty() ? "?" : raylet.gcsAddress;
    const std::string gcsHost = gcs.substr(0, gcs.rfind(':'));
    const std::string id =
        "raylet pid " + std::to_string(raylet.pid) + ", node " +
        (raylet.nodeIp.empty() ? std::string("?") : raylet.nodeIp) + ", GCS " + gcs +
        (raylet.clusterId.empty() ? std::string() : ", cluster id " + raylet.clusterId);
    if (gcsHost == hostIp || gcsHost == raylet.nodeIp || gcsHost == "127.0.0.1") {
        return "a Ray head already runs on this host (" + id +
               "): a stale cluster of an earlier run or another user's; stop it there (`ray "
               "stop --force`) or choose another Ray port (--ray-port)";
    }
    return "this host's raylet already belongs to the Ray cluster at GCS " + gcs + " (" + id +
           "), one this bring-up did not start: its workers and job would land on that "
           "cluster's nodes; stop it there (`ray stop --force`), another Ray port does not help";
}

std::vector<std::string> membershipClusters(const std::vector<NodeMembership>& nodes) {
    std::vector<std::string> gcs;
    for (const auto& n : nodes) {
        for (const auto& r : n.raylets) {
            if (std::find(gcs.begin(), gcs.end(), r.gcsAddress) == gcs.end()) {
                gcs.push_back(r.gcsAddress);
            }
        }
    }
    return gcs;
}

std::string formatMembership(const std::vector<NodeMembership>& nodes) {
    std::size_t width = 4;
    for (const auto& n : nodes) {
        width = std::max(width, n.address.size());
    }
    auto pad = [width](const std::string& s) { return s + std::string(width - s.size(), ' '); };
    std::ostringstream out;
    out << "Ray membership (the raylets each node's daemon sees):\n";
    out << pad("node") << "  raylet pid  node ip          GCS                    cluster id\n";
    for (const auto& n : nodes) {
        if (!n.reachable) {
            out << pad(n.address) << "  (daemon lost: " << n.error << ")\n";
            continue;
        }
        if (n.raylets.empty()) {
            out << pad(n.address) << "  -           (no raylet: not in a Ray cluster)\n";
            continue;
        }
        for (const auto& r : n.raylets) {
            std::string pid = std::to_string(r.pid);
            std::string ip = r.nodeIp.empty() ? "?" : r.nodeIp;
            std::string gcs = r.gcsAddress.empty() ? "?" : r.gcsAddress;
            pid.resize(std::max<std::size_t>(pid.size(), 10), ' ');
            ip.resize(std::max<std::size_t>(ip.size(), 15), ' ');
            gcs.resize(std::max<std::size_t>(gcs.size(), 21), ' ');
            out << pad(n.address) << "  " << pid << "  " << ip << "  " << gcs << "  "
                << (r.clusterId.empty() ? "-" : r.clusterId) << "\n";
        }
    }
    const auto clusters = membershipClusters(nodes);
    if (clusters.empty()) {
        out << "no node is in a Ray cluster\n";
    } else if (clusters.size() == 1) {
        out << "one Ray cluster: GCS " << clusters.front() << "\n";
    } else {
        out << clusters.size() << " different Ray clusters (GCS";
        for (const auto& g : clusters) {
            out << " " << g;
        }
        out << "): a node outside the head's cluster runs another cluster's work\n";
    }
    return out.str();
}

std::string membershipToJson(const std::vector<NodeMembership>& nodes) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& n : nodes) {
        nlohmann::json node{{"node", n.address}, {"reachable", n.reachable}};
        if (!n.reachable) {
            node["error"] = n.error;
        }
        nlohmann::json raylets = nlohmann::json::array();
        for (const auto& r : n.raylets) {
            raylets.push_back({{"pid", r.pid},
                               {"gcs_address", r.gcsAddress},
                               {"node_ip", r.nodeIp},
                               {"cluster_id", r.clusterId}});
        }
        node["raylets"] = std::move(raylets);
        out.push_back(std::move(node));
    }
    return out.dump();
}

}  // namespace runplane::control
