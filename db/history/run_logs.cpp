// History: runs' stdout/stderr kept after the daemon moves on (issue #18). Chunks are stored as
// the daemon sent them, zlib-compressed (logs compress 5-20x), keyed by their stream offset.
#include <sqlite3.h>
#include <zlib.h>

#include <algorithm>

#include "db/history/history.h"
#include "db/history/history_impl.h"

namespace runplane::db {
namespace {

Result<std::string> deflateText(std::string_view raw) {
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    std::string out(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                  reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
                  Z_BEST_SPEED) != Z_OK) {
        return Error{"run log: compression failed"};
    }
    out.resize(size);
    return out;
}

Result<std::string> inflateText(const void* data, int size, std::uint64_t rawBytes) {
    // rawBytes comes from our own row; still bound it (a corrupt row must not allocate wildly).
    if (rawBytes > (64ull << 20)) {
        return Error{"run log: a chunk claims " + std::to_string(rawBytes) + " bytes"};
    }
    if (data == nullptr && size > 0) {
        return Error{"run log: a stored chunk is corrupt"};
    }
    std::string out(rawBytes, '\0');
    uLongf outSize = static_cast<uLongf>(rawBytes);
    if (uncompress(reinterpret_cast<Bytef*>(out.data()), &outSize, static_cast<const Bytef*>(data),
                   static_cast<uLong>(size)) != Z_OK ||
        outSize != rawBytes) {
        return Error{"run log: a stored chunk is corrupt"};
    }
    return out;
}

Status checkStream(const std::string& stream) {
    if (stream != "stdout" && stream != "stderr") {
        return Error{"run log stream '" + stream + "' is not stdout or stderr"};
    }
    return {};
}

// The offset just past the stored bytes of a stream.
Result<std::uint64_t> storedEnd(sqlite::Database& db, const std::string& runId,
                                const std::string& stream) {
    auto q = db.prepare(
        "SELECT coalesce(max(offset + raw_bytes), 0) FROM run_logs WHERE run_id = ?1 AND "
        "stream = ?2;");
    if (!q.ok()) {
        return Error{q.error()};
    }
    q->bind(1, runId).bind(2, stream);
    auto row = q->step();
    if (!row.ok()) {
        return Error{row.error()};
    }
    return static_cast<std::uint64_t>(q->columnInt(0));
}

}  // namespace

std::string RunLogText::shown() const {
    std::string out;
    std::size_t at = 0;
    for (std::size_t i = 0; i < missing.size() && i < missingAt.size(); ++i) {
        out.append(text, at, missingAt[i] - at);
        at = missingAt[i];
        if (!out.empty() && out.back() != '\n') {
            out += '\n';
        }
        out += "[runplane: " + std::to_string(missing[i].second - missing[i].first) +
               " bytes missing here (bytes " + std::to_string(missing[i].first) + ".." +
               std::to_string(missing[i].second) + " were not stored)]\n";
    }
    out.append(text, at, std::string::npos);
    return out;
}

Result<std::uint64_t> History::runLogEnd(const RunId& runId, const std::string& stream) {
    std::lock_guard lock(m_mutex);
    return storedEnd(*m_impl->db, runId.value(), stream);
}

Status History::appendRunLog(const RunId& run, const std::string& stream, std::uint64_t offset,
                             std::string_view data, std::uint64_t maxBytesPerStream) {
    const std::string& runId = run.value();
    if (Status s = checkStream(stream); !s.ok()) {
        return s;
    }
    std::lock_guard lock(m_mutex);
    sqlite::Database& db = *m_impl->db;
    // The stored end is read inside the write transaction: two ingestors (the GUI and a CLI
    // `watch`) may record the same run, and each must append after what the other stored.
    sqlite::Transaction tx(db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    auto end = storedEnd(db, runId, stream);
    if (!end.ok()) {
        return Error{end.error()};
    }
    // Skip what is already stored (a resumed tail resends from an earlier offset).
    if (offset + data.size() <= *end) {
        return {};
    }
    if (offset < *end) {
        data.remove_prefix(static_cast<std::size_t>(*end - offset));
        offset = *end;
    }
    auto packed = deflateText(data);
    if (!packed.ok()) {
        return Error{packed.error()};
    }
    {
        auto ins = db.prepare(
            "INSERT OR IGNORE INTO run_logs(run_id, stream, offset, raw_bytes, data) "
            "VALUES (?1, ?2, ?3, ?4, ?5);");
        if (!ins.ok()) {
            return Error{ins.error()};
        }
        ins->bind(1, runId)
            .bind(2, stream)
            .bind(3, static_cast<std::int64_t>(offset))
            .bind(4, static_cast<std::int64_t>(data.size()))
            .bindBlob(5, packed->data(), static_cast<int>(packed->size()));
        if (Status s = ins->run(); !s.ok()) {
            return s;
        }
        // The bound: drop the oldest chunks while the stream holds more than the limit.
        auto total = db.prepare(
            "SELECT coalesce(sum(raw_bytes), 0) FROM run_logs WHERE run_id = ?1 AND stream = ?2;");
        if (!total.ok()) {
            return Error{total.error()};
        }
        total->bind(1, runId).bind(2, stream);
        if (auto r = total->step(); !r.ok()) {
            return Error{r.error()};
        }
        std::uint64_t held = static_cast<std::uint64_t>(total->columnInt(0));
        while (held > maxBytesPerStream) {
            auto oldest = db.prepare(
                "SELECT offset, raw_bytes FROM run_logs WHERE run_id = ?1 AND stream = ?2 "
                "ORDER BY offset LIMIT 1;");
            if (!oldest.ok()) {
                return Error{oldest.error()};
            }
            oldest->bind(1, runId).bind(2, stream);
            auto r = oldest->step();
            if (!r.ok() || !*r) {
                break;
            }
            const std::int64_t at = oldest->columnInt(0);
            held -= static_cast<std::uint64_t>(oldest->columnInt(1));
            auto del = db.prepare(
                "DELETE FROM run_logs WHERE run_id = ?1 AND stream = ?2 AND offset = ?3;");
            if (!del.ok()) {
                return Error{del.error()};
            }
            del->bind(1, runId).bind(2, stream).bind(3, at);
            if (Status s = del->run(); !s.ok()) {
                return s;
            }
        }
    }
    return tx.commit();
}

Result<RunLogText> History::readRunLog(const RunId& run, const std::string& stream,
                                       std::uint64_t fromOffset) {
    const std::string& runId = run.value();
    if (Status s = checkStream(stream); !s.ok()) {
        return Error{s.error()};
    }
    std::lock_guard lock(m_mutex);
    // The wrapper's Statement has no blob accessor; this read uses the C API directly.
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(m_impl->db->handle(),
                           "SELECT offset, raw_bytes, data FROM run_logs WHERE run_id = ?1 AND "
                           "stream = ?2 AND offset + raw_bytes > ?3 ORDER BY offset;",
                           -1, &stmt, nullptr) != SQLITE_OK) {
        const int primary = sqlite3_errcode(m_impl->db->handle()) & 0xff;
        const bool damaged = primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
        return Error{m_path + (damaged ? ": the history is damaged: " : ": ") + "reading the " +
                     stream + " of run " + runId +
                     " (table run_logs): " + sqlite3_errmsg(m_impl->db->handle())};
    }
    sqlite3_bind_text(stmt, 1, runId.data(), static_cast<int>(runId.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 2, stream.data(), static_cast<int>(stream.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(stmt, 3, static_cast<sqlite3_int64>(fromOffset));
    RunLogText out;
    bool first = true;
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const auto offset = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 0));
        const auto rawBytes = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 1));
        auto text =
            inflateText(sqlite3_column_blob(stmt, 2), sqlite3_column_bytes(stmt, 2), rawBytes);
        if (!text.ok()) {
            sqlite3_finalize(stmt);
            return Error{m_path + ": the history is damaged: the " + stream + " of run " + runId +
                         " stored at bytes " + std::to_string(offset) + ".." +
                         std::to_string(offset + rawBytes) + ": " + text.error()};
        }
        std::string_view piece = *text;
        if (!first && offset > out.endOffset) {
            // A range the recorder never got (the daemon had dropped it): shown, not joined.
            out.missing.emplace_back(out.endOffset, offset);
            out.missingAt.push_back(out.text.size());
        }
        if (first) {
            out.firstOffset = std::max(offset, fromOffset);
            out.truncated = offset > fromOffset;
            if (fromOffset > offset) {
                piece.remove_prefix(static_cast<std::size_t>(fromOffset - offset));
            }
            first = false;
        }
        out.text.append(piece);
        out.endOffset = offset + rawBytes;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
        const int primary = rc & 0xff;
        const bool damaged = primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
        return Error{m_path + (damaged ? ": the history is damaged: " : ": ") + "reading the " +
                     stream + " of run " + runId + " after byte " + std::to_string(out.endOffset) +
                     " (table run_logs): " + sqlite3_errmsg(m_impl->db->handle())};
    }
    if (first) {
        out.firstOffset = out.endOffset = fromOffset;
    }
    return out;
}

}  // namespace runplane::db
