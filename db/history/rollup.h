#pragma once
// The rollup pyramid (private to runplane_db): for every series and level l, one row per grid
// cell of width W_l = kRollupBaseNs * kRollupFactor^l holding the cell's sample count and four
// real samples: the first, the last, the one with the smallest min and the one with the largest
// max. Maintained in the ingest transaction; read by querySeries when a decimation bucket is at
// least one cell wide, so a 1,000,000-sample range costs a few thousand rows, not a million.
// Formula and rationale: docs/history.md.

#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "common/result.h"
#include "db/history/chunk_codec.h"
#include "db/history/history.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

inline constexpr std::int64_t kRollupBaseNs = 1'000'000'000;  // level 0: 1 s cells
inline constexpr std::int64_t kRollupFactor = 8;
inline constexpr int kRollupLevels = 7;  // 1 s, 8 s, 64 s, 512 s, ~68 min, ~9 h, ~3 days

/// Width of a level's cells in ns.
std::int64_t rollupWidth(int level);

/// A sample with its seq (ties at equal time are broken by seq).
struct SeqPoint {
    SeriesPoint point;
    std::int64_t seq = 0;
};

/// One cell's summary.
struct RollupCell {
    std::int64_t count = 0;
    SeqPoint first;
    SeqPoint last;
    SeqPoint minSample;  // smallest point.min (NaN never wins)
    SeqPoint maxSample;  // largest point.max
};

/// Folds one sample into a cell (count 0 = empty cell).
void addToCell(RollupCell& cell, const SeqPoint& sample);

/// Merges a cell's summary into another one (same rules as addToCell).
void mergeCell(RollupCell& into, const RollupCell& from);

/// Cells touched by a set of new samples: (series, level, cell index) -> summary.
using RollupDelta = std::map<std::tuple<std::int64_t, int, std::int64_t>, RollupCell>;
void addToDelta(RollupDelta& delta, std::int64_t seriesId, const SeqPoint& sample);

/// The upsert that merges a delta cell into the stored one (same rules as addToCell).
const char* rollupUpsertSql();
/// Binds a delta cell to the upsert statement and runs it.
Status writeCell(sqlite::Statement& upsert, std::int64_t seriesId, int level, std::int64_t cell,
                 const RollupCell& summary);

/// Merges samples (any order) into the cells of levels >= firstLevel of one series: one upsert
/// per touched cell and level (the ingest rolls a chunk's samples when it seals it).
Status rollSamples(sqlite::Statement& upsert, std::int64_t seriesId,
                   std::span<const ChunkSample> samples, int firstLevel);

/// Reads the cells of one level in [firstCell, lastCell], in order.
Result<std::vector<std::pair<std::int64_t, RollupCell>>> readCells(sqlite::Database& db,
                                                                   std::int64_t seriesId, int level,
                                                                   std::int64_t firstCell,
                                                                   std::int64_t lastCell);

/// Rebuilds the pyramid of every series from the samples table (migration backfill).
Status backfillRollups(sqlite::Database& db);

}  // namespace runplane::db
