// One name per host in a verdict (host_names.h).
#include "backend/diagnosis/host_names.h"

#include <algorithm>
#include <set>

namespace runplane::diagnosis {

std::string hostOfAddress(const std::string& address) {
    if (!address.empty() && address.front() == '[') {
        const auto close = address.find(']');
        return close == std::string::npos ? address : address.substr(1, close - 1);
    }
    const auto colon = address.rfind(':');
    // One colon: host:port; more (a bare IPv6 address) or none: the text as it is.
    if (colon == std::string::npos || address.find(':') != colon) {
        return address;
    }
    return address.substr(0, colon);
}

HostNames::HostNames(const std::vector<NodeDiagnosis>& nodes,
                     const std::vector<RasCommunicator>& comms)
    : m_rasHosts(nodes.size()) {
    std::vector<std::set<std::int64_t>> pids(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const NodeDiagnosis& n = nodes[i];
        m_nodeNames.push_back(n.hostname.empty() ? n.address : n.hostname);
        for (const auto& p : n.processes) {
            pids[i].insert(p.pid);
        }
        for (const auto& s : n.stacks) {
            pids[i].insert(s.pid);
        }
    }
    // Each RAS host's pids, over every rank and missing rank that names it.
    std::map<std::string, std::set<std::int64_t>> rasPids;
    for (const auto& c : comms) {
        for (const auto& r : c.ranks) {
            if (!r.host.empty()) {
                rasPids[r.host].insert(r.pid);
            }
        }
        for (const auto& m : c.missingRanks) {
            if (!m.host.empty()) {
                rasPids[m.host].insert(m.pid);
            }
        }
    }
    // The one node a rule names, or npos (none, or several).
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    auto only = [&](auto&& matches) {
        std::size_t found = kNone;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (matches(i)) {
                if (found != kNone) {
                    return kNone;
                }
                found = i;
            }
        }
        return found;
    };
    for (const auto& entry : rasPids) {
        // named, not a structured binding: clang 14 (the fuzz build) cannot capture one
        const std::string& host = entry.first;
        const auto& hostPids = entry.second;
        std::size_t node = only([&](std::size_t i) { return nodes[i].hostname == host; });
        if (node == kNone) {
            node = only([&](std::size_t i) { return hostOfAddress(nodes[i].address) == host; });
        }
        if (node == kNone) {
            std::vector<std::size_t> hits(nodes.size(), 0);
            std::size_t best = 0;
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                for (std::int64_t pid : hostPids) {
                    hits[i] += pid > 0 && pids[i].count(pid) ? 1 : 0;
                }
                best = std::max(best, hits[i]);
            }
            if (best > 0) {
                node = only([&](std::size_t i) { return hits[i] == best; });
            }
        }
        if (node == kNone) {
            continue;
        }
        m_nodeOfRasHost[host] = node;
        if (m_rasHosts[node].empty()) {
            m_rasHosts[node] = host;
        }
    }
}

std::string HostNames::ofRasHost(const std::string& host) const {
    const auto it = m_nodeOfRasHost.find(host);
    return it == m_nodeOfRasHost.end() ? host : ofNode(it->second);
}

std::string HostNames::ofNode(std::size_t index) const {
    if (index >= m_nodeNames.size()) {
        return {};
    }
    const std::string& name = m_nodeNames[index];
    const std::string& ras = m_rasHosts[index];
    if (name.empty()) {
        return ras;
    }
    return ras.empty() || ras == name ? name : name + ", " + ras;
}

}  // namespace runplane::diagnosis
