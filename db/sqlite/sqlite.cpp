#include "db/sqlite/sqlite.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace runplane::sqlite {

namespace {

std::string octal(unsigned mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", mode & 07777u);
    return text;
}

// Creates path 0600 when absent, then tightens it and its companions to 0600 where group or
// others have any access. Returns one note per file changed (or that could not be changed).
std::vector<std::string> makeOwnerOnly(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        ::close(fd);
    }
    std::vector<std::string> notes;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        const std::string file = path + suffix;
        struct stat st {};
        if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) == 0) {
            continue;
        }
        if (::chmod(file.c_str(), 0600) == 0) {
            notes.push_back(file + ": mode " + octal(st.st_mode) +
                            " let other users read it; tightened to 0600");
        } else {
            notes.push_back(
                file + ": mode " + octal(st.st_mode) +
                " lets other users read it and could not be tightened: " + std::strerror(errno));
        }
    }
    return notes;
}

// SQLITE_BUSY / SQLITE_LOCKED (any extended code of theirs): another connection holds the lock,
// so trying again can succeed.
ErrorCode codeOf(int rc) {
    const int primary = rc & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? ErrorCode::Busy
                                                              : ErrorCode::Unspecified;
}

}  // namespace

// A connection's idle compiled statements by SQL text, least recently given back first out.
// Touched only by the thread that uses the connection (one Database per thread).
struct StatementCache {
    struct Idle {
        sqlite3_stmt* stmt;
        std::uint64_t tick;
    };
    std::size_t capacity = 0;
    bool open = true;  // false once the Database is gone: given-back statements are finalized
    std::unordered_multimap<std::string, Idle> idle;
    std::uint64_t tick = 0;
    std::int64_t hits = 0;
    std::int64_t misses = 0;

    sqlite3_stmt* take(std::string_view sql) {
        const auto found = idle.find(std::string(sql));
        if (found == idle.end()) {
            return nullptr;
        }
        sqlite3_stmt* stmt = found->second.stmt;
        idle.erase(found);
        ++hits;
        return stmt;
    }

    void give(sqlite3_stmt* stmt) noexcept {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
        if (!open || capacity == 0) {
            sqlite3_finalize(stmt);
            return;
        }
        try {
            if (idle.size() >= capacity) {
                auto oldest = idle.begin();
                for (auto it = idle.begin(); it != idle.end(); ++it) {
                    if (it->second.tick < oldest->second.tick) {
                        oldest = it;
                    }
                }
                sqlite3_finalize(oldest->second.stmt);
                idle.erase(oldest);
            }
            idle.emplace(sqlite3_sql(stmt), Idle{stmt, ++tick});
        } catch (...) {
            sqlite3_finalize(stmt);  // out of memory: not cached
        }
    }

    void close() noexcept {
        open = false;
        for (auto& [sql, entry] : idle) {
            sqlite3_finalize(entry.stmt);
        }
        idle.clear();
    }
};

Database::Database(sqlite3* db, std::string path, std::size_t cacheCapacity)
    : m_db(db), m_path(std::move(path)), m_cache(std::make_shared<StatementCache>()) {
    m_cache->capacity = cacheCapacity;
}

Result<std::unique_ptr<Database>> Database::open(const std::string& path, Options options) {
    std::vector<std::string> notes;
    if (options.ownerOnly && !options.readOnly) {
        notes = makeOwnerOnly(path);
    }
    sqlite3* raw = nullptr;
    const int flags =
        options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string message =
            path + ": cannot open: " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
        sqlite3_close(raw);
        return Error{message, codeOf(rc)};
    }
    std::unique_ptr<Database> db(new Database(raw, path, options.statementCache));
    db->m_permissionNotes = std::move(notes);
    sqlite3_busy_timeout(raw, options.busyTimeoutMs);
    db->m_busyTimeoutMs = options.busyTimeoutMs;
    // Touch the schema so that a file that is not a database fails here, with its path.
    if (Status s = db->exec("SELECT count(*) FROM sqlite_master;"); !s.ok()) {
        return s.failure();
    }
    if (options.wal && !options.readOnly) {
        if (Status s = db->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !s.ok()) {
            return s.failure();
        }
    }
    if (Status s = db->exec("PRAGMA foreign_keys=ON;"); !s.ok()) {
        return s.failure();
    }
    return db;
}

Database::~Database() {
    // Statements still out finalize themselves when destroyed; sqlite3_close_v2 closes the
    // connection once the last of them is gone.
    m_cache->close();
    sqlite3_close_v2(m_db);
}

Database::CacheCounts Database::statementCacheCounts() const {
    return CacheCounts{m_cache->hits, m_cache->misses, m_cache->idle.size()};
}

std::string Database::lastError() const {
    return m_path + ": " + sqlite3_errmsg(m_db);
}

Error Database::lastFailure() const {
    return Error{lastError(), codeOf(sqlite3_extended_errcode(m_db))};
}

Status Database::exec(std::string_view sql) {
    char* message = nullptr;
    const std::string text(sql);
    if (const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &message);
        rc != SQLITE_OK) {
        std::string error = m_path + ": " + (message ? message : "unknown SQLite error");
        sqlite3_free(message);
        return Error{error, codeOf(rc)};
    }
    return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
    if (m_cache->capacity > 0) {
        if (sqlite3_stmt* cached = m_cache->take(sql)) {
            return Statement(cached, m_db, m_cache);
        }
    }
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
        return lastFailure();
    }
    ++m_cache->misses;
    // Cached only when SQLite keeps exactly this text (it stops at the first statement's end),
    // so that a given-back statement is found again under the text it is asked for.
    const char* kept = sqlite3_sql(stmt);
    const bool cacheable =
        m_cache->capacity > 0 && kept != nullptr && std::string_view(kept) == sql;
    return Statement(stmt, m_db, cacheable ? m_cache : nullptr);
}

std::int64_t Database::lastInsertRowId() const {
    return sqlite3_last_insert_rowid(m_db);
}
int Database::changes() const {
    return sqlite3_changes(m_db);
}

Statement::Statement(Statement&& other) noexcept
    : m_stmt(std::exchange(other.m_stmt, nullptr)),
      m_db(other.m_db),
      m_cache(std::move(other.m_cache)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        release();
        m_stmt = std::exchange(other.m_stmt, nullptr);
        m_db = other.m_db;
        m_cache = std::move(other.m_cache);
    }
    return *this;
}

Statement::~Statement() {
    release();
}

void Statement::release() noexcept {
    if (m_stmt != nullptr) {
        if (m_cache) {
            m_cache->give(m_stmt);
        } else {
            sqlite3_finalize(m_stmt);
        }
    }
    m_stmt = nullptr;
    m_cache.reset();
}

Statement& Statement::bind(int index, std::int64_t value) {
    sqlite3_bind_int64(m_stmt, index, value);
    return *this;
}
Statement& Statement::bind(int index, double value) {
    sqlite3_bind_double(m_stmt, index, value);
    return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
    sqlite3_bind_text(m_stmt, index, value.data(), static_cast<int>(value.size()),
                      SQLITE_TRANSIENT);
    return *this;
}
Statement& Statement::bindBlob(int index, const void* data, int size) {
    sqlite3_bind_blob(m_stmt, index, data, size, SQLITE_TRANSIENT);
    return *this;
}
Statement& Statement::bindNull(int index) {
    sqlite3_bind_null(m_stmt, index);
    return *this;
}

Result<bool> Statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    return Error{std::string(sqlite3_db_filename(m_db, "main")) + ": " + sqlite3_errmsg(m_db),
                 codeOf(rc)};
}

Status Statement::run() {
    Result<bool> stepped = step();
    reset();
    if (!stepped.ok()) {
        return stepped.failure();
    }
    return {};
}

void Statement::reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

std::int64_t Statement::columnInt(int column) const {
    return sqlite3_column_int64(m_stmt, column);
}
double Statement::columnDouble(int column) const {
    return sqlite3_column_double(m_stmt, column);
}
std::string Statement::columnText(int column) const {
    const auto* text = sqlite3_column_text(m_stmt, column);
    return text ? std::string(reinterpret_cast<const char*>(text)) : std::string();
}
std::span<const std::uint8_t> Statement::columnBlob(int column) const {
    const void* data = sqlite3_column_blob(m_stmt, column);
    const int size = sqlite3_column_bytes(m_stmt, column);
    if (data == nullptr || size <= 0) {
        return {};
    }
    return {static_cast<const std::uint8_t*>(data), static_cast<std::size_t>(size)};
}

bool Statement::columnIsNull(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : m_db(db), m_begin(db.exec("BEGIN IMMEDIATE;")) {}

Transaction::~Transaction() {
    if (!m_done && m_begin.ok()) {
        (void)m_db.exec("ROLLBACK;");
    }
}

Status Transaction::commit() {
    m_done = true;
    Status status = m_db.exec("COMMIT;");
    if (!status.ok() && m_begin.ok()) {
        // A failed COMMIT (e.g. disk full) can leave the transaction open; end it here so the
        // connection stays usable. Nothing of this transaction was stored.
        (void)m_db.exec("ROLLBACK;");
    }
    return status;
}

}  // namespace runplane::sqlite
