// Staged samples: the row format and the reads (staged.h, docs/history.md "Chunks").
#include "db/history/staged.h"

namespace runplane::db {

namespace {

void putVarint(std::vector<std::uint8_t>& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}

// Reads a varint at pos; false when it runs past the end or past 64 bits.
bool getVarint(std::span<const std::uint8_t> data, std::size_t& pos, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= data.size()) {
            return false;
        }
        const std::uint8_t byte = data[pos++];
        if (shift == 63 && byte > 1) {
            return false;  // more than 64 bits
        }
        v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            return true;
        }
    }
    return false;
}

}  // namespace

void appendStagedSection(std::vector<std::uint8_t>& data, std::int64_t seriesId,
                         const ChunkEncoder& samples) {
    putVarint(data, static_cast<std::uint64_t>(seriesId));
    putVarint(data, static_cast<std::uint64_t>(samples.count()));
    putVarint(data, samples.bytes().size());
    data.insert(data.end(), samples.bytes().begin(), samples.bytes().end());
}

Status forEachStagedSection(std::span<const std::uint8_t> data,
                            const std::function<void(const StagedSection&)>& fn) {
    std::size_t pos = 0;
    while (pos < data.size()) {
        const std::size_t start = pos;
        std::uint64_t id = 0;
        std::uint64_t count = 0;
        std::uint64_t length = 0;
        if (!getVarint(data, pos, id) || !getVarint(data, pos, count) ||
            !getVarint(data, pos, length)) {
            return Error{"staged section at byte " + std::to_string(start) +
                         ": header runs past the end of the row or is too long"};
        }
        if (id == 0 || id > static_cast<std::uint64_t>(INT64_MAX)) {
            return Error{"staged section at byte " + std::to_string(start) + ": series id " +
                         std::to_string(id) + " out of range"};
        }
        if (count == 0 || count > static_cast<std::uint64_t>(kChunkMaxSamples)) {
            return Error{"staged section at byte " + std::to_string(start) + ": " +
                         std::to_string(count) + " samples (1.." +
                         std::to_string(kChunkMaxSamples) + ")"};
        }
        if (length > data.size() - pos) {
            return Error{"staged section at byte " + std::to_string(start) + ": " +
                         std::to_string(length) + " bytes, the row has " +
                         std::to_string(data.size() - pos) + " left"};
        }
        fn(StagedSection{static_cast<std::int64_t>(id), static_cast<std::int64_t>(count),
                         data.subspan(pos, static_cast<std::size_t>(length))});
        pos += static_cast<std::size_t>(length);
    }
    return {};
}

Status forEachStagedRowSample(std::int64_t codec, std::span<const std::uint8_t> data,
                              std::int64_t only,
                              const std::function<void(std::int64_t, const ChunkSample&)>& fn) {
    if (codec != kChunkCodec) {
        return Error{"unknown codec " + std::to_string(codec)};
    }
    Status decoded;
    Status split = forEachStagedSection(data, [&](const StagedSection& s) {
        if (!decoded.ok() || (only > 0 && s.seriesId != only)) {
            return;
        }
        decoded = forEachChunkSample(kChunkCodec, s.bytes, s.count,
                                     [&](const ChunkSample& p) { fn(s.seriesId, p); });
    });
    return split.ok() ? decoded : split;
}

namespace {

// The rows of a prepared SELECT id, incarnation, codec, data FROM staged ... (bound); samples of
// sections whose series is `only` (0: every section).
Status forEachRowSample(sqlite::Database& db, sqlite::Statement& stmt, std::int64_t only,
                        const StagedSampleFn& fn) {
    while (true) {
        auto row = stmt.step();
        if (!row.ok()) {
            return Error{row.error()};
        }
        if (!*row) {
            return {};
        }
        const std::int64_t incarnation = stmt.columnInt(1);
        Status decoded = forEachStagedRowSample(
            stmt.columnInt(2), stmt.columnBlob(3), only,
            [&](std::int64_t seriesId, const ChunkSample& p) { fn(seriesId, incarnation, p); });
        if (!decoded.ok()) {
            return Error{db.path() + ": damaged staged row " + std::to_string(stmt.columnInt(0)) +
                         ": " + decoded.error()};
        }
    }
}

struct Memo {
    int depth = 0;
    bool valid = false;
    const sqlite::Database* db = nullptr;
    std::int64_t seriesId = 0;
    std::vector<std::pair<std::int64_t, ChunkSample>> samples;  // (incarnation, sample)
};

Memo& memo() {
    thread_local Memo m;
    return m;
}

bool noStagedTable(const std::string& error) {
    return error.find("no such table: staged") != std::string::npos;
}

}  // namespace

Status forEachStagedSample(sqlite::Database& db, std::int64_t seriesId, const StagedSampleFn& fn) {
    Memo& m = memo();
    const bool memoised = seriesId > 0 && m.depth > 0;
    if (memoised && m.valid && m.db == &db && m.seriesId == seriesId) {
        for (const auto& [incarnation, p] : m.samples) {
            fn(seriesId, incarnation, p);
        }
        return {};
    }
    auto stmt = db.prepare(seriesId > 0 ? kSelectStagedRowsOfSeriesSql : kSelectAllStagedRowsSql);
    if (!stmt.ok()) {
        return noStagedTable(stmt.error()) ? Status{} : Status{stmt.failure()};
    }
    if (seriesId <= 0) {
        return forEachRowSample(db, *stmt, 0, fn);
    }
    stmt->bind(1, seriesId);
    if (!memoised) {
        return forEachRowSample(db, *stmt, seriesId, fn);
    }
    m.valid = false;
    m.samples.clear();
    if (Status s =
            forEachRowSample(db, *stmt, seriesId,
                             [&](std::int64_t, std::int64_t incarnation, const ChunkSample& p) {
                                 m.samples.emplace_back(incarnation, p);
                             });
        !s.ok()) {
        return s;
    }
    m.valid = true;
    m.db = &db;
    m.seriesId = seriesId;
    for (const auto& [incarnation, p] : m.samples) {
        fn(seriesId, incarnation, p);
    }
    return {};
}

StagedMemoScope::StagedMemoScope() {
    ++memo().depth;
}

StagedMemoScope::~StagedMemoScope() {
    Memo& m = memo();
    if (--m.depth == 0) {
        m.valid = false;
        m.samples.clear();
    }
}

Status forEachNodeStagedSample(sqlite::Database& db, const std::string& nodeId,
                               const StagedSampleFn& fn) {
    auto stmt = db.prepare(kSelectStagedRowsOfNodeSql);
    if (!stmt.ok()) {
        return noStagedTable(stmt.error()) ? Status{} : Status{stmt.failure()};
    }
    stmt->bind(1, nodeId);
    return forEachRowSample(db, *stmt, 0, fn);
}

Status loadStagedSamples(sqlite::Database& db, std::int64_t seriesId, std::int64_t t0,
                         std::int64_t t1, std::vector<ChunkSample>& out) {
    return forEachStagedSample(db, seriesId, [&](std::int64_t, std::int64_t, const ChunkSample& p) {
        if (p.tNs >= t0 && p.tNs <= t1) {
            out.push_back(p);
        }
    });
}

}  // namespace runplane::db
