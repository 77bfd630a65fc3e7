#pragma once
// Chunk storage of samples (schema v6, issue #21; private to runplane_db): each row of `chunks`
// holds up to kChunkMaxSamples samples of one series and incarnation, encoded by chunk_codec.h.
// docs/history.md, "Chunks", explains the table, the open head chunk and the read path.

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "backend/common/result.h"
#include "db/history/chunk_codec.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

/// A chunk is closed at this many samples or once its blob reaches kChunkMaxBytes (a row that
/// fits one 4 KiB page: no overflow pages).
inline constexpr std::int64_t kChunkMaxSamples = 1024;
inline constexpr std::size_t kChunkMaxBytes = 3800;

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
bool sampleBefore(const ChunkSample& a, const ChunkSample& b);

/// The samples of a series with t in [t0, t1], in (t, seq) order.
Status loadSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0, std::int64_t t1,
                   std::vector<ChunkSample>& out);

/// First and last sample time of a series in [t0, t1]; nullopt when there is none. Only chunks
/// that straddle an end of the range are decoded.
Result<std::optional<std::pair<std::int64_t, std::int64_t>>> sampleExtent(sqlite::Database& db,
                                                                          std::int64_t seriesId,
                                                                          std::int64_t t0,
                                                                          std::int64_t t1);

/// Encodes samples (any order) into as many new chunk rows as they need.
Status insertChunks(sqlite::Database& db, std::int64_t seriesId, std::int64_t incarnation,
                    std::span<const ChunkSample> samples);

/// Migration to v6: every row of `samples` into chunks (per series and incarnation, in time
/// order), then the table is dropped. Values stored as NULL (NaN) come back as NaN.
Status convertSamplesToChunks(sqlite::Database& db);

/// Makes `samples` a read-only SQL view of the chunks on every connection this process opens
/// from now on (an eponymous virtual table; a real `samples` table in an old file wins).
void registerSamplesView();

}  // namespace runplane::db
