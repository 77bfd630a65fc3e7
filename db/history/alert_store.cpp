// The alert sender's tables (schema version 9; docs/alerts.md, "Exactly once").
#include "db/history/alert_store.h"

#include <array>
#include <filesystem>

#include "db/history/history_impl.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {
namespace {

constexpr std::array<DeliveryState, 4> kStates{DeliveryState::Pending, DeliveryState::Sent,
                                               DeliveryState::Failed, DeliveryState::Suppressed};

DeliveryState stateFromString(const std::string& text) {
    for (DeliveryState s : kStates) {
        if (text == toString(s)) {
            return s;
        }
    }
    return DeliveryState::Failed;
}

constexpr const char* kDeliveryColumns =
    "id, event_id, rule, destination, quiet_key, state, payload_json, attempts, created_ns, "
    "next_ns, deadline_ns, done_ns, result";

AlertDelivery readDelivery(const sqlite::Statement& q) {
    AlertDelivery d;
    d.id = q.columnInt(0);
    d.eventId = q.columnInt(1);
    d.rule = q.columnText(2);
    d.destination = q.columnText(3);
    d.quietKey = q.columnText(4);
    d.state = stateFromString(q.columnText(5));
    d.payloadJson = q.columnText(6);
    d.attempts = static_cast<int>(q.columnInt(7));
    d.createdNs = q.columnInt(8);
    d.nextNs = q.columnInt(9);
    d.deadlineNs = q.columnInt(10);
    d.doneNs = q.columnInt(11);
    d.result = q.columnText(12);
    return d;
}

Result<std::vector<AlertDelivery>> readDeliveries(sqlite::Database& db, const std::string& sql,
                                                  int limit) {
    auto q = db.prepare(sql);
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, static_cast<std::int64_t>(limit));
    std::vector<AlertDelivery> out;
    while (true) {
        auto row = q->step();
        if (!row.ok()) {
            return row.failure();
        }
        if (!*row) {
            break;
        }
        out.push_back(readDelivery(*q));
    }
    return out;
}

}  // namespace

const char* toString(DeliveryState state) {
    switch (state) {
        case DeliveryState::Pending:
            return "pending";
        case DeliveryState::Sent:
            return "sent";
        case DeliveryState::Failed:
            return "failed";
        case DeliveryState::Suppressed:
            return "suppressed";
    }
    return "failed";
}

AlertStore::AlertStore(std::unique_ptr<sqlite::Database> db) : m_db(std::move(db)) {}
AlertStore::~AlertStore() = default;

Result<std::unique_ptr<AlertStore>> AlertStore::open(const std::string& path) {
    {
        // Creates, recognises and migrates the file (and refuses a foreign or newer one).
        auto history = History::open(path);
        if (!history.ok()) {
            return history.failure();
        }
    }
    sqlite::Database::Options options;
    options.ownerOnly = true;
    auto db = sqlite::Database::open(path, options);
    if (!db.ok()) {
        return db.failure();
    }
    // Every writer of a history commits durably (docs/history.md, "fsyncgate").
    if (Status s = (*db)->exec("PRAGMA synchronous=FULL;"); !s.ok()) {
        return s.failure();
    }
    return std::unique_ptr<AlertStore>(new AlertStore(std::move(*db)));
}

Result<std::unique_ptr<AlertStore>> AlertStore::openReadOnly(const std::string& path,
                                                             int* schemaVersion) {
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) {
        return Error{path + ": no such history file"};
    }
    sqlite::Database::Options options;
    options.readOnly = true;    // SQLITE_OPEN_READONLY: no write can happen on this connection
    options.wal = false;        // no journal-mode switch
    options.ownerOnly = false;  // no chmod either
    auto db = sqlite::Database::open(path, options);
    if (!db.ok()) {
        return db.failure();
    }
    auto hasTable = (*db)->prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version';");
    if (!hasTable.ok()) {
        return hasTable.failure();
    }
    if (auto row = hasTable->step(); !row.ok()) {
        return row.failure();
    }
    if (hasTable->columnInt(0) == 0) {
        return Error{path + ": not a Runplane history (no schema_version table); not read"};
    }
    hasTable = sqlite::Statement();
    auto version = (*db)->prepare("SELECT COALESCE(max(version), 0) FROM schema_version;");
    if (!version.ok()) {
        return version.failure();
    }
    if (auto row = version->step(); !row.ok()) {
        return row.failure();
    }
    const int found = static_cast<int>(version->columnInt(0));
    version = sqlite::Statement();
    if (schemaVersion != nullptr) {
        *schemaVersion = found;
    }
    if (found > kSchemaVersion) {
        return Error{path + ": history schema version " + std::to_string(found) +
                     " is newer than this build understands (" + std::to_string(kSchemaVersion) +
                     "); use a newer runplane"};
    }
    if (found < kAlertSchemaVersion) {
        return std::unique_ptr<AlertStore>();
    }
    return std::unique_ptr<AlertStore>(new AlertStore(std::move(*db)));
}

Result<bool> AlertStore::acquireLease(const std::string& holder, std::int64_t now,
                                      std::int64_t ttlNs) {
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return tx.begun().failure();
    }
    auto q = m_db->prepare("SELECT holder, expires_ns FROM alert_lease WHERE id = 1;");
    if (!q.ok()) {
        return q.failure();
    }
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    if (*row && q->columnText(0) != holder && q->columnInt(1) > now) {
        return false;
    }
    q = sqlite::Statement();
    auto up = m_db->prepare(
        "INSERT INTO alert_lease(id, holder, expires_ns) VALUES (1, ?1, ?2) "
        "ON CONFLICT(id) DO UPDATE SET holder = excluded.holder, expires_ns = "
        "excluded.expires_ns;");
    if (!up.ok()) {
        return up.failure();
    }
    up->bind(1, holder).bind(2, now + ttlNs);
    if (Status s = up->run(); !s.ok()) {
        return s.failure();
    }
    up = sqlite::Statement();
    if (Status s = tx.commit(); !s.ok()) {
        return s.failure();
    }
    return true;
}

Status AlertStore::releaseLease(const std::string& holder) {
    auto q = m_db->prepare("UPDATE alert_lease SET expires_ns = 0 WHERE id = 1 AND holder = ?1;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, holder);
    return q->run();
}

Result<std::optional<std::pair<std::string, std::int64_t>>> AlertStore::lease() {
    auto q = m_db->prepare("SELECT holder, expires_ns FROM alert_lease WHERE id = 1;");
    if (!q.ok()) {
        return q.failure();
    }
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    if (!*row) {
        return std::optional<std::pair<std::string, std::int64_t>>{};
    }
    return std::optional<std::pair<std::string, std::int64_t>>{
        std::pair{q->columnText(0), q->columnInt(1)}};
}

Status AlertStore::checkHolder(const std::string& holder) {
    auto q = m_db->prepare("SELECT holder FROM alert_lease WHERE id = 1;");
    if (!q.ok()) {
        return q.failure();
    }
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    if (!*row || q->columnText(0) != holder) {
        return Error{m_db->path() + ": the alert sender lease is held by another sender",
                     ErrorCode::Busy};
    }
    return {};
}

Result<std::int64_t> AlertStore::cursor(std::int64_t now) {
    auto q = m_db->prepare("SELECT last_event_id FROM alert_cursor WHERE id = 1;");
    if (!q.ok()) {
        return q.failure();
    }
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    if (*row) {
        return q->columnInt(0);
    }
    q = sqlite::Statement();
    auto init = m_db->prepare(
        "INSERT OR IGNORE INTO alert_cursor(id, last_event_id, updated_ns) "
        "SELECT 1, coalesce(max(id), 0), ?1 FROM events;");
    if (!init.ok()) {
        return init.failure();
    }
    init->bind(1, now);
    if (Status s = init->run(); !s.ok()) {
        return s.failure();
    }
    init = sqlite::Statement();
    return cursor(now);
}

Result<std::vector<StoredEvent>> AlertStore::eventsAfter(std::int64_t afterId, int limit) {
    auto q = m_db->prepare(
        "SELECT id, node_id, seq, t_ns, run_id, kind, message, attrs_json FROM events "
        "WHERE id > ?1 ORDER BY id LIMIT ?2;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, afterId).bind(2, static_cast<std::int64_t>(limit));
    std::vector<StoredEvent> out;
    while (true) {
        auto row = q->step();
        if (!row.ok()) {
            return row.failure();
        }
        if (!*row) {
            break;
        }
        StoredEvent e;
        e.id = q->columnInt(0);
        e.nodeId = NodeId(q->columnText(1));
        if (!q->columnIsNull(2)) {
            e.seq = static_cast<std::uint64_t>(q->columnInt(2));
        }
        e.tNs = q->columnInt(3);
        e.runId = RunId(q->columnText(4));
        e.kind = q->columnText(5);
        e.message = q->columnText(6);
        e.attrs = decodeEventAttrs(q->columnText(7));
        out.push_back(std::move(e));
    }
    return out;
}

Result<std::optional<AlertRunInfo>> AlertStore::run(const RunId& runId) {
    auto q =
        m_db->prepare("SELECT name, recipe_yaml, provenance_json, status FROM runs WHERE id = ?1;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, runId.value());
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    if (!*row) {
        return std::optional<AlertRunInfo>{};
    }
    return std::optional<AlertRunInfo>{
        AlertRunInfo{q->columnText(0), q->columnText(1), q->columnText(2), q->columnText(3)}};
}

Status AlertStore::enqueue(const std::string& holder, const std::vector<NewDelivery>& deliveries,
                           std::int64_t throughEventId, std::int64_t now) {
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    if (Status s = checkHolder(holder); !s.ok()) {
        return s;
    }
    for (const NewDelivery& d : deliveries) {
        auto q = m_db->prepare(
            "INSERT OR IGNORE INTO alert_deliveries(event_id, rule, destination, quiet_key, state, "
            "payload_json, attempts, created_ns, next_ns, deadline_ns, done_ns, result) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?8, ?9, ?10, ?11);");
        if (!q.ok()) {
            return q.failure();
        }
        q->bind(1, d.eventId)
            .bind(2, d.rule)
            .bind(3, d.destination)
            .bind(4, d.quietKey)
            .bind(5, std::string_view(toString(d.state)))
            .bind(6, d.payloadJson)
            .bind(7, d.createdNs)
            .bind(8, d.nextNs)
            .bind(9, d.deadlineNs)
            .bind(10, d.state == DeliveryState::Pending ? std::int64_t{0} : now)
            .bind(11, d.result);
        if (Status s = q->run(); !s.ok()) {
            return s;
        }
    }
    auto c = m_db->prepare(
        "INSERT INTO alert_cursor(id, last_event_id, updated_ns) VALUES (1, ?1, ?2) "
        "ON CONFLICT(id) DO UPDATE SET last_event_id = max(last_event_id, excluded.last_event_id), "
        "updated_ns = excluded.updated_ns;");
    if (!c.ok()) {
        return c.failure();
    }
    c->bind(1, throughEventId).bind(2, now);
    if (Status s = c->run(); !s.ok()) {
        return s;
    }
    c = sqlite::Statement();
    return tx.commit();
}

Result<int> AlertStore::countSince(const std::string& rule, std::int64_t sinceNs) {
    auto q = m_db->prepare(
        "SELECT count(*) FROM (SELECT DISTINCT event_id FROM alert_deliveries WHERE rule = ?1 "
        "AND created_ns >= ?2 AND state != 'suppressed');");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, rule).bind(2, sinceNs);
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    return static_cast<int>(q->columnInt(0));
}

Result<std::int64_t> AlertStore::lastWithKey(const std::string& quietKey) {
    auto q = m_db->prepare(
        "SELECT coalesce(max(created_ns), 0) FROM alert_deliveries WHERE quiet_key = ?1 "
        "AND state != 'suppressed';");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, quietKey);
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    return q->columnInt(0);
}

Result<int> AlertStore::countPending() {
    auto q = m_db->prepare("SELECT count(*) FROM alert_deliveries WHERE state = 'pending';");
    if (!q.ok()) {
        return q.failure();
    }
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    return static_cast<int>(q->columnInt(0));
}

Result<std::vector<AlertDelivery>> AlertStore::pending(int limit) {
    return readDeliveries(*m_db,
                          std::string("SELECT ") + kDeliveryColumns +
                              " FROM alert_deliveries WHERE state = 'pending' "
                              "ORDER BY next_ns, id LIMIT ?1;",
                          limit);
}

Result<std::vector<AlertDelivery>> AlertStore::recent(int limit) {
    return readDeliveries(*m_db,
                          std::string("SELECT ") + kDeliveryColumns +
                              " FROM alert_deliveries ORDER BY id DESC LIMIT ?1;",
                          limit);
}

Status AlertStore::recordAttempt(const std::string& holder, std::int64_t deliveryId,
                                 DeliveryState state, int attempts, std::int64_t nextNs,
                                 const std::string& result, std::int64_t now) {
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    if (Status s = checkHolder(holder); !s.ok()) {
        return s;
    }
    auto q = m_db->prepare(
        "UPDATE alert_deliveries SET state = ?2, attempts = ?3, next_ns = ?4, result = ?5, "
        "done_ns = ?6 WHERE id = ?1 AND state = 'pending';");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, deliveryId)
        .bind(2, std::string_view(toString(state)))
        .bind(3, static_cast<std::int64_t>(attempts))
        .bind(4, nextNs)
        .bind(5, result)
        .bind(6, state == DeliveryState::Pending ? std::int64_t{0} : now);
    if (Status s = q->run(); !s.ok()) {
        return s;
    }
    q = sqlite::Statement();
    return tx.commit();
}

Status AlertStore::recordFailure(const std::string& holder, const AlertDelivery& d,
                                 const std::string& result, std::int64_t now) {
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    if (Status s = checkHolder(holder); !s.ok()) {
        return s;
    }
    auto q = m_db->prepare(
        "UPDATE alert_deliveries SET state = 'failed', result = ?2, done_ns = ?3 "
        "WHERE id = ?1 AND state = 'pending';");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, d.id).bind(2, result).bind(3, now);
    if (Status s = q->run(); !s.ok()) {
        return s;
    }
    const bool changed = m_db->changes() > 0;
    q = sqlite::Statement();
    if (changed) {
        // The alerted event's node and run, so the failure shows where the event did. An alert
        // about an alert_failed event that fails in turn stays a failed row only (no chain).
        auto e = m_db->prepare(
            "INSERT INTO events(node_id, incarnation, seq, t_ns, run_id, kind, message, "
            "attrs_json) "
            "SELECT node_id, incarnation, NULL, ?2, run_id, ?3, ?4, ?5 FROM events WHERE id = ?1 "
            "AND kind != ?3;");
        if (!e.ok()) {
            return e.failure();
        }
        EventAttrs attrs{{"rule", d.rule},
                         {"destination", d.destination},
                         {"event_id", d.eventId},
                         {"attempts", d.attempts},
                         {"last_result", result}};
        e->bind(1, d.eventId)
            .bind(2, now)
            .bind(3, std::string_view(kAlertFailedKind))
            .bind(4, "alert for event " + std::to_string(d.eventId) + " (rule " + d.rule +
                         ") not delivered to " + d.destination + " after " +
                         std::to_string(d.attempts) + " attempts: " + result)
            .bind(5, encodeEventAttrs(attrs));
        if (Status s = e->run(); !s.ok()) {
            return s;
        }
    }
    return tx.commit();
}

}  // namespace runplane::db
