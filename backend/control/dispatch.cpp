// Preflight fan-out and the node x check table (docs/dispatch.md, "Preflight").
#include "backend/control/dispatch.h"

#include <algorithm>
#include <future>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backend/control/preflight_clients.h"
#include "backend/control/preflight_gpu_uuids.h"
#include "backend/control/preflight_master_rank0.h"

namespace runplane::control {
namespace {

int severity(CheckState s) {
    switch (s) {
        case CheckState::Fail:
            return 4;
        case CheckState::Warn:
            return 3;
        case CheckState::Pass:
            return 2;
        case CheckState::Skip:
            return 1;
        case CheckState::Unspecified:
            return 0;
    }
    return 0;
}

PreflightRow askOne(const std::string& address, const PreflightSpec& spec,
                    const NodeClientOptions& options) {
    PreflightRow row;
    row.address = address;
    // the channel of the last preflight of this node, when it answered (preflight_clients.h)
    bool reused = false;
    auto client = pooledNodeClient(address, options, &reused);
    Result<PreflightResult> result =
        client ? (*client)->preflight(spec) : Result<PreflightResult>(client.failure());
    if (!result && reused && result.code() == ErrorCode::Unavailable) {
        // its connection closed while idle (a restart, a link back up): once more, fresh
        dropPooledNodeClient(address, options);
        client = pooledNodeClient(address, options);
        result = client ? (*client)->preflight(spec) : Result<PreflightResult>(client.failure());
    }
    if (!result) {
        dropPooledNodeClient(address, options);
        row.reachable = false;
        row.error = result.error();
        row.errorCode = result.code();
        // A daemon that refused our credentials is there: saying "lost" would send the user
        // looking for a dead node.
        row.checks.push_back(
            {"daemon", CheckState::Fail,
             (row.errorCode == ErrorCode::Unauthenticated ? "" : "daemon lost: ") + result.error(),
             ""});
        return row;
    }
    row.reachable = true;
    row.hostname = result->hostname;
    row.checks = std::move(result->checks);
    row.gpuUuids = std::move(result->gpuUuids);
    row.addresses = std::move(result->addresses);
    row.masterAddrResolved = std::move(result->masterAddrResolved);
    return row;
}

/// ray.same_version: every reachable node has Ray, and all of one version (and the required one).
PreflightCheckInfo rayVersionCheck(const std::vector<PreflightRow>& rows,
                                   const std::string& required) {
    std::map<std::string, std::vector<std::string>> byVersion;  // version -> nodes
    std::vector<std::string> unknown;
    for (const auto& row : rows) {
        if (!row.reachable) {
            continue;
        }
        const PreflightCheckInfo* c = row.find("ray.installed");
        const std::string v = (c != nullptr && c->status == CheckState::Pass)
                                  ? rayVersionFromMessage(c->message)
                                  : "";
        if (v.empty()) {
            unknown.push_back(row.address);
        } else {
            byVersion[v].push_back(row.address);
        }
    }
    PreflightCheckInfo out{"ray.same_version", CheckState::Pass, "", ""};
    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) {
            s += (s.empty() ? "" : ", ") + x;
        }
        return s;
    };
    if (!unknown.empty()) {
        out.status = CheckState::Fail;
        out.message = "no usable Ray version on " + join(unknown);
    } else if (byVersion.size() > 1) {
        out.status = CheckState::Fail;
        out.message = "Ray versions differ:";
        for (const auto& [v, nodes] : byVersion) {
            out.message += " " + v + " on " + join(nodes) + ";";
        }
        out.message.pop_back();
    } else if (byVersion.empty()) {
        out.status = CheckState::Skip;
        out.message = "no reachable node";
    } else if (!required.empty() && byVersion.begin()->first != required) {
        out.status = CheckState::Fail;
        out.message =
            "every node has Ray " + byVersion.begin()->first + ", the recipe requires " + required;
    } else {
        out.message = "Ray " + byVersion.begin()->first + " on every reachable node";
    }
    return out;
}

const char* mark(CheckState s) {
    switch (s) {
        case CheckState::Pass:
            return "PASS";
        case CheckState::Warn:
            return "WARN";
        case CheckState::Fail:
            return "FAIL";
        case CheckState::Skip:
            return "skip";
        case CheckState::Unspecified:
            return "-";
    }
    return "-";
}

}  // namespace

const PreflightCheckInfo* PreflightRow::find(const std::string& id) const {
    for (const auto& c : checks) {
        if (c.id == id) {
            return &c;
        }
    }
    return nullptr;
}

CheckState PreflightRow::worst(const std::string& id) const {
    CheckState w = CheckState::Unspecified;
    for (const auto& c : checks) {
        if (c.id == id && severity(c.status) > severity(w)) {
            w = c.status;
        }
    }
    return w;
}

std::vector<std::string> PreflightTable::checkIds() const {
    std::vector<std::string> ids;
    for (const auto& row : rows) {
        for (const auto& c : row.checks) {
            if (std::find(ids.begin(), ids.end(), c.id) == ids.end()) {
                ids.push_back(c.id);
            }
        }
    }
    return ids;
}

bool PreflightTable::anyFail() const {
    return !failures().empty();
}

std::vector<std::string> PreflightTable::failures() const {
    std::vector<std::string> out;
    for (const auto& row : rows) {
        for (const auto& c : row.checks) {
            if (c.status == CheckState::Fail) {
                out.push_back(row.address + ": " + c.id + ": " + c.message);
            }
        }
    }
    for (const auto& c : clusterChecks) {
        if (c.status == CheckState::Fail) {
            out.push_back("cluster: " + c.id + ": " + c.message);
        }
    }
    return out;
}

std::string rayVersionFromMessage(const std::string& message) {
    const auto p = message.rfind("version ");
    if (p == std::string::npos) {
        return {};
    }
    std::string v = message.substr(p + 8);
    const auto end = v.find_first_of(" \t\r\n");
    return end == std::string::npos ? v : v.substr(0, end);
}

PreflightTable preflightAll(const std::vector<std::string>& addresses, const PreflightSpec& spec,
                            const NodeClientOptions& options,
                            const std::string& requiredRayVersion) {
    return preflightNodes(addresses, std::vector<PreflightSpec>(addresses.size(), spec), options,
                          requiredRayVersion);
}

PreflightTable preflightNodes(const std::vector<std::string>& addresses,
                              const std::vector<PreflightSpec>& specs,
                              const NodeClientOptions& options,
                              const std::string& requiredRayVersion) {
    // One thread per node: the slowest (or a dead) node costs one callTimeout, not N of them.
    std::vector<std::future<PreflightRow>> pending;
    pending.reserve(addresses.size());
    bool multiNode = addresses.size() > 1;
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        if (i >= specs.size()) {
            pending.push_back(std::async(std::launch::deferred, [address = addresses[i]] {
                PreflightRow row;
                row.address = address;
                row.error = "no preflight spec for this node";
                row.checks.push_back({"spec", CheckState::Fail, row.error, ""});
                return row;
            }));
            continue;
        }
        multiNode = multiNode || specs[i].multiNode;
        pending.push_back(
            std::async(std::launch::async, [spec = specs[i], &options, address = addresses[i]] {
                return askOne(address, spec, options);
            }));
    }
    PreflightTable table;
    for (auto& f : pending) {
        table.rows.push_back(f.get());
    }
    if (multiNode) {
        table.clusterChecks.push_back(rayVersionCheck(table.rows, requiredRayVersion));
        // only where the nodes resolved MASTER_ADDR (daemons older than that: no row)
        if (auto rank0 = masterAddrRank0Check(table.rows); rank0.status != CheckState::Skip) {
            table.clusterChecks.push_back(std::move(rank0));
        }
    }
    if (table.rows.size() > 1) {
        // gpu.distinct only where some node reported UUIDs (no NVML anywhere: no column)
        if (auto gpus = gpuDistinctCheck(table.rows); gpus.status != CheckState::Skip) {
            table.clusterChecks.push_back(std::move(gpus));
        }
    }
    return table;
}

std::string formatPreflightTable(const PreflightTable& table) {
    const auto ids = table.checkIds();
    std::size_t nodeWidth = 4;
    for (const auto& row : table.rows) {
        nodeWidth = std::max(nodeWidth, row.address.size());
    }
    std::ostringstream out;
    out << std::string(nodeWidth, ' ');
    for (const auto& id : ids) {
        out << "  " << id;
    }
    out << "\n";
    for (const auto& row : table.rows) {
        out << row.address << std::string(nodeWidth - row.address.size(), ' ');
        for (const auto& id : ids) {
            const std::string m = mark(row.worst(id));
            out << "  " << m << std::string(id.size() > m.size() ? id.size() - m.size() : 0, ' ');
        }
        out << (row.reachable                                 ? "  " + row.hostname
                : row.errorCode == ErrorCode::Unauthenticated ? "  (authentication failed)"
                                                              : "  (daemon lost)")
            << "\n";
    }
    for (const auto& row : table.rows) {
        if (!row.gpuUuids.empty()) {
            out << "gpus  " << row.address << "  ";
            for (std::size_t i = 0; i < row.gpuUuids.size(); ++i) {
                out << (i == 0 ? "" : " ") << row.gpuUuids[i];
            }
            out << "\n";
        }
    }
    for (const auto& c : table.clusterChecks) {
        out << "cluster  " << c.id << "  " << mark(c.status) << "  " << c.message << "\n";
        if (c.status == CheckState::Fail && !c.detail.empty()) {
            out << "         fix: " << c.detail << "\n";
        }
    }
    bool header = false;
    for (const auto& row : table.rows) {
        for (const auto& c : row.checks) {
            if (c.status == CheckState::Fail || c.status == CheckState::Warn) {
                if (!header) {
                    out << "\n";
                    header = true;
                }
                out << mark(c.status) << "  " << row.address << "  " << c.id << ": " << c.message
                    << "\n";
            }
        }
    }
    return out.str();
}

std::string preflightTableToJson(const PreflightTable& table) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& row : table.rows) {
        nlohmann::json checks = nlohmann::json::array();
        for (const auto& c : row.checks) {
            checks.push_back({{"id", c.id},
                              {"status", toString(c.status)},
                              {"message", c.message},
                              {"detail", c.detail}});
        }
        nodes.push_back({{"address", row.address},
                         {"hostname", row.hostname},
                         {"reachable", row.reachable},
                         {"error", row.error},
                         {"gpu_uuids", row.gpuUuids},
                         {"addresses", row.addresses},
                         {"master_addr_resolved", row.masterAddrResolved},
                         {"checks", checks}});
    }
    nlohmann::json cluster = nlohmann::json::array();
    for (const auto& c : table.clusterChecks) {
        cluster.push_back({{"id", c.id},
                           {"status", toString(c.status)},
                           {"message", c.message},
                           {"detail", c.detail}});
    }
    nlohmann::json doc{{"nodes", nodes}, {"cluster", cluster}, {"fail", table.anyFail()}};
    return doc.dump(2);
}

const char* toString(DispatchStep step) {
    switch (step) {
        case DispatchStep::Preflight:
            return "preflight";
        case DispatchStep::RayStartHead:
            return "ray_start_head";
        case DispatchStep::RayStartWorker:
            return "ray_start_worker";
        case DispatchStep::WaitCluster:
            return "wait_cluster";
        case DispatchStep::VerifyCluster:
            return "verify_cluster";
        case DispatchStep::StartRun:
            return "start_run";
        case DispatchStep::StopRun:
            return "stop_run";
        case DispatchStep::RayStop:
            return "ray_stop";
        case DispatchStep::Rollback:
            return "rollback";
    }
    return "unknown";
}

std::string verifyJoined(const std::vector<RayletIdentity>& raylets, const std::string& nodeIp,
                         const std::string& gcsAddress, const std::string& clusterId) {
    // Every raylet of this node IP counts: a node whose earlier raylet joined a stranger's GCS
    // and whose new one joined ours would give its GPUs to both clusters. The stranger's is the
    // one reported, whatever order the process table lists them in.
    const RayletIdentity* own = nullptr;
    for (const auto& r : raylets) {
        if (r.nodeIp == nodeIp &&
            (own == nullptr || r.gcsAddress != gcsAddress ||
             (!clusterId.empty() && !r.clusterId.empty() && r.clusterId != clusterId))) {
            own = &r;
            if (r.gcsAddress != gcsAddress) {
                break;
            }
        }
    }
    if (own == nullptr) {
        std::string seen;
        for (const auto& r : raylets) {
            seen += (seen.empty() ? "" : ", ") + r.nodeIp + " (GCS " + r.gcsAddress + ")";
        }
        return "no raylet with node IP " + nodeIp + " runs there" +
               (seen.empty() ? std::string() : "; raylets seen: " + seen);
    }
    if (own->gcsAddress != gcsAddress) {
        return "its raylet (pid " + std::to_string(own->pid) + ") joined the GCS at " +
               own->gcsAddress + ", not the head's " + gcsAddress;
    }
    if (!clusterId.empty() && !own->clusterId.empty() && own->clusterId != clusterId) {
        return "its raylet (pid " + std::to_string(own->pid) + ") belongs to cluster " +
               own->clusterId + ", not the head's " + clusterId + " (another Ray head answers on " +
               gcsAddress + ")";
    }
    return "";
}

}  // namespace runplane::control
