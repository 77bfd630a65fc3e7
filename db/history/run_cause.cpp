#include "db/history/run_cause.h"

#include "common/telemetry/event_kind.h"

namespace runplane::db {

std::optional<RunCause> runCause(const std::vector<EventRecord>& events) {
    const EventRecord* best = nullptr;
    int bestRank = 0;
    for (const auto& e : events) {
        const auto kind = telemetry::eventKindFromString(e.kind);
        const int rank = kind ? telemetry::causeRank(*kind) : 0;
        if (rank == 0) {
            continue;
        }
        if (rank > bestRank || (rank == bestRank && best != nullptr && e.tNs >= best->tNs)) {
            best = &e;
            bestRank = rank;
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    RunCause cause;
    cause.kind = best->kind;
    cause.summary = attrText(best->attrs, telemetry::attr::kSummary);
    if (cause.summary.empty()) {
        cause.summary = best->message.substr(0, 200);
    }
    cause.tNs = best->tNs;
    return cause;
}

Result<std::optional<RunCause>> runCause(History& history, const RunId& runId) {
    EventFilter filter;
    filter.runId = runId;
    auto events = history.listEvents(filter);
    if (!events.ok()) {
        return events.failure();
    }
    return runCause(*events);
}

}  // namespace runplane::db
