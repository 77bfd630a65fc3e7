#pragma once
// Chunk storage of samples (schema v6, issue #21; private to runplane_db): each row of `chunks`
// holds up to kChunkMaxSamples samples of one series and incarnation, encoded by chunk_codec.h.
// docs/history.md, "Chunks", explains the table, the open head chunk and the read path.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "common/result.h"
#include "db/history/chunk_codec.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

struct RollupCell;

/// A chunk is closed at this many samples or once its blob reaches kChunkMaxBytes: two rows
/// (blob, ~45 bytes of columns and record header, and at most one more sample of <= 55 bytes)
/// fit one 4 KiB page, so pages stay full whatever the bytes per sample (a 2.9 KiB row alone
/// on its page wasted a quarter of the file).
inline constexpr std::int64_t kChunkMaxSamples = 1024;
inline constexpr std::size_t kChunkMaxBytes = 1900;

/// Extent and counters of a chunk, kept in its row so range reads skip chunks without decoding.
struct ChunkMeta {
    std::int64_t tMin = 0;
    std::int64_t tMax = 0;
    std::int64_t seqMin = 0;
    std::int64_t seqMax = 0;
    std::int64_t count = 0;
    void add(const ChunkSample& s);
};

/// (t, seq) order, the order every read returns.
/// Inline: the decode loop calls it per sample, and an out-of-line call forces the sample onto
/// the stack (a store-forwarding stall on the copy that follows, ~20 % of a 1 M read).
inline bool sampleBefore(const ChunkSample& a, const ChunkSample& b) {
    return a.tNs < b.tNs || (a.tNs == b.tNs && a.seq < b.seq);
}

/// The samples of a series with t in [t0, t1], in (t, seq) order.
Status loadSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                   std::vector<ChunkSample>& out);

/// What the chunk rows say about a series in [t0, t1] (only chunks that straddle an end of the
/// range are decoded).
struct ChunkExtent {
    bool any = false;     // a sample in [t0, t1]
    std::int64_t lo = 0;  // first and last sample time in [t0, t1]
    std::int64_t hi = 0;
    std::int64_t bound = 0;  // samples of the chunks that overlap [t0, t1] (>= those inside)
    bool disjoint = true;    // those chunks' time spans do not overlap
};
Result<ChunkExtent> chunkExtent(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0,
                                std::int64_t t1);

/// Calls fn(const ChunkSample&) for every sample in [t0, t1] in (t, seq) order. With disjoint
/// chunks (ChunkExtent::disjoint) straight from the decoder, chunk by chunk (a chunk with
/// out-of-order samples is sorted on its own); otherwise through loadSamples.
template <typename Fn>
Status streamSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                     bool disjoint, Fn&& fn);

/// Adds to `cells` (one level's cells in index order, as readCells returns them) the samples of
/// chunks not yet merged into the cells (`unrolled`, docs/history.md) whose cell is in
/// [firstCell, lastCell]: the cells then describe every stored sample.
Status addUnrolledSamples(sqlite::Database& db, std::int64_t seriesId, int level,
                          std::int64_t firstCell, std::int64_t lastCell,
                          std::vector<std::pair<std::int64_t, RollupCell>>& cells);

/// Encodes samples (any order) into as many new chunk rows as they need, in the given codec
/// (kChunkCodecV6 only for the v6 migration, whose table has no codec/unrolled columns); the
/// rows count as merged into the rollup cells (unrolled = 0).
Status insertChunks(sqlite::Database& db, std::int64_t seriesId, std::int64_t incarnation,
                    std::span<const ChunkSample> samples, int codec = kChunkCodec);

/// Migration to v6: every row of `samples` into chunks (per series and incarnation, in time
/// order), then the table is dropped. Values stored as NULL (NaN) come back as NaN.
Status convertSamplesToChunks(sqlite::Database& db);

/// Makes `samples` a read-only SQL view of the chunks on every connection this process opens
/// from now on (an eponymous virtual table; a real `samples` table in an old file wins).
void registerSamplesView();

// ---- template implementation

namespace chunk_detail {
/// A range query's chunk rows (data, count, codec) in index order: by t_max, then t_min and id
/// (no sorter copying every blob; for disjoint chunks this is their time order).
inline constexpr const char* kRangeChunksSql =
    "SELECT data, count, codec FROM chunks WHERE series_id = ?1 AND t_max >= ?2 "
    "AND t_min <= ?3 ORDER BY t_max, t_min, id;";
Result<sqlite::Statement> rangeChunks(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0,
                                      std::int64_t t1);
/// This thread's reusable buffer for one decoded chunk.
std::vector<ChunkSample>& chunkBuffer();
Error damaged(const sqlite::Database& db, const Status& status);
/// The series' staged samples (staged.h) with t in [t0, t1], in (t, seq) order.
Status stagedInRange(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                     std::vector<ChunkSample>& out);
}  // namespace chunk_detail

template <typename Fn>
Status streamSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                     bool disjoint, Fn&& fn) {
    if (!disjoint) {
        std::vector<ChunkSample> all;
        if (Status s = loadSamples(db, seriesId, t0, t1, all); !s.ok()) {
            return s;
        }
        for (const ChunkSample& s : all) {
            fn(s);
        }
        return {};
    }
    // Staged samples: one span disjoint from every chunk's, emitted as one block in its place.
    std::vector<ChunkSample> staged;
    if (Status s = chunk_detail::stagedInRange(db, seriesId, t0, t1, staged); !s.ok()) {
        return s;
    }
    bool stagedDone = staged.empty();
    auto emitStaged = [&] {
        for (const ChunkSample& p : staged) {
            fn(p);
        }
        stagedDone = true;
    };
    auto stmt = chunk_detail::rangeChunks(db, seriesId, t0, t1);
    if (!stmt.ok()) {
        return Error{stmt.error()};
    }
    std::vector<ChunkSample>& buffer = chunk_detail::chunkBuffer();
    while (true) {
        auto row = stmt->step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            if (!stagedDone) {
                emitStaged();
            }
            return {};
        }
        // Decoded into a buffer that stays in cache (count is checked against the blob size).
        const std::int64_t count = stmt->columnInt(1);
        const auto room = static_cast<std::size_t>(std::clamp<std::int64_t>(count, 0, 1 << 20));
        if (buffer.size() < room) {
            buffer.resize(room);
        }
        ChunkSample* out = buffer.data();
        ChunkSample* const end = out + room;
        bool sorted = true;
        Status s = forEachChunkSample(
            static_cast<int>(stmt->columnInt(2)), stmt->columnBlob(0), count,
            [&](const ChunkSample& p) {
                if (p.tNs >= t0 && p.tNs <= t1 && out != end) {
                    sorted = sorted && (out == buffer.data() || !sampleBefore(p, out[-1]));
                    *out++ = p;
                }
            });
        if (!s.ok()) {
            return chunk_detail::damaged(db, s);
        }
        if (!sorted) {
            std::sort(buffer.data(), out, sampleBefore);
        }
        if (!stagedDone && out != buffer.data() && staged.back().tNs < buffer.front().tNs) {
            emitStaged();
        }
        for (const ChunkSample* p = buffer.data(); p != out; ++p) {
            fn(*p);
        }
    }
}

}  // namespace runplane::db
