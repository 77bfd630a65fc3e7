// History: the per-(node, spool incarnation) ingest cursor and node resets (issue #17).
#include "db/history/history.h"
#include "db/history/history_impl.h"

namespace runplane::db {
namespace {

// Incarnations are random 64-bit ids; SQLite stores them as the same bits, signed.
std::int64_t bits(std::uint64_t incarnation) {
    return static_cast<std::int64_t>(incarnation);
}

}  // namespace

Result<std::optional<NodeCursor>> History::latestCursor(const NodeId& node) {
    const std::string& nodeId = node.value();
    std::lock_guard lock(m_mutex);
    // The incarnation written last is the current one (an old spool never comes back).
    auto q = m_impl->db->prepare(
        "SELECT incarnation, last_seq FROM ingest_cursor WHERE node_id = ?1 "
        "ORDER BY updated_ns DESC, rowid DESC LIMIT 1;");
    if (!q.ok()) {
        return Error{q.error()};
    }
    q->bind(1, nodeId);
    auto row = q->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    if (!*row) {
        return std::optional<NodeCursor>{};
    }
    return std::optional<NodeCursor>{NodeCursor{static_cast<std::uint64_t>(q->columnInt(0)),
                                                static_cast<std::uint64_t>(q->columnInt(1))}};
}

Status History::recordNodeReset(const NodeId& node, const NodeCursor& old,
                                std::uint64_t newIncarnation, const std::string& message) {
    const std::string& nodeId = node.value();
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    sqlite::Transaction tx(db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    {
        auto exists = db.prepare(
            "SELECT count(*) FROM ingest_cursor WHERE node_id = ?1 AND incarnation = ?2;");
        if (!exists.ok()) {
            return Error{exists.error()};
        }
        exists->bind(1, nodeId).bind(2, bits(newIncarnation));
        if (auto row = exists->step(); !row.ok()) {
            return Error{row.error()};
        }
        if (exists->columnInt(0) > 0) {
            return {};  // recorded before (a reconnect): one reset event per incarnation
        }
    }
    const std::int64_t now = nowNs();
    const EventAttrs attrs = {{"old_incarnation", std::to_string(old.incarnation)},
                              {"old_last_seq", std::to_string(old.lastSeq)},
                              {"new_incarnation", std::to_string(newIncarnation)}};
    auto event = db.prepare(
        "INSERT INTO events(node_id, incarnation, seq, t_ns, kind, message, attrs_json) "
        "VALUES (?1, ?2, NULL, ?3, 'node_reset', ?4, ?5);");
    if (!event.ok()) {
        return Error{event.error()};
    }
    event->bind(1, nodeId)
        .bind(2, bits(newIncarnation))
        .bind(3, now)
        .bind(4, message)
        .bind(5, encodeEventAttrs(attrs));
    if (Status s = event->run(); !s.ok()) {
        return s;
    }
    auto cursor = db.prepare(
        "INSERT INTO ingest_cursor(node_id, incarnation, last_seq, updated_ns) "
        "VALUES (?1, ?2, 0, ?3);");
    if (!cursor.ok()) {
        return Error{cursor.error()};
    }
    cursor->bind(1, nodeId).bind(2, bits(newIncarnation)).bind(3, now);
    if (Status s = cursor->run(); !s.ok()) {
        return s;
    }
    return tx.commit();
}

Status History::adoptIncarnation(const NodeId& node, std::uint64_t incarnation) {
    const std::string& nodeId = node.value();
    std::lock_guard lock(m_mutex);
    auto q = m_impl->db->prepare(
        "UPDATE ingest_cursor SET incarnation = ?2 WHERE node_id = ?1 AND incarnation = 0 AND "
        "NOT EXISTS (SELECT 1 FROM ingest_cursor WHERE node_id = ?1 AND incarnation = ?2);");
    if (!q.ok()) {
        return Error{q.error()};
    }
    q->bind(1, nodeId).bind(2, bits(incarnation));
    return q->run();
}

}  // namespace runplane::db
