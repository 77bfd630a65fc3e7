#pragma once
// The alert sender's state in the history file (issue #48, docs/alerts.md): the cursor over the
// events table (events.id, ascending in commit order), the lease that makes one sender at a time
// send for one history, and one row per delivery (pending until a destination accepted it or
// its deadline passed). Its own connection on the file; the schema is the history's (version 9).
// Plain value types only: no Qt, no gRPC.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "db/history/history.h"

namespace runplane::sqlite {
class Database;
}

namespace runplane::db {

/// One stored event as the sender reads it: events.id is its position in the alert cursor.
struct StoredEvent {
    std::int64_t id = 0;
    NodeId nodeId;
    std::optional<std::uint64_t> seq;
    std::int64_t tNs = 0;
    RunId runId;
    std::string kind;
    std::string message;
    EventAttrs attrs;
};

/// What a rule may match of a run (runs table); absent when the history has no row for it.
struct AlertRunInfo {
    std::string name;
    std::string recipeYaml;
    std::string provenanceJson;
    std::string state;  // runs.status ("running", "failed", ...)
};

/// Delivery states: pending (queued or being retried), sent (the destination accepted it),
/// failed (its deadline passed; an alert_failed event was stored), suppressed (rate limit or
/// quiet period: never sent, kept so that `alerts status` shows it).
enum class DeliveryState { Pending, Sent, Failed, Suppressed };
const char* toString(DeliveryState state);

struct AlertDelivery {
    std::int64_t id = 0;
    std::int64_t eventId = 0;
    std::string rule;
    std::string destination;  // the destination's name in the rules file (never its URL)
    std::string quietKey;     // rule|run|kind: the quiet period's scope
    DeliveryState state = DeliveryState::Pending;
    std::string payloadJson;  // the generic payload (docs/alerts.md); each kind renders from it
    int attempts = 0;
    std::int64_t createdNs = 0;
    std::int64_t nextNs = 0;      // earliest next attempt
    std::int64_t deadlineNs = 0;  // undelivered by then: failed, and an event says so
    std::int64_t doneNs = 0;
    std::string result;  // the last answer, e.g. "HTTP 200", "HTTP 429 (retry after 2 s)"
};

/// A delivery to queue: the store fills id, attempts, doneNs and result.
using NewDelivery = AlertDelivery;

/// The history schema version that added the alert tables.
inline constexpr int kAlertSchemaVersion = 9;

/// The alert tables of one history file. Not thread-safe: one AlertStore per thread.
class AlertStore {
  public:
    /// Opens the history at path (creating and migrating it as History::open does) and a
    /// connection of its own for the alert tables.
    static Result<std::unique_ptr<AlertStore>> open(const std::string& path);
    /// Opens an existing history for reading only (the GUI's Alerts page, `alerts status`
    /// readers): never creates, migrates, re-modes or chmods the file. nullptr (not an error)
    /// when its schema predates the alert tables (version < kAlertSchemaVersion): no sender has
    /// opened it yet, so there is nothing to show. *schemaVersion (when given) gets the file's
    /// version. Errors: no such file, not a Runplane history, a newer schema. Use only the read
    /// functions (lease, countPending, recent, pending) on it.
    static Result<std::unique_ptr<AlertStore>> openReadOnly(const std::string& path,
                                                            int* schemaVersion = nullptr);
    ~AlertStore();
    AlertStore(const AlertStore&) = delete;
    AlertStore& operator=(const AlertStore&) = delete;

    /// Takes or renews the sender lease for `holder` until nowNs + ttlNs; false when another
    /// holder's lease has not expired yet.
    Result<bool> acquireLease(const std::string& holder, std::int64_t nowNs, std::int64_t ttlNs);
    /// Gives the lease up (expires it) if `holder` holds it.
    Status releaseLease(const std::string& holder);
    /// The current holder and its expiry (nullopt: nobody ever held it).
    Result<std::optional<std::pair<std::string, std::int64_t>>> lease();

    /// The last event id the sender has looked at. The first call on a file without a cursor
    /// starts it at the newest stored event (an alert sender does not page for the past).
    Result<std::int64_t> cursor(std::int64_t nowNs);
    /// Events with id > afterId, ascending, at most limit.
    Result<std::vector<StoredEvent>> eventsAfter(std::int64_t afterId, int limit);
    Result<std::optional<AlertRunInfo>> run(const RunId& runId);

    /// In one transaction, and only while `holder` holds the lease: stores the deliveries
    /// (once per event, rule and destination) and moves the cursor to throughEventId.
    /// ErrorCode::Busy when the lease is no longer this holder's.
    Status enqueue(const std::string& holder, const std::vector<NewDelivery>& deliveries,
                   std::int64_t throughEventId, std::int64_t nowNs);
    /// Non-suppressed deliveries of a rule created at or after sinceNs (rate limit).
    Result<int> countSince(const std::string& rule, std::int64_t sinceNs);
    /// Newest creation time of a non-suppressed delivery with this quiet key (0: none).
    Result<std::int64_t> lastWithKey(const std::string& quietKey);

    /// How many deliveries are pending.
    Result<int> countPending();
    /// Pending deliveries, earliest next attempt first.
    Result<std::vector<AlertDelivery>> pending(int limit);
    /// Records an attempt's outcome (state Pending with a new nextNs: retry later; Sent).
    /// ErrorCode::Busy when the lease is no longer this holder's.
    Status recordAttempt(const std::string& holder, std::int64_t deliveryId, DeliveryState state,
                         int attempts, std::int64_t nextNs, const std::string& result,
                         std::int64_t nowNs);
    /// The delivery's deadline passed: marks it failed and stores an "alert_failed" event (node
    /// and run of the alerted event, attrs rule, destination, event_id, attempts, last_result)
    /// in the same transaction.
    Status recordFailure(const std::string& holder, const AlertDelivery& delivery,
                         const std::string& result, std::int64_t nowNs);
    /// The newest deliveries, newest first.
    Result<std::vector<AlertDelivery>> recent(int limit);

  private:
    explicit AlertStore(std::unique_ptr<sqlite::Database> db);
    Status checkHolder(const std::string& holder);
    std::unique_ptr<sqlite::Database> m_db;
};

/// The kind of the event that says an alert could not be delivered.
inline constexpr const char* kAlertFailedKind = "alert_failed";

}  // namespace runplane::db
