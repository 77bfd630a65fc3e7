// Host reachability events (host_reachability.h).
#include "backend/control/host_reachability.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace runplane::control {

std::string utcText(std::int64_t unixNs) {
    const std::time_t seconds = static_cast<std::time_t>(unixNs / 1'000'000'000);
    const int millis = static_cast<int>((unixNs / 1'000'000) % 1000);
    std::tm tm{};
    ::gmtime_r(&seconds, &tm);
    char text[96];
    std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
    return text;
}

std::string HostReachability::name() const {
    return "host " + (m_hostname.empty() ? m_address : m_hostname) + " (node " + m_nodeId +
           ", runplaned at " + m_address + ")";
}

std::optional<db::IngestEvent> HostReachability::heard(const std::string& nodeId,
                                                       const std::string& hostname,
                                                       std::int64_t nowNs) {
    if (!nodeId.empty()) {
        m_nodeId = nodeId;
    }
    if (!hostname.empty()) {
        m_hostname = hostname;
    }
    m_lastHeardNs = nowNs;
    if (m_lostSinceNs == 0) {
        m_refused = false;  // accepted: a later refusal is news again
        return std::nullopt;
    }
    const std::int64_t awayMs = (nowNs - m_lostSinceNs) / 1'000'000;
    db::IngestEvent e;
    e.tNs = nowNs;
    e.kind = kHostReachableEvent;
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.1f", static_cast<double>(awayMs) / 1000.0);
    e.message = name() + " reachable again after " + seconds + " s without an answer (last heard " +
                utcText(m_lostSinceNs) + ")";
    e.attrs = {{"node", m_nodeId},
               {"hostname", m_hostname},
               {"address", m_address},
               {"since_ns", m_lostSinceNs},
               {"away_ms", awayMs}};
    m_lostSinceNs = 0;
    m_refused = false;
    return e;
}

std::optional<db::IngestEvent> HostReachability::failed(const std::string& error,
                                                        std::int64_t nowNs) {
    if (m_lastHeardNs == 0 || m_nodeId.empty() || m_lostSinceNs != 0) {
        return std::nullopt;  // never answered, or already recorded
    }
    m_lostSinceNs = m_lastHeardNs;
    m_refused = false;
    db::IngestEvent e;
    e.tNs = nowNs;
    e.kind = kHostUnreachableEvent;
    e.message = name() + " unreachable since " + utcText(m_lostSinceNs) +
                " (last heard); runs there keep their last known state: " + error;
    e.attrs = {{"node", m_nodeId},
               {"hostname", m_hostname},
               {"address", m_address},
               {"since_ns", m_lostSinceNs},
               {"error", error}};
    return e;
}

std::optional<db::IngestEvent> HostReachability::refused(const std::string& error,
                                                         std::int64_t nowNs) {
    if (m_lastHeardNs == 0 || m_nodeId.empty() || m_refused) {
        return std::nullopt;  // never answered (no node to name), or already recorded
    }
    // It answered: reachable, whatever it said. A recorded loss ends here (no host_reachable
    // follows when it accepts us again).
    const std::int64_t lostSinceNs = m_lostSinceNs;
    m_lostSinceNs = 0;
    m_lastHeardNs = nowNs;
    m_refused = true;
    db::IngestEvent e;
    e.tNs = nowNs;
    e.kind = kHostRefusedEvent;
    e.message =
        name() + " answers but refuses this controller's credentials" +
        (lostSinceNs != 0 ? " (reachable again; unreachable since " + utcText(lostSinceNs) + ")"
                          : std::string()) +
        "; runs there keep their last known state until the token or certificate is "
        "fixed: " +
        error;
    e.attrs = {
        {"node", m_nodeId}, {"hostname", m_hostname}, {"address", m_address}, {"error", error}};
    if (lostSinceNs != 0) {
        e.attrs["since_ns"] = lostSinceNs;
    }
    return e;
}

bool refusedByHost(const Error& error) {
    return error.code == ErrorCode::Unauthenticated ||
           error.message.find("too many failed authentication attempts") != std::string::npos;
}

std::vector<RunId> activeRunsOn(const std::vector<db::RunRecord>& runs, const std::string& nodeId,
                                const std::string& address) {
    std::vector<RunId> out;
    for (const auto& run : runs) {
        if (run.state != db::RunState::Running || run.endedNs != 0) {
            continue;
        }
        const bool here = std::any_of(run.nodes.begin(), run.nodes.end(), [&](const auto& n) {
            return (!nodeId.empty() && n == nodeId) || (!address.empty() && n == address);
        });
        if (here) {
            out.push_back(run.id);
        }
    }
    return out;
}

std::vector<db::IngestEvent> eventPerRun(const db::IngestEvent& event,
                                         const std::vector<RunId>& runIds) {
    if (runIds.empty()) {
        return {event};
    }
    std::vector<db::IngestEvent> out;
    for (const auto& id : runIds) {
        out.push_back(event);
        out.back().runId = id;
    }
    return out;
}

}  // namespace runplane::control
