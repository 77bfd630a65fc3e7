#pragma once
// Private state of History shared by its translation units (history*.cpp).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/history/chunk_codec.h"
#include "db/history/chunks.h"
#include "db/history/history.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

struct History::Impl {
    std::unique_ptr<sqlite::Database> db;
    // Statements prepared once on first use (the hot ingest path).
    sqlite::Statement selectCursor;
    sqlite::Statement upsertCursor;
    sqlite::Statement selectSeries;
    sqlite::Statement insertSeries;
    sqlite::Statement insertChunk;
    sqlite::Statement updateChunk;
    sqlite::Statement lastChunk;
    sqlite::Statement insertEvent;
    sqlite::Statement upsertRollup;
    bool ingestPrepared = false;
    // (node, run, name) -> series id; entries created in a rolled-back transaction are removed.
    std::unordered_map<std::string, std::int64_t> seriesIds;

    /// The open chunk of a series this connection appends to (docs/history.md, "Chunks"). Its
    /// row is rewritten at every batch commit; `pending` are the samples appended since. The
    /// chunk's first `rolled` samples are in the rollup cells; the rest are merged when the
    /// chunk is sealed (full, or left for another incarnation).
    struct Head {
        std::int64_t rowId = 0;  // 0: not stored yet
        std::int64_t incarnation = 0;
        std::int64_t storedCount = 0;  // the row's count as this connection last wrote it
        std::int64_t rolled = 0;
        ChunkEncoder encoder;
        ChunkMeta meta;
        std::vector<ChunkSample> pending;
        bool full() const {
            return meta.count >= kChunkMaxSamples || encoder.bytes().size() >= kChunkMaxBytes;
        }
    };
    /// Cleared when a batch rolls back (the rows they describe are gone); rebuilt on demand.
    std::unordered_map<std::int64_t, Head> heads;

    Status prepareIngest();
    /// The head of a series, resumed from its last stored chunk when that one is still open.
    Result<Head*> head(std::int64_t seriesId, std::int64_t incarnation);
    /// Merges the head's samples not yet in the rollup cells into them (before sealing it).
    Status rollHead(std::int64_t seriesId, Head& head);
    /// Writes the head's row (insert, or update if no other connection changed it meanwhile);
    /// seal: the chunk is closed, its unrolled samples are merged into the cells with it.
    Status storeHead(std::int64_t seriesId, Head& head, bool seal = false);
    /// One batch's body, inside a transaction the caller opened (and commits or rolls back):
    /// samples into head chunks, events, the cursor. Series it creates are added to
    /// seriesIds and their keys to newSeriesKeys (the caller forgets them on rollback, and must
    /// then clear `heads`).
    Result<IngestResult> ingestBatch(const IngestBatch& batch,
                                     std::vector<std::string>& newSeriesKeys);
};

/// Key of Impl::seriesIds.
std::string seriesKey(const std::string& nodeId, const std::string& runId, const std::string& name);

/// An event's attributes as stored in events.attrs_json: one compact JSON object, keys sorted,
/// invalid UTF-8 replaced (event_attrs.cpp). The bytes every caller stored when it handed the
/// history JSON text itself.
std::string encodeEventAttrs(const EventAttrs& attrs);

/// events.attrs_json back to attributes, each value as stored; text that is not a JSON object
/// reads as no attributes.
EventAttrs decodeEventAttrs(const std::string& json);

/// Current time as Unix nanoseconds.
std::int64_t nowNs();

}  // namespace runplane::db
