#pragma once
// Private state of History shared by its translation units (history*.cpp).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/history/chunk_codec.h"
#include "db/history/chunks.h"
#include "db/history/history.h"
#include "db/history/staged.h"
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
    sqlite::Statement insertStaged;
    sqlite::Statement deleteStaged;
    sqlite::Statement insertEvent;
    sqlite::Statement upsertRollup;
    bool ingestPrepared = false;
    // (node, run, name) -> series id; entries created in a rolled-back transaction are removed.
    std::unordered_map<std::string, std::int64_t> seriesIds;

    /// The open chunk of a series this connection appends to (docs/history.md, "Chunks"): in
    /// memory only; its samples are on disk in the staged rows of its node (NodeHeads::staged)
    /// until the node is sealed.
    struct Head {
        ChunkEncoder encoder;
        ChunkMeta meta;
        bool full() const {
            return meta.count >= kChunkMaxSamples || encoder.bytes().size() >= kChunkMaxBytes;
        }
    };
    /// One node's open chunks (all of one incarnation) and the staged rows this connection wrote
    /// for them: at every commit each sample of the heads is in exactly one of those rows.
    struct NodeHeads {
        std::int64_t incarnation = 0;
        std::unordered_map<std::int64_t, Head> heads;  // by series id
        std::vector<std::int64_t> staged;              // staged row ids, oldest first
    };
    /// By node id. Cleared when a transaction rolls back (its rows are gone; the staged rows
    /// committed before stay and are read as they are: orphans, adopted later).
    std::unordered_map<std::string, NodeHeads> nodes;
    /// A node with this many staged rows of this connection is sealed at its next batch: a read
    /// of one of its series decodes the node's staged rows, so this bounds what a read adds
    /// (docs/history.md).
    static constexpr std::size_t kMaxStagedRows = 64;
    std::vector<ChunkSample> sealBuffer;  // writeSealed's decoded samples (reused)
    /// flock()ed shared for the History's life on the file's lock file (-1: none, read-only).
    int lockFd = -1;

    Status prepareIngest();
    /// Writes a head as a sealed chunk (unrolled = 0) and merges its samples into the rollup
    /// cells, in the caller's transaction.
    Status writeSealed(std::int64_t seriesId, std::int64_t incarnation, const Head& head);
    /// Writes every open head of the node as a sealed chunk and deletes the node's staged rows
    /// of this connection (in the caller's transaction). Heads of series in `keep` that are not
    /// full (begun in the current batch, holding only its samples) stay open instead, their
    /// samples appended as sections to keptRow, which the caller stages.
    Status sealNode(NodeHeads& node, std::span<const std::int64_t> keep,
                    std::vector<std::uint8_t>& keptRow);
    /// sealNode for every node, in one transaction of its own.
    Status sealAll();
    /// Writes the samples of every staged row as sealed chunks (rolled up) and deletes the rows,
    /// in one transaction: only for a connection that is alone on the file (History::open).
    Status adoptStaged();
    /// One batch's body, inside a transaction the caller opened (and commits or rolls back):
    /// samples into head chunks and a staged row (or the node sealed), events, the cursor.
    /// Series it creates are added to seriesIds and their keys to newSeriesKeys (the caller
    /// forgets them on rollback, and must then clear `nodes`).
    Result<IngestResult> ingestBatch(const IngestBatch& batch,
                                     std::vector<std::string>& newSeriesKeys);
};

/// A read made of several statements (the chunks, then the staged rows: a seal committed
/// between them would move samples from one to the other) sees one snapshot: a deferred read
/// transaction for the scope, unless one is open already (beginRead, or a write).
class ReadSnapshot {
  public:
    explicit ReadSnapshot(sqlite::Database& db);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

  private:
    sqlite::Database* m_db = nullptr;  // set when this snapshot began the transaction
    StagedMemoScope m_memo;            // one read of a series' staged rows per snapshot
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
