#pragma once
// Whether a watched daemon's host can be reached, as the controller's telemetry stream sees it
// (issue 47, "a host's link cut during a run ... an event naming the host"). One per ingestor, on
// its thread. The history gets a "host_unreachable" event when a connection attempt fails after
// the host had answered (its link cut, the host down, the daemon gone), naming the host and the
// last moment it was heard from, and a "host_reachable" event when it answers again, with how
// long it was away. A host never reached is not "lost"; the next failure after an event is not
// recorded again. docs/reliability.md, "Host reachability".

#include <cstdint>
#include <optional>
#include <string>

#include "db/history/history.h"

namespace runplane::control {

inline constexpr const char* kHostUnreachableEvent = "host_unreachable";
inline constexpr const char* kHostReachableEvent = "host_reachable";

class HostReachability {
  public:
    explicit HostReachability(std::string address) : m_address(std::move(address)) {}

    /// The daemon answered (GetNode, or a telemetry batch or heartbeat) at nowNs. Returns the
    /// "host_reachable" event when it had been recorded unreachable.
    std::optional<db::IngestEvent> heard(const std::string& nodeId, const std::string& hostname,
                                         std::int64_t nowNs);
    /// The stream delivered something at nowNs (cheap: no event can follow).
    void touch(std::int64_t nowNs) { m_lastHeardNs = nowNs; }
    /// A connection attempt failed (GetNode, or a stream that died) with `error`. Returns the
    /// "host_unreachable" event the first time after the host had answered.
    std::optional<db::IngestEvent> failed(const std::string& error, std::int64_t nowNs);

    /// The node id the events go under (the last one the daemon reported; empty before).
    const std::string& nodeId() const { return m_nodeId; }
    bool unreachable() const { return m_lostSinceNs != 0; }

  private:
    std::string name() const;  // "host H (node N, runplaned at A)"
    std::string m_address;
    std::string m_nodeId;
    std::string m_hostname;
    std::int64_t m_lastHeardNs = 0;  // 0: never answered
    std::int64_t m_lostSinceNs = 0;  // != 0: recorded unreachable, last heard then
};

/// "2026-12-06T22:01:02.345Z" (UTC, milliseconds).
std::string utcText(std::int64_t unixNs);

}  // namespace runplane::control
