#pragma once
// Turns one telemetry batch from the wire into a history IngestBatch: skips what is already
// stored, and turns every hole in the sequence into an explicit "gap" event (private to
// runplane_control; unit-tested on its own).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "backend/control/node_types.h"
#include "db/history/history.h"

namespace runplane::control {

struct BatchPlan {
    db::IngestBatch batch;
    std::uint64_t nextExpected = 0;  // the seq the next batch should start at
    std::uint64_t gaps = 0;          // controller-made gap events in batch.events
};

/// expected: the first seq not yet accounted for (cursor + 1), or 0 when the history has
/// nothing from this node yet (then the stream's first record starts the sequence and only
/// holes inside the stream are gaps). Holes covered by an EVENT_GAP record of the daemon (attrs
/// first_seq..last_seq) are not reported twice.
BatchPlan planBatch(const NodeId& nodeId, const TelemetryBatchInfo& batch, std::uint64_t expected,
                    std::int64_t nowNs);

/// The history state a run_state event reports (EventInfo::runState: the typed field, or the
/// "state" attribute of a record from before it), if any.
std::optional<db::RunState> runStateOf(const EventInfo& event);

/// The history state a stored run_state event records: the history keeps the event's
/// attrs["state"] (the protocol enum's name, "RUN_STATE_FAILED", read by runStateFromName), for
/// records sent with the typed field too (node_convert adds it). For an event read back from the
/// history; one from the wire has EventInfo::runState.
std::optional<db::RunState> runStateFromAttrs(const db::EventAttrs& attrs);

}  // namespace runplane::control
