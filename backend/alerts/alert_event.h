#pragma once
// From a stored event to an alert (docs/alerts.md): its level (a table by kind), whether a rule
// matches it, the generic JSON payload, and what each destination kind is sent.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/alerts/rules.h"
#include "db/history/alert_store.h"

namespace runplane::alerts {

/// What a rule can match of the event's run (runs table, recipe snapshot, provenance).
struct RunFacts {
    bool known = false;  // the history has a runs row for it
    std::string id;
    std::string name;               // the run's name (its id when unknown)
    std::string recipe;             // the recipe's top-level name
    std::string state;              // runs.status
    std::vector<std::string> tags;  // framework=, model=, placement=, and provenance "tags"
};
RunFacts runFacts(const db::StoredEvent& event, const std::optional<db::AlertRunInfo>& run);

/// One row of the level table: an event kind and its level. A kind whose level depends on its
/// attributes (run_state, process_exit, memory_alarm) is resolved by levelOf.
struct KindLevel {
    const char* kind;
    Level level;
};
const std::vector<KindLevel>& kindLevels();

/// The event's level: the table's, refined by attributes; an unknown kind takes its "level"
/// attribute when that is a level name, else warning.
Level levelOf(const db::StoredEvent& event);

/// A run_state event's state in the history's spelling ("failed", "daemon_lost"); empty
/// otherwise.
std::string runStateOf(const db::StoredEvent& event);

bool matches(const Rule& rule, const db::StoredEvent& event, const RunFacts& run);

/// The generic payload (docs/alerts.md, "Payload"), and its one-line, link-free summary.
nlohmann::json payloadOf(const db::StoredEvent& event, const RunFacts& run, const Rule& rule);
/// The payload `runplanectl alerts test` sends.
nlohmann::json testPayload(const std::string& destination, std::int64_t nowNs);

/// The request body for a destination kind: Slack Block Kit, a Discord message, the payload
/// itself (webhook, command).
std::string renderBody(DestinationKind kind, const nlohmann::json& payload);

}  // namespace runplane::alerts
