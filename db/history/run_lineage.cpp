// History: run lineage (issue 49, docs/history.md "Run lineage"): the run a run resumed from a
// checkpoint of, or forked from, and the parent's step it branched at. Like the tags, the table is
// created on the first write when missing (no schema version: a history without it has no
// lineage, and older binaries ignore it).
#include <set>
#include <string_view>

#include "db/history/each_row.h"
#include "db/history/history.h"
#include "db/history/history_impl.h"
#include "db/history/run_lineage.h"

namespace runplane::db {

namespace {

constexpr const char* kLineageTable =
    "CREATE TABLE IF NOT EXISTS run_lineage (run_id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, "
    "kind TEXT NOT NULL CHECK (kind IN ('resume', 'fork')), step INTEGER NOT NULL, "
    "source TEXT NOT NULL, t_ns INTEGER NOT NULL);";

bool lineageTableExists(sqlite::Database& db) {
    auto q = db.prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'run_lineage';");
    if (!q.ok() || !q->step().ok()) {
        return false;
    }
    return q->columnInt(0) == 1;
}

Status requireRun(sqlite::Database& db, const std::string& runId, const char* what) {
    auto q = db.prepare("SELECT count(*) FROM runs WHERE id = ?1;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, runId);
    if (auto r = q->step(); !r.ok()) {
        return r.failure();
    }
    if (q->columnInt(0) == 0) {
        return Error{std::string(what) + ": no run '" + runId + "' in " + db.path()};
    }
    return {};
}

// One run_lineage row, selected as run_id, parent_id, kind, step, source, t_ns.
History::RunParent parentRow(const sqlite::Statement& q) {
    History::RunParent p;
    p.runId = q.columnText(0);
    p.parentId = q.columnText(1);
    p.kind = q.columnText(2);
    p.step = q.columnInt(3);
    p.source = q.columnText(4);
    p.tNs = q.columnInt(5);
    return p;
}

Result<std::optional<History::RunParent>> readParent(sqlite::Database& db,
                                                     const std::string& runId) {
    auto q = db.prepare(
        "SELECT run_id, parent_id, kind, step, source, t_ns FROM run_lineage WHERE run_id = ?1;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, runId);
    auto row = q->step();
    if (!row.ok()) {
        return row.failure();
    }
    if (!*row) {
        return std::optional<History::RunParent>{};
    }
    return std::optional<History::RunParent>{parentRow(*q)};
}

}  // namespace

Status History::setRunParent(const RunParent& parent) {
    if (parent.kind != "resume" && parent.kind != "fork") {
        return Error{"lineage kind '" + parent.kind + "': expected resume or fork"};
    }
    if (parent.step < -1) {
        return Error{"lineage step " + std::to_string(parent.step) + ": expected >= 0"};
    }
    if (parent.runId == parent.parentId) {
        return Error{"run '" + parent.runId + "' cannot be its own parent"};
    }
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (Status s = requireRun(db, parent.runId, "lineage"); !s.ok()) {
        return s;
    }
    if (Status s = requireRun(db, parent.parentId, "parent"); !s.ok()) {
        return s;
    }
    if (Status s = db.exec(kLineageTable); !s.ok()) {
        return s;
    }
    // A run may not become its own ancestor: walk the new parent's ancestors.
    std::set<std::string> seen{parent.parentId};
    for (std::string at = parent.parentId;;) {
        auto up = readParent(db, at);
        if (!up.ok()) {
            return up.failure();
        }
        if (!up->has_value()) {
            break;
        }
        at = (*up)->parentId;
        if (at == parent.runId) {
            return Error{"run '" + parent.runId + "' is an ancestor of '" + parent.parentId +
                         "'; making it its child would be a cycle"};
        }
        if (!seen.insert(at).second) {
            break;  // an older cycle (not written by this code); stop walking
        }
    }
    auto q = db.prepare(
        "INSERT INTO run_lineage(run_id, parent_id, kind, step, source, t_ns) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(run_id) DO UPDATE SET parent_id = ?2, "
        "kind = ?3, step = ?4, source = ?5, t_ns = ?6;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, parent.runId)
        .bind(2, parent.parentId)
        .bind(3, parent.kind)
        .bind(4, parent.step)
        .bind(5, parent.source.empty() ? std::string("user") : parent.source)
        .bind(6, parent.tNs);
    return q->run();
}

Result<bool> History::clearRunParent(const RunId& runId) {
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (Status s = requireRun(db, runId.value(), "lineage"); !s.ok()) {
        return s.failure();
    }
    if (!lineageTableExists(db)) {
        return false;
    }
    auto q = db.prepare("DELETE FROM run_lineage WHERE run_id = ?1;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, runId.value());
    if (Status s = q->run(); !s.ok()) {
        return s.failure();
    }
    return db.changes() > 0;
}

Result<std::optional<History::RunParent>> History::runParent(const RunId& runId) {
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (!lineageTableExists(db)) {
        return std::optional<RunParent>{};
    }
    return readParent(db, runId.value());
}

Result<std::vector<History::RunParent>> History::runParents() {
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    std::vector<RunParent> out;
    if (!lineageTableExists(db)) {
        return out;
    }
    auto q = db.prepare(
        "SELECT run_id, parent_id, kind, step, source, t_ns FROM run_lineage ORDER BY run_id;");
    if (!q.ok()) {
        return q.failure();
    }
    if (Status s = eachRow(*q, [&](const sqlite::Statement& r) { out.push_back(parentRow(r)); });
        !s.ok()) {
        return s.failure();
    }
    return out;
}

Result<std::vector<History::RunParent>> lineageChain(History& history, const RunId& runId) {
    std::vector<History::RunParent> chain;
    std::set<std::string> seen{runId.value()};
    for (std::string at = runId.value(); chain.size() < kMaxLineageDepth;) {
        auto p = history.runParent(RunId{at});
        if (!p.ok()) {
            return p.failure();
        }
        if (!p->has_value() || !seen.insert((*p)->parentId).second) {
            break;
        }
        at = (*p)->parentId;
        chain.push_back(std::move(**p));
    }
    return chain;
}

std::optional<std::int64_t> checkpointStepOf(const std::string& component) {
    // Megatron's checkpoint folders: iter_NNNNNNN (seven digits, more past 9,999,999).
    constexpr std::string_view kPrefix = "iter_";
    if (component.size() <= kPrefix.size() || component.compare(0, kPrefix.size(), kPrefix) != 0 ||
        component.size() > kPrefix.size() + 18) {
        return std::nullopt;
    }
    std::int64_t step = 0;
    for (std::size_t i = kPrefix.size(); i < component.size(); ++i) {
        const char c = component[i];
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        step = step * 10 + (c - '0');
    }
    return step;
}

}  // namespace runplane::db
