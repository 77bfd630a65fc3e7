// History: batched, idempotent ingest of telemetry (one transaction per batch, or per group of
// batches with ingestMany).
#include <algorithm>
#include <limits>
#include <map>
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
#include "db/history/staged.h"

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
        {&insertStaged,
         "INSERT INTO staged(node_id, incarnation, codec, data) VALUES (?1, ?2, ?3, ?4);"},
        {&deleteStaged, "DELETE FROM staged WHERE id = ?1;"},
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

Status History::Impl::writeSealed(std::int64_t seriesId, std::int64_t incarnation, const Head& h) {
    if (h.meta.count == 0) {
        return {};
    }
    insertChunk.bind(1, incarnation)
        .bind(2, seriesId)
        .bind(3, h.meta.tMin)
        .bind(4, h.meta.tMax)
        .bind(5, h.meta.seqMin)
        .bind(6, h.meta.seqMax)
        .bind(7, h.meta.count)
        .bindBlob(8, h.encoder.bytes().data(), static_cast<int>(h.encoder.bytes().size()))
        .bind(10, static_cast<std::int64_t>(h.encoder.codec()))
        .bind(11, std::int64_t{0});
    if (Status s = insertChunk.run(); !s.ok()) {
        return s;
    }
    // A member, not the thread's chunkBuffer(): the destructor seals, and a History destroyed
    // at exit (a static) would find the thread_local buffer destroyed already.
    std::vector<ChunkSample>& samples = sealBuffer;
    samples.clear();
    if (Status s = decodeChunk(h.encoder.codec(), h.encoder.bytes(), h.meta.count, samples);
        !s.ok()) {
        return s;
    }
    return rollSamples(upsertRollup, seriesId, samples, kRetainedRollupLevel);
}

Status History::Impl::sealNode(NodeHeads& node, std::span<const std::int64_t> keep,
                               std::vector<std::uint8_t>& keptRow) {
    for (auto it = node.heads.begin(); it != node.heads.end();) {
        const Head& h = it->second;
        if (!h.full() && std::find(keep.begin(), keep.end(), it->first) != keep.end()) {
            appendStagedSection(keptRow, it->first, h.encoder);
            ++it;
            continue;
        }
        if (Status s = writeSealed(it->first, node.incarnation, h); !s.ok()) {
            return s;
        }
        it = node.heads.erase(it);
    }
    for (std::int64_t id : node.staged) {
        deleteStaged.bind(1, id);
        if (Status s = deleteStaged.run(); !s.ok()) {
            return s;
        }
    }
    node.staged.clear();
    return {};
}

Status History::Impl::sealAll() {
    if (nodes.empty()) {
        return {};
    }
    if (Status s = prepareIngest(); !s.ok()) {
        return s;
    }
    sqlite::Transaction tx(*db);
    if (!tx.begun().ok()) {
        nodes.clear();
        return tx.begun();
    }
    std::vector<std::uint8_t> none;
    for (auto& [nodeId, node] : nodes) {
        if (Status s = sealNode(node, {}, none); !s.ok()) {
            nodes.clear();  // rolled back: the staged rows stay (orphans, still read)
            return s;
        }
    }
    nodes.clear();
    return tx.commit();
}

Status History::Impl::adoptStaged() {
    if (Status s = prepareIngest(); !s.ok()) {
        return s;
    }
    sqlite::Transaction tx(*db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    // Per (series, incarnation), in row order: each becomes sealed chunks, rolled up.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<ChunkSample>> samples;
    if (Status s = forEachStagedSample(
            *db, 0,
            [&](std::int64_t seriesId, std::int64_t incarnation, const ChunkSample& p) {
                samples[{seriesId, incarnation}].push_back(p);
            });
        !s.ok()) {
        return s;
    }
    if (samples.empty()) {
        return {};
    }
    for (const auto& [key, list] : samples) {
        if (Status s = insertChunks(*db, key.first, key.second, list); !s.ok()) {
            return s;
        }
        if (Status s = rollSamples(upsertRollup, key.first, list, kRetainedRollupLevel); !s.ok()) {
            return s;
        }
    }
    if (Status s = db->exec("DELETE FROM staged;"); !s.ok()) {
        return s;
    }
    return tx.commit();
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
    // them may describe rows that are gone, and the heads samples that are not on disk.
    std::vector<std::string> newSeriesKeys;
    auto fail = [&](const Error& error) -> Result<std::vector<IngestResult>> {
        for (const auto& key : newSeriesKeys) {
            impl.seriesIds.erase(key);
        }
        impl.nodes.clear();
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
    // The samples into their series' heads (docs/history.md, "Chunks"). The batch's samples go
    // into one staged row of the node, unless a head fills, the incarnation changes or the node
    // has too many staged rows: then the node is sealed (every head written as a sealed chunk,
    // its staged rows deleted) and the batch needs no staged row.
    if (!groups.empty()) {
        Impl::NodeHeads& node = impl.nodes[batch.nodeId.value()];
        if (!node.heads.empty() && node.incarnation != incarnation) {
            std::vector<std::uint8_t> none;
            if (Status st = impl.sealNode(node, {}, none); !st.ok()) {
                return fail(st.error());
            }
        }
        node.incarnation = incarnation;
        bool seal = node.staged.size() >= Impl::kMaxStagedRows;
        std::vector<std::uint8_t> row;
        // Heads begun in this batch after their predecessor filled: they hold only this batch's
        // samples, so a seal stages them instead of writing them as short chunks.
        std::vector<std::int64_t> begun;
        for (const Group& group : groups) {
            if (group.samples.empty()) {
                continue;  // every sample of it was a repeat
            }
            result.samplesInserted += group.samples.size();
            Impl::Head& h = node.heads[group.seriesId];
            ChunkEncoder section;
            for (const ChunkSample& s : group.samples) {
                if (h.meta.count > 0 && h.full()) {
                    // Full mid-batch: written now, the node sealed at the batch's end.
                    if (Status st = impl.writeSealed(group.seriesId, incarnation, h); !st.ok()) {
                        return fail(st.error());
                    }
                    h = Impl::Head{};
                    if (begun.empty() || begun.back() != group.seriesId) {
                        begun.push_back(group.seriesId);
                    }
                    seal = true;
                }
                h.encoder.append(s);
                h.meta.add(s);
                if (!seal) {
                    section.append(s);
                }
            }
            seal = seal || h.full();
            if (!seal) {
                appendStagedSection(row, group.seriesId, section);
            }
        }
        if (seal) {
            row.clear();
            if (Status st = impl.sealNode(node, begun, row); !st.ok()) {
                return fail(st.error());
            }
        }
        if (!row.empty()) {
            impl.insertStaged.bind(1, batch.nodeId.value())
                .bind(2, incarnation)
                .bind(3, static_cast<std::int64_t>(kChunkCodec))
                .bindBlob(4, row.data(), static_cast<int>(row.size()));
            if (Status st = impl.insertStaged.run(); !st.ok()) {
                return fail(st.error());
            }
            node.staged.push_back(impl.db->lastInsertRowId());
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
