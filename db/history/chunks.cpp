// Chunk storage: range reads, extents, bulk encoding (migration, prune) and the `samples` SQL
// view over the chunks (docs/history.md, "Chunks").
#include "db/history/chunks.h"

#include "db/history/decimate.h"
#include "db/history/rollup.h"
#include "db/history/staged.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace runplane::db {

void ChunkMeta::add(const ChunkSample& s) {
    if (count == 0) {
        tMin = tMax = s.tNs;
        seqMin = seqMax = s.seq;
    } else {
        tMin = std::min(tMin, s.tNs);
        tMax = std::max(tMax, s.tNs);
        seqMin = std::min(seqMin, s.seq);
        seqMax = std::max(seqMax, s.seq);
    }
    ++count;
}

namespace chunk_detail {

Result<sqlite::Statement> rangeChunks(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0,
                                      std::int64_t t1) {
    auto stmt = db.prepare(kRangeChunksSql);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, seriesId).bind(2, t0).bind(3, t1);
    return stmt;
}

std::vector<ChunkSample>& chunkBuffer() {
    thread_local std::vector<ChunkSample> buffer;
    return buffer;
}

Error damaged(const sqlite::Database& db, const Status& status) {
    return Error{db.path() + ": damaged chunk: " + status.error()};
}

Status stagedInRange(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                     std::vector<ChunkSample>& out) {
    if (Status s = loadStagedSamples(db, seriesId, t0, t1, out); !s.ok()) {
        return s;
    }
    if (!std::is_sorted(out.begin(), out.end(), sampleBefore)) {
        std::sort(out.begin(), out.end(), sampleBefore);
    }
    return {};
}

}  // namespace chunk_detail

Status loadSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                   std::vector<ChunkSample>& out) {
    auto stmt = chunk_detail::rangeChunks(db, seriesId, t0, t1);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    const std::size_t start = out.size();
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        Status s = forEachChunkSample(static_cast<int>(stmt->columnInt(2)), stmt->columnBlob(0),
                                      stmt->columnInt(1), [&](const ChunkSample& p) {
                                          if (p.tNs >= t0 && p.tNs <= t1) {
                                              out.push_back(p);
                                          }
                                      });
        if (!s.ok()) {
            return chunk_detail::damaged(db, s);
        }
    }
    // The samples staged since the series' last sealed chunk (staged.h).
    if (Status s = loadStagedSamples(db, seriesId, t0, t1, out); !s.ok()) {
        return s;
    }
    // Chunks that overlap (out-of-order samples, interleaved incarnations, staged samples among
    // chunks) need the sort.
    const auto begin = out.begin() + static_cast<std::ptrdiff_t>(start);
    if (!std::is_sorted(begin, out.end(), sampleBefore)) {
        std::sort(begin, out.end(), sampleBefore);
    }
    return {};
}

Result<ChunkExtent> chunkExtent(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0,
                                std::int64_t t1) {
    // The blob is fetched (by id) only for the edge chunks that reach outside [t0, t1]: selecting
    // it for every row made SQLite copy each chunk's bytes once more per read.
    auto stmt = db.prepare(
        "SELECT t_min, t_max, count, id FROM chunks WHERE series_id = ?1 "
        "AND t_max >= ?2 AND t_min <= ?3;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, seriesId).bind(2, t0).bind(3, t1);
    std::optional<sqlite::Statement> edge;
    ChunkExtent extent;
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    auto take = [&](std::int64_t t) {
        if (!extent.any) {
            extent.lo = extent.hi = t;
            extent.any = true;
        } else {
            extent.lo = std::min(extent.lo, t);
            extent.hi = std::max(extent.hi, t);
        }
    };
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        const std::int64_t lo = stmt->columnInt(0);
        const std::int64_t hi = stmt->columnInt(1);
        spans.emplace_back(lo, hi);
        extent.bound += stmt->columnInt(2);
        if (lo >= t0 && hi <= t1) {
            take(lo);
            take(hi);
            continue;
        }
        if (!edge) {
            auto prepared = db.prepare("SELECT data, codec FROM chunks WHERE id = ?1;");
            if (!prepared.ok()) {
                return Error{prepared.error()};
            }
            edge.emplace(std::move(*prepared));
        }
        edge->reset();
        edge->bind(1, stmt->columnInt(3));
        auto edgeRow = edge->step();
        if (!edgeRow.ok()) {
            return Error{edgeRow.error()};
        }
        if (!*edgeRow) {
            continue;  // not reachable inside the read's transaction
        }
        Status s = forEachChunkSample(static_cast<int>(edge->columnInt(1)), edge->columnBlob(0),
                                      stmt->columnInt(2), [&](const ChunkSample& p) {
                                          if (p.tNs >= t0 && p.tNs <= t1) {
                                              take(p.tNs);
                                          }
                                      });
        if (!s.ok()) {
            return chunk_detail::damaged(db, s);
        }
    }
    // Staged samples count as one more span (streamSamples emits them as one block).
    bool staged = false;
    std::int64_t stagedLo = 0;
    std::int64_t stagedHi = 0;
    if (Status s = forEachStagedSample(db, seriesId,
                                       [&](std::int64_t, std::int64_t, const ChunkSample& p) {
                                           stagedLo = staged ? std::min(stagedLo, p.tNs) : p.tNs;
                                           stagedHi = staged ? std::max(stagedHi, p.tNs) : p.tNs;
                                           staged = true;
                                           if (p.tNs >= t0 && p.tNs <= t1) {
                                               take(p.tNs);
                                               ++extent.bound;
                                           }
                                       });
        !s.ok()) {
        return Error{s.error()};
    }
    if (staged) {
        spans.emplace_back(stagedLo, stagedHi);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
        if (spans[i].first <= spans[i - 1].second) {
            extent.disjoint = false;
        }
    }
    return extent;
}

Status addUnrolledSamples(sqlite::Database& db, std::int64_t seriesId, int level,
                          std::int64_t firstCell, std::int64_t lastCell,
                          std::vector<std::pair<std::int64_t, RollupCell>>& cells) {
    auto stmt = db.prepare(
        "SELECT data, count, codec, unrolled FROM chunks WHERE series_id = ?1 AND unrolled > 0;");
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    stmt->bind(1, seriesId);
    const std::int64_t width = rollupWidth(level);
    std::map<std::int64_t, RollupCell> added;
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        // The chunk's last `unrolled` samples (in stored order) are not in the cells yet.
        const std::int64_t count = stmt->columnInt(1);
        const std::int64_t skip = count - std::clamp<std::int64_t>(stmt->columnInt(3), 0, count);
        std::int64_t index = 0;
        Status s = forEachChunkSample(
            static_cast<int>(stmt->columnInt(2)), stmt->columnBlob(0), count,
            [&](const ChunkSample& p) {
                if (index++ < skip) {
                    return;
                }
                const std::int64_t cell = bucketIndex(p.tNs, width);
                if (cell >= firstCell && cell <= lastCell) {
                    addToCell(added[cell],
                              SeqPoint{SeriesPoint{p.tNs, p.value, p.min, p.max, p.step}, p.seq});
                }
            });
        if (!s.ok()) {
            return chunk_detail::damaged(db, s);
        }
    }
    // Staged samples are in no cell until their node is sealed.
    if (Status s = forEachStagedSample(
            db, seriesId,
            [&](std::int64_t, std::int64_t, const ChunkSample& p) {
                const std::int64_t cell = bucketIndex(p.tNs, width);
                if (cell >= firstCell && cell <= lastCell) {
                    addToCell(added[cell],
                              SeqPoint{SeriesPoint{p.tNs, p.value, p.min, p.max, p.step}, p.seq});
                }
            });
        !s.ok()) {
        return s;
    }
    if (added.empty()) {
        return {};
    }
    for (auto& [index, cell] : cells) {
        if (auto it = added.find(index); it != added.end()) {
            mergeCell(cell, it->second);
            added.erase(it);
        }
    }
    for (auto& [index, cell] : added) {
        cells.emplace_back(index, cell);
    }
    std::sort(cells.begin(), cells.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return {};
}

Status insertChunks(sqlite::Database& db, std::int64_t seriesId, std::int64_t incarnation,
                    std::span<const ChunkSample> samples, int codec) {
    auto insert = db.prepare(
        codec == kChunkCodecV6
            ? "INSERT INTO chunks(series_id, incarnation, t_min, t_max, seq_min, seq_max, count, "
              "data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);"
            : "INSERT INTO chunks(series_id, incarnation, t_min, t_max, seq_min, seq_max, count, "
              "data, codec) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);");
    if (!insert.ok()) {
        return Error{insert.error()};
    }
    ChunkEncoder encoder{codec};
    ChunkMeta meta;
    auto flush = [&]() -> Status {
        if (meta.count == 0) {
            return {};
        }
        insert->bind(1, seriesId)
            .bind(2, incarnation)
            .bind(3, meta.tMin)
            .bind(4, meta.tMax)
            .bind(5, meta.seqMin)
            .bind(6, meta.seqMax)
            .bind(7, meta.count)
            .bindBlob(8, encoder.bytes().data(), static_cast<int>(encoder.bytes().size()));
        if (codec != kChunkCodecV6) {
            insert->bind(9, static_cast<std::int64_t>(codec));
        }
        Status s = insert->run();
        encoder = ChunkEncoder{codec};
        meta = ChunkMeta{};
        return s;
    };
    for (const ChunkSample& s : samples) {
        encoder.append(s);
        meta.add(s);
        if (meta.count >= kChunkMaxSamples || encoder.bytes().size() >= kChunkMaxBytes) {
            if (Status st = flush(); !st.ok()) {
                return st;
            }
        }
    }
    return flush();
}

Status convertSamplesToChunks(sqlite::Database& db) {
    {
        auto scan = db.prepare(
            "SELECT series_id, incarnation, t_ns, seq, value, min, max, step FROM samples "
            "ORDER BY series_id, incarnation, t_ns, seq;");
        if (!scan.ok()) {
            return Error{scan.error()};
        }
        const double nan = std::numeric_limits<double>::quiet_NaN();
        auto real = [&](int column) {
            return scan->columnIsNull(column) ? nan : scan->columnDouble(column);
        };
        std::int64_t series = 0;
        std::int64_t incarnation = 0;
        std::vector<ChunkSample> group;
        while (true) {
            auto row = scan->step();
            if (!row.ok()) {
                return Error{row.error()};
            }
            const bool done = !*row;
            if (done || scan->columnInt(0) != series || scan->columnInt(1) != incarnation ||
                static_cast<std::int64_t>(group.size()) >= kChunkMaxSamples) {
                if (Status s = insertChunks(db, series, incarnation, group, kChunkCodecV6);
                    !s.ok()) {
                    return s;
                }
                group.clear();
            }
            if (done) {
                break;
            }
            series = scan->columnInt(0);
            incarnation = scan->columnInt(1);
            group.push_back(ChunkSample{scan->columnInt(2), scan->columnInt(3), real(4), real(5),
                                        real(6), scan->columnInt(7)});
        }
    }
    return db.exec("DROP TABLE samples;");
}

// ---- the `samples` view: an eponymous, read-only virtual table decoding the chunks.
namespace {

struct ViewTable {
    sqlite3_vtab base{};
    sqlite3* db = nullptr;
};

struct ViewCursor {
    sqlite3_vtab_cursor base{};
    sqlite3_stmt* chunks = nullptr;
    std::vector<ChunkSample> rows;
    std::size_t index = 0;
    std::int64_t series = 0;
    std::int64_t incarnation = 0;
    std::int64_t rowid = 0;
    bool eof = true;
    // After the chunks, the staged samples (staged.h): all decoded at once, each with its own
    // series and incarnation.
    bool stagedPhase = false;
    bool filtered = false;  // series_id = filterSeries
    std::int64_t filterSeries = 0;
    std::vector<std::int64_t> stagedSeries;
    std::vector<std::int64_t> stagedIncarnations;
};

enum Column { kSeries, kTime, kSeq, kValue, kMin, kMax, kStep, kIncarnation };

int viewConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
    const int rc = sqlite3_declare_vtab(
        db,
        "CREATE TABLE x(series_id INTEGER, t_ns INTEGER, seq INTEGER, value REAL, min REAL, "
        "max REAL, step INTEGER, incarnation INTEGER)");
    if (rc != SQLITE_OK) {
        return rc;
    }
    auto* table = new ViewTable;
    table->db = db;
    *out = &table->base;
    return SQLITE_OK;
}

int viewDisconnect(sqlite3_vtab* vtab) {
    delete reinterpret_cast<ViewTable*>(vtab);
    return SQLITE_OK;
}

// series_id = ? is answered by the chunks index; everything else SQLite filters itself.
int viewBestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
    info->idxNum = 0;
    info->estimatedCost = 1e6;
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& c = info->aConstraint[i];
        if (c.usable && c.iColumn == kSeries && c.op == SQLITE_INDEX_CONSTRAINT_EQ) {
            info->aConstraintUsage[i].argvIndex = 1;
            info->aConstraintUsage[i].omit = 1;
            info->idxNum = 1;
            info->estimatedCost = 1e3;
            break;
        }
    }
    return SQLITE_OK;
}

int viewOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
    auto* cursor = new ViewCursor;
    *out = &cursor->base;
    return SQLITE_OK;
}

int viewClose(sqlite3_vtab_cursor* base) {
    auto* cursor = reinterpret_cast<ViewCursor*>(base);
    sqlite3_finalize(cursor->chunks);
    delete cursor;
    return SQLITE_OK;
}

// The staged samples of the cursor's series (or all) into rows; a file without the table
// (before schema 8) has none.
int viewLoadStaged(ViewCursor* cursor, sqlite3* db) {
    cursor->stagedPhase = true;
    cursor->rows.clear();
    cursor->index = 0;
    if (cursor->filtered && cursor->filterSeries <= 0) {
        return SQLITE_OK;  // no series has such an id
    }
    sqlite3_stmt* stmt = nullptr;
    const char* sql = cursor->filtered ? kSelectStagedRowsOfSeriesSql : kSelectAllStagedRowsSql;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return SQLITE_OK;  // no staged table
    }
    sqlite3_bind_int64(stmt, 1, cursor->filterSeries);
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        // Columns: id, incarnation, codec, data (kSelect*StagedRows*Sql).
        const std::int64_t incarnation = sqlite3_column_int64(stmt, 1);
        const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, 3));
        const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt, 3));
        const Status decoded =
            forEachStagedRowSample(sqlite3_column_int64(stmt, 2), {data, size},
                                   cursor->filtered ? cursor->filterSeries : 0,
                                   [&](std::int64_t seriesId, const ChunkSample& p) {
                                       cursor->rows.push_back(p);
                                       cursor->stagedSeries.push_back(seriesId);
                                       cursor->stagedIncarnations.push_back(incarnation);
                                   });
        if (!decoded.ok()) {
            sqlite3_finalize(stmt);
            return SQLITE_CORRUPT;
        }
    }
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

// Moves to the next sample, decoding the next chunk when the current one is used up.
int viewAdvance(ViewCursor* cursor) {
    if (cursor->stagedPhase) {
        cursor->eof = cursor->index >= cursor->rows.size();
        return SQLITE_OK;
    }
    while (cursor->index >= cursor->rows.size()) {
        const int rc = sqlite3_step(cursor->chunks);
        if (rc == SQLITE_DONE) {
            const int staged = viewLoadStaged(cursor, sqlite3_db_handle(cursor->chunks));
            if (staged != SQLITE_OK) {
                return staged;
            }
            cursor->eof = cursor->rows.empty();
            return SQLITE_OK;
        }
        if (rc != SQLITE_ROW) {
            return rc;
        }
        cursor->series = sqlite3_column_int64(cursor->chunks, 0);
        cursor->incarnation = sqlite3_column_int64(cursor->chunks, 1);
        const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(cursor->chunks, 3));
        const int size = sqlite3_column_bytes(cursor->chunks, 3);
        cursor->rows.clear();
        cursor->index = 0;
        if (!decodeChunk(sqlite3_column_int(cursor->chunks, 4),
                         {data, static_cast<std::size_t>(size)},
                         sqlite3_column_int64(cursor->chunks, 2), cursor->rows)
                 .ok()) {
            return SQLITE_CORRUPT;
        }
    }
    cursor->eof = false;
    return SQLITE_OK;
}

int viewFilter(sqlite3_vtab_cursor* base, int idxNum, const char*, int argc, sqlite3_value** argv) {
    auto* cursor = reinterpret_cast<ViewCursor*>(base);
    auto* table = reinterpret_cast<ViewTable*>(base->pVtab);
    sqlite3_finalize(cursor->chunks);
    cursor->chunks = nullptr;
    std::string sql = "SELECT series_id, incarnation, count, data, codec FROM chunks";
    sql += idxNum == 1 ? " WHERE series_id = ?1 ORDER BY t_min, id;"
                       : " ORDER BY series_id, t_min, id;";
    int rc = sqlite3_prepare_v2(table->db, sql.c_str(), -1, &cursor->chunks, nullptr);
    if (rc != SQLITE_OK) {
        // A v6 file (no codec column yet, e.g. read during its own migration): all codec 0.
        sqlite3_finalize(cursor->chunks);
        cursor->chunks = nullptr;
        sql.replace(sql.find(", codec FROM"), 12, ", 0 FROM");
        rc = sqlite3_prepare_v2(table->db, sql.c_str(), -1, &cursor->chunks, nullptr);
    }
    if (rc != SQLITE_OK) {
        return rc;
    }
    cursor->filtered = false;
    cursor->filterSeries = 0;
    if (idxNum == 1 && argc > 0) {
        sqlite3_bind_value(cursor->chunks, 1, argv[0]);
        // A series id that is not an integer matches no staged row (nor any chunk).
        cursor->filtered = true;
        cursor->filterSeries =
            sqlite3_value_type(argv[0]) == SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) : 0;
    }
    cursor->stagedPhase = false;
    cursor->stagedSeries.clear();
    cursor->stagedIncarnations.clear();
    cursor->rows.clear();
    cursor->index = 0;
    cursor->rowid = 0;
    return viewAdvance(cursor);
}

int viewNext(sqlite3_vtab_cursor* base) {
    auto* cursor = reinterpret_cast<ViewCursor*>(base);
    ++cursor->index;
    ++cursor->rowid;
    return viewAdvance(cursor);
}

int viewEof(sqlite3_vtab_cursor* base) {
    return reinterpret_cast<ViewCursor*>(base)->eof ? 1 : 0;
}

void resultReal(sqlite3_context* ctx, double v) {
    if (std::isnan(v)) {
        sqlite3_result_null(ctx);  // as the samples table stored NaN
    } else {
        sqlite3_result_double(ctx, v);
    }
}

int viewColumn(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
    auto* cursor = reinterpret_cast<ViewCursor*>(base);
    const ChunkSample& s = cursor->rows[cursor->index];
    switch (column) {
        case kSeries:
            sqlite3_result_int64(
                ctx, cursor->stagedPhase ? cursor->stagedSeries[cursor->index] : cursor->series);
            break;
        case kTime:
            sqlite3_result_int64(ctx, s.tNs);
            break;
        case kSeq:
            sqlite3_result_int64(ctx, s.seq);
            break;
        case kValue:
            resultReal(ctx, s.value);
            break;
        case kMin:
            resultReal(ctx, s.min);
            break;
        case kMax:
            resultReal(ctx, s.max);
            break;
        case kStep:
            sqlite3_result_int64(ctx, s.step);
            break;
        default:
            sqlite3_result_int64(ctx, cursor->stagedPhase
                                          ? cursor->stagedIncarnations[cursor->index]
                                          : cursor->incarnation);
            break;
    }
    return SQLITE_OK;
}

int viewRowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
    *out = reinterpret_cast<ViewCursor*>(base)->rowid;
    return SQLITE_OK;
}

sqlite3_module makeModule() {
    sqlite3_module m{};
    m.xCreate = nullptr;  // eponymous only: no CREATE VIRTUAL TABLE needed
    m.xConnect = viewConnect;
    m.xBestIndex = viewBestIndex;
    m.xDisconnect = viewDisconnect;
    m.xDestroy = viewDisconnect;
    m.xOpen = viewOpen;
    m.xClose = viewClose;
    m.xFilter = viewFilter;
    m.xNext = viewNext;
    m.xEof = viewEof;
    m.xColumn = viewColumn;
    m.xRowid = viewRowid;
    return m;
}

const sqlite3_module kModule = makeModule();

int registerOn(sqlite3* db, char**, const sqlite3_api_routines*) {
    return sqlite3_create_module(db, "samples", &kModule, nullptr);
}

}  // namespace

void registerSamplesView() {
    static std::once_flag once;
    std::call_once(once, [] { sqlite3_auto_extension(reinterpret_cast<void (*)()>(&registerOn)); });
}

}  // namespace runplane::db
