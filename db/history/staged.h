#pragma once
// Staged samples (schema 8, issue #20; private to runplane_db): the writer keeps each series'
// open chunk in memory and stores what one transaction adds for a node as ONE row of `staged`
// instead of rewriting every open chunk; when a head fills, the node's heads are written as
// sealed chunks and its staged rows deleted (docs/history.md, "Chunks"). Every read adds the
// staged samples of the series it reads.
//
// A row's `data` is a sequence of sections, one per series:
//   varint series_id, varint count, varint byte length, then that many bytes: the section's
//   `count` samples encoded by ChunkEncoder in the row's `codec`.
// (varint: 7 bits a byte, least significant first, high bit set on every byte but the last.)

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "db/history/chunk_codec.h"
#include "db/history/chunks.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

/// Appends one section (a series' samples of one batch) to a staged row's data.
void appendStagedSection(std::vector<std::uint8_t>& data, std::int64_t seriesId,
                         const ChunkEncoder& samples);

/// One section of a staged row, as read back.
struct StagedSection {
    std::int64_t seriesId = 0;
    std::int64_t count = 0;
    std::span<const std::uint8_t> bytes;
};

/// Splits a staged row's data into its sections, calling fn(const StagedSection&) for each;
/// an error naming the offset when a varint runs past the end or is too long, a length reaches
/// past the end, or a count or id is out of range (a section holds at most kChunkMaxSamples:
/// a batch that fills a head seals the node instead of staging). The sections' samples are not
/// decoded.
Status forEachStagedSection(std::span<const std::uint8_t> data,
                            const std::function<void(const StagedSection&)>& fn);

/// Decodes one staged row's `data` written in `codec`: fn(seriesId, sample) for every sample of
/// the sections whose series is `only` (0: every section), in stored order. An error for an
/// unknown codec or a damaged section (the caller names the file and row).
Status forEachStagedRowSample(std::int64_t codec, std::span<const std::uint8_t> data,
                              std::int64_t only,
                              const std::function<void(std::int64_t, const ChunkSample&)>& fn);

/// The staged rows' columns every reader selects, in this order: id, incarnation, codec, data.
/// Of one series' node (bind ?1 to the series id), of one node (bind ?1 to its id), or of every
/// node; all in id order.
inline constexpr const char* kSelectStagedRowsOfSeriesSql =
    "SELECT id, incarnation, codec, data FROM staged WHERE node_id = "
    "(SELECT node_id FROM series WHERE id = ?1) ORDER BY id;";
inline constexpr const char* kSelectStagedRowsOfNodeSql =
    "SELECT id, incarnation, codec, data FROM staged WHERE node_id = ?1 ORDER BY id;";
inline constexpr const char* kSelectAllStagedRowsSql =
    "SELECT id, incarnation, codec, data FROM staged ORDER BY id;";

/// A staged sample with the series and incarnation of its row.
using StagedSampleFn =
    std::function<void(std::int64_t seriesId, std::int64_t incarnation, const ChunkSample&)>;

/// Calls fn for every staged sample of the series (seriesId > 0; the node's rows are read by
/// the index staged(node_id, id)) or of every series (seriesId == 0), row by row in id order,
/// each section's samples in stored order. A damaged row is an error naming the file and row.
/// A file without the table (before schema 8, e.g. read during its own migration) has none.
Status forEachStagedSample(sqlite::Database& db, std::int64_t seriesId, const StagedSampleFn& fn);

/// While one is alive on a thread, forEachStagedSample of one series reads that series' staged
/// samples once and replays them to later calls for the same connection and series (a query
/// reads them for its extent, its raw edges and its cells). Only for a caller that holds one
/// snapshot for the scope (History's ReadSnapshot). Scopes nest; the outermost one clears.
class StagedMemoScope {
  public:
    StagedMemoScope();
    ~StagedMemoScope();
    StagedMemoScope(const StagedMemoScope&) = delete;
    StagedMemoScope& operator=(const StagedMemoScope&) = delete;
};

/// forEachStagedSample for every series of one node.
Status forEachNodeStagedSample(sqlite::Database& db, const std::string& nodeId,
                               const StagedSampleFn& fn);

/// The staged samples of a series with t in [t0, t1], appended to out (stored order).
Status loadStagedSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0,
                         std::int64_t t1, std::vector<ChunkSample>& out);

}  // namespace runplane::db
