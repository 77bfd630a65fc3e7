#include "tests/support/history_check.h"

#include <nlohmann/json.hpp>

#include "db/history/chunks.h"
#include "db/sqlite/sqlite.h"

namespace runplane::testing {

std::int64_t queryInt(const std::string& historyPath, const std::string& sql) {
    db::registerSamplesView();  // `samples` is a view over the chunks (db/history/chunks.h)
    auto db = sqlite::Database::open(historyPath);
    if (!db.ok()) {
        return -1;
    }
    auto stmt = (*db)->prepare(sql);
    if (!stmt.ok()) {
        return -1;
    }
    auto row = stmt->step();
    if (!row.ok() || !*row) {
        return -1;
    }
    return stmt->columnInt(0);
}

Continuity checkContinuity(const std::string& historyPath, const std::string& nodeId) {
    Continuity c;
    db::registerSamplesView();  // `samples` is a view over the chunks (db/history/chunks.h)
    auto db = sqlite::Database::open(historyPath);
    if (!db.ok()) {
        c.error = db.error();
        return c;
    }
    // One read snapshot for the seqs, the cursor and the gaps: an ingest still running may
    // commit between two statements, which would read as seqs missing below the cursor.
    if (Status s = (*db)->exec("BEGIN;"); !s.ok()) {
        c.error = s.error();
        return c;
    }
    auto seqs = (*db)->prepare(
        "SELECT s.seq FROM samples s JOIN series r ON r.id = s.series_id WHERE r.node_id = ?1 "
        "UNION ALL SELECT seq FROM events WHERE node_id = ?1 AND seq IS NOT NULL;");
    if (!seqs.ok()) {
        c.error = seqs.error();
        return c;
    }
    seqs->bind(1, nodeId);
    std::set<std::uint64_t> present;
    while (true) {
        auto row = seqs->step();
        if (!row.ok()) {
            c.error = row.error();
            return c;
        }
        if (!*row) {
            break;
        }
        ++c.rows;
        present.insert(static_cast<std::uint64_t>(seqs->columnInt(0)));
    }
    c.distinctSeqs = static_cast<std::int64_t>(present.size());
    c.firstSeq = present.empty() ? 0 : *present.begin();
    auto cursor = (*db)->prepare("SELECT last_seq FROM ingest_cursor WHERE node_id = ?1;");
    cursor->bind(1, nodeId);
    if (auto row = cursor->step(); row.ok() && *row) {
        c.cursor = static_cast<std::uint64_t>(cursor->columnInt(0));
    }
    auto gaps =
        (*db)->prepare("SELECT attrs_json FROM events WHERE node_id = ?1 AND kind = 'gap';");
    gaps->bind(1, nodeId);
    while (true) {
        auto row = gaps->step();
        if (!row.ok() || !*row) {
            break;
        }
        auto attrs = nlohmann::json::parse(gaps->columnText(0), nullptr, false);
        if (attrs.is_object() && attrs.contains("first_seq") && attrs.contains("last_seq")) {
            c.gaps.emplace_back(std::stoull(attrs["first_seq"].get<std::string>()),
                                std::stoull(attrs["last_seq"].get<std::string>()));
        }
    }
    for (std::uint64_t seq = c.firstSeq; c.firstSeq > 0 && seq <= c.cursor; ++seq) {
        if (present.count(seq)) {
            continue;
        }
        bool covered = false;
        for (const auto& [first, last] : c.gaps) {
            covered = covered || (seq >= first && seq <= last);
        }
        if (!covered) {
            c.missing.push_back(seq);
        }
    }
    auto host = (*db)->prepare(
        "SELECT count(*) FROM samples s JOIN series r ON r.id = s.series_id WHERE r.node_id = ?1 "
        "AND r.name = 'host.mem.used_bytes' AND r.run_id = '';");
    if (!host.ok()) {
        c.error = host.error();
        return c;
    }
    host->bind(1, nodeId);
    if (auto row = host->step(); !row.ok()) {
        c.error = row.error();
    } else if (*row) {
        c.hostSamples = host->columnInt(0);
    }
    return c;
}

}  // namespace runplane::testing
