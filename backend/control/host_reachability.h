#pragma once
// Whether a watched daemon's host can be reached, as the controller's telemetry stream sees it
// (issue 47, "a host's link cut during a run ... an event naming the host"). One per ingestor, on
// its thread. The history gets a "host_unreachable" event when a connection attempt fails after
// the host had answered (its link cut, the host down, the daemon gone), naming the host and the
// last moment it was heard from, and a "host_reachable" event when it answers again, with how
// long it was away. A host that answers but refuses our credentials (UNAUTHENTICATED or
// PERMISSION_DENIED) is reachable: a "host_refused" event, never "host_unreachable". A host never
// reached is not "lost"; the next failure after an event is not recorded again. Each event is
// stored once per run active on the node (eventPerRun), so `history events --run` finds it.
// docs/reliability.md, "Host reachability".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "db/history/history.h"

namespace runplane::control {

inline constexpr const char* kHostUnreachableEvent = "host_unreachable";
inline constexpr const char* kHostReachableEvent = "host_reachable";
inline constexpr const char* kHostRefusedEvent = "host_refused";

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
    /// A connection attempt was refused (the daemon answered, but not to our token or
    /// certificate) with `error`. Returns the "host_refused" event the first time after the host
    /// had answered (or accepted us again); a host recorded unreachable is reachable again.
    std::optional<db::IngestEvent> refused(const std::string& error, std::int64_t nowNs);

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
    bool m_refused = false;          // recorded refused; cleared when it accepts us again
};

/// Whether a failed call is the daemon refusing us rather than not answering: UNAUTHENTICATED or
/// PERMISSION_DENIED (ErrorCode::Unauthenticated), or its lockout after repeated refusals
/// (RESOURCE_EXHAUSTED "too many failed authentication attempts", backend/agent/auth.cpp).
bool refusedByHost(const Error& error);

/// The runs active on a node when an event about it happens: not ended (state running, no end
/// time) and placed on it (its node id or its daemon's address among the run's nodes, as
/// submitRun and dispatch record them).
std::vector<RunId> activeRunsOn(const std::vector<db::RunRecord>& runs, const std::string& nodeId,
                                const std::string& address);

/// The event once per run in `runIds` (its run id set), or once as a node-level event (empty run
/// id) when there is none.
std::vector<db::IngestEvent> eventPerRun(const db::IngestEvent& event,
                                         const std::vector<RunId>& runIds);

/// "2026-12-06T22:01:02.345Z" (UTC, milliseconds).
std::string utcText(std::int64_t unixNs);

}  // namespace runplane::control
