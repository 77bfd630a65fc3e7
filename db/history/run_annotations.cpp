// History: tags and notes on runs (issue 49, docs/history.md "Run tags and notes"). The tables
// are created on the first write when missing (no schema version: a history without them reads
// as having no annotations, and older binaries ignore them).
#include <algorithm>
#include <cctype>
#include <map>

#include "db/history/history.h"
#include "db/history/history_impl.h"

namespace runplane::db {

namespace {

constexpr std::size_t kMaxTagLength = 64;
constexpr std::size_t kMaxNoteBytes = 64 * 1024;

constexpr const char* kAnnotationTables =
    "CREATE TABLE IF NOT EXISTS run_tags (run_id TEXT NOT NULL, tag TEXT NOT NULL, "
    "PRIMARY KEY (run_id, tag)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS run_notes (run_id TEXT PRIMARY KEY, note TEXT NOT NULL, "
    "t_ns INTEGER NOT NULL);";

Status checkTag(const std::string& tag) {
    if (tag.empty() || tag.size() > kMaxTagLength) {
        return Error{"tag '" + tag + "': must be 1 to 64 characters"};
    }
    for (const char c : tag) {
        if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == ',' ||
            static_cast<unsigned char>(c) < 0x20) {
            return Error{"tag '" + tag + "': no whitespace, commas or control characters"};
        }
    }
    return {};
}

Status checkRun(sqlite::Database& db, const std::string& runId) {
    auto q = db.prepare("SELECT count(*) FROM runs WHERE id = ?1;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, runId);
    if (auto r = q->step(); !r.ok()) {
        return r.failure();
    }
    if (q->columnInt(0) == 0) {
        return Error{"no run '" + runId + "' in " + db.path()};
    }
    return {};
}

bool tablesExist(sqlite::Database& db) {
    auto q = db.prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('run_tags', "
        "'run_notes');");
    if (!q.ok() || !q->step().ok()) {
        return false;
    }
    return q->columnInt(0) == 2;
}

}  // namespace

Status History::addRunTag(const RunId& run, const std::string& tag) {
    if (Status s = checkTag(tag); !s.ok()) {
        return s;
    }
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (Status s = checkRun(db, run.value()); !s.ok()) {
        return s;
    }
    if (Status s = db.exec(kAnnotationTables); !s.ok()) {
        return s;
    }
    auto ins = db.prepare("INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES (?1, ?2);");
    if (!ins.ok()) {
        return ins.failure();
    }
    ins->bind(1, run.value()).bind(2, tag);
    return ins->run();
}

Result<bool> History::removeRunTag(const RunId& run, const std::string& tag) {
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (Status s = checkRun(db, run.value()); !s.ok()) {
        return s.failure();
    }
    if (!tablesExist(db)) {
        return false;
    }
    auto del = db.prepare("DELETE FROM run_tags WHERE run_id = ?1 AND tag = ?2;");
    if (!del.ok()) {
        return del.failure();
    }
    del->bind(1, run.value()).bind(2, tag);
    if (Status s = del->run(); !s.ok()) {
        return s.failure();
    }
    return db.changes() > 0;
}

Status History::setRunNote(const RunId& run, const std::string& note, std::int64_t tNs) {
    if (note.size() > kMaxNoteBytes) {
        return Error{"note: " + std::to_string(note.size()) + " bytes, at most 65536"};
    }
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (Status s = checkRun(db, run.value()); !s.ok()) {
        return s;
    }
    if (Status s = db.exec(kAnnotationTables); !s.ok()) {
        return s;
    }
    auto q = note.empty() ? db.prepare("DELETE FROM run_notes WHERE run_id = ?1;")
                          : db.prepare(
                                "INSERT INTO run_notes(run_id, note, t_ns) VALUES (?1, ?2, ?3) "
                                "ON CONFLICT(run_id) DO UPDATE SET note = ?2, t_ns = ?3;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, run.value());
    if (!note.empty()) {
        q->bind(2, note).bind(3, tNs);
    }
    return q->run();
}

Result<std::vector<std::pair<std::string, History::RunAnnotation>>> History::runAnnotations() {
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    std::vector<std::pair<std::string, RunAnnotation>> out;
    if (!tablesExist(db)) {
        return out;
    }
    std::map<std::string, RunAnnotation> byRun;
    for (const bool tags : {true, false}) {
        auto q = db.prepare(tags ? "SELECT run_id, tag FROM run_tags ORDER BY run_id, tag;"
                                 : "SELECT run_id, note FROM run_notes;");
        if (!q.ok()) {
            return q.failure();
        }
        for (;;) {
            auto row = q->step();
            if (!row.ok()) {
                return row.failure();
            }
            if (!*row) {
                break;
            }
            RunAnnotation& a = byRun[q->columnText(0)];
            if (tags) {
                a.tags.push_back(q->columnText(1));
            } else {
                a.note = q->columnText(1);
            }
        }
    }
    for (auto& [id, a] : byRun) {
        out.emplace_back(id, std::move(a));
    }
    return out;
}

}  // namespace runplane::db
