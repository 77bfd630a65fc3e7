// Named watcher cursors and trimming (spool.h). Split from spool.cpp to keep each file about
// one job: spool.cpp stores and bounds records, this file decides when they may go.
#include <algorithm>

#include "backend/agent/spool.h"

namespace runplane::agent {
namespace {

std::string nameOf(const std::string& consumer) {
    return consumer.empty() ? std::string(kDefaultConsumer) : consumer;
}

}  // namespace

std::int64_t Spool::nowMs() const {
    if (m_options.nowUnixMs) {
        return m_options.nowUnixMs();
    }
    return nowUnixNs() / 1'000'000;
}

std::vector<SpoolCursor> Spool::cursors() {
    std::lock_guard lock(m_mutex);
    std::vector<SpoolCursor> out;
    auto q = m_db->prepare(
        "SELECT consumer, acked_through, updated_unix_ms FROM cursors ORDER BY consumer");
    if (!q) {
        return out;
    }
    while (true) {
        auto row = q->step();
        if (!row || !*row) {
            break;
        }
        out.push_back(
            {q->columnText(0), static_cast<std::uint64_t>(q->columnInt(1)), q->columnInt(2)});
    }
    return out;
}

Status Spool::dropCursorLocked(const SpoolCursor& cursor, const std::string& why,
                               std::vector<v1::TelemetryRecord>* notices) {
    auto del = m_db->prepare("DELETE FROM cursors WHERE consumer = ?1");
    if (!del) {
        return Error{del.error()};
    }
    del->bind(1, std::string_view(cursor.consumer));
    if (Status s = del->run(); !s.ok()) {
        return s;
    }
    v1::TelemetryRecord notice;
    notice.set_t_unix_ns(nowUnixNs());
    auto* ev = notice.mutable_event();
    ev->set_kind(v1::EVENT_INFO);
    ev->set_message("watcher cursor '" + cursor.consumer + "' dropped (" + why +
                    "); it had acknowledged through seq " + std::to_string(cursor.ackedThrough) +
                    ", and the spool no longer keeps later records for it");
    (*ev->mutable_attrs())["what"] = "cursor_dropped";
    (*ev->mutable_attrs())["consumer"] = cursor.consumer;
    (*ev->mutable_attrs())["acked_through"] = std::to_string(cursor.ackedThrough);
    notices->push_back(std::move(notice));
    return {};
}

// Inside the caller's transaction: stores the cursor-drop notices and the seq counter with them.
Status Spool::insertNoticesLocked(std::vector<v1::TelemetryRecord>& notices) {
    if (notices.empty()) {
        return {};
    }
    if (Status s = insertLocked(notices); !s.ok()) {
        return s;
    }
    return m_db->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', '" +
                      std::to_string(m_stats.nextSeq) + "')");
}

Status Spool::openCursor(const std::string& consumer, std::uint64_t fromSeq) {
    const std::string name = nameOf(consumer);
    std::lock_guard lock(m_mutex);
    const std::int64_t now = nowMs();
    // Just before the first record the watch will read; never below what is already trimmed.
    const std::uint64_t before =
        std::max(fromSeq == 0 ? m_stats.trimmedThrough : fromSeq - 1, m_stats.trimmedThrough);
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    std::vector<v1::TelemetryRecord> notices;
    auto count = m_db->prepare(
        "SELECT count(*), (SELECT count(*) FROM cursors WHERE consumer = ?1) FROM cursors");
    if (!count) {
        return Error{count.error()};
    }
    count->bind(1, std::string_view(name));
    if (auto r = count->step(); !r) {
        return Error{r.error()};
    }
    const auto total = static_cast<std::size_t>(count->columnInt(0));
    const bool known = count->columnInt(1) > 0;
    count->reset();
    if (!known && total >= m_options.maxCursors) {
        auto oldest = m_db->prepare(
            "SELECT consumer, acked_through, updated_unix_ms FROM cursors "
            "ORDER BY updated_unix_ms LIMIT 1");
        if (!oldest) {
            return Error{oldest.error()};
        }
        if (auto r = oldest->step(); r && *r) {
            const SpoolCursor victim{oldest->columnText(0),
                                     static_cast<std::uint64_t>(oldest->columnInt(1)),
                                     oldest->columnInt(2)};
            oldest->reset();
            if (Status s = dropCursorLocked(victim,
                                            "more than " + std::to_string(m_options.maxCursors) +
                                                " watchers; it was the least recently seen",
                                            &notices);
                !s.ok()) {
                return s;
            }
        }
    }
    auto up = m_db->prepare(
        "INSERT INTO cursors(consumer, acked_through, updated_unix_ms) VALUES(?1, ?2, ?3) "
        "ON CONFLICT(consumer) DO UPDATE SET updated_unix_ms = excluded.updated_unix_ms");
    if (!up) {
        return Error{up.error()};
    }
    up->bind(1, std::string_view(name)).bind(2, static_cast<std::int64_t>(before)).bind(3, now);
    const SpoolStats saved = m_stats;  // insertLocked advances the counters
    Status s = up->run();
    if (s.ok()) {
        s = insertNoticesLocked(notices);
    }
    if (s.ok()) {
        s = tx.commit();
    }
    if (!s.ok()) {
        m_stats = saved;
    } else {
        noteHighWaterLocked();
    }
    return s;
}

Status Spool::trimLocked(std::uint64_t seq) {
    auto sum = m_db->prepare("SELECT count(*), coalesce(sum(size),0) FROM records WHERE seq <= ?1");
    if (!sum) {
        return Error{sum.error()};
    }
    sum->bind(1, static_cast<std::int64_t>(seq));
    if (auto r = sum->step(); !r) {
        return Error{r.error()};
    }
    const auto count = static_cast<std::uint64_t>(sum->columnInt(0));
    const auto bytes = static_cast<std::uint64_t>(sum->columnInt(1));
    sum->reset();
    auto del = m_db->prepare("DELETE FROM records WHERE seq <= ?1");
    if (!del) {
        return Error{del.error()};
    }
    del->bind(1, static_cast<std::int64_t>(seq));
    Status s = del->run();
    if (s.ok()) {
        s = m_db->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('trimmed_through', '" +
                       std::to_string(seq) + "')");
    }
    if (!s.ok()) {
        return s;
    }
    m_stats.trimmedThrough = seq;
    m_stats.records -= count;
    m_stats.payloadBytes -= bytes;
    m_stats.oldestKeptSeq = m_stats.records == 0 ? 0 : std::max(m_stats.oldestKeptSeq, seq + 1);
    return {};
}

Result<std::uint64_t> Spool::acknowledge(const std::string& consumer, std::uint64_t seq) {
    const std::string name = nameOf(consumer);
    std::lock_guard lock(m_mutex);
    if (seq >= m_stats.nextSeq) {
        return Error{"committed_through_seq " + std::to_string(seq) +
                     " is beyond the last issued seq " + std::to_string(m_stats.nextSeq - 1)};
    }
    const SpoolStats before = m_stats;
    const std::int64_t now = nowMs();
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return Error{tx.begun().error()};
    }
    auto up = m_db->prepare(
        "INSERT INTO cursors(consumer, acked_through, updated_unix_ms) VALUES(?1, ?2, ?3) "
        "ON CONFLICT(consumer) DO UPDATE SET acked_through = max(acked_through, "
        "excluded.acked_through), updated_unix_ms = excluded.updated_unix_ms");
    if (!up) {
        return Error{up.error()};
    }
    up->bind(1, std::string_view(name)).bind(2, static_cast<std::int64_t>(seq)).bind(3, now);
    if (Status s = up->run(); !s.ok()) {
        return Error{s.error()};
    }
    // Idle cursors go before the trim, so they no longer hold it back.
    std::vector<v1::TelemetryRecord> notices;
    const std::int64_t idleMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(m_options.cursorIdleLimit).count();
    auto idle = m_db->prepare(
        "SELECT consumer, acked_through, updated_unix_ms FROM cursors "
        "WHERE updated_unix_ms < ?1 AND consumer <> ?2");
    if (!idle) {
        return Error{idle.error()};
    }
    idle->bind(1, now - idleMs).bind(2, std::string_view(name));
    std::vector<SpoolCursor> stale;
    while (true) {
        auto row = idle->step();
        if (!row) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        stale.push_back({idle->columnText(0), static_cast<std::uint64_t>(idle->columnInt(1)),
                         idle->columnInt(2)});
    }
    idle->reset();
    for (const auto& c : stale) {
        const auto hours = (now - c.updatedUnixMs) / 3'600'000;
        if (Status s = dropCursorLocked(
                c, "no watch or acknowledgement for " + std::to_string(hours) + " h", &notices);
            !s.ok()) {
            return Error{s.error()};
        }
    }
    auto slowest = m_db->prepare("SELECT min(acked_through) FROM cursors");
    if (!slowest) {
        return Error{slowest.error()};
    }
    if (auto r = slowest->step(); !r) {
        return Error{r.error()};
    }
    const auto target = static_cast<std::uint64_t>(slowest->columnInt(0));
    slowest->reset();
    Status s;
    if (target > m_stats.trimmedThrough) {
        s = trimLocked(target);
    }
    if (s.ok()) {
        s = insertNoticesLocked(notices);
    }
    if (s.ok()) {
        s = tx.commit();
    }
    if (!s.ok()) {
        m_stats = before;
        return Error{s.error()};
    }
    noteHighWaterLocked();
    return m_stats.trimmedThrough;
}

}  // namespace runplane::agent
