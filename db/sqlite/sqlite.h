#pragma once
// A thin RAII layer over the SQLite C API, shared by the run history (db/) and the daemon's
// durable spool (backend/agent/). One Database per thread: a Database and its Statements must be
// used from one thread at a time (SQLite's serialized mode is not relied upon).
//
// Statement cache: prepare() hands out a compiled statement of the same text that an earlier
// Statement of this connection gave back (reset, bindings cleared) instead of compiling it
// again; a Statement gives its statement back when destroyed. At most Options::statementCache
// idle statements are kept per connection (least recently used dropped first), so the cache is
// bounded in memory (an idle statement is its compiled program: a few KiB). Two live
// Statements never share one compiled statement: the second one of a text is compiled anew.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace runplane::sqlite {

class Statement;
struct StatementCache;

/// An open SQLite connection. Owns the sqlite3 handle; closes it on destruction.
class Database {
  public:
    struct Options {
        bool readOnly = false;
        bool wal = true;  // journal_mode=WAL, synchronous=NORMAL
        int busyTimeoutMs = 5000;
        /// Owner-only file (docs/security.md): a new file is created 0600 before SQLite opens
        /// it (SQLite gives its -wal and -shm the same mode); an existing file, -wal, -shm or
        /// -journal readable or writable by group/others is tightened to 0600, and a note
        /// saying so is kept in permissionNotes() for the caller to log once.
        bool ownerOnly = false;
        /// Idle compiled statements kept for reuse by prepare() (0: every prepare compiles).
        std::size_t statementCache = 64;
    };

    /// Opens (creating unless read-only) the file at path. Errors name the path and SQLite's
    /// own message, e.g. "history.sqlite: file is not a database".
    static Result<std::unique_ptr<Database>> open(const std::string& path, Options options);
    static Result<std::unique_ptr<Database>> open(const std::string& path) {
        return open(path, Options{});
    }
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    /// Runs one or more statements that return no rows.
    Status exec(std::string_view sql);
    /// Compiles one statement, or takes an idle one of the same text from the cache.
    Result<Statement> prepare(std::string_view sql);
    /// What the statement cache did since open (tests, benches).
    struct CacheCounts {
        std::int64_t hits = 0;    // prepare() served from the cache
        std::int64_t misses = 0;  // prepare() compiled
        std::size_t idle = 0;     // statements held now
    };
    CacheCounts statementCacheCounts() const;
    std::int64_t lastInsertRowId() const;
    int changes() const;
    const std::string& path() const { return m_path; }
    sqlite3* handle() const { return m_db; }
    /// The busy timeout the connection was opened with (Options::busyTimeoutMs).
    int busyTimeoutMs() const { return m_busyTimeoutMs; }

    /// Error text "<path>: <sqlite message>" for the last failed call.
    std::string lastError() const;
    /// The same with its code (ErrorCode::Busy for SQLITE_BUSY / SQLITE_LOCKED). Every error of
    /// this wrapper carries that code, so callers retry on it instead of matching the text.
    Error lastFailure() const;
    /// Files whose mode open() tightened (Options::ownerOnly), one sentence each.
    const std::vector<std::string>& permissionNotes() const { return m_permissionNotes; }

  private:
    Database(sqlite3* db, std::string path, std::size_t cacheCapacity);
    sqlite3* m_db;
    std::string m_path;
    std::shared_ptr<StatementCache> m_cache;  // shared with the Statements it handed out
    int m_busyTimeoutMs = 0;
    std::vector<std::string> m_permissionNotes;
};

/// A prepared statement. Bind with 1-based indices; step() until it returns false.
class Statement {
  public:
    Statement() = default;
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view value);
    Statement& bindBlob(int index, const void* data, int size);
    Statement& bindNull(int index);

    /// Advances: true while a row is available, false when done. Errors are returned as Error.
    Result<bool> step();
    /// Runs a statement that returns no row, then resets it for reuse.
    Status run();
    void reset();

    std::int64_t columnInt(int column) const;
    double columnDouble(int column) const;
    std::string columnText(int column) const;
    bool columnIsNull(int column) const;
    /// The column's bytes; valid until the next step/reset (empty for NULL).
    std::span<const std::uint8_t> columnBlob(int column) const;

  private:
    friend class Database;
    Statement(sqlite3_stmt* stmt, sqlite3* db, std::shared_ptr<StatementCache> cache)
        : m_stmt(stmt), m_db(db), m_cache(std::move(cache)) {}
    /// Gives the statement back to the cache it came from, else finalizes it.
    void release() noexcept;
    sqlite3_stmt* m_stmt = nullptr;
    sqlite3* m_db = nullptr;
    std::shared_ptr<StatementCache> m_cache;  // null: finalized when done
};

/// RAII transaction: BEGIN IMMEDIATE on construction, ROLLBACK unless commit() succeeded.
class Transaction {
  public:
    explicit Transaction(Database& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    Status begun() const { return m_begin; }
    Status commit();

  private:
    Database& m_db;
    Status m_begin;
    bool m_done = false;
};

}  // namespace runplane::sqlite
