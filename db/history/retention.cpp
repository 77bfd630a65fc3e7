// History: retention (issue #23): the policy in the settings table, pinned runs, and prune(),
// which deletes old raw samples and rollup cells in small transactions. Rules and figures:
// docs/history.md, "Retention".
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/history/chunks.h"
#include "db/history/history.h"
#include "db/history/history_impl.h"
#include "db/history/retention.h"
#include "db/history/rollup.h"
#include "db/history/staged.h"

namespace runplane::db {

namespace {

constexpr std::int64_t kDayNs = 86'400'000'000'000;
constexpr const char* kRawDaysKey = "retention.raw_days";
constexpr const char* kRollupDaysKey = "retention.rollup_days";

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) {
        --q;
    }
    return q;
}

Result<std::int64_t> scalar(sqlite::Database& db, const std::string& sql) {
    auto stmt = db.prepare(sql);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    auto row = stmt->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    return *row ? stmt->columnInt(0) : 0;
}

Result<int> readDays(sqlite::Database& db, const char* key, int fallback) {
    auto stmt = db.prepare("SELECT value FROM settings WHERE key = ?1;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, std::string_view(key));
    auto row = stmt->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    if (!*row) {
        return fallback;
    }
    const std::string text = stmt->columnText(0);
    int days = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), days);
    if (ec != std::errc() || end != text.data() + text.size() || days < 1 ||
        days > kMaxRetentionDays) {
        return Error{db.path() + ": settings '" + key + "' = '" + text +
                     "' is not a whole number of days in 1.." + std::to_string(kMaxRetentionDays)};
    }
    return days;
}

// A time window [t0, t1] whose node-level samples a pinned run keeps.
struct Window {
    std::int64_t t0 = 0;
    std::int64_t t1 = 0;
};

struct Candidate {
    std::int64_t id = 0;
    std::string nodeId;
    bool nodeLevel = false;
};

}  // namespace

std::int64_t pageBytes(sqlite::Database& db, const char* pragma) {
    auto count = scalar(db, std::string("PRAGMA ") + pragma + ";");
    auto size = scalar(db, "PRAGMA page_size;");
    return count.ok() && size.ok() ? *count * *size : 0;
}

Result<std::optional<SeriesHorizon>> readHorizon(sqlite::Database& db, std::int64_t seriesId) {
    auto stmt = db.prepare(
        "SELECT raw_before_ns, rollup_before_ns FROM series_horizon WHERE series_id = ?1;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, seriesId);
    auto row = stmt->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    if (!*row) {
        return std::optional<SeriesHorizon>();
    }
    return std::optional<SeriesHorizon>(SeriesHorizon{stmt->columnInt(0), stmt->columnInt(1)});
}

Status History::setPinned(const RunId& id, bool pinned) {
    const std::string& runId = id.value();
    std::lock_guard lock(m_mutex);
    auto stmt = m_impl->db->prepare("UPDATE runs SET pinned = ?2 WHERE id = ?1;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, runId).bind(2, static_cast<std::int64_t>(pinned ? 1 : 0));
    if (Status s = stmt->run(); !s.ok()) {
        return s;
    }
    if (m_impl->db->changes() == 0) {
        return Error{m_path + ": no run with id '" + runId + "'"};
    }
    return {};
}

Result<RetentionPolicy> History::retention() {
    std::lock_guard lock(m_mutex);
    RetentionPolicy policy;
    auto raw = readDays(*m_impl->db, kRawDaysKey, policy.rawDays);
    if (!raw.ok()) {
        return Error{raw.error()};
    }
    auto rollup = readDays(*m_impl->db, kRollupDaysKey, policy.rollupDays);
    if (!rollup.ok()) {
        return Error{rollup.error()};
    }
    policy.rawDays = *raw;
    policy.rollupDays = *rollup;
    return policy;
}

Status History::setRetention(const RetentionPolicy& policy) {
    const auto bad = [&](const char* field, int value) {
        return Error{m_path + ": retention " + field + " " + std::to_string(value) +
                     " is out of range 1.." + std::to_string(kMaxRetentionDays) + " days"};
    };
    if (policy.rawDays < 1 || policy.rawDays > kMaxRetentionDays) {
        return bad("raw days", policy.rawDays);
    }
    if (policy.rollupDays < 1 || policy.rollupDays > kMaxRetentionDays) {
        return bad("rollup days", policy.rollupDays);
    }
    if (policy.rawDays > policy.rollupDays) {
        return Error{m_path + ": retention raw days (" + std::to_string(policy.rawDays) +
                     ") must not exceed rollup days (" + std::to_string(policy.rollupDays) +
                     "): rollups are what is left of raw samples"};
    }
    std::lock_guard lock(m_mutex);
    sqlite::Transaction tx(*m_impl->db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    auto stmt = m_impl->db->prepare("INSERT OR REPLACE INTO settings(key, value) VALUES (?1, ?2);");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, std::string_view(kRawDaysKey)).bind(2, std::to_string(policy.rawDays));
    if (Status s = stmt->run(); !s.ok()) {
        return s;
    }
    stmt->bind(1, std::string_view(kRollupDaysKey)).bind(2, std::to_string(policy.rollupDays));
    if (Status s = stmt->run(); !s.ok()) {
        return s;
    }
    return tx.commit();
}

namespace {

// The time of the newest sample the file holds: the sealed chunks (one index probe per series)
// and the staged rows (the writers' open chunks, bounded by a chunk per series). 0: none.
Result<std::int64_t> newestSampleNs(sqlite::Database& db) {
    auto chunks = db.prepare(
        "SELECT coalesce(max((SELECT max(t_max) FROM chunks c WHERE c.series_id = s.id)), 0) "
        "FROM series s;");
    if (!chunks.ok()) {
        return Error{chunks.error()};
    }
    auto row = chunks->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    std::int64_t newest = chunks->columnInt(0);
    chunks.value() = sqlite::Statement();
    if (Status s = forEachStagedSample(db, 0,
                                       [&](std::int64_t, std::int64_t, const ChunkSample& p) {
                                           newest = std::max(newest, p.tNs);
                                       });
        !s.ok()) {
        return Error{s.error()};
    }
    return newest;
}

std::string utcText(std::int64_t ns) {
    const std::time_t seconds = static_cast<std::time_t>(floorDiv(ns, 1'000'000'000));
    std::tm tm{};
    char text[32] = "?";
    if (gmtime_r(&seconds, &tm) != nullptr) {
        std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
    }
    return text;
}

}  // namespace

Result<PruneReport> History::prune(const PruneOptions& options) {
    auto policy = retention();
    if (!policy.ok()) {
        return Error{policy.error()};
    }
    const std::int64_t clockNs = options.nowNs != 0 ? options.nowNs : nowNs();
    std::int64_t now = clockNs;
    PruneReport report;
    report.dryRun = options.dryRun;
    // The clock guard (issue 41, docs/history.md "Retention"): the horizon is measured back
    // from the newest sample stored when the clock is ahead of it, so a clock running ahead
    // never deletes the newest horizon's worth of data; when it is ahead by more than the raw
    // horizon, the prune is refused (it would delete every raw sample) unless the caller
    // trusts the clock.
    if (!options.trustClock) {
        Result<std::int64_t> newest = Error{""};
        {
            std::lock_guard lock(m_mutex);
            newest = newestSampleNs(*m_impl->db);
        }
        if (!newest.ok()) {
            return Error{newest.error()};
        }
        report.newestSampleNs = *newest;
        if (*newest != 0) {
            const std::int64_t ahead = clockNs - *newest;
            if (ahead > policy->rawDays * kDayNs) {
                char days[32];
                std::snprintf(days, sizeof days, "%.1f", static_cast<double>(ahead) / kDayNs);
                return Error{
                    m_path + ": refusing to prune: the clock (" + utcText(clockNs) + ") is " +
                        days + " days ahead of the newest sample stored (" + utcText(*newest) +
                        "), more than the " + std::to_string(policy->rawDays) +
                        " days raw samples are kept, so pruning by it would delete every raw "
                        "sample. Check this machine's clock; if it is right and the history is "
                        "only old, `runplanectl history prune --trust-clock` prunes by it",
                    ErrorCode::InvalidArgument};
            }
            now = std::min(now, *newest);
        }
    }
    const std::int64_t grid = rollupWidth(kRollupLevels - 1);
    // Cutoffs on the coarsest rollup grid: every rollup cell lies wholly before or after them.
    report.rawCutoffNs = floorDiv(now - policy->rawDays * kDayNs, grid) * grid;
    report.rollupCutoffNs = floorDiv(now - policy->rollupDays * kDayNs, grid) * grid;
    const int batch = std::max(1, options.batchRows);
    if (!options.dryRun) {
        // This connection's own open chunks become sealed chunks first, so that what it
        // ingested is pruned like the rest; other connections' staged rows are left alone
        // (they hold the newest samples, docs/history.md "Retention").
        std::lock_guard lock(m_mutex);
        if (Status s = m_impl->sealAll(); !s.ok()) {
            return Error{s.error()};
        }
    }

    std::vector<Candidate> candidates;
    std::map<std::string, std::vector<Window>> windows;  // node id -> pinned windows
    {
        std::lock_guard lock(m_mutex);
        sqlite::Database& db = *m_impl->db;
        report.bytesBefore = pageBytes(db, "page_count");
        auto list = db.prepare(
            "SELECT id, node_id, run_id FROM series WHERE substr(name, 1, 5) <> 'eval/' "
            "AND run_id NOT IN (SELECT id FROM runs WHERE pinned = 1) ORDER BY id;");
        if (!list.ok()) {
            return Error{list.error()};
        }
        while (true) {
            auto row = list->step();
            if (!row.ok()) {
                return Error{row.error()};
            }
            if (!*row) {
                break;
            }
            candidates.push_back(
                Candidate{list->columnInt(0), list->columnText(1), list->columnText(2).empty()});
        }
        // Pinned runs keep their nodes' samples during the run (nodes_json holds node ids, or
        // addresses when the id was unknown).
        std::map<std::string, std::string> byAddress;
        auto nodes = db.prepare("SELECT node_id, address FROM nodes;");
        if (!nodes.ok()) {
            return Error{nodes.error()};
        }
        while (true) {
            auto row = nodes->step();
            if (!row.ok()) {
                return Error{row.error()};
            }
            if (!*row) {
                break;
            }
            byAddress[nodes->columnText(1)] = nodes->columnText(0);
        }
        auto pinned =
            db.prepare("SELECT started_ns, ended_ns, nodes_json FROM runs WHERE pinned = 1;");
        if (!pinned.ok()) {
            return Error{pinned.error()};
        }
        while (true) {
            auto row = pinned->step();
            if (!row.ok()) {
                return Error{row.error()};
            }
            if (!*row) {
                break;
            }
            const Window w{pinned->columnInt(0),
                           pinned->columnInt(1) != 0 ? pinned->columnInt(1) : now};
            auto runNodes = nlohmann::json::parse(pinned->columnText(2), nullptr, false);
            if (!runNodes.is_array()) {
                continue;
            }
            for (const auto& item : runNodes) {
                if (!item.is_string()) {
                    continue;
                }
                const std::string node = item.get<std::string>();
                windows[node].push_back(w);
                if (auto it = byAddress.find(node); it != byAddress.end()) {
                    windows[it->second].push_back(w);
                }
            }
        }
    }

    // One bounded DELETE per transaction; the mutex (and SQLite's write lock) is released
    // between them so ingest never waits for more than one batch.
    auto step = [&](const std::string& boundSql, const std::string& deleteSql,
                    const std::string& deleteAllSql, std::int64_t seriesId, std::int64_t cutoff,
                    int level, std::int64_t& counter) -> Result<bool> {
        std::unique_lock lock(m_mutex);
        sqlite::Database& db = *m_impl->db;
        if (options.dryRun) {
            auto count = db.prepare("SELECT count(*) FROM (" + deleteAllSql + ");");
            if (!count.ok()) {
                return Error{count.error()};
            }
            count->bind(1, seriesId).bind(2, cutoff).bind(4, static_cast<std::int64_t>(level));
            auto row = count->step();
            if (!row.ok()) {
                return Error{row.error()};
            }
            counter += count->columnInt(0);
            return false;
        }
        sqlite::Transaction tx(db);
        if (!tx.begun().ok()) {
            return Error{tx.begun().error()};
        }
        auto bound = db.prepare(boundSql);
        if (!bound.ok()) {
            return Error{bound.error()};
        }
        bound->bind(1, seriesId)
            .bind(2, cutoff)
            .bind(3, static_cast<std::int64_t>(batch))
            .bind(4, static_cast<std::int64_t>(level));
        auto row = bound->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        const bool more = *row;
        const std::int64_t limit = more ? bound->columnInt(0) : cutoff;
        bound.value() = sqlite::Statement();
        auto del = db.prepare("DELETE " + deleteSql);
        if (!del.ok()) {
            return Error{del.error()};
        }
        del->bind(1, seriesId).bind(2, limit).bind(4, static_cast<std::int64_t>(level));
        if (Status s = del->run(); !s.ok()) {
            return Error{s.error()};
        }
        std::int64_t deleted = db.changes();
        if (more && deleted == 0) {
            // The first batch+1 rows share one time: take them all (bounded by equal times).
            auto ties = db.prepare("DELETE " + deleteSql);
            if (!ties.ok()) {
                return Error{ties.error()};
            }
            ties->bind(1, seriesId).bind(2, limit + 1).bind(4, static_cast<std::int64_t>(level));
            if (Status s = ties->run(); !s.ok()) {
                return Error{s.error()};
            }
            deleted = db.changes();
        }
        if (Status s = tx.commit(); !s.ok()) {
            return Error{s.error()};
        }
        counter += deleted;
        ++report.transactions;
        return more;
    };
    // Runs one kind of deletion for a series to completion (or until asked to stop).
    auto drain = [&](const std::string& boundSql, const std::string& deleteSql,
                     const std::string& deleteAllSql, std::int64_t seriesId, std::int64_t cutoff,
                     int level, std::int64_t& counter) -> Result<bool> {
        while (true) {
            auto more = step(boundSql, deleteSql, deleteAllSql, seriesId, cutoff, level, counter);
            if (!more.ok()) {
                return Error{more.error()};
            }
            if (options.betweenBatches && !options.dryRun && !options.betweenBatches()) {
                return false;
            }
            if (!*more) {
                return true;
            }
        }
    };

    // Raw samples: chunks that begin before the cutoff are decoded; a chunk whose samples all go
    // is deleted, one that keeps some (later ones, or a pinned run's window) is re-encoded with
    // those. About `batch` samples per transaction; (t_min, id) is the resume point.
    auto pruneChunks = [&](std::int64_t seriesId, std::int64_t cutoff,
                           const std::vector<Window>* kept) -> Result<bool> {
        const auto survives = [&](std::int64_t t) {
            if (t >= cutoff) {
                return true;
            }
            return kept && std::any_of(kept->begin(), kept->end(),
                                       [&](const Window& w) { return t >= w.t0 && t <= w.t1; });
        };
        std::int64_t afterT = std::numeric_limits<std::int64_t>::min();
        std::int64_t afterId = std::numeric_limits<std::int64_t>::min();
        while (true) {
            std::unique_lock lock(m_mutex);
            sqlite::Database& db = *m_impl->db;
            std::optional<sqlite::Transaction> tx;
            if (!options.dryRun) {
                tx.emplace(db);
                if (!tx->begun().ok()) {
                    return Error{tx->begun().error()};
                }
            }
            struct Row {
                std::int64_t id;
                std::int64_t incarnation;
                std::vector<ChunkSample> samples;
                std::vector<ChunkSample> unrolled;  // not in the rollup cells yet
            };
            std::vector<Row> rows;
            bool more = false;
            std::int64_t inBatch = 0;
            {
                auto select = db.prepare(
                    "SELECT id, t_min, count, data, incarnation, codec, unrolled FROM chunks "
                    "WHERE series_id = ?1 "
                    "AND t_min < ?2 AND (t_min > ?3 OR (t_min = ?3 AND id > ?4)) "
                    "ORDER BY t_min, id;");
                if (!select.ok()) {
                    return Error{select.error()};
                }
                select->bind(1, seriesId).bind(2, cutoff).bind(3, afterT).bind(4, afterId);
                while (true) {
                    auto row = select->step();
                    if (!row.ok()) {
                        return Error{row.error()};
                    }
                    if (!*row) {
                        break;
                    }
                    if (inBatch >= batch) {
                        more = true;
                        break;
                    }
                    Row r{select->columnInt(0), select->columnInt(4), {}, {}};
                    afterT = select->columnInt(1);
                    afterId = r.id;
                    if (Status st =
                            decodeChunk(static_cast<int>(select->columnInt(5)),
                                        select->columnBlob(3), select->columnInt(2), r.samples);
                        !st.ok()) {
                        return Error{db.path() + ": damaged chunk " + std::to_string(r.id) + ": " +
                                     st.error()};
                    }
                    const auto unrolled = static_cast<std::size_t>(std::clamp<std::int64_t>(
                        select->columnInt(6), 0, static_cast<std::int64_t>(r.samples.size())));
                    r.unrolled.assign(r.samples.end() - static_cast<std::ptrdiff_t>(unrolled),
                                      r.samples.end());
                    inBatch += static_cast<std::int64_t>(r.samples.size());
                    rows.push_back(std::move(r));
                }
            }
            std::int64_t deleted = 0;
            for (Row& r : rows) {
                // At most `batch` samples per transaction: past it, the oldest go first and the
                // rest of the chunk is re-encoded (its new row is visited again).
                std::sort(r.samples.begin(), r.samples.end(), sampleBefore);
                std::vector<ChunkSample> keptSamples;
                std::int64_t gone = 0;
                for (const ChunkSample& p : r.samples) {
                    if (!survives(p.tNs) && (options.dryRun || deleted + gone < batch)) {
                        ++gone;
                    } else {
                        if (!survives(p.tNs)) {
                            more = true;
                        }
                        keptSamples.push_back(p);
                    }
                }
                deleted += gone;
                if (gone == 0 || options.dryRun) {
                    continue;
                }
                r.samples = std::move(keptSamples);
                // Samples the cells do not hold yet go into them first: the cells outlive them.
                if (!r.unrolled.empty()) {
                    auto upsert = db.prepare(rollupUpsertSql());
                    if (!upsert.ok()) {
                        return Error{upsert.error()};
                    }
                    if (Status st =
                            rollSamples(*upsert, seriesId, r.unrolled, kRetainedRollupLevel);
                        !st.ok()) {
                        return Error{st.error()};
                    }
                }
                auto del = db.prepare("DELETE FROM chunks WHERE id = ?1;");
                if (!del.ok()) {
                    return Error{del.error()};
                }
                del->bind(1, r.id);
                if (Status st = del->run(); !st.ok()) {
                    return Error{st.error()};
                }
                if (Status st = insertChunks(db, seriesId, r.incarnation, r.samples); !st.ok()) {
                    return Error{st.error()};
                }
            }
            if (tx) {
                if (Status st = tx->commit(); !st.ok()) {
                    return Error{st.error()};
                }
                ++report.transactions;
            }
            report.samplesDeleted += deleted;
            lock.unlock();
            if (!more) {
                return true;
            }
            if (options.betweenBatches && !options.dryRun && !options.betweenBatches()) {
                return false;
            }
        }
    };

    for (const Candidate& c : candidates) {
        const std::int64_t before = report.rowsDeleted();
        const std::vector<Window>* keep =
            c.nodeLevel && windows.count(c.nodeId) ? &windows[c.nodeId] : nullptr;
        auto done = pruneChunks(c.id, report.rawCutoffNs, keep);
        if (!done.ok()) {
            return Error{done.error()};
        }
        // ?2 is the cell bound, ?3 the batch size, ?4 the level.
        const std::string cellWhere =
            "FROM sample_rollup WHERE series_id = ?1 AND level = ?4 AND cell < ?2";
        for (int level = 0; level < kRollupLevels && *done; ++level) {
            const std::int64_t width = rollupWidth(level);
            // Fine levels go with the raw samples; every level goes at the rollup cutoff.
            const std::int64_t cutoff = level < kRetainedRollupLevel
                                            ? std::max(report.rawCutoffNs, report.rollupCutoffNs)
                                            : report.rollupCutoffNs;
            std::int64_t& counter =
                level < kRetainedRollupLevel ? report.fineRollupsDeleted : report.rollupsDeleted;
            done = drain("SELECT cell " + cellWhere + " ORDER BY cell LIMIT 1 OFFSET ?3;",
                         cellWhere + ";", "SELECT 1 " + cellWhere, c.id, floorDiv(cutoff, width),
                         level, counter);
            if (!done.ok()) {
                return Error{done.error()};
            }
        }
        if (report.rowsDeleted() > before) {
            ++report.seriesPruned;
        }
        if (!options.dryRun) {
            std::lock_guard lock(m_mutex);
            auto horizon = m_impl->db->prepare(
                "INSERT INTO series_horizon(series_id, raw_before_ns, rollup_before_ns) "
                "VALUES (?1, ?2, ?3) ON CONFLICT(series_id) DO UPDATE SET "
                "raw_before_ns = max(raw_before_ns, excluded.raw_before_ns), "
                "rollup_before_ns = max(rollup_before_ns, excluded.rollup_before_ns);");
            if (!horizon.ok()) {
                return Error{horizon.error()};
            }
            horizon->bind(1, c.id).bind(2, report.rawCutoffNs).bind(3, report.rollupCutoffNs);
            if (Status s = horizon->run(); !s.ok()) {
                return Error{s.error()};
            }
        }
        if (!*done) {
            report.complete = false;
            break;
        }
    }

    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    if (!options.dryRun) {
        if (options.vacuum) {
            // Also switches a file made before retention to incremental auto-vacuum.
            if (Status s = db.exec("PRAGMA auto_vacuum=INCREMENTAL; VACUUM;"); !s.ok()) {
                return Error{s.error()};
            }
        } else if (auto mode = scalar(db, "PRAGMA auto_vacuum;"); mode.ok() && *mode == 2) {
            // Incremental: give the freed pages back to the file system, a bounded step at a time.
            for (int i = 0; i < 10'000; ++i) {
                auto freePages = scalar(db, "PRAGMA freelist_count;");
                if (!freePages.ok() || *freePages == 0) {
                    break;
                }
                if (Status s = db.exec("PRAGMA incremental_vacuum(2000);"); !s.ok()) {
                    return Error{s.error()};
                }
            }
        }
    }
    report.bytesAfter = pageBytes(db, "page_count");
    report.freeBytesAfter = pageBytes(db, "freelist_count");
    return report;
}

}  // namespace runplane::db
