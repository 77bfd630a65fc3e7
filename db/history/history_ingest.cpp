// History: batched, idempotent ingest of telemetry (one transaction per batch, or per group of
// batches with ingestMany).
#include <algorithm>
#include <limits>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/history/decimate.h"
#include "db/history/history.h"
#include "db/history/history_impl.h"
#include "db/history/retention.h"
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
        {&insertChunk,
         "INSERT INTO chunks(series_id, incarnation, t_min, t_max, seq_min, seq_max, count, "
         "data, codec, unrolled) VALUES (?2, ?1, ?3, ?4, ?5, ?6, ?7, ?8, ?10, ?11);"},
        // ?1: incarnation
        {&updateChunk,
         "UPDATE chunks SET t_min = ?3, t_max = ?4, seq_min = ?5, seq_max = ?6, count = ?7, "
         "data = ?8, codec = ?10, unrolled = ?11 WHERE id = ?1 AND series_id = ?2 AND "
         "count = ?9;"},
        {&lastChunk,
         "SELECT id, incarnation, count, data, codec, unrolled FROM chunks WHERE series_id = ?1 "
         "ORDER BY id DESC LIMIT 1;"},
        {&insertEvent,
         "INSERT OR IGNORE INTO events(node_id, seq, t_ns, run_id, kind, message, attrs_json, "
         "incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);"},
    };
    auto rollup = db->prepare(rollupUpsertSql());
    if (!rollup.ok()) {
        return rollup.failure();
    }
    upsertRollup = std::move(*rollup);
    for (const Item& item : items) {
        auto stmt = db->prepare(item.sql);
        if (!stmt.ok()) {
            return stmt.failure();
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

}  // namespace

Result<History::Impl::Head*> History::Impl::head(std::int64_t seriesId, std::int64_t incarnation) {
    auto [it, inserted] = heads.try_emplace(seriesId);
    Head& h = it->second;
    if (!inserted) {
        return &h;
    }
    // A new connection continues the series' last chunk while it is open (same incarnation,
    // room left), so reconnecting ingestors do not leave a trail of short chunks.
    lastChunk.bind(1, seriesId);
    auto row = lastChunk.step();
    Status status;
    if (row.ok() && *row && lastChunk.columnInt(1) == incarnation &&
        lastChunk.columnInt(2) < kChunkMaxSamples) {
        // A v6 chunk (codec 0) is re-encoded: the row is rewritten in the current codec.
        status =
            forEachChunkSample(static_cast<int>(lastChunk.columnInt(4)), lastChunk.columnBlob(3),
                               lastChunk.columnInt(2), [&](const ChunkSample& s) {
                                   h.encoder.append(s);
                                   h.meta.add(s);
                               });
        if (status.ok()) {
            h.rowId = lastChunk.columnInt(0);
            h.incarnation = incarnation;
            h.storedCount = h.meta.count;
            h.rolled =
                h.meta.count - std::clamp<std::int64_t>(lastChunk.columnInt(5), 0, h.meta.count);
        } else {
            h = Impl::Head{};
        }
    }
    lastChunk.reset();
    if (!row.ok()) {
        heads.erase(it);
        return Error{row.error()};
    }
    if (!status.ok()) {
        heads.erase(it);
        return Error{db->path() + ": damaged chunk of series " + std::to_string(seriesId) + ": " +
                     status.error()};
    }
    return &h;
}

Status History::Impl::rollHead(std::int64_t seriesId, Head& h) {
    if (h.rolled >= h.meta.count) {
        return {};
    }
    std::vector<ChunkSample> samples;
    if (Status s = decodeChunk(h.encoder.codec(), h.encoder.bytes(), h.meta.count, samples);
        !s.ok()) {
        return s;
    }
    if (Status s = rollSamples(upsertRollup, seriesId,
                               std::span(samples).subspan(static_cast<std::size_t>(h.rolled)),
                               kRetainedRollupLevel);
        !s.ok()) {
        return s;
    }
    h.rolled = h.meta.count;
    return {};
}

Status History::Impl::storeHead(std::int64_t seriesId, Head& h, bool seal) {
    if (h.pending.empty() && !seal) {
        return {};
    }
    // Sealing writes unrolled = 0 and merges the samples into the cells only once the row is
    // known to be ours (the guarded update matched), in the same transaction.
    auto bindRow = [&](sqlite::Statement& stmt, bool sealed) -> sqlite::Statement& {
        return stmt.bind(2, seriesId)
            .bind(3, h.meta.tMin)
            .bind(4, h.meta.tMax)
            .bind(5, h.meta.seqMin)
            .bind(6, h.meta.seqMax)
            .bind(7, h.meta.count)
            .bindBlob(8, h.encoder.bytes().data(), static_cast<int>(h.encoder.bytes().size()))
            .bind(10, static_cast<std::int64_t>(h.encoder.codec()))
            .bind(11, sealed ? 0 : h.meta.count - h.rolled);
    };
    bool sealed = seal;
    if (h.rowId != 0) {
        bindRow(updateChunk, seal).bind(1, h.rowId).bind(9, h.storedCount);
        if (Status s = updateChunk.run(); !s.ok()) {
            return s;
        }
        if (db->changes() == 1) {
            h.storedCount = h.meta.count;
            h.pending.clear();
            return seal ? rollHead(seriesId, h) : Status{};
        }
        // Another connection pruned or rewrote the row: its samples are its own now (and so is
        // rolling them); ours go into a new chunk, not sealed yet.
        h.encoder = ChunkEncoder{};
        h.meta = ChunkMeta{};
        for (const ChunkSample& s : h.pending) {
            h.encoder.append(s);
            h.meta.add(s);
        }
        h.rowId = 0;
        h.rolled = 0;
        sealed = false;
    }
    bindRow(insertChunk, sealed).bind(1, h.incarnation);
    if (Status s = insertChunk.run(); !s.ok()) {
        return s;
    }
    h.rowId = db->lastInsertRowId();
    h.storedCount = h.meta.count;
    h.pending.clear();
    return sealed ? rollHead(seriesId, h) : Status{};
}

Result<std::uint64_t> History::ingestCursor(const NodeId& node) {
    auto latest = latestCursor(node);
    if (!latest.ok()) {
        return Error{latest.error()};
    }
    return *latest ? (*latest)->lastSeq : 0;
}

Result<IngestResult> History::ingest(const IngestBatch& batch) {
    auto results = ingestMany(std::span<const IngestBatch>(&batch, 1));
    if (!results.ok()) {
        return Error{results.error()};
    }
    return results->front();
}

Result<std::vector<IngestResult>> History::ingestMany(std::span<const IngestBatch> batches) {
    for (const IngestBatch& batch : batches) {
        if (batch.nodeId.empty()) {
            return Error{m_path + ": ingest batch without a node id"};
        }
    }
    std::lock_guard lock(m_mutex);
    Impl& impl = *m_impl;
    if (Status s = impl.prepareIngest(); !s.ok()) {
        return s.failure();
    }
    // A failure rolls back every batch of the transaction: series ids first cached by any of
    // them and every chunk head may describe rows that are gone.
    std::vector<std::string> newSeriesKeys;
    auto fail = [&](const Error& error) -> Result<std::vector<IngestResult>> {
        for (const auto& key : newSeriesKeys) {
            impl.seriesIds.erase(key);
        }
        impl.heads.clear();
        return error;
    };
    sqlite::Transaction tx(*impl.db);
    if (!tx.begun().ok()) {
        return tx.begun().failure();
    }
    std::vector<IngestResult> results;
    results.reserve(batches.size());
    for (const IngestBatch& batch : batches) {
        auto one = impl.ingestBatch(batch, newSeriesKeys);
        if (!one.ok()) {
            return fail(one.failure());
        }
        results.push_back(*one);
    }
    if (Status s = tx.commit(); !s.ok()) {
        return fail(s.failure());
    }
    return results;
}

Result<IngestResult> History::Impl::ingestBatch(const IngestBatch& batch,
                                                std::vector<std::string>& newSeriesKeys) {
    Impl& impl = *this;
    auto cursor = readCursor(impl.selectCursor, batch.nodeId.value(), batch.incarnation);
    if (!cursor.ok()) {
        return Error{cursor.error()};
    }
    IngestResult result;
    std::uint64_t newCursor = std::max(*cursor, batch.throughSeq);

    auto seriesIdFor = [&](const IngestSample& sample) -> Result<std::int64_t> {
        std::string key = seriesKey(batch.nodeId.value(), sample.runId.value(), sample.series);
        if (auto it = impl.seriesIds.find(key); it != impl.seriesIds.end()) {
            return it->second;
        }
        impl.selectSeries.bind(1, batch.nodeId.value())
            .bind(2, sample.runId.value())
            .bind(3, sample.series);
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
            impl.insertSeries.bind(1, batch.nodeId.value())
                .bind(2, sample.runId.value())
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

    // Group the new samples by series (arrival order kept within a series).
    struct Group {
        std::int64_t seriesId = 0;
        std::vector<ChunkSample> samples;
    };
    std::vector<Group> groups;
    std::unordered_map<std::int64_t, std::size_t> groupOf;
    std::int64_t lastSeriesId = -1;
    std::size_t lastGroup = 0;
    // Exactly-once inside one batch too: a repeated (series, seq) is stored once. The set is only
    // built when seqs stop increasing (never for a daemon's batch).
    std::uint64_t previousSeq = 0;
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    bool checkSeen = false;
    std::string key;
    for (const IngestSample& sample : batch.samples) {
        newCursor = std::max(newCursor, sample.seq);
        if (sample.seq <= *cursor) {
            ++result.duplicatesSkipped;
            continue;
        }
        key.assign(batch.nodeId.value()).push_back('\0');
        key.append(sample.runId.value()).push_back('\0');
        key.append(sample.series);
        std::int64_t seriesId = 0;
        if (auto it = impl.seriesIds.find(key); it != impl.seriesIds.end()) {
            seriesId = it->second;
        } else {
            auto id = seriesIdFor(sample);
            if (!id.ok()) {
                return Error{id.error()};
            }
            seriesId = *id;
        }
        if (seriesId != lastSeriesId) {
            auto [it, added] = groupOf.try_emplace(seriesId, groups.size());
            if (added) {
                groups.push_back(Group{seriesId, {}});
            }
            lastSeriesId = seriesId;
            lastGroup = it->second;
        }
        if (!checkSeen && sample.seq <= previousSeq) {
            checkSeen = true;  // seqs went back: index what this batch stored so far
            for (const Group& g : groups) {
                for (const ChunkSample& s : g.samples) {
                    seen.emplace(g.seriesId, s.seq);
                }
            }
        }
        previousSeq = sample.seq;
        if (checkSeen && !seen.emplace(seriesId, static_cast<std::int64_t>(sample.seq)).second) {
            ++result.duplicatesSkipped;
            continue;
        }
        groups[lastGroup].samples.push_back(
            ChunkSample{sample.tNs, static_cast<std::int64_t>(sample.seq), sample.value, sample.min,
                        sample.max, sample.step});
    }
    auto fail = [](const std::string& error) -> Result<IngestResult> { return Error{error}; };
    const std::int64_t incarnation = incarnationBits(batch.incarnation);
    for (const Group& group : groups) {
        result.samplesInserted += group.samples.size();
        // The samples into the series' open chunk; a full one is stored and a new one begun.
        auto head = impl.head(group.seriesId, incarnation);
        if (!head.ok()) {
            return fail(head.error());
        }
        Impl::Head* h = *head;
        for (const ChunkSample& s : group.samples) {
            if (h->meta.count > 0 && (h->full() || h->incarnation != incarnation)) {
                if (Status st = impl.storeHead(group.seriesId, *h, /*seal=*/true); !st.ok()) {
                    return fail(st.error());
                }
                *h = Impl::Head{};
            }
            h->incarnation = incarnation;
            h->encoder.append(s);
            h->meta.add(s);
            h->pending.push_back(s);
        }
        // A head filled by this batch is sealed now, not when the series' next sample comes.
        const bool full = h->full();
        if (Status st = impl.storeHead(group.seriesId, *h, full); !st.ok()) {
            return fail(st.error());
        }
        if (full) {
            *h = Impl::Head{};
        }
    }
    for (const IngestEvent& event : batch.events) {
        newCursor = std::max(newCursor, event.seq);
        if (event.seq != 0 && event.seq <= *cursor) {
            ++result.duplicatesSkipped;
            continue;
        }
        impl.insertEvent.bind(1, batch.nodeId.value());
        if (event.seq == 0) {
            impl.insertEvent.bindNull(2);
        } else {
            impl.insertEvent.bind(2, static_cast<std::int64_t>(event.seq));
        }
        impl.insertEvent.bind(3, event.tNs)
            .bind(4, event.runId.value())
            .bind(5, event.kind)
            .bind(6, event.message)
            .bind(7, encodeEventAttrs(event.attrs))
            .bind(8, incarnationBits(batch.incarnation));
        if (Status s = impl.insertEvent.run(); !s.ok()) {
            return fail(s.error());
        }
        if (impl.db->changes() > 0) {
            ++result.eventsInserted;
        } else {
            ++result.duplicatesSkipped;
        }
    }
    impl.upsertCursor.bind(1, batch.nodeId.value())
        .bind(2, static_cast<std::int64_t>(newCursor))
        .bind(3, nowNs())
        .bind(4, incarnationBits(batch.incarnation));
    if (Status s = impl.upsertCursor.run(); !s.ok()) {
        return fail(s.error());
    }
    result.cursor = newCursor;
    return result;
}

}  // namespace runplane::db
