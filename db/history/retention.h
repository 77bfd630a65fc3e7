#pragma once
// Retention internals shared by retention.cpp and the query code (private to runplane_db).

#include <cstdint>
#include <optional>

#include "common/result.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

/// Rollup levels below this one (1 s and 8 s cells) are deleted with the raw samples; this
/// level (64 s cells) and the coarser ones stay until the rollup cutoff.
inline constexpr int kRetainedRollupLevel = 2;

/// Where a pruned series' data changes kind: before rollupBeforeNs only what pinned runs kept
/// (raw); in [rollupBeforeNs, rawBeforeNs) rollup cells of level >= kRetainedRollupLevel; from
/// rawBeforeNs on everything. Both are multiples of the coarsest rollup cell width.
struct SeriesHorizon {
    std::int64_t rawBeforeNs = 0;
    std::int64_t rollupBeforeNs = 0;
};

/// The series' horizon; nullopt when it was never pruned.
Result<std::optional<SeriesHorizon>> readHorizon(sqlite::Database& db, std::int64_t seriesId);

/// PRAGMA count (page_count, freelist_count) x page_size; 0 when unreadable.
std::int64_t pageBytes(sqlite::Database& db, const char* pragma);

}  // namespace runplane::db
