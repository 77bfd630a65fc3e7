#pragma once
// "A failed run says why, in one line" (issue #42): the cause of a run from its log's failure
// events (cuda_oom, ray_oom, host_oom, nccl_error, weight_sync_failure, batch_mismatch, crash,
// nan_loss, skipped_iteration): the strongest kind (telemetry::causeRank), the latest of it, in
// its own words (attrs.summary, e.g. "CUDA OOM on GPU 3: tried 61.34 GiB, 27.07 GiB free").

#include <optional>
#include <string>
#include <vector>

#include "db/history/history.h"

namespace runplane::db {

struct RunCause {
    std::string kind;     // the event's stored kind ("cuda_oom")
    std::string summary;  // one line
    std::int64_t tNs = 0;
};

/// The cause among `events` (any order); nullopt when none of them is a failure kind.
std::optional<RunCause> runCause(const std::vector<EventRecord>& events);

/// The cause of a run from its stored events (reads at most the run's last 10000 events).
Result<std::optional<RunCause>> runCause(History& history, const RunId& runId);

}  // namespace runplane::db
