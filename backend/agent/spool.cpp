#include "backend/agent/spool.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>

#include "backend/agent/record_text.h"

namespace runplane::agent {

std::int64_t nowUnixNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS records (
  seq INTEGER PRIMARY KEY,
  size INTEGER NOT NULL,
  body BLOB NOT NULL,
  gap_first INTEGER  -- first_seq of an EVENT_GAP record, NULL for every other record
);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cursors (
  consumer TEXT PRIMARY KEY,
  acked_through INTEGER NOT NULL,  -- every seq <= this is committed by the consumer
  updated_unix_ms INTEGER NOT NULL  -- last watch start or acknowledgement
);
)sql";

// The wrapper's Statement has no blob accessor, so reads of the BLOB column use the C API
// directly through this small owner.
class RawStatement {
  public:
    RawStatement(sqlite3* db, const char* sql) {
        sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr);
    }
    ~RawStatement() { sqlite3_finalize(m_stmt); }
    RawStatement(const RawStatement&) = delete;
    RawStatement& operator=(const RawStatement&) = delete;
    sqlite3_stmt* get() const { return m_stmt; }

  private:
    sqlite3_stmt* m_stmt = nullptr;
};

}  // namespace

v1::TelemetryRecord unreadableRecordGap(std::uint64_t seq, int bytes) {
    v1::TelemetryRecord gap;
    gap.set_seq(seq);
    gap.set_t_unix_ns(nowUnixNs());
    auto* ev = gap.mutable_event();
    ev->set_kind(v1::EVENT_GAP);
    ev->set_message("spool record seq " + std::to_string(seq) + " (" + std::to_string(bytes) +
                    " bytes) cannot be read (damaged, or stored by an older daemon with text "
                    "that is not UTF-8); it is skipped and seq " +
                    std::to_string(seq) + " is lost");
    (*ev->mutable_attrs())["first_seq"] = std::to_string(seq);
    (*ev->mutable_attrs())["last_seq"] = std::to_string(seq);
    (*ev->mutable_attrs())["count"] = "1";
    (*ev->mutable_attrs())["why"] = "unreadable_record";
    return gap;
}

std::optional<std::uint64_t> parseSpoolCounter(const std::string& text) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

Spool::Spool(std::unique_ptr<sqlite::Database> db, SpoolOptions options)
    : m_db(std::move(db)), m_options(std::move(options)) {}

Spool::~Spool() {
    if (m_highWaterFd >= 0) {
        ::close(m_highWaterFd);
    }
}

std::string spoolRecoveryAdvice(const std::string& path) {
    return "to recover: stop runplaned, move " + path + " (with " + path + "-wal and " + path +
           "-shm if present) aside, e.g. `mv " + path + " " + path +
           ".damaged`, and start runplaned again: it makes a new, empty spool (a new "
           "incarnation; controllers start it from seq 0). Records no controller had "
           "acknowledged are lost; run records and logs are kept (docs/daemon.md, \"Damaged "
           "spool\")";
}

// After open's load(): the file must not be behind what this incarnation already issued.
Status Spool::checkHighWater() {
    const std::string path = m_options.path + ".highwater";
    m_highWaterFd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (m_highWaterFd < 0) {
        return {};  // best effort: the spool works without it (the next write says nothing)
    }
    char text[128] = {};
    const ssize_t n = ::pread(m_highWaterFd, text, sizeof(text) - 1, 0);
    unsigned long long incarnation = 0, next = 0;
    const bool parsed =
        n > 0 && std::sscanf(text, "runplane-spool-highwater v1 incarnation=%llu next_seq=%llu",
                             &incarnation, &next) == 2;
    if (n > 0 && !parsed) {
        m_rollbackNote = path + " was unreadable and is rewritten (a torn write at a power cut?)";
    } else if (parsed && incarnation != m_incarnation) {
        m_rollbackNote = "spool " + m_options.path + " has incarnation " +
                         std::to_string(m_incarnation) + ", but " + path + " says incarnation " +
                         std::to_string(incarnation) + " had issued seqs below " +
                         std::to_string(next) +
                         ": the spool file was replaced or lost (controllers see a new "
                         "incarnation and start it from seq 0)";
    } else if (parsed && next > m_stats.nextSeq) {
        const std::uint64_t first = m_stats.nextSeq, last = next - 1;
        v1::TelemetryRecord gap;
        gap.set_t_unix_ns(nowUnixNs());
        auto* ev = gap.mutable_event();
        ev->set_kind(v1::EVENT_GAP);
        ev->set_message("spool " + m_options.path + " rolled back: seq " + std::to_string(first) +
                        ".." + std::to_string(last) +
                        " were issued before but are no longer in the file (its WAL was "
                        "truncated or deleted, or an older copy was put back); they are lost "
                        "and never reused");
        (*ev->mutable_attrs())["first_seq"] = std::to_string(first);
        (*ev->mutable_attrs())["last_seq"] = std::to_string(last);
        (*ev->mutable_attrs())["count"] = std::to_string(last - first + 1);
        (*ev->mutable_attrs())["why"] = "spool_rolled_back";
        m_rollbackNote = ev->message();
        std::vector<v1::TelemetryRecord> records{gap};
        const SpoolStats before = m_stats;
        m_stats.nextSeq = next;
        sqlite::Transaction tx(*m_db);
        Status s = tx.begun();
        if (s.ok()) {
            s = insertLocked(records);
        }
        if (s.ok()) {
            s = m_db->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', '" +
                           std::to_string(m_stats.nextSeq) + "')");
        }
        if (s.ok()) {
            s = tx.commit();
        }
        if (!s.ok()) {
            m_stats = before;
            return Error{m_options.path + ": rolled back behind seq " + std::to_string(next) +
                         " and the gap could not be recorded: " + s.error()};
        }
    }
    noteHighWaterLocked();
    return {};
}

// After a commit: the next seq, for checkHighWater() at the next open. No fsync: the spool's
// own commit is durable first, so this file can only lag behind it.
void Spool::noteHighWaterLocked() {
    if (m_highWaterFd < 0 || m_stats.nextSeq == m_highWaterWritten) {
        return;
    }
    char text[128];
    const int n = std::snprintf(
        text, sizeof(text), "runplane-spool-highwater v1 incarnation=%020llu next_seq=%020llu\n",
        static_cast<unsigned long long>(m_incarnation),
        static_cast<unsigned long long>(m_stats.nextSeq));
    if (n > 0 && ::pwrite(m_highWaterFd, text, static_cast<std::size_t>(n), 0) == n) {
        m_highWaterWritten = m_stats.nextSeq;
    }
}

Result<std::unique_ptr<Spool>> Spool::open(const SpoolOptions& options) {
    sqlite::Database::Options dbOptions;
    dbOptions.ownerOnly = true;  // the spool holds run telemetry and events: 0600, like its dir
    auto db = sqlite::Database::open(options.path, dbOptions);
    if (!db) {
        return Error{db.error()};
    }
    // auto_vacuum must be chosen before the first table exists; harmless afterwards.
    if (Status s = (*db)->exec("PRAGMA auto_vacuum=INCREMENTAL;"); !s.ok()) {
        return Error{s.error()};
    }
    // FULL: a committed seq must survive power loss too, or a reused seq could be ingested twice.
    if (Status s = (*db)->exec("PRAGMA synchronous=FULL;"); !s.ok()) {
        return Error{s.error()};
    }
    // Checkpoint often and keep the WAL short: on a small state disk a WAL that grows to the
    // default 1000 pages (4 MiB) would itself fill the disk.
    if (Status s = (*db)->exec("PRAGMA wal_autocheckpoint=256; PRAGMA journal_size_limit=1048576;");
        !s.ok()) {
        return Error{s.error()};
    }
    if (Status s = (*db)->exec(kSchema); !s.ok()) {
        return Error{s.error()};
    }
    std::unique_ptr<Spool> spool(new Spool(std::move(*db), options));
    if (Status s = spool->load(); !s.ok()) {
        return Error{s.error()};
    }
    if (Status s = spool->checkHighWater(); !s.ok()) {
        return Error{s.error()};
    }
    return spool;
}

Status Spool::load() {
    auto q = m_db->prepare(
        "SELECT (SELECT value FROM meta WHERE key='next_seq'), "
        "(SELECT value FROM meta WHERE key='trimmed_through'), "
        "(SELECT value FROM meta WHERE key='dropped_records'), "

        "min(seq), max(seq), count(*), coalesce(sum(size),0) FROM records");
    if (!q) {
        return Error{q.error()};
    }
    auto row = q->step();
    if (!row) {
        return Error{row.error()};
    }
    std::uint64_t counters[3] = {1, 0, 0};  // next_seq, trimmed_through, dropped_records
    const char* names[3] = {"next_seq", "trimmed_through", "dropped_records"};
    for (int i = 0; i < 3; ++i) {
        if (q->columnIsNull(i) || (i == 0 && q->columnText(i).empty())) {
            continue;
        }
        const std::string text = q->columnText(i);
        const auto value = parseSpoolCounter(text);
        if (!value) {
            return Error{m_db->path() + ": damaged spool: meta " + names[i] + " is '" +
                         text.substr(0, 40) +
                         "', not a sequence number (move the file away to start a new spool)"};
        }
        counters[i] = *value;
    }
    const std::uint64_t storedNext = counters[0];
    m_stats.trimmedThrough = counters[1];
    m_stats.droppedRecords = counters[2];
    const std::uint64_t maxSeq =
        q->columnIsNull(4) ? 0 : static_cast<std::uint64_t>(q->columnInt(4));
    m_stats.oldestKeptSeq = q->columnIsNull(3) ? 0 : static_cast<std::uint64_t>(q->columnInt(3));
    m_stats.records = static_cast<std::uint64_t>(q->columnInt(5));
    m_stats.payloadBytes = static_cast<std::uint64_t>(q->columnInt(6));
    // Never go back: the stored counter and the rows present must both be respected.
    m_stats.nextSeq = std::max({storedNext, maxSeq + 1, m_stats.trimmedThrough + 1});
    q->reset();
    return loadIncarnation();
}

Status Spool::loadIncarnation() {
    auto q = m_db->prepare("SELECT value FROM meta WHERE key='incarnation'");
    if (!q) {
        return Error{q.error()};
    }
    if (auto row = q->step(); !row) {
        return Error{row.error()};
    } else if (*row) {
        m_incarnation = std::strtoull(q->columnText(0).c_str(), nullptr, 10);
    }
    q->reset();
    if (m_incarnation != 0) {
        return {};
    }
    // A new file (or one from before incarnations): make the id once and keep it.
    std::random_device rd;
    std::mt19937_64 gen((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
                        static_cast<std::uint64_t>(nowUnixNs()));
    while (m_incarnation == 0) {
        m_incarnation = gen();
    }
    return m_db->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('incarnation', '" +
                      std::to_string(m_incarnation) + "')");
}

Status Spool::insertLocked(std::vector<v1::TelemetryRecord>& records) {
    auto ins =
        m_db->prepare("INSERT INTO records(seq, size, body, gap_first) VALUES(?1, ?2, ?3, ?4)");
    if (!ins) {
        return Error{ins.error()};
    }
    std::string body;
    for (auto& r : records) {
        r.set_seq(m_stats.nextSeq);
        if (r.t_unix_ns() == 0) {
            r.set_t_unix_ns(nowUnixNs());
        }
        // A string that is not UTF-8 would serialize but never parse back (record_text.h).
        m_stats.textRepaired += makeRecordTextValid(r) > 0 ? 1 : 0;
        body.clear();
        r.SerializeToString(&body);
        ins->bind(1, static_cast<std::int64_t>(m_stats.nextSeq))
            .bind(2, static_cast<std::int64_t>(body.size()))
            .bindBlob(3, body.data(), static_cast<int>(body.size()));
        if (r.has_event() && r.event().kind() == v1::EVENT_GAP) {
            const auto& attrs = r.event().attrs();
            const auto it = attrs.find("first_seq");
            const auto first = it == attrs.end() ? std::nullopt : parseSpoolCounter(it->second);
            ins->bind(4, static_cast<std::int64_t>(first.value_or(0)));
        } else {
            ins->bindNull(4);
        }
        if (Status s = ins->run(); !s.ok()) {
            return s;
        }
        if (m_stats.oldestKeptSeq == 0) {
            m_stats.oldestKeptSeq = m_stats.nextSeq;
        }
        ++m_stats.nextSeq;
        ++m_stats.records;
        m_stats.payloadBytes += body.size();
    }
    return {};
}

Result<std::uint64_t> Spool::append(std::vector<v1::TelemetryRecord>& records,
                                    const std::vector<std::pair<std::string, std::string>>& meta) {
    if (records.empty() && meta.empty()) {
        return std::uint64_t{0};
    }
    std::lock_guard lock(m_mutex);
    const SpoolStats before = m_stats;
    {
        sqlite::Transaction tx(*m_db);
        if (!tx.begun().ok()) {
            return Error{tx.begun().error()};
        }
        Status s = insertLocked(records);
        if (s.ok()) {
            auto put = m_db->prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
            if (!put) {
                s = Error{put.error()};
            } else {
                put->bind(1, std::string_view("next_seq"))
                    .bind(2, std::string_view(std::to_string(m_stats.nextSeq)));
                s = put->run();
                for (std::size_t i = 0; s.ok() && i < meta.size(); ++i) {
                    put->bind(1, std::string_view(meta[i].first))
                        .bind(2, std::string_view(meta[i].second));
                    s = put->run();
                }
            }
        }
        if (s.ok()) {
            s = tx.commit();
        }
        if (!s.ok()) {
            m_stats = before;  // nothing was stored; the same seqs will be assigned again
            return Error{s.error()};
        }
    }
    noteHighWaterLocked();
    const std::uint64_t last = m_stats.nextSeq - 1;
    if (m_stats.payloadBytes > m_options.maxBytes) {
        if (Status s = enforceBound(nullptr); !s.ok()) {
            return Error{s.error()};
        }
    }
    return records.empty() ? std::uint64_t{0} : last;
}

Status Spool::enforceBound(std::vector<v1::TelemetryRecord>* appended) {
    // Drop down to 90 % of the bound so that a full spool does not emit a gap per append.
    const std::uint64_t target = m_options.maxBytes / 10 * 9;
    auto scan = m_db->prepare("SELECT seq, size FROM records ORDER BY seq");
    if (!scan) {
        return Error{scan.error()};
    }
    std::uint64_t bytes = m_stats.payloadBytes, cut = 0, count = 0, first = 0, freed = 0;
    while (bytes > target) {
        auto row = scan->step();
        if (!row) {
            return Error{row.error()};
        }
        if (!*row) {
            break;
        }
        const auto seq = static_cast<std::uint64_t>(scan->columnInt(0));
        const auto size = static_cast<std::uint64_t>(scan->columnInt(1));
        if (first == 0) {
            first = seq;
        }
        cut = seq;
        bytes -= size;
        freed += size;
        ++count;
    }
    scan->reset();
    if (count == 0) {
        return {};
    }
    // Earlier gap events among the dropped records: carry their ranges into this one, so the
    // gap events that survive always cover every lost seq.
    if (auto prior =
            m_db->prepare("SELECT min(gap_first) FROM records WHERE seq <= ?1 AND gap_first > 0")) {
        prior->bind(1, static_cast<std::int64_t>(cut));
        if (auto row = prior->step(); row && *row && !prior->columnIsNull(0)) {
            first = std::min(first, static_cast<std::uint64_t>(prior->columnInt(0)));
        }
    }
    v1::TelemetryRecord gap;
    gap.set_t_unix_ns(nowUnixNs());
    auto* ev = gap.mutable_event();
    ev->set_kind(v1::EVENT_GAP);
    ev->set_message("spool full (" + std::to_string(m_options.maxBytes) + " bytes): dropped " +
                    std::to_string(count) + " unacknowledged records; seq " +
                    std::to_string(first) + ".." + std::to_string(cut) + " are lost");
    (*ev->mutable_attrs())["first_seq"] = std::to_string(first);
    (*ev->mutable_attrs())["last_seq"] = std::to_string(cut);
    (*ev->mutable_attrs())["count"] = std::to_string(count);
    std::vector<v1::TelemetryRecord> gapRecords{gap};
    const SpoolStats before = m_stats;
    sqlite::Transaction tx(*m_db);
    if (!tx.begun().ok()) {
        return tx.begun();
    }
    auto del = m_db->prepare("DELETE FROM records WHERE seq <= ?1");
    if (!del) {
        return Error{del.error()};
    }
    del->bind(1, static_cast<std::int64_t>(cut));
    Status s = del->run();
    m_stats.records -= count;
    m_stats.payloadBytes -= freed;
    m_stats.droppedRecords += count;
    m_stats.oldestKeptSeq = 0;
    if (s.ok()) {
        s = insertLocked(gapRecords);
    }
    if (s.ok()) {
        s = m_db->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', '" +
                       std::to_string(m_stats.nextSeq) + "'), ('dropped_records', '" +
                       std::to_string(m_stats.droppedRecords) + "')");
    }
    if (s.ok()) {
        s = tx.commit();
    }
    if (!s.ok()) {
        m_stats = before;
        return s;
    }
    noteHighWaterLocked();
    auto oldest = m_db->prepare("SELECT min(seq) FROM records");
    if (oldest && oldest->step().ok()) {
        m_stats.oldestKeptSeq =
            oldest->columnIsNull(0) ? 0 : static_cast<std::uint64_t>(oldest->columnInt(0));
    }
    (void)m_db->exec("PRAGMA incremental_vacuum;");
    if (appended != nullptr) {
        appended->push_back(gapRecords.front());
    }
    return {};
}

Result<std::uint64_t> Spool::appendGap(std::uint64_t count, const std::string& why) {
    std::lock_guard lock(m_mutex);
    const SpoolStats before = m_stats;
    const std::uint64_t first = m_stats.nextSeq;
    const std::uint64_t last = first + count - 1;
    v1::TelemetryRecord gap;
    gap.set_t_unix_ns(nowUnixNs());
    auto* ev = gap.mutable_event();
    ev->set_kind(v1::EVENT_GAP);
    ev->set_message(why + ": dropped " + std::to_string(count) + " records; seq " +
                    std::to_string(first) + ".." + std::to_string(last) + " are lost");
    (*ev->mutable_attrs())["first_seq"] = std::to_string(first);
    (*ev->mutable_attrs())["last_seq"] = std::to_string(last);
    (*ev->mutable_attrs())["count"] = std::to_string(count);
    std::vector<v1::TelemetryRecord> gapRecords{gap};
    m_stats.nextSeq = last + 1;
    m_stats.droppedRecords += count;
    sqlite::Transaction tx(*m_db);
    Status s = tx.begun();
    if (s.ok()) {
        s = insertLocked(gapRecords);
    }
    if (s.ok()) {
        s = m_db->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', '" +
                       std::to_string(m_stats.nextSeq) + "'), ('dropped_records', '" +
                       std::to_string(m_stats.droppedRecords) + "')");
    }
    if (s.ok()) {
        s = tx.commit();
    }
    if (!s.ok()) {
        m_stats = before;
        return Error{s.error()};
    }
    noteHighWaterLocked();
    return gapRecords.front().seq();
}

void Spool::reclaimWal() {
    std::lock_guard lock(m_mutex);
    (void)m_db->exec("PRAGMA wal_checkpoint(TRUNCATE);");
}

Result<std::vector<v1::TelemetryRecord>> Spool::read(std::uint64_t fromSeq,
                                                     std::size_t maxRecords) {
    std::lock_guard lock(m_mutex);
    std::vector<v1::TelemetryRecord> out;
    RawStatement q(m_db->handle(),
                   "SELECT seq, body FROM records WHERE seq >= ?1 ORDER BY seq LIMIT ?2");
    if (q.get() == nullptr) {
        return Error{m_db->lastError()};
    }
    sqlite3_bind_int64(q.get(), 1, static_cast<sqlite3_int64>(fromSeq));
    sqlite3_bind_int64(q.get(), 2, static_cast<sqlite3_int64>(maxRecords));
    while (true) {
        const int rc = sqlite3_step(q.get());
        if (rc == SQLITE_DONE) {
            break;
        }
        if (rc != SQLITE_ROW) {
            return Error{m_db->lastError()};
        }
        const auto seq = static_cast<std::uint64_t>(sqlite3_column_int64(q.get(), 0));
        const void* data = sqlite3_column_blob(q.get(), 1);
        const int size = sqlite3_column_bytes(q.get(), 1);
        v1::TelemetryRecord r;
        if (!r.ParseFromArray(data, size) || r.seq() != seq) {
            // One damaged record must not stop every watcher: it is sent as a gap event in its
            // own place (same seq), so the stream goes on and the loss is visible and counted.
            r = unreadableRecordGap(seq, size);
            ++m_stats.unreadableSkipped;
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::optional<std::string> Spool::meta(const std::string& key) {
    std::lock_guard lock(m_mutex);
    auto q = m_db->prepare("SELECT value FROM meta WHERE key = ?1");
    if (!q) {
        return std::nullopt;
    }
    q->bind(1, std::string_view(key));
    auto row = q->step();
    if (!row || !*row) {
        return std::nullopt;
    }
    return q->columnText(0);
}

SpoolStats Spool::stats() {
    std::lock_guard lock(m_mutex);
    return m_stats;
}

std::uint64_t Spool::lastSeq() {
    std::lock_guard lock(m_mutex);
    return m_stats.nextSeq - 1;
}

}  // namespace runplane::agent
