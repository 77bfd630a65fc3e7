// History: batched, idempotent ingest of telemetry (one transaction per batch).
#include <algorithm>
#include <cmath>
#include <vector>

#include "db/history/history.h"
#include "db/history/history_impl.h"
#include "db/history/rollup.h"

namespace runplane::db {

Status History::Impl::prepareIngest() {
    if (ingestPrepared) {
        return {};
    }
    struct Item {
        sqlite::Statement* stmt;
        const char* sql;
    };
    const Item items[] = {
        {&selectCursor,
         "SELECT last_seq FROM ingest_cursor WHERE node_id = ?1 AND incarnation = ?2;"},
        {&upsertCursor,
         "INSERT INTO ingest_cursor(node_id, incarnation, last_seq, updated_ns) "
         "VALUES (?1, ?4, ?2, ?3) "
         "ON CONFLICT(node_id, incarnation) DO UPDATE SET "
         "last_seq = max(last_seq, excluded.last_seq), updated_ns = excluded.updated_ns;"},
        {&selectSeries, "SELECT id FROM series WHERE node_id = ?1 AND run_id = ?2 AND name = ?3;"},
        {&insertSeries, "INSERT INTO series(node_id, run_id, name, unit) VALUES (?1, ?2, ?3, ?4);"},
        {&insertSample,
         "INSERT OR IGNORE INTO samples(series_id, t_ns, seq, value, min, max, step, "
         "incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);"},
        {&insertEvent,
         "INSERT OR IGNORE INTO events(node_id, seq, t_ns, run_id, kind, message, attrs_json, "
         "incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);"},
    };
    auto rollup = db->prepare(rollupUpsertSql());
    if (!rollup.ok()) {
        return Error{rollup.error()};
    }
    upsertRollup = std::move(*rollup);
    for (const Item& item : items) {
        auto stmt = db->prepare(item.sql);
        if (!stmt.ok()) {
            return Error{stmt.error()};
        }
        *item.stmt = std::move(*stmt);
    }
    ingestPrepared = true;
    return {};
}

namespace {

// Incarnations are random 64-bit ids; SQLite stores them as the same bits, signed.
std::int64_t incarnationBits(std::uint64_t incarnation) {
    return static_cast<std::int64_t>(incarnation);
}

Result<std::uint64_t> readCursor(sqlite::Statement& stmt, const std::string& nodeId,
                                 std::uint64_t incarnation) {
    stmt.bind(1, nodeId).bind(2, incarnationBits(incarnation));
    auto row = stmt.step();
    std::uint64_t cursor = 0;
    if (row.ok() && *row) {
        cursor = static_cast<std::uint64_t>(stmt.columnInt(0));
    }
    stmt.reset();
    if (!row.ok()) {
        return Error{row.error()};
    }
    return cursor;
}

// NaN is stored as NULL (SQLite has no NaN).
void bindReal(sqlite::Statement& stmt, int index, double value) {
    if (std::isnan(value)) {
        stmt.bindNull(index);
    } else {
        stmt.bind(index, value);
    }
}

}  // namespace

Result<std::uint64_t> History::ingestCursor(const std::string& nodeId) {
    auto latest = latestCursor(nodeId);
    if (!latest.ok()) {
        return Error{latest.error()};
    }
    return *latest ? (*latest)->lastSeq : 0;
}

Result<IngestResult> History::ingest(const IngestBatch& batch) {
    if (batch.nodeId.empty()) {
        return Error{m_path + ": ingest batch without a node id"};
    }
    std::lock_guard lock(m_mutex);
    Impl& impl = *m_impl;
    if (Status s = impl.prepareIngest(); !s.ok()) {
        return Error{s.error()};
    }
    std::vector<std::string> newSeriesKeys;  // dropped from the cache if the batch rolls back
    auto forgetNewSeries = [&] {
        for (const auto& key : newSeriesKeys) {
            impl.seriesIds.erase(key);
        }
    };

    sqlite::Transaction tx(*impl.db);
    if (!tx.begun().ok()) {
        return Error{tx.begun().error()};
    }
    auto cursor = readCursor(impl.selectCursor, batch.nodeId, batch.incarnation);
    if (!cursor.ok()) {
        return Error{cursor.error()};
    }
    IngestResult result;
    RollupDelta rollups;
    std::uint64_t newCursor = std::max(*cursor, batch.throughSeq);

    auto seriesIdFor = [&](const IngestSample& sample) -> Result<std::int64_t> {
        std::string key = seriesKey(batch.nodeId, sample.runId, sample.series);
        if (auto it = impl.seriesIds.find(key); it != impl.seriesIds.end()) {
            return it->second;
        }
        impl.selectSeries.bind(1, batch.nodeId).bind(2, sample.runId).bind(3, sample.series);
        auto row = impl.selectSeries.step();
        std::int64_t id = 0;
        const bool found = row.ok() && *row;
        if (found) {
            id = impl.selectSeries.columnInt(0);
        }
        impl.selectSeries.reset();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!found) {
            impl.insertSeries.bind(1, batch.nodeId)
                .bind(2, sample.runId)
                .bind(3, sample.series)
                .bind(4, sample.unit);
            if (Status s = impl.insertSeries.run(); !s.ok()) {
                return Error{s.error()};
            }
            id = impl.db->lastInsertRowId();
            newSeriesKeys.push_back(key);
        }
        impl.seriesIds.emplace(std::move(key), id);
        return id;
    };

    for (const IngestSample& sample : batch.samples) {
        newCursor = std::max(newCursor, sample.seq);
        if (sample.seq <= *cursor) {
            ++result.duplicatesSkipped;
            continue;
        }
        auto seriesId = seriesIdFor(sample);
        if (!seriesId.ok()) {
            forgetNewSeries();
            return Error{seriesId.error()};
        }
        impl.insertSample.bind(1, *seriesId)
            .bind(2, sample.tNs)
            .bind(3, static_cast<std::int64_t>(sample.seq))
            .bind(7, sample.step)
            .bind(8, incarnationBits(batch.incarnation));
        bindReal(impl.insertSample, 4, sample.value);
        bindReal(impl.insertSample, 5, sample.min);
        bindReal(impl.insertSample, 6, sample.max);
        if (Status s = impl.insertSample.run(); !s.ok()) {
            forgetNewSeries();
            return Error{s.error()};
        }
        if (impl.db->changes() > 0) {
            ++result.samplesInserted;
            addToDelta(
                rollups, *seriesId,
                SeqPoint{SeriesPoint{sample.tNs, sample.value, sample.min, sample.max, sample.step},
                         static_cast<std::int64_t>(sample.seq)});
        } else {
            ++result.duplicatesSkipped;
        }
    }
    // The rollup cells these samples touched, merged in the same transaction.
    for (const auto& [key, cell] : rollups) {
        const auto& [seriesId, level, index] = key;
        if (Status s = writeCell(impl.upsertRollup, seriesId, level, index, cell); !s.ok()) {
            forgetNewSeries();
            return Error{s.error()};
        }
    }
    for (const IngestEvent& event : batch.events) {
        newCursor = std::max(newCursor, event.seq);
        if (event.seq != 0 && event.seq <= *cursor) {
            ++result.duplicatesSkipped;
            continue;
        }
        impl.insertEvent.bind(1, batch.nodeId);
        if (event.seq == 0) {
            impl.insertEvent.bindNull(2);
        } else {
            impl.insertEvent.bind(2, static_cast<std::int64_t>(event.seq));
        }
        impl.insertEvent.bind(3, event.tNs)
            .bind(4, event.runId)
            .bind(5, event.kind)
            .bind(6, event.message)
            .bind(7, event.attrsJson.empty() ? std::string("{}") : event.attrsJson)
            .bind(8, incarnationBits(batch.incarnation));
        if (Status s = impl.insertEvent.run(); !s.ok()) {
            forgetNewSeries();
            return Error{s.error()};
        }
        if (impl.db->changes() > 0) {
            ++result.eventsInserted;
        } else {
            ++result.duplicatesSkipped;
        }
    }
    impl.upsertCursor.bind(1, batch.nodeId)
        .bind(2, static_cast<std::int64_t>(newCursor))
        .bind(3, nowNs())
        .bind(4, incarnationBits(batch.incarnation));
    if (Status s = impl.upsertCursor.run(); !s.ok()) {
        forgetNewSeries();
        return Error{s.error()};
    }
    if (Status s = tx.commit(); !s.ok()) {
        forgetNewSeries();
        return Error{s.error()};
    }
    result.cursor = newCursor;
    return result;
}

}  // namespace runplane::db
