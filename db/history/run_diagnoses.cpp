// History: a run's diagnoses (issue #44, docs/diagnosis.md), bounded per run.
#include "db/history/each_row.h"
#include "db/history/history.h"
#include "db/history/history_impl.h"

namespace runplane::db {

Result<std::int64_t> History::addDiagnosis(const RunId& run, std::int64_t tNs,
                                           const std::string& trigger, const std::string& headline,
                                           const std::string& json, std::uint64_t maxBytesPerRun) {
    const std::string& runId = run.value();
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    sqlite::Transaction tx(db);
    if (!tx.begun().ok()) {
        return tx.begun().failure();
    }
    auto ins = db.prepare(
        "INSERT INTO run_diagnoses(run_id, t_ns, trigger, headline, bytes, json) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6);");
    if (!ins.ok()) {
        return ins.failure();
    }
    ins->bind(1, runId)
        .bind(2, tNs)
        .bind(3, trigger)
        .bind(4, headline)
        .bind(5, static_cast<std::int64_t>(json.size()))
        .bind(6, json);
    if (Status s = ins->run(); !s.ok()) {
        return s.failure();
    }
    const std::int64_t id = db.lastInsertRowId();
    // The bound: the oldest go while the run holds more than maxBytesPerRun (the new one stays).
    for (;;) {
        auto total = db.prepare(
            "SELECT coalesce(sum(bytes), 0), count(*) FROM run_diagnoses WHERE run_id = ?1;");
        if (!total.ok()) {
            return total.failure();
        }
        total->bind(1, runId);
        if (auto r = total->step(); !r.ok()) {
            return r.failure();
        }
        if (static_cast<std::uint64_t>(total->columnInt(0)) <= maxBytesPerRun ||
            total->columnInt(1) <= 1) {
            break;
        }
        auto del = db.prepare(
            "DELETE FROM run_diagnoses WHERE id = (SELECT id FROM run_diagnoses WHERE run_id = ?1 "
            "AND id != ?2 ORDER BY t_ns, id LIMIT 1);");
        if (!del.ok()) {
            return del.failure();
        }
        del->bind(1, runId).bind(2, id);
        if (Status s = del->run(); !s.ok()) {
            return s.failure();
        }
    }
    if (Status s = tx.commit(); !s.ok()) {
        return s.failure();
    }
    return id;
}

Result<std::vector<DiagnosisRecord>> History::listDiagnoses(const RunId& run, bool withJson) {
    std::lock_guard lock(m_mutex);
    auto q = m_impl->db->prepare(
        withJson ? "SELECT id, t_ns, trigger, headline, json FROM run_diagnoses WHERE run_id = ?1 "
                   "ORDER BY t_ns DESC, id DESC;"
                 : "SELECT id, t_ns, trigger, headline, '' FROM run_diagnoses WHERE run_id = ?1 "
                   "ORDER BY t_ns DESC, id DESC;");
    if (!q.ok()) {
        return q.failure();
    }
    q->bind(1, run.value());
    std::vector<DiagnosisRecord> out;
    if (Status s = eachRow(*q,
                           [&](const sqlite::Statement& row) {
                               DiagnosisRecord r;
                               r.id = row.columnInt(0);
                               r.tNs = row.columnInt(1);
                               r.trigger = row.columnText(2);
                               r.headline = row.columnText(3);
                               r.json = row.columnText(4);
                               out.push_back(std::move(r));
                           });
        !s.ok()) {
        return s.failure();
    }
    return out;
}

}  // namespace runplane::db
